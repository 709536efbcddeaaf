// Baselines from Resource Dumps (--use-dumps) against the fixture Source: a Resource Dump and a Resource Dump Index,
// the hostile package (entries refused one by one, the good one applied), a package that cannot be had, the fall back
// to the Resource List, a dry run, and a resume after kill -9 in the middle of a package download.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HOSTILE_DUMP_EXPECTED, startFixtureSource, type FixtureSource, type FixtureSourceOptions } from '../../../e2e/fixture-source/index.ts';
import { ListedUris } from './listed-uris.ts';
import { packagePath } from './package/index.ts';
import { buildZip, manifestXml, md5 } from './package/test-zips.ts';
import { MirrorState, stateDirOf } from './state.ts';
import { sync, type SyncOptions, type SyncProgress } from './sync.ts';

const BIN = fileURLToPath(new URL('../../../bin/rsdesk.mjs', import.meta.url));
let fixture: FixtureSource;
let dest: string;
let notes: string[];

async function start(options: FixtureSourceOptions = {}): Promise<void> {
  fixture = await startFixtureSource({ resources: 30, changeListSize: 20, ...options });
}
beforeEach(async () => {
  await start();
  dest = mkdtempSync(join(tmpdir(), 'mirror-dump-'));
  notes = [];
});
afterEach(async () => {
  await fixture.close();
});

const capabilityList = () => fixture.url + fixture.paths.dataset1.capabilityList;
const run = (options: Partial<SyncOptions> = {}) =>
  sync({ url: capabilityList(), dest, batchSize: 7, timeoutMs: 5_000, useDumps: true, onNote: (n) => void notes.push(n), ...options });
const host = () => new URL(fixture.url).host.replace(':', '_');
const fileOf = (id: number) => join(dest, host(), ...fixture.state.pathOf(id).split('/').filter(Boolean));
const resourceRequests = () => fixture.requests.filter((r) => /\/res\/\d+/.test(r.path));
const packageRequests = (part: number) => fixture.requests.filter((r) => r.path === fixture.paths.dataset1.resourceDumpPackage(part));

function inventory() {
  const state = new MirrorState(stateDirOf(dest));
  try {
    return [...state.rows()];
  } finally {
    state.close();
  }
}

function expectMirrorMatchesSource(): void {
  for (const r of fixture.state.live()) {
    const body = fixture.state.representation(r.id, r.version).body;
    expect(readFileSync(fileOf(r.id)).equals(body), `resource ${r.id}`).toBe(true);
  }
}

function visibleFiles(dir = dest, rel = ''): string[] {
  return readdirSync(join(dir, rel), { withFileTypes: true }).flatMap((d) => {
    if (rel === '' && d.name === '.resourcesync') return [];
    const path = rel ? `${rel}/${d.name}` : d.name;
    return d.isDirectory() ? visibleFiles(dir, path) : [path];
  });
}

describe('baseline from a Resource Dump', () => {
  it("takes the files of a mirror whose state was lost as its copies when they hold the package's bytes, and no other file", async () => {
    await run();
    const { rmSync, writeFileSync } = await import('node:fs');
    rmSync(join(dest, '.resourcesync'), { recursive: true, force: true });
    // Someone's own file where resource 4 goes: never replaced.
    writeFileSync(fileOf(4), 'my own notes');
    const again = await run();
    expect(again).toMatchObject({ mode: 'baseline', created: 0, unchanged: 29, failed: 1 });
    expect(again.failures).toEqual([{ uri: fixture.state.locOf(4), reason: expect.stringMatching(/^a file not made by this mirror is already at /) }]);
    expect(readFileSync(fileOf(4), 'utf8')).toBe('my own notes');
    expect(inventory().filter((r) => r.status === 'verified')).toHaveLength(29);
    expect(visibleFiles()).toHaveLength(30);
  });

  it('applies every bitstream of every package, verified and durable, with no request per resource', async () => {
    const result = await run();
    expect(result).toMatchObject({ mode: 'baseline', from: 'dumps', created: 30, failed: 0, updated: 0 });
    expectMirrorMatchesSource();
    expect(resourceRequests()).toEqual([]);
    expect(packageRequests(1)).toHaveLength(1);
    expect(packageRequests(2)).toHaveLength(1);
    const rows = inventory();
    expect(rows).toHaveLength(30);
    expect(rows.every((r) => r.status === 'verified' && r.digests.md5 && r.digests['sha-256'] && r.type)).toBe(true);
    const r1 = fixture.state.resources.get(1)!;
    expect(statSync(fileOf(1)).mtimeMs).toBe(Date.parse(r1.lastmod));
    // The dump's (and its packages' and manifests') at: the fixture's now.
    expect(result.checkpoint).toBe(fixture.state.now());
    expect(visibleFiles().sort()).toEqual(fixture.state.live().map((r) => `${host()}${fixture.state.pathOf(r.id)}`).sort());
    // The work space is cleaned up once the dump is applied.
    expect(existsSync(join(dest, '.resourcesync', 'packages'))).toBe(false);

    // Again: the packages are read, nothing is written.
    const again = await run({ mode: 'baseline' });
    expect(again).toMatchObject({ from: 'dumps', created: 0, updated: 0, unchanged: 30, failed: 0 });
    expect(resourceRequests()).toEqual([]);
  });

  it('reads each package while it downloads (its end first, by a range) and ends the same, each byte downloaded once', async () => {
    const result = await run({ dumpReadAheadFrom: 0, dumpQuickDownloadSeconds: 0 });
    expect(result).toMatchObject({ mode: 'baseline', from: 'dumps', created: 30, failed: 0, updated: 0 });
    expectMirrorMatchesSource();
    expect(resourceRequests()).toEqual([]);
    for (const part of [1, 2]) {
      const requests = packageRequests(part);
      // One download of the whole package, and ranges read ahead of it (its end; these packages are small).
      expect(requests.filter((r) => r.headers.range === undefined)).toHaveLength(1);
      expect(requests.filter((r) => r.headers.range !== undefined).every((r) => /^bytes=-\d+$|^bytes=\d+-\d+$/.test(r.headers.range!))).toBe(true);
      // The first package starts downloading when its turn comes, so its end is asked for; the second downloads
      // while the first is read and may be complete by its turn, and then is read from the file with no range.
      if (part === 1) expect(requests.length).toBeGreaterThan(1);
    }
    const rows = inventory();
    expect(rows).toHaveLength(30);
    expect(rows.every((r) => r.status === 'verified' && r.digests.md5)).toBe(true);
    expect(existsSync(join(dest, '.resourcesync', 'packages'))).toBe(false);
    expect(readdirSync(join(dest, '.resourcesync', 'tmp')).length).toBe(0);
    const again = await run({ mode: 'baseline', dumpReadAheadFrom: 0, dumpQuickDownloadSeconds: 0 });
    expect(again).toMatchObject({ from: 'dumps', created: 0, updated: 0, unchanged: 30, failed: 0 });
  });

  it('reports live progress while the packages apply: resources done, listed and bytes move, not only at the end', async () => {
    const seen: SyncProgress[] = [];
    const result = await run({ onProgress: (p) => void seen.push({ ...p }) });
    expect(result).toMatchObject({ from: 'dumps', created: 30 });
    const last = seen.at(-1)!;
    expect(last).toMatchObject({ settled: 30, listed: 30, created: 30 });
    // A dump's bytes are its packages': all of what the Dump lists was downloaded, and that was known from the start.
    const sizes = await Promise.all([1, 2].map(async (n) => (await (await fetch(fixture.url + fixture.paths.dataset1.resourceDumpPackage(n))).arrayBuffer()).byteLength));
    const packageBytes = sizes[0]! + sizes[1]!;
    expect(last.listedBytes).toBe(packageBytes);
    expect(last.bytesFetched).toBe(packageBytes);
    expect(seen.filter((p) => p.phase === 'fetch').every((p) => p.listedBytes === packageBytes)).toBe(true);
    // Counted as each bitstream settles (batches of 7 here): intermediate values are seen, and done never passes listed.
    const settled = new Set(seen.map((p) => p.settled));
    expect([...settled].some((n) => n > 0 && n < 30)).toBe(true);
    expect(seen.every((p) => p.settled <= Math.max(p.listed, 30))).toBe(true);
    expect(seen.some((p) => p.phase === 'fetch' && p.settled < 30)).toBe(true);
  });

  it('follows a Resource Dump Index, and deletes what no manifest lists by the deletion policy', async () => {
    await fixture.close();
    await start({ dumpIndexes: true });
    const first = await run();
    expect(first).toMatchObject({ from: 'dumps', created: 30, failed: 0 });
    expect(fixture.requests.some((r) => r.path === fixture.paths.dataset1.resourceDumpChild(2))).toBe(true);
    expectMirrorMatchesSource();
    const [gone] = fixture.change('delete', 1);
    const [updated] = fixture.change('update', 1);
    const second = await run({ mode: 'baseline', deletePolicy: 'delete' });
    expect(second).toMatchObject({ from: 'dumps', deleted: 1, failed: 0 });
    expect(second.updated).toBe(updated.id === gone.id ? 0 : 1);
    expect(existsSync(fileOf(gone.id))).toBe(false);
    expectMirrorMatchesSource();
    expect(resourceRequests()).toEqual([]);
  });

  it('past the URIs it holds in memory (inMemoryUris), lists what the manifests list and deletes or holds back what they no longer do as in memory', async () => {
    await fixture.close();
    await start({ dumpIndexes: true });
    const spilled: boolean[] = [];
    const close = ListedUris.prototype.close;
    const watch = vi.spyOn(ListedUris.prototype, 'close').mockImplementation(function (this: ListedUris) {
      spilled.push(this.spilled);
      close.call(this);
    });
    try {
      const bounded = { inMemoryUris: 3 };
      expect(await run(bounded)).toMatchObject({ from: 'dumps', created: 30, failed: 0 });
      // The URIs listed went to the temporary database, past the three held.
      expect(spilled).toContain(true);
      const [gone] = fixture.change('delete', 1);
      fixture.change('update', 1);
      expect(await run({ ...bounded, mode: 'baseline', deletePolicy: 'delete' })).toMatchObject({ from: 'dumps', deleted: 1, failed: 0, wouldDeleteCount: 0 });
      expect(existsSync(fileOf(gone!.id))).toBe(false);
      expectMirrorMatchesSource();
      // More gone than listed: held back, counted against the 29 - 20 listed now.
      const many = fixture.change('delete', 20).map((c) => c.loc);
      notes = [];
      const held = await run({ ...bounded, mode: 'baseline', deletePolicy: 'delete' });
      expect(held).toMatchObject({ deleted: 0, wouldDeleteCount: 20 });
      expect([...held.wouldDelete].sort()).toEqual([...many].sort());
      expect(notes).toContain(
        'The Source no longer lists 20 resources this mirror holds, more than the 9 it lists now: none was deleted, in case the list was served empty or cut short by mistake. ' +
          "If they are really gone, sync again allowing it: rsdesk sync --allow-mass-delete, or in the app the button under this run's end.",
      );
      expect(await run({ ...bounded, mode: 'baseline', deletePolicy: 'delete', allowMassDelete: true })).toMatchObject({ deleted: 20, failed: 0 });
      expect(inventory().map((r) => r.uri).sort()).toEqual(fixture.state.live().map((r) => fixture.state.locOf(r.id)).sort());
      expect(resourceRequests()).toEqual([]);
    } finally {
      watch.mockRestore();
    }
  });

  it("says how many differences there are between a package's manifest and its linked copy, not only the first three", async () => {
    const path = fixture.paths.dataset1.resourceDumpManifest(1);
    const copy = await (await fetch(fixture.url + path)).text();
    const inPackage = copy.match(/<url>/g)!.length;
    expect(inPackage).toBeGreaterThan(4);
    // The copy lists none of the package's resources.
    fixture.setBroken(path, { status: 200, body: copy.replace(/<url>[\s\S]*?<\/url>/g, ''), headers: { 'content-type': 'application/xml' } });
    expect(await run()).toMatchObject({ failed: 0 });
    const note = notes.find((n) => n.includes("the Dump's linked copy differ"))!;
    expect(note.match(/is in the package's manifest but not the same in the linked copy/g)).toHaveLength(3);
    expect(note).toMatch(new RegExp(`; …and ${inPackage - 3} more differences$`));
  });

  it('a dry run reads the manifests linked with rel="contents" and downloads no package', async () => {
    const dry = await run({ dryRun: true });
    expect(dry).toMatchObject({ from: 'dumps', dryRun: true, created: 30, failed: 0 });
    expect(packageRequests(1)).toEqual([]);
    expect(packageRequests(2)).toEqual([]);
    expect(visibleFiles()).toEqual([]);
  });

  it('a package that cannot be had fails alone: the others apply, nothing is deleted, no checkpoint', async () => {
    await run();
    fixture.change('delete', 1);
    fixture.setBroken(fixture.paths.dataset1.resourceDumpPackage(2), { status: 404 });
    const result = await run({ mode: 'baseline', deletePolicy: 'delete' });
    expect(result.failed).toBe(1);
    expect(result.failures[0]!.uri).toBe(fixture.url + fixture.paths.dataset1.resourceDumpPackage(2));
    expect(result.failures[0]!.reason).toMatch(/The package could not be used: .*404/);
    expect(result.deleted).toBe(0);
    expect(notes.join('\n')).toMatch(/nothing was deleted/);
    const state = new MirrorState(stateDirOf(dest));
    const lastRun = state.runs().at(-1)!;
    state.close();
    expect(lastRun.status).toBe('failed');

    // A package whose bytes do not match the Dump's hash is refused whole.
    fixture.setBroken(fixture.paths.dataset1.resourceDumpPackage(2), 'corrupt');
    const corrupt = await run({ mode: 'baseline' });
    expect(corrupt.failures.map((f) => f.reason).join('\n')).toMatch(/md5 of the package .* the Dump says/);
  });

  it("removes the downloads an earlier run left of packages the Dump no longer lists, and keeps those it still lists", async () => {
    const packages = join(stateDirOf(dest), 'packages');
    mkdirSync(packages, { recursive: true });
    // An interrupted download of a package the Source has since renamed, and one of a package it still lists.
    const gone = packagePath(packages, `${fixture.url}/dataset1/packages/renamed-since.zip`);
    const listed = packagePath(packages, fixture.url + fixture.paths.dataset1.resourceDumpPackage(2));
    for (const file of [`${gone}.part`, `${gone}.part.json`, `${listed}.part.json`]) writeFileSync(file, '{}');
    // Package 2 cannot be had this time: the run ends incomplete, so the folder is not emptied as a complete run empties it.
    fixture.setBroken(fixture.paths.dataset1.resourceDumpPackage(2), { status: 404 });
    const result = await run({ mode: 'baseline' });
    expect(result.failed).toBe(1);
    expect(existsSync(`${gone}.part`)).toBe(false);
    expect(existsSync(`${gone}.part.json`)).toBe(false);
    expect(existsSync(`${listed}.part.json`)).toBe(true);
    expect(notes).toContain('Removed the downloads of 1 package the Dump no longer lists, left by an earlier run.');
  });

  it('a package read while it downloads whose bytes are not the Dump\'s: none of it reaches the mirror, nothing is left behind', async () => {
    fixture.setBroken(fixture.paths.dataset1.resourceDumpPackage(2), 'corrupt');
    const result = await run({ dumpReadAheadFrom: 0, dumpQuickDownloadSeconds: 0 });
    expect(result.failures.map((f) => f.reason).join('\n')).toMatch(/md5 of the package .* the Dump says/);
    // Package 1 applied; of package 2 nothing: no row, no file, no temporary file.
    expect(result.created).toBeGreaterThan(0);
    expect(result.created).toBeLessThan(30);
    const verified = inventory().filter((r) => r.status === 'verified');
    expect(verified).toHaveLength(result.created);
    expect(visibleFiles()).toHaveLength(result.created);
    expect(readdirSync(join(dest, '.resourcesync', 'tmp'))).toEqual([]);
    // Served right again, the package applies (read while it downloads) and the mirror is whole.
    fixture.setBroken(fixture.paths.dataset1.resourceDumpPackage(2), null);
    const again = await run({ mode: 'baseline', dumpReadAheadFrom: 0, dumpQuickDownloadSeconds: 0 });
    expect(again).toMatchObject({ failed: 0, created: 30 - result.created });
    expectMirrorMatchesSource();
    expect(readdirSync(join(dest, '.resourcesync', 'tmp'))).toEqual([]);
  });

  it('falls back to the Resource List, and says so, when the dump is not offered or cannot be read', async () => {
    fixture.setBroken(fixture.paths.dataset1.resourceDump, { status: 500 });
    const result = await run();
    expect(result).toMatchObject({ from: 'lists', created: 30, failed: 0 });
    expect(notes.join('\n')).toMatch(/Resource Dump .* could not be read .*uses the Resource List instead/);
    expect(resourceRequests().length).toBeGreaterThanOrEqual(30);

    const other = mkdtempSync(join(tmpdir(), 'mirror-dump-'));
    notes = [];
    const direct = await run({ url: fixture.url + fixture.paths.dataset1.resourceList, dest: other });
    expect(direct).toMatchObject({ from: 'lists', created: 30 });
    expect(notes.join('\n')).toMatch(/offers no Resource Dump for this mirror; the baseline uses the Resource List instead/);
  });
});

describe('the hostile package', () => {
  it.each([
    ['once downloaded', undefined],
    ['while it downloads', 0],
  ])('refuses each hostile entry with its reason and applies the good one (package read %s)', async (_how, dumpReadAheadFrom) => {
    // Without the Source Description's routes, the hostile Capability List (listed by no Source Description) is the Source.
    await fixture.close();
    await start({ routes: { wellKnown: false, htmlLink: false, linkHeader: false, robots: false } });
    const result = await run({ url: fixture.url + fixture.paths.hostileDump.capabilityList, dumpReadAheadFrom, dumpQuickDownloadSeconds: dumpReadAheadFrom });
    expect(result.from).toBe('dumps');
    expect(result.created).toBe(1);
    const reasons = Object.fromEntries(result.failures.map((f) => [f.uri.split('/').at(-1), f.reason]));
    const failing = Object.keys(HOSTILE_DUMP_EXPECTED).filter((k) => HOSTILE_DUMP_EXPECTED[k] !== 'verified');
    expect(Object.keys(reasons).sort()).toEqual(failing.sort());
    expect(reasons.escape).toMatch(/leads out of the package/);
    expect(reasons.link).toMatch(/symbolic link/);
    expect(reasons.bomb).toMatch(/would expand/);
    expect(reasons.missing).toMatch(/not in the package/);
    expect(reasons['bad-hash']).toMatch(/md5 is .* the manifest says/);
    expect(reasons['local-header']).toMatch(/local header/);
    expect(reasons.descriptor).toMatch(/by its data descriptor but .* by the central directory/);
    expect(result.checkpoint).toBeNull();
    const files = visibleFiles();
    expect(files).toEqual([`${host()}/hostile-dump/r/good`]);
    expect(readFileSync(join(dest, files[0]!), 'utf8')).toBe('A good bitstream among hostile ones.\n');
    // Nothing escaped the mirror's folder.
    expect(existsSync(join(dirname(dest), 'escape.txt'))).toBe(false);
    expect(inventory().map((r) => r.uri.split('/').at(-1))).toEqual(['good']);
  });
});

describe('resume after kill -9 during a dump baseline', () => {
  it('does not download a completed package again and resumes a partial one with Range', async () => {
    const part2 = fixture.paths.dataset1.resourceDumpPackage(2);
    const CUT = 2_000;
    fixture.setBroken(part2, { stallAfter: CUT });
    const child = spawn(process.execPath, [BIN, 'sync', capabilityList(), '--dest', dest, '--use-dumps', '--json'], { stdio: 'ignore' });
    const packages = join(dest, '.resourcesync', 'packages');
    // The first package is recorded as applied, and the second (downloaded while the first was read) is partly on
    // disk, stalled by the Source.
    const firstDone = () => {
      const path = join(stateDirOf(dest), 'state.sqlite');
      if (!existsSync(path)) return false;
      const db = new DatabaseSync(path);
      try {
        const row = db.prepare("SELECT COUNT(*) AS n FROM meta WHERE key LIKE 'dump-progress:done:%'").get() as { n: number };
        return row.n === 1;
      } catch {
        return false; // not created yet, or busy
      } finally {
        db.close();
      }
    };
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        const part = `${packagePath(packages, fixture.url + part2)}.part`;
        if (existsSync(part) && statSync(part).size >= CUT && firstDone()) {
          clearInterval(timer);
          resolve();
        } else if (child.exitCode !== null) {
          clearInterval(timer);
          reject(new Error(`rsdesk exited with ${child.exitCode} before the kill`));
        }
      }, 5);
    });
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(visibleFiles().filter((f) => f.includes('.resourcesync') || f.endsWith('.part'))).toEqual([]);
    const verified = inventory().filter((r) => r.status === 'verified');
    expect(verified.length).toBe(15);
    for (const row of verified) {
      expect(createHash('md5').update(readFileSync(join(dest, ...row.path.split('/')))).digest('hex')).toBe(row.digests.md5);
    }

    const before = fixture.requests.length;
    const resumed = await run();
    expect(resumed).toMatchObject({ mode: 'baseline', from: 'dumps', resumed: true, failed: 0 });
    const after = fixture.requests.slice(before);
    expect(after.filter((r) => r.path === fixture.paths.dataset1.resourceDumpPackage(1))).toEqual([]);
    const again = after.filter((r) => r.path === part2);
    expect(again).toHaveLength(1);
    expect(again[0]!.headers.range).toBe(`bytes=${CUT}-`);
    expect(notes.join('\n')).toMatch(/1 package of the Resource Dump applied before the interruption/);
    expectMirrorMatchesSource();
    expect(inventory()).toHaveLength(30);
    expect(resumed.checkpoint).toBe(fixture.state.now());
    const state = new MirrorState(stateDirOf(dest));
    const runs = state.runs();
    state.close();
    expect(runs).toHaveLength(1);
    expect(runs[0]!.status).toBe('completed');
    expect(runs[0]!.created).toBe(30);
  }, 60_000);
});

describe('a Resource Dump run paused after a package with a failure', () => {
  let server: Server;
  afterEach(() => new Promise<void>((r) => server.close(() => r())));

  it('does not read that package again when resumed, but its failure still counts and the mirror gets no checkpoint', async () => {
    server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
    const good = (name: string) => `${name}\n`;
    const zipOf = (names: string[], bad: string | null) =>
      buildZip([
        { name: 'manifest.xml', body: manifestXml('resourcedump-manifest', names.map((n) => ({ loc: `${base}/r/${n}`, path: `/${n}`, hash: `md5:${md5(good(n))}` }))) },
        ...names.map((n) => ({ name: n, body: n === bad ? 'damaged' : good(n) })),
      ]);
    const zips = [await zipOf(['a', 'b'], 'b'), await zipOf(['c', 'd'], null)];
    const pause = new AbortController();
    const entry = (i: number, spelt = '') => `<url><loc>${base}/p${i}.zip${spelt}</loc><rs:md type="application/zip" length="${zips[i]!.length}"/></url>`;
    const docs: Record<string, string> = {
      '/cap.xml': `<urlset ${ns}><rs:md capability="capabilitylist"/><url><loc>${base}/rd.xml</loc><rs:md capability="resourcedump"/></url></urlset>`,
      '/rd.xml': `<urlset ${ns}><rs:md capability="resourcedump" at="2024-01-01T00:00:00Z"/>${entry(0)}${entry(1)}</urlset>`,
    };
    const requests: string[] = [];
    server.on('request', (req, res) => {
      const path = req.url ?? '/';
      requests.push(path);
      if (docs[path]) return void res.writeHead(200, { 'content-type': 'application/xml' }).end(docs[path]);
      const p = /^\/p(\d)\.zip$/.exec(path);
      if (p) {
        const zip = zips[Number(p[1])]!;
        const send = () => void res.writeHead(200, { 'content-type': 'application/zip', 'content-length': zip.length }).end(zip);
        if (p[1] !== '1') return send();
        // The second package is slow to come (the first is done meanwhile): the person pauses the run then.
        setTimeout(() => {
          pause.abort();
          send();
        }, 300);
        return;
      }
      res.writeHead(404).end();
    });
    const mirror = (o: Partial<SyncOptions> = {}) => sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, mode: 'baseline', ...o });
    const first = await mirror({ pauseSignal: pause.signal });
    expect(first.paused).toBe(true);
    expect(first.failures.map((f) => f.uri)).toEqual([`${base}/r/b`]);
    const before = requests.length;
    const resumed = await mirror({ mode: 'auto' });
    expect(resumed.resumed).toBe(true);
    expect(requests.slice(before).filter((p) => p.endsWith('.zip'))).toEqual([]);
    expect(resumed).toMatchObject({ failed: 1, checkpoint: null });
    // The run's journal counts that failure once, as the resumed run reports it.
    const state = new MirrorState(stateDirOf(dest));
    try {
      expect(state.failures(resumed.runId!).map((f) => f.uri)).toEqual([`${base}/r/b`]);
      expect(state.run(resumed.runId!)?.failed).toBe(1);
    } finally {
      state.close();
    }
  });
});

describe('a Resource Dump Index that names a Dump again, and itself, and a Dump that names a package again', () => {
  let server: Server;
  afterEach(() => new Promise<void>((r) => server.close(() => r())));

  it('reads each Dump once, downloads and applies each package once, and the run completes', async () => {
    server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
    const zipOf = (names: string[]) =>
      buildZip([
        { name: 'manifest.xml', body: manifestXml('resourcedump-manifest', names.map((n) => ({ loc: `${base}/r/${n}`, path: `/${n}`, hash: `md5:${md5(n)}` }))) },
        ...names.map((n) => ({ name: n, body: n })),
      ]);
    const zips = [await zipOf(['a', 'b']), await zipOf(['c'])];
    const entry = (i: number, spelt = '') => `<url><loc>${base}/p${i}.zip${spelt}</loc><rs:md type="application/zip" length="${zips[i]!.length}"/></url>`;
    const dump = (entries: string) => `<urlset ${ns}><rs:md capability="resourcedump" at="2024-01-01T00:00:00Z"/>${entries}</urlset>`;
    const child = (path: string) => `<sitemap><loc>${base}${path}</loc><rs:md capability="resourcedump" at="2024-01-01T00:00:00Z"/></sitemap>`;
    const docs: Record<string, string> = {
      '/cap.xml': `<urlset ${ns}><rs:md capability="capabilitylist"/><url><loc>${base}/rdi.xml</loc><rs:md capability="resourcedump"/></url></urlset>`,
      '/rdi.xml': `<sitemapindex ${ns}><rs:md capability="resourcedump" at="2024-01-01T00:00:00Z"/>${child('/rd1.xml')}${child('/rdi.xml')}${child('/rd2.xml')}${child('/rd1.xml').repeat(20)}${child('/rd1.xml#again')}</sitemapindex>`,
      // The first package three times in its Dump, and again in the other Dump (once with a fragment, never sent).
      '/rd1.xml': dump(entry(0).repeat(3)),
      '/rd2.xml': dump(entry(1) + entry(0) + entry(0, '#again')),
    };
    const requests: string[] = [];
    server.on('request', (req, res) => {
      const path = req.url ?? '/';
      requests.push(path);
      if (docs[path]) return void res.writeHead(200, { 'content-type': 'application/xml' }).end(docs[path]);
      const p = /^\/p(\d)\.zip$/.exec(path);
      if (p) return void res.writeHead(200, { 'content-type': 'application/zip', 'content-length': zips[Number(p[1])]!.length }).end(zips[Number(p[1])]);
      res.writeHead(404).end();
    });
    const result = await sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, mode: 'baseline', onNote: (n) => void notes.push(n) });
    // Every package read: the run is complete and gets its checkpoint.
    expect(result).toMatchObject({ created: 3, failed: 0, failures: [], checkpoint: '2024-01-01T00:00:00Z' });
    expect(requests.filter((p) => p.endsWith('.zip')).sort()).toEqual(['/p0.zip', '/p1.zip']);
    expect(requests.filter((p) => p === '/rd1.xml')).toHaveLength(1);
    expect(requests.filter((p) => p === '/rdi.xml')).toHaveLength(1);
    expect(notes.join('\n')).toMatch(/names a Dump it names before, or itself, 22 times; each is read once/);
    expect(notes.join('\n')).toMatch(/names a package it names before 4 times; each package is downloaded and applied once/);
    expect(visibleFiles().sort()).toEqual(['a', 'b', 'c'].map((n) => `127.0.0.1_${new URL(base).port}/r/${n}`));
  });
});

describe('a Resource Dump whose manifests name one URI several times, with different bytes', () => {
  let server: Server;
  afterEach(() => new Promise<void>((r) => server.close(() => r())));

  it.each([
    ['read once downloaded', {}],
    ['read while it downloads', { dumpReadAheadFrom: 0, dumpQuickDownloadSeconds: 0 }],
  ] as const)('mirrors the URI once, as its first entry describes it, and says so (%s)', async (_how, how) => {
    server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
    // [uri, bitstream] in manifest order: x three times in the first package, again in the second.
    const zipOf = (items: [string, string][]) =>
      buildZip([
        { name: 'manifest.xml', body: manifestXml('resourcedump-manifest', items.map(([uri, body]) => ({ loc: `${base}/r/${uri}`, path: `/${body}`, hash: `md5:${md5(body)}` }))) },
        ...items.map(([, body]) => ({ name: body, body })),
      ]);
    const versions = Array.from({ length: 12 }, (_, i) => `x${i}`);
    const zips = [await zipOf([['y', 'y0'], ...versions.map((v): [string, string] => ['x', v])]), await zipOf([['x', 'x-again'], ['z', 'z0']])];
    const entry = (i: number, spelt = '') => `<url><loc>${base}/p${i}.zip${spelt}</loc><rs:md type="application/zip" length="${zips[i]!.length}"/></url>`;
    const docs: Record<string, string> = {
      '/cap.xml': `<urlset ${ns}><rs:md capability="capabilitylist"/><url><loc>${base}/rd.xml</loc><rs:md capability="resourcedump"/></url></urlset>`,
      '/rd.xml': `<urlset ${ns}><rs:md capability="resourcedump" at="2024-01-01T00:00:00Z"/>${entry(0)}${entry(1)}</urlset>`,
    };
    const ranges: string[] = [];
    server.on('request', (req, res) => {
      const path = req.url ?? '/';
      if (docs[path]) return void res.writeHead(200, { 'content-type': 'application/xml' }).end(docs[path]);
      const p = /^\/p(\d)\.zip$/.exec(path);
      if (p) {
        const zip = zips[Number(p[1])]!;
        const range = /^bytes=-(\d+)$/.exec(req.headers.range ?? '');
        if (range) {
          // The package's end, read ahead of its download.
          ranges.push(path);
          const start = Math.max(0, zip.length - Number(range[1]));
          return void res.writeHead(206, { 'content-type': 'application/zip', 'content-range': `bytes ${start}-${zip.length - 1}/${zip.length}`, 'content-length': zip.length - start }).end(zip.subarray(start));
        }
        return void res.writeHead(200, { 'content-type': 'application/zip', 'content-length': zip.length }).end(zip);
      }
      res.writeHead(404).end();
    });
    const result = await sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, mode: 'baseline', onNote: (n) => void notes.push(n), ...how });
    if ('dumpReadAheadFrom' in how) expect(ranges.length).toBeGreaterThan(0);
    expect(result).toMatchObject({ created: 3, failed: 0, checkpoint: '2024-01-01T00:00:00Z' });
    const folder = join(dest, `127.0.0.1_${new URL(base).port}`, 'r');
    expect(readFileSync(join(folder, 'x'), 'utf8')).toBe('x0');
    expect(inventory().find((r) => r.uri === `${base}/r/x`)).toMatchObject({ status: 'verified', digests: { md5: md5('x0') } });
    expect(notes).toContain(`12 entries of the Resource Dump's manifests repeat a URI listed before (the first: ${base}/r/x); each URI is mirrored once, as its first entry describes it.`);
    expect(visibleFiles()).toHaveLength(3);
  });
});

describe('a Resource Dump whose hash for a package cannot be used', () => {
  let server: Server;
  afterEach(() => new Promise<void>((r) => server.close(() => r())));

  it('applies the package, checked by its length and manifest, and says its own hash was not checked', async () => {
    server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
    const zip = await buildZip([
      { name: 'manifest.xml', body: manifestXml('resourcedump-manifest', [{ loc: `${base}/r/a`, path: '/a', hash: `md5:${md5('A')}` }]) },
      { name: 'a', body: 'A' },
    ]);
    const docs: Record<string, string> = {
      '/cap.xml': `<urlset ${ns}><rs:md capability="capabilitylist"/><url><loc>${base}/rd.xml</loc><rs:md capability="resourcedump"/></url></urlset>`,
      '/rd.xml': `<urlset ${ns}><rs:md capability="resourcedump" at="2024-01-01T00:00:00Z"/><url><loc>${base}/p.zip</loc><rs:md type="application/zip" length="${zip.length}" hash="md5:nothex"/></url></urlset>`,
    };
    server.on('request', (req, res) => {
      const path = req.url ?? '/';
      if (docs[path]) return void res.writeHead(200, { 'content-type': 'application/xml' }).end(docs[path]);
      if (path === '/p.zip') return void res.writeHead(200, { 'content-type': 'application/zip', 'content-length': zip.length }).end(zip);
      res.writeHead(404).end();
    });
    const result = await sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, mode: 'baseline', onNote: (n) => void notes.push(n) });
    expect(result).toMatchObject({ created: 1, failed: 0 });
    expect(notes).toContain(`The Dump's hash for ${base}/p.zip cannot be used ("md5:nothex": md5 digest is not hexadecimal); the package was checked by its length only`);
  });
});
