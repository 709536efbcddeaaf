// Incremental syncs from Change Dumps (--use-dumps) against the fixture Source, and against a small Source of its own
// whose one package holds several changes of one URI, a deletion and a bitstream with a wrong hash.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource, type FixtureSourceOptions } from '../../../e2e/fixture-source/index.ts';
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
  dest = mkdtempSync(join(tmpdir(), 'mirror-cdump-'));
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
const packageRequests = (n: number) => fixture.requests.filter((r) => r.path === fixture.paths.dataset1.changeDumpPackage(n));

function expectMirrorMatchesSource(): void {
  for (const r of fixture.state.live()) {
    const body = fixture.state.representation(r.id, r.version).body;
    expect(readFileSync(fileOf(r.id)).equals(body), `resource ${r.id}`).toBe(true);
  }
  for (const r of fixture.state.resources.values()) if (r.deleted) expect(existsSync(fileOf(r.id)), `deleted ${r.id}`).toBe(false);
}

/**
 * After a baseline at t31: changes 31–40 close the second Change List (so the Change Dump's second package holds
 * them), 41–45 stay in the open Change List. Resource 3 is updated twice in the package, resource 31 created and
 * updated there; 4 deleted there, 10 deleted after it.
 */
function changes() {
  fixture.change('update', 2, 3);
  const [created] = fixture.change('create', 1);
  fixture.change('delete', 1, 4);
  fixture.change('update', 1, created!.id);
  for (const id of [5, 6, 7, 8, 9]) fixture.change('update', 1, id);
  fixture.change('update', 1, 3);
  fixture.change('create', 1);
  fixture.change('delete', 1, 10);
  fixture.change('update', 1, 11);
  const last = fixture.change('update', 1, 12);
  expect(fixture.state.changes).toHaveLength(45);
  return { created: created!, last: last[0]! };
}

describe('incremental from a Change Dump', () => {
  it('applies the packages after the checkpoint in order, then the Change List for what comes after them', async () => {
    const baseline = await run();
    expect(baseline).toMatchObject({ mode: 'baseline', from: 'dumps', created: 30, failed: 0 });
    const { created, last } = changes();
    const before = resourceRequests().length;
    const result = await run({ deletePolicy: 'delete' });
    // Resources 3 (updated twice) and 31 (created, then updated) change twice in the package: each counts once.
    expect(result).toMatchObject({ mode: 'incremental', from: 'dumps', failed: 0, created: 2, updated: 9, deleted: 2 });
    expectMirrorMatchesSource();
    // Resource 31 was created and updated inside the package: the file holds the second version.
    expect(readFileSync(fileOf(created.id)).equals(fixture.state.representation(created.id, 2).body)).toBe(true);
    // The first package ends before the checkpoint; the second is read once; only the open list's changes are fetched.
    expect(packageRequests(1)).toEqual([]);
    expect(packageRequests(2)).toHaveLength(1);
    const fetched = resourceRequests().slice(before).map((r) => r.path);
    expect(new Set(fetched)).toEqual(new Set([3, 32, 11, 12].map((id) => fixture.state.pathOf(id))));
    expect(result.checkpoint).toBe(last.datetime.replace('Z', '.000Z'));
    expect(notes.join('\n')).toMatch(/1 package of the Change Dump end before the checkpoint/);
    expect(notes.join('\n')).toMatch(/come from the Change List/);

    // Nothing new: the package ending at the checkpoint is not read again.
    const quiet = await run();
    expect(quiet).toMatchObject({ mode: 'incremental', created: 0, updated: 0, deleted: 0, failed: 0 });
    expect(packageRequests(2)).toHaveLength(1);
  });

  it('reports live progress of the changes a Change Dump applies', async () => {
    await run();
    changes();
    const seen: SyncProgress[] = [];
    const result = await run({ deletePolicy: 'delete', onProgress: (p) => void seen.push({ ...p }) });
    expect(result).toMatchObject({ mode: 'incremental', from: 'dumps', failed: 0 });
    const last = seen.at(-1)!;
    const applied = result.created + result.updated + result.deleted + result.unchanged;
    expect(last.settled).toBeGreaterThanOrEqual(applied);
    expect(last.listed).toBeGreaterThanOrEqual(last.settled);
    expect(last).toMatchObject({ created: result.created, updated: result.updated, deleted: result.deleted });
    // Progress was reported while the package applied, before the Change List's own changes.
    expect(seen.some((p) => p.settled > 0 && p.settled < last.settled)).toBe(true);
  });

  it('follows a Change Dump Index; quarantine; a dry run downloads no package', async () => {
    await fixture.close();
    await start({ dumpIndexes: true });
    await run();
    changes();
    const dry = await run({ dryRun: true, deletePolicy: 'quarantine' });
    expect(dry).toMatchObject({ mode: 'incremental', from: 'dumps', dryRun: true, failed: 0 });
    expect(dry.deleted).toBe(2);
    expect(packageRequests(2)).toEqual([]);
    expect(existsSync(fileOf(4))).toBe(true);
    const result = await run({ deletePolicy: 'quarantine' });
    expect(result).toMatchObject({ from: 'dumps', failed: 0, deleted: 2 });
    expect(fixture.requests.some((r) => r.path === fixture.paths.dataset1.changeDumpChild(1))).toBe(true);
    expectMirrorMatchesSource();
    const rel = fileOf(4).slice(dest.length + 1);
    expect(existsSync(join(dest, '.resourcesync', 'quarantine', rel))).toBe(true);
  });

  it('keeps by default, and a package that cannot be had is fetched from the Change List instead', async () => {
    await run();
    changes();
    fixture.setBroken(fixture.paths.dataset1.changeDumpPackage(2), { status: 404 });
    const before = resourceRequests().length;
    const result = await run();
    expect(result).toMatchObject({ from: 'dumps', failed: 0, deleted: 0 });
    expect(result.wouldDelete.sort()).toEqual([4, 10].map((id) => fixture.state.locOf(id)).sort());
    expect(notes.join('\n')).toMatch(/package could not be used: .*404.*fetched from the Change List instead/);
    expect(resourceRequests().length - before).toBeGreaterThan(4);
    for (const r of fixture.state.live()) {
      expect(readFileSync(fileOf(r.id)).equals(fixture.state.representation(r.id, r.version).body), `resource ${r.id}`).toBe(true);
    }
  });

  it('falls back to the Change List, and says so, when the Change Dump cannot be read', async () => {
    await run();
    changes();
    fixture.setBroken(fixture.paths.dataset1.changeDump, { status: 500 });
    const result = await run({ deletePolicy: 'delete' });
    expect(result).toMatchObject({ mode: 'incremental', from: 'lists', failed: 0 });
    expect(notes.join('\n')).toMatch(/Change Dump .* could not be read .*uses the Change List instead/);
    expectMirrorMatchesSource();
  });
});

describe('resume after kill -9 during an incremental sync from a Change Dump', () => {
  it('does not download an applied package again, resumes a partial one with Range, and ends consistent', async () => {
    await fixture.close();
    await start({ changeListSize: 10 });
    await run({ useDumps: false });
    // 30 changes after the baseline: Change Lists 4 and 5 close (packages 4 and 5), list 6 stays open.
    fixture.change('update', 20);
    fixture.change('create', 5);
    fixture.change('delete', 5);
    const pkg5 = fixture.paths.dataset1.changeDumpPackage(5);
    const CUT = 1_000;
    fixture.setBroken(pkg5, { stallAfter: CUT });
    const child = spawn(process.execPath, [BIN, 'sync', capabilityList(), '--dest', dest, '--use-dumps', '--delete', 'delete', '--json'], { stdio: 'ignore' });
    const part = `${packagePath(join(dest, '.resourcesync', 'packages'), fixture.url + pkg5)}.part`;
    // Package 4 applied (its outcomes committed) and package 5 part downloaded: on a loaded machine the download of
    // the next package, which goes on meanwhile, can get that far before the one before it is applied.
    const pkg4Done = () => {
      const db = new DatabaseSync(join(dest, '.resourcesync', 'state.sqlite'), { readOnly: true });
      try {
        const row = db.prepare('SELECT 1 FROM meta WHERE key = ?').get(`dump-progress:done:${fixture.url}${fixture.paths.dataset1.changeDumpPackage(4)}`);
        return row !== undefined;
      } catch {
        return false;
      } finally {
        db.close();
      }
    };
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if (existsSync(part) && statSync(part).size >= CUT && pkg4Done()) {
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
    const before = fixture.requests.length;
    expect(fixture.requests.some((r) => r.path === fixture.paths.dataset1.changeDumpPackage(4))).toBe(true);
    const resumed = await run({ deletePolicy: 'delete' });
    expect(resumed).toMatchObject({ mode: 'incremental', from: 'dumps', resumed: true, failed: 0 });
    const after = fixture.requests.slice(before);
    expect(after.filter((r) => r.path === fixture.paths.dataset1.changeDumpPackage(4))).toEqual([]);
    const again = after.filter((r) => r.path === pkg5);
    expect(again).toHaveLength(1);
    expect(again[0]!.headers.range).toBe(`bytes=${CUT}-`);
    expectMirrorMatchesSource();
    expect(resumed.checkpoint).toBe(fixture.state.changes.at(-1)!.datetime.replace('Z', '.000Z'));
    const state = new MirrorState(stateDirOf(dest));
    const rows = [...state.rows()];
    const runs = state.runs();
    state.close();
    expect(rows.map((r) => r.uri).sort()).toEqual(fixture.state.live().map((r) => fixture.state.locOf(r.id)).sort());
    expect(runs.map((r) => r.status)).toEqual(['completed', 'completed']);
  }, 60_000);
});

describe('a Change Dump package with several changes of one URI, a deletion and a bad bitstream', () => {
  let server: Server;
  let base: string;
  afterEach(() => new Promise<void>((r) => server.close(() => r())));

  it('applies them in order, fails the bad one alone, and keeps the checkpoint before it', async () => {
    const A1 = 'a, first version\n';
    const A2 = 'a, second version\n';
    const C = 'c\n';
    const R0 = 'r0, mirrored by the baseline\n';
    server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
    const manifest = manifestXml('changedump-manifest', [
      { loc: `${base}/r/a`, path: '/a1', change: 'created', datetime: '2024-01-02T00:00:01Z', hash: `md5:${md5(A1)}`, length: A1.length },
      { loc: `${base}/r/a`, path: '/a2', change: 'updated', datetime: '2024-01-02T00:00:02Z', hash: `md5:${md5(A2)}`, length: A2.length },
      { loc: `${base}/r/b`, path: '/b', change: 'created', datetime: '2024-01-02T00:00:03Z', hash: `md5:${md5('other bytes')}` },
      { loc: `${base}/r/c`, path: '/c', change: 'created', datetime: '2024-01-02T00:00:04Z', hash: `md5:${md5(C)}` },
      { loc: `${base}/r/r0`, change: 'deleted', datetime: '2024-01-02T00:00:05Z' },
      { loc: `${base}/r/d`, path: '/c', change: 'moved', datetime: '2024-01-02T00:00:06Z' },
    ]);
    const zip = await buildZip([
      { name: 'manifest.xml', body: manifest },
      { name: 'a1', body: A1 },
      { name: 'a2', body: A2 },
      { name: 'b', body: 'some bytes' },
      { name: 'c', body: C },
    ]);
    const docs: Record<string, string> = {
      '/cap.xml': `<urlset ${ns}><rs:md capability="capabilitylist"/><url><loc>${base}/rl.xml</loc><rs:md capability="resourcelist"/></url><url><loc>${base}/cd.xml</loc><rs:md capability="changedump"/></url></urlset>`,
      '/rl.xml': `<urlset ${ns}><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/><url><loc>${base}/r/r0</loc><rs:md hash="md5:${md5(R0)}"/></url></urlset>`,
      '/cd.xml':
        `<urlset ${ns}><rs:md capability="changedump" from="2024-01-01T00:00:00Z"/><url><loc>${base}/p.zip</loc>` +
        `<rs:md type="application/zip" length="${zip.length}" from="2024-01-01T00:00:00Z" until="2024-01-03T00:00:00Z" hash="md5:${createHash('md5').update(zip).digest('hex')}"/></url></urlset>`,
    };
    server.on('request', (req, res) => {
      const path = req.url ?? '/';
      if (docs[path]) return void res.writeHead(200, { 'content-type': 'application/xml' }).end(docs[path]);
      if (path === '/p.zip') return void res.writeHead(200, { 'content-type': 'application/zip', 'content-length': zip.length }).end(zip);
      if (path === '/r/r0') return void res.writeHead(200).end(R0);
      res.writeHead(404).end();
    });
    const mirror = (o: Partial<SyncOptions> = {}) => sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, onNote: (n) => void notes.push(n), ...o });
    const first = await mirror();
    expect(first).toMatchObject({ mode: 'baseline', from: 'lists', created: 1, failed: 0 });
    expect(notes.join('\n')).toMatch(/offers no Resource Dump/);
    const result = await mirror({ deletePolicy: 'delete' });
    // a's two changes: only the second is applied, and makes the file.
    expect(result).toMatchObject({ mode: 'incremental', from: 'dumps', created: 2, updated: 0, deleted: 1, failed: 2 });
    const reasons = Object.fromEntries(result.failures.map((f) => [f.uri.split('/').at(-1), f.reason]));
    expect(reasons.b).toMatch(/md5 is .* the manifest says/);
    expect(reasons.d).toMatch(/unknown change "moved"/);
    const dir = join(dest, new URL(base).host.replace(':', '_'), 'r');
    expect(readFileSync(join(dir, 'a'), 'utf8')).toBe(A2);
    expect(readFileSync(join(dir, 'c'), 'utf8')).toBe(C);
    expect(existsSync(join(dir, 'b'))).toBe(false);
    expect(existsSync(join(dir, 'r0'))).toBe(false);
    // Only past what was applied: a's second version, just before b's failure.
    expect(result.checkpoint).toBe('2024-01-02T00:00:02.000Z');
  });
});

describe('a Change Dump package that changes two URIs hundreds of times each, in turn', () => {
  let server: Server;
  afterEach(() => new Promise<void>((r) => server.close(() => r())));

  it('applies only the last change of each, and an earlier bitstream that fails its checks is only a note', async () => {
    server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
    const N = 300;
    const body = (uri: string, i: number) => `${uri}, version ${i}\n`;
    const entries = [];
    const files = [];
    for (let i = 0; i < N; i++) {
      for (const uri of ['a', 'b']) {
        const name = `${uri}${i}`;
        const bytes = body(uri, i);
        // The second version of a is damaged in the package: it fails its md5, but a later change replaces it.
        files.push({ name, body: uri === 'a' && i === 1 ? 'damaged' : bytes });
        const time = new Date(Date.UTC(2024, 0, 2) + (2 * i + (uri === 'a' ? 0 : 1)) * 1000).toISOString();
        entries.push({ loc: `${base}/r/${uri}`, path: `/${name}`, change: i === 0 ? 'created' : 'updated', datetime: time, hash: `md5:${md5(bytes)}` });
      }
    }
    const zip = await buildZip([{ name: 'manifest.xml', body: manifestXml('changedump-manifest', entries) }, ...files]);
    const docs: Record<string, string> = {
      '/cap.xml': `<urlset ${ns}><rs:md capability="capabilitylist"/><url><loc>${base}/rl.xml</loc><rs:md capability="resourcelist"/></url><url><loc>${base}/cd.xml</loc><rs:md capability="changedump"/></url></urlset>`,
      '/rl.xml': `<urlset ${ns}><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/></urlset>`,
      '/cd.xml':
        `<urlset ${ns}><rs:md capability="changedump" from="2024-01-01T00:00:00Z"/><url><loc>${base}/p.zip</loc>` +
        `<rs:md type="application/zip" length="${zip.length}" from="2024-01-01T00:00:00Z" until="2024-01-03T00:00:00Z"/></url></urlset>`,
    };
    server.on('request', (req, res) => {
      const path = req.url ?? '/';
      if (docs[path]) return void res.writeHead(200, { 'content-type': 'application/xml' }).end(docs[path]);
      if (path === '/p.zip') return void res.writeHead(200, { 'content-type': 'application/zip', 'content-length': zip.length }).end(zip);
      res.writeHead(404).end();
    });
    const mirror = () => sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, onNote: (n) => void notes.push(n) });
    expect(await mirror()).toMatchObject({ mode: 'baseline', from: 'lists', created: 0, failed: 0 });
    const result = await mirror();
    // Each applied once (it had waited for the batch before it to be durable, 599 times); none failed.
    expect(result).toMatchObject({ mode: 'incremental', from: 'dumps', created: 2, updated: 0, failed: 0 });
    const dir = join(dest, new URL(base).host.replace(':', '_'), 'r');
    expect(readFileSync(join(dir, 'a'), 'utf8')).toBe(body('a', N - 1));
    expect(readFileSync(join(dir, 'b'), 'utf8')).toBe(body('b', N - 1));
    expect(notes.join('\n')).toMatch(/r\/a: an earlier change of it in .*p\.zip could not be read \(.*md5.*\); a later change of it in the same package replaces it/);
    // Every change applied or replaced: the checkpoint reaches the package's end.
    expect(result.checkpoint).toBe('2024-01-03T00:00:00.000Z');
  });
});

describe('a Change Dump whose manifest is applied in document order (an undated entry)', () => {
  let server: Server;
  afterEach(() => new Promise<void>((r) => server.close(() => r())));

  it('keeps the checkpoint before a change dated earlier than one applied before it, and applies it when it can', async () => {
    server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
    const X = 'x, updated at noon\n';
    const Y = 'y, updated at eleven\n';
    const Z = 'z, undated\n';
    let yBytes = 'not what the manifest promises';
    const packageOf = async () => {
      const manifest = manifestXml('changedump-manifest', [
        { loc: `${base}/r/x`, path: '/x', change: 'updated', datetime: '2024-01-02T12:00:00Z', hash: `md5:${md5(X)}` },
        { loc: `${base}/r/y`, path: '/y', change: 'updated', datetime: '2024-01-02T11:00:00Z', hash: `md5:${md5(Y)}` },
        { loc: `${base}/r/z`, path: '/z', change: 'updated', hash: `md5:${md5(Z)}` },
      ]);
      return buildZip([{ name: 'manifest.xml', body: manifest }, { name: 'x', body: X }, { name: 'y', body: yBytes }, { name: 'z', body: Z }]);
    };
    let zip = await packageOf();
    const listed = (names: string[]) => names.map((n) => `<url><loc>${base}/r/${n}</loc></url>`).join('');
    const docs = (): Record<string, string> => ({
      '/cap.xml': `<urlset ${ns}><rs:md capability="capabilitylist"/><url><loc>${base}/rl.xml</loc><rs:md capability="resourcelist"/></url><url><loc>${base}/cd.xml</loc><rs:md capability="changedump"/></url></urlset>`,
      '/rl.xml': `<urlset ${ns}><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>${listed(['x', 'y', 'z'])}</urlset>`,
      '/cd.xml':
        `<urlset ${ns}><rs:md capability="changedump" from="2024-01-01T00:00:00Z"/><url><loc>${base}/p.zip</loc>` +
        `<rs:md type="application/zip" length="${zip.length}" from="2024-01-01T00:00:00Z" until="2024-01-03T00:00:00Z"/></url></urlset>`,
    });
    server.on('request', (req, res) => {
      const path = req.url ?? '/';
      const doc = docs()[path];
      if (doc) return void res.writeHead(200, { 'content-type': 'application/xml' }).end(doc);
      if (path === '/p.zip') return void res.writeHead(200, { 'content-type': 'application/zip', 'content-length': zip.length }).end(zip);
      if (path.startsWith('/r/')) return void res.writeHead(200).end(`${path} before\n`);
      res.writeHead(404).end();
    });
    const mirror = () => sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, onNote: (n) => void notes.push(n) });
    expect(await mirror()).toMatchObject({ mode: 'baseline', created: 3, failed: 0 });
    const second = await mirror();
    expect(second).toMatchObject({ mode: 'incremental', from: 'dumps', updated: 2, failed: 1 });
    // x (noon) was applied before y (eleven) failed: the checkpoint stays within y's second, not noon.
    expect(Date.parse(second.checkpoint!)).toBeLessThan(Date.parse('2024-01-02T11:00:01Z'));
    // Tried again on the next run, failing again while the package is wrong…
    expect(await mirror()).toMatchObject({ mode: 'incremental', failed: 1 });
    // …and applied once it is right.
    yBytes = Y;
    zip = await packageOf();
    const fourth = await mirror();
    expect(fourth).toMatchObject({ mode: 'incremental', failed: 0 });
    expect(readFileSync(join(dest, new URL(base).host.replace(':', '_'), 'r', 'y'), 'utf8')).toBe(Y);
    expect(Date.parse(fourth.checkpoint!)).toBeGreaterThanOrEqual(Date.parse('2024-01-02T12:00:00Z'));
  });
});


describe('a Change Dump run killed after a package with a failure, before a later package', () => {
  let server: Server;
  afterEach(() => new Promise<void>((r) => server.close(() => r())));

  it('a resumed Change Dump run does not bring back what a later package deleted', async () => {
    server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
    const X = 'x created in P1\n';
    const p1 = await buildZip([
      { name: 'manifest.xml', body: manifestXml('changedump-manifest', [
        { loc: `${base}/r/x`, path: '/x', change: 'created', datetime: '2024-01-02T01:00:00Z', hash: `md5:${md5(X)}`, length: X.length },
        { loc: `http://elsewhere.example/o`, path: '/o', change: 'created', datetime: '2024-01-02T02:00:00Z', hash: `md5:${md5('o')}`, length: 1 },
      ]) },
      { name: 'x', body: X },
      { name: 'o', body: 'o' },
    ]);
    const p2 = await buildZip([
      { name: 'manifest.xml', body: manifestXml('changedump-manifest', [{ loc: `${base}/r/x`, change: 'deleted', datetime: '2024-01-02T05:00:00Z' }]) },
    ]);
    const K = 'k\n';
    const p3 = await buildZip([
      { name: 'manifest.xml', body: manifestXml('changedump-manifest', [{ loc: `${base}/r/k`, path: '/k', change: 'updated', datetime: '2024-01-02T10:00:00Z', hash: `md5:${md5(K)}`, length: K.length }]) },
      { name: 'k', body: K },
    ]);
    let stallP3 = false;
    let onP3: (() => void) | null = null;
    const pkg = (name: string, zip: Buffer, from: string, until: string) =>
      `<url><loc>${base}/${name}</loc><rs:md type="application/zip" length="${zip.length}" from="${from}" until="${until}"/></url>`;
    const docs: Record<string, string> = {
      '/cap.xml': `<urlset ${ns}><rs:md capability="capabilitylist"/><url><loc>${base}/rl.xml</loc><rs:md capability="resourcelist"/></url><url><loc>${base}/cd.xml</loc><rs:md capability="changedump"/></url></urlset>`,
      '/rl.xml': `<urlset ${ns}><rs:md capability="resourcelist" at="2024-01-02T00:00:00Z"/><url><loc>${base}/r/k</loc></url></urlset>`,
      '/cd.xml': `<urlset ${ns}><rs:md capability="changedump" from="2024-01-02T00:00:00Z"/>` +
        pkg('p1.zip', p1, '2024-01-02T00:00:00Z', '2024-01-02T04:00:00Z') +
        pkg('p2.zip', p2, '2024-01-02T04:00:00Z', '2024-01-02T08:00:00Z') +
        pkg('p3.zip', p3, '2024-01-02T08:00:00Z', '2024-01-02T12:00:00Z') + '</urlset>',
    };
    const zips: Record<string, Buffer> = { '/p1.zip': p1, '/p2.zip': p2, '/p3.zip': p3 };
    server.on('request', (req, res) => {
      const path = req.url ?? '/';
      if (docs[path]) return void res.writeHead(200, { 'content-type': 'application/xml' }).end(docs[path]);
      if (path === '/p3.zip' && stallP3) {
        res.writeHead(200, { 'content-type': 'application/zip', 'content-length': p3.length });
        res.write(p3.subarray(0, 10));
        onP3?.();
        return;
      }
      if (zips[path]) return void res.writeHead(200, { 'content-type': 'application/zip', 'content-length': zips[path].length }).end(zips[path]);
      if (path === '/r/k') return void res.writeHead(200).end('k before\n');
      res.writeHead(404).end();
    });
    const notes: string[] = [];
    const mirror = (o: Partial<SyncOptions> = {}) => sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, deletePolicy: 'delete', onNote: (n) => void notes.push(n), ...o });
    expect(await mirror()).toMatchObject({ mode: 'baseline', created: 1 });
    stallP3 = true;
    const abort = new AbortController();
    onP3 = () => setTimeout(() => abort.abort(), 700);
    await expect(mirror({ signal: abort.signal })).rejects.toThrow();
    const xFile = join(dest, new URL(base).host.replace(':', '_'), 'r', 'x');
    // As a kill would leave it: running, by a process that is gone.
    let state = new MirrorState(stateDirOf(dest));
    const id = state.runs().at(-1)!.id;
    state.db.prepare("UPDATE runs SET status = 'running', pid = 2147483646 WHERE id = ?").run(id);
    state.markInterrupted();
    state.close();
    stallP3 = false;
    const resumed = await mirror();
    expect(resumed.resumed).toBe(true);
    expect(existsSync(xFile)).toBe(false);
  });
});

describe('a Change Dump whose package is dated in the future (until 9999)', () => {
  let server: Server;
  afterEach(() => new Promise<void>((r) => server.close(() => r())));

  it('does not move the checkpoint to its until (nor to now), so the Change List changes after it are still applied', async () => {
    server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
    const A = 'a\n';
    const B = 'b\n';
    const R0 = 'r0\n';
    const zip = await buildZip([
      { name: 'manifest.xml', body: manifestXml('changedump-manifest', [{ loc: `${base}/r/a`, path: '/a', change: 'created', datetime: '2024-01-02T00:00:01Z', hash: `md5:${md5(A)}` }]) },
      { name: 'a', body: A },
    ]);
    const entry = (path: string, md: string) => `<url><loc>${base}${path}</loc><rs:md ${md}/></url>`;
    const docs: Record<string, string> = {
      '/cap.xml': `<urlset ${ns}><rs:md capability="capabilitylist"/>${entry('/rl.xml', 'capability="resourcelist"')}${entry('/cd.xml', 'capability="changedump"')}${entry('/cl.xml', 'capability="changelist"')}</urlset>`,
      '/rl.xml': `<urlset ${ns}><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>${entry('/r/r0', `hash="md5:${md5(R0)}"`)}</urlset>`,
      '/cd.xml':
        `<urlset ${ns}><rs:md capability="changedump" from="2024-01-01T00:00:00Z"/>` +
        entry('/p.zip', `type="application/zip" length="${zip.length}" from="2024-01-01T00:00:00Z" until="9999-01-01T00:00:00Z" hash="md5:${createHash('md5').update(zip).digest('hex')}"`) +
        '</urlset>',
      '/cl.xml': `<urlset ${ns}><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>${entry('/r/a', `change="created" datetime="2024-01-02T00:00:01Z" hash="md5:${md5(A)}"`)}</urlset>`,
    };
    const bodies: Record<string, string> = { '/r/r0': R0, '/r/a': A, '/r/b': B };
    server.on('request', (req, res) => {
      const path = req.url ?? '/';
      if (docs[path]) return void res.writeHead(200, { 'content-type': 'application/xml' }).end(docs[path]);
      if (path === '/p.zip') return void res.writeHead(200, { 'content-type': 'application/zip', 'content-length': zip.length }).end(zip);
      if (bodies[path]) return void res.writeHead(200).end(bodies[path]);
      res.writeHead(404).end();
    });
    const mirror = () => sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, proxyEnv: {}, onNote: (n) => void notes.push(n) });
    expect(await mirror()).toMatchObject({ mode: 'baseline', created: 1 });
    const second = await mirror();
    expect(second).toMatchObject({ mode: 'incremental', from: 'dumps', created: 1, failed: 0 });
    // Up to the change applied, not to the package's until (nor to now: the Change List is read from there).
    expect(second.checkpoint).toBe('2024-01-02T00:00:01.000Z');
    expect(notes.join('\n')).toMatch(/The Change Dump gives datetimes in the future \(up to 9999-01-01T00:00:00.000Z\); they do not move the checkpoint/);
    // A change the Change List lists afterwards, and one listed only there, are applied.
    docs['/cl.xml'] = docs['/cl.xml']!.replace('</urlset>', `${entry('/r/b', `change="created" datetime="2024-01-03T00:00:00Z" hash="md5:${md5(B)}"`)}</urlset>`);
    expect(await mirror()).toMatchObject({ mode: 'incremental', created: 1, failed: 0 });
    expect(readFileSync(join(dest, new URL(base).host.replace(':', '_'), 'r', 'b'), 'utf8')).toBe(B);
  });
});

describe('a Change Dump whose newest package gives no from (it may omit it, §13.1)', () => {
  let server: Server;
  afterEach(() => new Promise<void>((r) => server.close(() => r())));

  it('applies its packages in the order listed, so an older package does not undo the newer one', async () => {
    server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
    const [A0, A1, A2] = ['a0\n', 'a1\n', 'a2\n'];
    const pkg = (body: string, datetime: string) =>
      buildZip([
        { name: 'manifest.xml', body: manifestXml('changedump-manifest', [{ loc: `${base}/r/a`, path: '/a', change: 'updated', datetime, hash: `md5:${md5(body)}` }]) },
        { name: 'a', body },
      ]);
    const zips: Record<string, Buffer> = { '/p1.zip': await pkg(A1, '2024-01-01T12:00:00Z'), '/p2.zip': await pkg(A2, '2024-01-02T12:00:00Z') };
    const entry = (path: string, md: string) => `<url><loc>${base}${path}</loc><rs:md ${md}/></url>`;
    const docs: Record<string, string> = {
      '/cap.xml': `<urlset ${ns}><rs:md capability="capabilitylist"/>${entry('/rl.xml', 'capability="resourcelist"')}${entry('/cd.xml', 'capability="changedump"')}${entry('/cl.xml', 'capability="changelist"')}</urlset>`,
      '/rl.xml': `<urlset ${ns}><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>${entry('/r/a', `hash="md5:${md5(A0)}"`)}</urlset>`,
      // The first package with its period, the newer one after it without (from and until are optional).
      '/cd.xml':
        `<urlset ${ns}><rs:md capability="changedump" from="2024-01-01T00:00:00Z"/>` +
        entry('/p1.zip', `type="application/zip" length="${zips['/p1.zip']!.length}" from="2024-01-01T00:00:00Z" until="2024-01-02T00:00:00Z"`) +
        entry('/p2.zip', `type="application/zip" length="${zips['/p2.zip']!.length}"`) +
        '</urlset>',
      '/cl.xml': `<urlset ${ns}><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/></urlset>`,
    };
    server.on('request', (req, res) => {
      const path = req.url ?? '/';
      if (docs[path]) return void res.writeHead(200, { 'content-type': 'application/xml' }).end(docs[path]);
      if (zips[path]) return void res.writeHead(200, { 'content-type': 'application/zip', 'content-length': zips[path]!.length }).end(zips[path]);
      if (path === '/r/a') return void res.writeHead(200).end(A0);
      res.writeHead(404).end();
    });
    const mirror = () => sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, proxyEnv: {}, onNote: (n) => void notes.push(n) });
    expect(await mirror()).toMatchObject({ mode: 'baseline', created: 1 });
    const second = await mirror();
    expect(second).toMatchObject({ mode: 'incremental', from: 'dumps', updated: 2, failed: 0 });
    expect(readFileSync(join(dest, new URL(base).host.replace(':', '_'), 'r', 'a'), 'utf8')).toBe(A2);
    expect(second.checkpoint).toBe('2024-01-02T12:00:00.000Z');
  });
});

describe('a Change Dump Index one of whose Change Dumps cannot be read', () => {
  let server: Server;
  afterEach(() => new Promise<void>((r) => server.close(() => r())));

  it.each([
    ['with a Change List', true],
    ['without a Change List', false],
  ] as const)('does not move the checkpoint past the changes it could not read (%s)', async (_how, withChangeList) => {
    server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
    const [A0, A1, B0, B1] = ['a0\n', 'a1\n', 'b0\n', 'b1\n'];
    const pkg = (uri: string, body: string, datetime: string) =>
      buildZip([
        { name: 'manifest.xml', body: manifestXml('changedump-manifest', [{ loc: `${base}/r/${uri}`, path: `/${uri}`, change: 'updated', datetime, hash: `md5:${md5(body)}` }]) },
        { name: uri, body },
      ]);
    const zips: Record<string, Buffer> = { '/p1.zip': await pkg('a', A1, '2024-01-01T12:00:00Z'), '/p2.zip': await pkg('b', B1, '2024-01-02T12:00:00Z') };
    const entry = (path: string, md: string) => `<url><loc>${base}${path}</loc><rs:md ${md}/></url>`;
    const dump = (p: string, from: string, until: string) =>
      `<urlset ${ns}><rs:md capability="changedump" from="${from}"/>${entry(p, `type="application/zip" length="${zips[p]!.length}" from="${from}" until="${until}"`)}</urlset>`;
    const docs: Record<string, string> = {
      '/cap.xml':
        `<urlset ${ns}><rs:md capability="capabilitylist"/>${entry('/rl.xml', 'capability="resourcelist"')}${entry('/cdi.xml', 'capability="changedump"')}` +
        (withChangeList ? entry('/cl.xml', 'capability="changelist"') : '') +
        '</urlset>',
      '/rl.xml': `<urlset ${ns}><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>${entry('/r/a', `hash="md5:${md5(A0)}"`)}${entry('/r/b', `hash="md5:${md5(B0)}"`)}</urlset>`,
      '/cdi.xml': `<sitemapindex ${ns}><rs:md capability="changedump" from="2024-01-01T00:00:00Z"/><sitemap><loc>${base}/cd1.xml</loc></sitemap><sitemap><loc>${base}/cd2.xml</loc></sitemap></sitemapindex>`,
      '/cd1.xml': dump('/p1.zip', '2024-01-01T00:00:00Z', '2024-01-02T00:00:00Z'),
      '/cd2.xml': dump('/p2.zip', '2024-01-02T00:00:00Z', '2024-01-03T00:00:00Z'),
      '/cl.xml':
        `<urlset ${ns}><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>` +
        entry('/r/a', `change="updated" datetime="2024-01-01T12:00:00Z" hash="md5:${md5(A1)}"`) +
        entry('/r/b', `change="updated" datetime="2024-01-02T12:00:00Z" hash="md5:${md5(B1)}"`) +
        '</urlset>',
    };
    const bodies: Record<string, string> = { '/r/a': A0, '/r/b': B0 };
    let cd1Fails = false;
    server.on('request', (req, res) => {
      const path = req.url ?? '/';
      if (path === '/cd1.xml' && cd1Fails) return void res.writeHead(500).end();
      if (docs[path]) return void res.writeHead(200, { 'content-type': 'application/xml' }).end(docs[path]);
      if (zips[path]) return void res.writeHead(200, { 'content-type': 'application/zip', 'content-length': zips[path]!.length }).end(zips[path]);
      if (bodies[path]) return void res.writeHead(200).end(bodies[path]);
      res.writeHead(404).end();
    });
    const mirror = () => sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, proxyEnv: {}, onNote: (n) => void notes.push(n) });
    expect(await mirror()).toMatchObject({ mode: 'baseline', created: 2 });
    // From here the Source serves the new versions; the first Change Dump is down for this run.
    bodies['/r/a'] = A1;
    bodies['/r/b'] = B1;
    cd1Fails = true;
    const second = await mirror();
    expect(second).toMatchObject({ mode: 'incremental', from: 'dumps' });
    const file = (uri: string) => readFileSync(join(dest, new URL(base).host.replace(':', '_'), 'r', uri), 'utf8');
    expect(file('b')).toBe(B1);
    if (withChangeList) {
      // The Change List brings what the unread Change Dump held.
      expect(file('a')).toBe(A1);
      expect(second.failed).toBe(0);
    } else {
      // Said as a failure, and the checkpoint stays before what could not be read: the next run reads it.
      expect(second.failures).toEqual([{ uri: `${base}/cdi.xml`, reason: expect.stringMatching(/cd1\.xml could not be read/) }]);
      expect(second.checkpoint).toBe('2024-01-01T00:00:00Z');
      cd1Fails = false;
      expect(await mirror()).toMatchObject({ mode: 'incremental', failed: 0 });
      expect(file('a')).toBe(A1);
      expect(file('b')).toBe(B1);
    }
  });
});
