// A Resource Dump package on a small disk: the Dump gives each package's length and its manifest each bitstream's,
// so a package that does not fit above the disk's reserve is refused before it is downloaded or extracted, the run
// stops saying how much room it needs and how much there is, and the disk is not filled. (Polled alone, the reserve
// fired at 92 KiB free on a 20 MiB disk, which ended full.) A real tmpfs: only root may mount one, so elsewhere these
// are skipped.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, statfsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildZip, manifestXml, md5 } from './package/test-zips.ts';
import { MirrorState, stateDirOf } from './state.ts';
import { failedMessage, sync } from './sync.ts';
import { smallDisk } from './small-disk.ts';

const small = smallDisk('dump-room-', '20m');

const MiB = 1024 * 1024;
let server: Server | null = null;
afterEach(async () => {
  await new Promise<void>((r) => (server === null ? r() : server.close(() => r())));
  // Each test begins with the whole small disk free (its reserve is half of what is free when a run begins).
  if (small !== null) for (const name of readdirSync(small)) rmSync(join(small, name), { recursive: true, force: true });
});

interface SourceOptions {
  /** The Dump gives each package's length. */
  declared?: boolean;
  /** The manifests give each bitstream's length. */
  manifestLengths?: boolean;
  /** The Capability List names a Resource List too (its resources are served one by one either way). */
  resourceList?: boolean;
  /** The Dump links each package's manifest (rel="contents"). */
  contents?: boolean;
}

/**
 * A Source whose Resource Dump has one package per item of `packages`, of `count` stored bitstreams of `size` bytes
 * each (package i's are /r/p{i}b{j}); the paths it was asked.
 */
async function dumpSource(packages: { count: number; size: number }[], o: SourceOptions = {}) {
  server = createServer();
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
  const resources = new Map<string, Buffer>();
  const docs: Record<string, string> = {};
  const zips: Buffer[] = [];
  for (const [p, { count, size }] of packages.entries()) {
    const bodies = Array.from({ length: count }, (_, i) => ({ name: `p${p}b${i}`, body: randomBytes(size) }));
    for (const { name, body } of bodies) resources.set(`/r/${name}`, body);
    const manifest = manifestXml(
      'resourcedump-manifest',
      bodies.map(({ name, body }) => ({ loc: `${base}/r/${name}`, path: `/${name}`, hash: `md5:${md5(body)}`, length: o.manifestLengths === false ? undefined : body.length })),
    );
    docs[`/m${p}.xml`] = manifest;
    zips.push(await buildZip([{ name: 'manifest.xml', body: manifest }, ...bodies.map(({ name, body }) => ({ name, body, compress: false }))]));
  }
  docs['/cap.xml'] =
    `<urlset ${ns}><rs:md capability="capabilitylist"/>` +
    (o.resourceList ? `<url><loc>${base}/rl.xml</loc><rs:md capability="resourcelist"/></url>` : '') +
    `<url><loc>${base}/rd.xml</loc><rs:md capability="resourcedump"/></url></urlset>`;
  docs['/rl.xml'] =
    `<urlset ${ns}><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>` +
    [...resources].map(([path, body]) => `<url><loc>${base}${path}</loc><rs:md hash="md5:${md5(body)}" length="${body.length}"/></url>`).join('') +
    `</urlset>`;
  docs['/rd.xml'] =
    `<urlset ${ns}><rs:md capability="resourcedump" at="2024-01-01T00:00:00Z"/>` +
    zips
      .map(
        (zip, p) =>
          `<url><loc>${base}/p${p}.zip</loc><rs:md type="application/zip"${o.declared === false ? '' : ` length="${zip.length}"`}/>` +
          (o.contents ? `<rs:ln rel="contents" href="${base}/m${p}.xml" type="application/xml"/>` : '') +
          `</url>`,
      )
      .join('') +
    `</urlset>`;
  const requests: string[] = [];
  server.on('request', (req, res) => {
    const path = req.url ?? '/';
    requests.push(path);
    if (docs[path]) return void res.writeHead(200, { 'content-type': 'application/xml' }).end(docs[path]);
    const zip = /^\/p(\d+)\.zip$/.exec(path);
    if (zip && zips[Number(zip[1])]) return void res.writeHead(200, { 'content-type': 'application/zip', 'content-length': zips[Number(zip[1])]!.length }).end(zips[Number(zip[1])]);
    const body = resources.get(path);
    if (body) return void res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length }).end(body);
    res.writeHead(404).end();
  });
  return { base, requests };
}

/** A Source whose Resource Dump has one package of `count` stored bitstreams of `size` bytes; the paths it was asked. */
const source = (count: number, size: number, o: SourceOptions = {}) => dumpSource([{ count, size }], o);

function lastRun(dest: string) {
  const state = new MirrorState(stateDirOf(dest));
  try {
    const run = state.runs().at(-1)!;
    return { ...run, failures: state.failures(run.id) };
  } finally {
    state.close();
  }
}

const freeOf = (dir: string) => {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
};

describe.skipIf(small === null)('a Resource Dump package on a small disk', () => {
  it('one that fits is mirrored as before', async () => {
    const dest = mkdtempSync(join(small!, 'c-'));
    const { base } = await source(2, 1 * MiB);
    const result = await sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, mode: 'baseline' });
    expect(result).toMatchObject({ created: 2, failed: 0 });
  });

  it('too large to download above the reserve: refused before a byte of it is fetched, the package failed with why', async () => {
    const dest = mkdtempSync(join(small!, 'a-'));
    const { base, requests } = await source(3, 10 * MiB);
    const result = await sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, mode: 'baseline' });
    expect(requests).not.toContain('/p0.zip');
    expect(result).toMatchObject({ created: 0, failed: 1, checkpoint: null });
    expect(result.failures).toHaveLength(1);
    expect(result.failures[0]!.uri).toBe(`${base}/p0.zip`);
    expect(result.failures[0]!.reason).toMatch(
      new RegExp(
        `^Downloading the package ${base}/p0\\.zip needs 30 MiB \\(by the length the Dump gives it; what its bitstreams take once extracted is known only from the package\\), but the disk holding ${dest} has [\\d.]+ MiB free, of which [\\d.]+ MiB is kept for the rest of the computer\\. ` +
          `The package was not used; the Dump's other packages are, as far as they fit\\. Free some space and sync again to mirror what it holds\\.$`,
      ),
    );
    // A retry fetches from the lists, which this Source does not have: the run's message does not suggest one.
    expect(lastRun(dest)).toMatchObject({ status: 'failed', message: '1 failed for want of disk space (a dump package did not fit): free some space, then sync again: a retry cannot fetch them, as the Source offers them only in its dump packages' });
    expect(freeOf(small!)).toBeGreaterThan(15 * MiB);
  });

  it('downloaded, but its bitstreams do not fit: refused before they are extracted, each of its resources failed as not mirrored', async () => {
    const dest = mkdtempSync(join(small!, 'b-'));
    // ~7.5 MiB to download (fits in the ~10 MiB above the reserve), as much again to extract (does not).
    const { base, requests } = await source(3, 2.5 * MiB);
    const result = await sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, mode: 'baseline' });
    expect(requests).toContain('/p0.zip');
    expect(result).toMatchObject({ created: 0, failed: 3, checkpoint: null });
    expect(result.failures.map((f) => f.uri)).toEqual([0, 1, 2].map((i) => `${base}/r/p0b${i}`));
    for (const { reason } of result.failures) {
      expect(reason).toMatch(
        new RegExp(
          `^Not mirrored: Extracting the package ${base}/p0\\.zip needs 7\\.5 MiB \\(by the sizes the package's ZIP directory gives its 3 bitstreams, which the manifest gives too\\), but the disk holding ${dest} has [\\d.]+ MiB free, of which [\\d.]+ MiB is kept for the rest of the computer\\. ` +
            `Its package was not used, and the Source publishes no Resource List to fetch its resources from one by one\\. Free some space and sync again\\.$`,
        ),
      );
    }
    expect(lastRun(dest)).toMatchObject({ status: 'failed', created: 0, message: expect.stringMatching(/^3 failed for want of disk space .*a retry cannot fetch them, as the Source offers them only in its dump packages$/) });
    // Nothing extracted into the mirror's tree.
    expect(readdirSync(dest).filter((n) => !n.startsWith('.'))).toEqual([]);
  });

  it('more of them than the run keeps in memory: its message counts them all', async () => {
    const dest = mkdtempSync(join(small!, 'k-'));
    const { base } = await source(3, 2.5 * MiB);
    const result = await sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, mode: 'baseline', keptFailures: 1 });
    expect(result).toMatchObject({ failed: 3, failureCount: 3 });
    expect(result.failures).toHaveLength(1);
    expect(lastRun(dest).message).toBe('3 failed for want of disk space (a dump package did not fit): free some space, then sync again: a retry cannot fetch them, as the Source offers them only in its dump packages');
  });
});

describe.skipIf(small === null)('a Resource Dump package whose manifest gives no lengths on a small disk', () => {
  it('is sized by its ZIP directory: refused before its bitstreams are extracted, and the message says by what', async () => {
    const dest = mkdtempSync(join(small!, 'e-'));
    // Counted by the manifest's lengths alone, these bitstreams needed nothing: the check passed, and extraction ran
    // until the polled reserve (or the full disk) stopped it, with files half written into the work folder.
    const { base } = await source(3, 2.5 * MiB, { manifestLengths: false });
    const result = await sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, mode: 'baseline' });
    expect(result).toMatchObject({ created: 0, failed: 3 });
    expect(result.failures[0]!.reason).toMatch(
      new RegExp(`^Not mirrored: Extracting the package ${base}/p0\\.zip needs 7\\.5 MiB \\(by the sizes the package's ZIP directory gives its 3 bitstreams, which the manifest does not give\\), but the disk`),
    );
    expect(readdirSync(dest).filter((n) => !n.startsWith('.'))).toEqual([]);
  });
});

describe.skipIf(small === null)('a Resource Dump package whose manifest claims a huge length for a file it does not hold', () => {
  it('is not refused for it: nothing of that entry is extracted, so it takes no room', async () => {
    const dest = mkdtempSync(join(small!, 'k-'));
    server = createServer();
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
    const body = randomBytes(64 * 1024);
    const zip = await buildZip([
      {
        name: 'manifest.xml',
        body: manifestXml('resourcedump-manifest', [
          { loc: `${base}/r/here`, path: '/here', hash: `md5:${md5(body)}`, length: body.length },
          { loc: `${base}/r/absent`, path: '/absent', length: 1024 ** 4 },
        ]),
      },
      { name: 'here', body },
    ]);
    const docs: Record<string, string> = {
      '/cap.xml': `<urlset ${ns}><rs:md capability="capabilitylist"/><url><loc>${base}/rd.xml</loc><rs:md capability="resourcedump"/></url></urlset>`,
      '/rd.xml': `<urlset ${ns}><rs:md capability="resourcedump" at="2024-01-01T00:00:00Z"/><url><loc>${base}/p.zip</loc><rs:md length="${zip.length}"/></url></urlset>`,
    };
    server.on('request', (req, res) => {
      const path = req.url ?? '/';
      if (docs[path]) return void res.writeHead(200, { 'content-type': 'application/xml' }).end(docs[path]);
      if (path === '/p.zip') return void res.writeHead(200, { 'content-type': 'application/zip', 'content-length': zip.length }).end(zip);
      res.writeHead(404).end();
    });
    // Before, the claimed terabyte was counted: the package was refused, and the one file it holds not mirrored.
    const result = await sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, mode: 'baseline' });
    expect(result).toMatchObject({ created: 1, failed: 1 });
    expect(result.failures).toEqual([{ uri: `${base}/r/absent`, reason: expect.stringMatching(/is in the manifest but not in the package/) }]);
  });
});

describe.skipIf(small === null)('a Resource Dump of several packages, one of which does not fit', () => {
  const files = (dest: string, base: string) => {
    const root = join(dest, new URL(base).host.replace(':', '_'), 'r');
    return existsSync(root) ? readdirSync(root).sort() : [];
  };

  it('too large to download: the packages before and after it are applied, it alone failed, and the mirror gets no checkpoint', async () => {
    const dest = mkdtempSync(join(small!, 'h-'));
    // Before, the run stopped at the package that did not fit: the one after it, which did, was never applied.
    const { base, requests } = await dumpSource([
      { count: 1, size: 512 * 1024 },
      { count: 1, size: 12 * MiB },
      { count: 1, size: 512 * 1024 },
    ]);
    const result = await sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, mode: 'baseline' });
    expect(requests).not.toContain('/p1.zip');
    expect(result).toMatchObject({ created: 2, failed: 1, checkpoint: null });
    expect(result.failures.map((f) => f.uri)).toEqual([`${base}/p1.zip`]);
    expect(files(dest, base)).toEqual(['p0b0', 'p2b0']);
    expect(lastRun(dest)).toMatchObject({ status: 'failed', created: 2 });
  });

  it.each([
    ['with a Resource List, they are fetched one by one from their URIs and the run completes', true],
    ['without one, they are listed as not mirrored, and the run failed', false],
  ])('its bitstreams do not fit beside the package: %s', async (_label, resourceList) => {
    const dest = mkdtempSync(join(small!, 'i-'));
    // ~9 MiB above the reserve after the first package: 5 MiB to download fit, 5 more to extract beside it do not;
    // without the package, its 5 MiB of bitstreams do.
    const { base, requests } = await dumpSource(
      [
        { count: 1, size: 512 * 1024 },
        { count: 2, size: 2.5 * MiB },
        { count: 1, size: 512 * 1024 },
      ],
      { resourceList },
    );
    const notes: string[] = [];
    const result = await sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, mode: 'baseline', onNote: (n) => notes.push(n) });
    expect(requests).toContain('/p1.zip');
    expect(requests).toContain('/p2.zip');
    if (resourceList) {
      expect(result).toMatchObject({ from: 'dumps', created: 4, failed: 0, checkpoint: '2024-01-01T00:00:00Z' });
      expect(requests.filter((r) => r.startsWith('/r/'))).toEqual(['/r/p1b0', '/r/p1b1']);
      expect(notes).toContainEqual(expect.stringMatching(new RegExp(`^Extracting the package ${base}/p1\\.zip needs 5 MiB .* The package was not used; its 2 resources are fetched one by one from their URIs instead\\.$`)));
      expect(files(dest, base)).toEqual(['p0b0', 'p1b0', 'p1b1', 'p2b0']);
      expect(lastRun(dest)).toMatchObject({ status: 'completed' });
    } else {
      expect(result).toMatchObject({ from: 'dumps', created: 2, failed: 2, checkpoint: null });
      expect(requests.filter((r) => r.startsWith('/r/'))).toEqual([]);
      expect(result.failures.map((f) => f.uri)).toEqual([`${base}/r/p1b0`, `${base}/r/p1b1`]);
      expect(files(dest, base)).toEqual(['p0b0', 'p2b0']);
      expect(lastRun(dest)).toMatchObject({ status: 'failed' });
    }
  });

  it.each([
    ['and no Resource List', false, 'the Source publishes no Resource List to fetch its resources from one by one\\.'],
    [
      'and a Resource List, but no room for them one by one either',
      true,
      `fetching its resources one by one needs 10\\.5 MiB \\(by the lengths its manifest gives 3 of its 3 resources\\), but the disk holding .* has [\\d.]+ MiB free, of which [\\d.]+ MiB is kept for the rest of the computer\\.`,
    ],
  ])('too large to download, the Dump linking its manifest %s: each resource it holds failed as not mirrored, saying why', async (_label, resourceList, why) => {
    const dest = mkdtempSync(join(small!, 'j-'));
    const { base, requests } = await dumpSource([{ count: 3, size: 3.5 * MiB }], { resourceList, contents: true });
    const result = await sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, mode: 'baseline' });
    expect(requests).not.toContain('/p0.zip');
    expect(requests).toContain('/m0.xml');
    expect(requests.filter((r) => r.startsWith('/r/'))).toEqual([]);
    expect(result).toMatchObject({ from: 'dumps', created: 0, failed: 3, checkpoint: null });
    expect(result.failures.map((f) => f.uri)).toEqual([0, 1, 2].map((i) => `${base}/r/p0b${i}`));
    expect(result.failures[0]!.reason).toMatch(
      new RegExp(`^Not mirrored: Downloading the package ${base}/p0\\.zip needs [\\d.]+ MiB \\(by the length the Dump gives it; [^)]*\\), but the disk holding ${dest} has [\\d.]+ MiB free, of which [\\d.]+ MiB is kept for the rest of the computer\\. Its package was not used, and ${why} Free some space and sync again\\.$`),
    );
  });
});

describe.skipIf(small === null)('a Change Dump package on a small disk', () => {
  /**
   * A Source with an empty Resource List and a Change Dump of one package creating `count` resources of `size` bytes
   * (and, with `changeList`, a Change List of the same changes; the resources are served one by one either way).
   */
  async function changeSource(count: number, size: number, changeList = false) {
    server = createServer();
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
    const bodies = Array.from({ length: count }, (_, i) => ({ name: `c${i}`, body: randomBytes(size) }));
    const entries = bodies.map(({ name, body }, i) => ({
      loc: `${base}/r/${name}`,
      path: `/${name}`,
      change: 'created' as const,
      datetime: new Date(Date.UTC(2024, 0, 2) + i * 1000).toISOString(),
      hash: `md5:${md5(body)}`,
      length: body.length,
    }));
    const zip = await buildZip([{ name: 'manifest.xml', body: manifestXml('changedump-manifest', entries) }, ...bodies.map(({ name, body }) => ({ name, body, compress: false }))]);
    const docs: Record<string, string> = {
      '/cap.xml':
        `<urlset ${ns}><rs:md capability="capabilitylist"/><url><loc>${base}/rl.xml</loc><rs:md capability="resourcelist"/></url><url><loc>${base}/cd.xml</loc><rs:md capability="changedump"/></url>` +
        (changeList ? `<url><loc>${base}/cl.xml</loc><rs:md capability="changelist"/></url>` : '') +
        `</urlset>`,
      '/cl.xml':
        `<urlset ${ns}><rs:md capability="changelist" from="2024-01-01T00:00:00Z" until="2024-01-03T00:00:00Z"/>` +
        entries.map((e) => `<url><loc>${e.loc}</loc><rs:md change="created" datetime="${e.datetime}" hash="${e.hash}" length="${e.length}"/></url>`).join('') +
        `</urlset>`,
      '/rl.xml': `<urlset ${ns}><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/></urlset>`,
      '/cd.xml':
        `<urlset ${ns}><rs:md capability="changedump" from="2024-01-01T00:00:00Z"/><url><loc>${base}/p.zip</loc>` +
        `<rs:md type="application/zip" length="${zip.length}" from="2024-01-01T00:00:00Z" until="2024-01-03T00:00:00Z"/></url></urlset>`,
    };
    const requests: string[] = [];
    server.on('request', (req, res) => {
      const path = req.url ?? '/';
      requests.push(path);
      if (docs[path]) return void res.writeHead(200, { 'content-type': 'application/xml' }).end(docs[path]);
      if (path === '/p.zip') return void res.writeHead(200, { 'content-type': 'application/zip', 'content-length': zip.length }).end(zip);
      const body = bodies.find((b) => path === `/r/${b.name}`)?.body;
      if (body) return void res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length }).end(body);
      res.writeHead(404).end();
    });
    return { base, requests };
  }

  it.each([
    ['too large to download', 3, 10 * MiB, 'Downloading', false],
    ['downloaded, but its bitstreams do not fit', 3, 2.5 * MiB, 'Extracting', true],
  ])('%s, and no Change List: refused, the run failed with why, the checkpoint unmoved', async (_label, count, size, doing, fetched) => {
    const dest = mkdtempSync(join(small!, 'cd-'));
    const { base, requests } = await changeSource(count, size);
    const mirror = () => sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true });
    expect(await mirror()).toMatchObject({ mode: 'baseline', from: 'lists', created: 0, failed: 0 });
    const result = await mirror();
    expect(result).toMatchObject({ mode: 'incremental', from: 'dumps', created: 0, failed: 1 });
    expect(result.failures).toEqual([
      {
        uri: `${base}/p.zip`,
        reason: expect.stringMatching(
          new RegExp(
            `^${doing} the package ${base}/p\\.zip needs [\\d.]+ MiB \\(by [^)]+\\), but the disk holding ${dest} has [\\d.]+ MiB free, of which [\\d.]+ MiB is kept for the rest of the computer\\. ` +
              `The package was not used; the packages after it were not applied, so changes stay in order\\. Free some space and sync again$`,
          ),
        ),
        needsRoom: true,
      },
    ]);
    expect(requests.includes('/p.zip')).toBe(fetched);
    expect(lastRun(dest)).toMatchObject({
      mode: 'auto',
      status: 'failed',
      created: 0,
      message: '1 failed for want of disk space (a dump package did not fit): free some space, then sync again: a retry cannot fetch them, as the Source offers them only in its dump packages',
    });
    const state = new MirrorState(stateDirOf(dest));
    try {
      expect(state.checkpoint()?.at).toBe('2024-01-01T00:00:00Z');
    } finally {
      state.close();
    }
  });

  it('downloaded, but its bitstreams do not fit, with a Change List: its changes are fetched one by one from the Change List and the run completes', async () => {
    // Before, the refusal stopped the whole run, the Change List part with it.
    const dest = mkdtempSync(join(small!, 'ce-'));
    const { base, requests } = await changeSource(3, 2.5 * MiB, true);
    const notes: string[] = [];
    const mirror = () => sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, onNote: (n) => notes.push(n) });
    expect(await mirror()).toMatchObject({ mode: 'baseline', created: 0, failed: 0 });
    const result = await mirror();
    expect(result).toMatchObject({ mode: 'incremental', from: 'dumps', created: 3, failed: 0 });
    expect(requests).toContain('/p.zip');
    expect(requests.filter((r) => r.startsWith('/r/')).sort()).toEqual(['/r/c0', '/r/c1', '/r/c2']);
    expect(notes).toContainEqual(expect.stringMatching(/^http:.*\/p\.zip: Extracting the package .* The package was not used; its changes and those after it are fetched from the Change List instead\.$/));
    expect(lastRun(dest)).toMatchObject({ status: 'completed', created: 3 });
  });
});

describe.skipIf(small === null)('a Resource Dump package of no declared length on a small disk', () => {
  it('fills the disk only until the reserve or the full disk stops the run, which ends failed and says so', async () => {
    const dest = mkdtempSync(join(small!, 'd-'));
    const { base } = await source(3, 10 * MiB, { declared: false });
    const error = await sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, mode: 'baseline' }).catch((err: unknown) => err);
    const message = (error as Error).message;
    expect(message).toMatch(new RegExp(`^The disk holding ${dest} (is full|has only [\\d.]+ [KM]iB free), so the run stopped`));
    expect(lastRun(dest)).toMatchObject({ status: 'failed', message });
    // Stopped by the full disk (a download at local speed outruns the looks), the partial download went: the disk is
    // not left full. (Stopped by a look, it stays to be resumed, below the reserve.)
    if (/is full/.test(message)) expect(freeOf(small!)).toBeGreaterThan(15 * MiB);
  });
});

describe.skipIf(small === null)('two Resource Dump packages on a small disk', () => {
  /** A Dump of two packages of one stored bitstream of `size` bytes; whether the first was in the mirror when the second was asked for. */
  async function twoPackages(dest: string, size: number) {
    server = createServer();
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
    const zips = await Promise.all(
      [0, 1].map((p) => {
        const body = randomBytes(size);
        return buildZip([
          { name: 'manifest.xml', body: manifestXml('resourcedump-manifest', [{ loc: `${base}/r/p${p}`, path: `/p${p}`, hash: `md5:${md5(body)}`, length: body.length }]) },
          { name: `p${p}`, body, compress: false },
        ]);
      }),
    );
    const docs: Record<string, string> = {
      '/cap.xml': `<urlset ${ns}><rs:md capability="capabilitylist"/><url><loc>${base}/rd.xml</loc><rs:md capability="resourcedump"/></url></urlset>`,
      '/rd.xml':
        `<urlset ${ns}><rs:md capability="resourcedump" at="2024-01-01T00:00:00Z"/>` +
        zips.map((zip, i) => `<url><loc>${base}/p${i}.zip</loc><rs:md type="application/zip" length="${zip.length}"/></url>`).join('') +
        `</urlset>`,
    };
    const host = new URL(base).host.replace(':', '_');
    const seen: { firstExtracted: boolean | null } = { firstExtracted: null };
    server.on('request', (req, res) => {
      const path = req.url ?? '/';
      if (docs[path]) return void res.writeHead(200, { 'content-type': 'application/xml' }).end(docs[path]);
      const p = /^\/p(\d)\.zip$/.exec(path);
      if (p) {
        if (p[1] === '1') seen.firstExtracted ??= existsSync(join(dest, host, 'r', 'p0'));
        const zip = zips[Number(p[1])]!;
        return void res.writeHead(200, { 'content-type': 'application/zip', 'content-length': zip.length }).end(zip);
      }
      res.writeHead(404).end();
    });
    return { base, seen };
  }

  it('with room for both, the next package still downloads while the first is read', async () => {
    const dest = mkdtempSync(join(small!, 'g-'));
    const { base, seen } = await twoPackages(dest, 1 * MiB);
    expect(await sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, mode: 'baseline' })).toMatchObject({ created: 2, failed: 0 });
    expect(seen.firstExtracted).toBe(false);
  });

  it('the next package is not downloaded ahead while the one being read takes the room it would need', async () => {
    const dest = mkdtempSync(join(small!, 'f-'));
    // ~9.9 MiB above the reserve: 4 MiB of the first package and 4 of its bitstream leave too little for the second.
    const { base, seen } = await twoPackages(dest, 4 * MiB);
    const result = await sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, mode: 'baseline' });
    // Asked for only once the first was in the mirror (its package gone): and then its bitstream does not fit.
    expect(seen.firstExtracted).toBe(true);
    expect(result).toMatchObject({ created: 1, failed: 1 });
    expect(result.failures[0]).toMatchObject({ uri: `${base}/r/p1`, reason: expect.stringMatching(new RegExp(`^Not mirrored: Extracting the package ${base}/p1\\.zip needs 4 MiB`)) });
    expect(lastRun(dest)).toMatchObject({ status: 'failed', created: 1 });
  });
});

describe('the message of a run whose failures include packages that did not fit', () => {
  it('suggests a retry only where one can help', () => {
    expect(failedMessage(2, 0, false)).toBe("2 resources failed; the next sync, or a retry of this run's failures, fetches them again");
    expect(failedMessage(1, 1, true)).toBe("1 failed for want of disk space (a dump package did not fit): free some space, then sync again (or retry this run's failures)");
    expect(failedMessage(5, 2, false)).toBe(
      "5 failed, 2 of them for want of disk space (a dump package did not fit): free some space, then sync again: a retry cannot fetch them, as the Source offers them only in its dump packages. The next sync, or a retry of this run's failures, fetches the others again",
    );
  });
});
