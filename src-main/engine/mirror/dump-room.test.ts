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
import { sync } from './sync.ts';
import { smallDisk } from './small-disk.ts';

const small = smallDisk('dump-room-', '20m');

const MiB = 1024 * 1024;
let server: Server | null = null;
afterEach(async () => {
  await new Promise<void>((r) => (server === null ? r() : server.close(() => r())));
  // Each test begins with the whole small disk free (its reserve is half of what is free when a run begins).
  if (small !== null) for (const name of readdirSync(small)) rmSync(join(small, name), { recursive: true, force: true });
});

/** A Source whose Resource Dump has one package of `count` stored bitstreams of `size` bytes; the paths it was asked. */
async function source(count: number, size: number, declared = true, manifestLengths = true) {
  server = createServer();
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
  const bodies = Array.from({ length: count }, (_, i) => ({ name: `b${i}`, body: randomBytes(size) }));
  const zip = await buildZip([
    { name: 'manifest.xml', body: manifestXml('resourcedump-manifest', bodies.map(({ name, body }) => ({ loc: `${base}/r/${name}`, path: `/${name}`, hash: `md5:${md5(body)}`, length: manifestLengths ? body.length : undefined }))) },
    ...bodies.map(({ name, body }) => ({ name, body, compress: false })),
  ]);
  const docs: Record<string, string> = {
    '/cap.xml': `<urlset ${ns}><rs:md capability="capabilitylist"/><url><loc>${base}/rd.xml</loc><rs:md capability="resourcedump"/></url></urlset>`,
    '/rd.xml': `<urlset ${ns}><rs:md capability="resourcedump" at="2024-01-01T00:00:00Z"/><url><loc>${base}/p0.zip</loc><rs:md type="application/zip"${declared ? ` length="${zip.length}"` : ''}/></url></urlset>`,
  };
  const requests: string[] = [];
  server.on('request', (req, res) => {
    const path = req.url ?? '/';
    requests.push(path);
    if (docs[path]) return void res.writeHead(200, { 'content-type': 'application/xml' }).end(docs[path]);
    if (path === '/p0.zip') return void res.writeHead(200, { 'content-type': 'application/zip', 'content-length': zip.length }).end(zip);
    res.writeHead(404).end();
  });
  return { base, requests, zip };
}

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

  it('too large to download above the reserve: refused before a byte of it is fetched, the run failed with why', async () => {
    const dest = mkdtempSync(join(small!, 'a-'));
    const { base, requests } = await source(3, 10 * MiB);
    const error = await sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, mode: 'baseline' }).catch((err: unknown) => err);
    const message = (error as Error).message;
    expect(message).toMatch(new RegExp(`^Downloading the package ${base}/p0\\.zip needs 30 MiB \\(by the length the Dump gives it; what its bitstreams take once extracted is known only from the package\\), but the disk holding ${dest} has [\\d.]+ MiB free, of which [\\d.]+ MiB is kept for the rest of the computer, so the run stopped before it\\. What was verified stays\\. Free some space and run it again\\.$`));
    expect(requests).not.toContain('/p0.zip');
    const run = lastRun(dest);
    expect(run).toMatchObject({ status: 'failed', message });
    expect(run.failures).toEqual([{ uri: `${base}/p0.zip`, reason: message }]);
    expect(freeOf(small!)).toBeGreaterThan(15 * MiB);
  });

  it('downloaded, but its bitstreams do not fit: refused before they are extracted, the run failed with why', async () => {
    const dest = mkdtempSync(join(small!, 'b-'));
    // ~7.5 MiB to download (fits in the ~10 MiB above the reserve), as much again to extract (does not).
    const { base, requests } = await source(3, 2.5 * MiB);
    const error = await sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, mode: 'baseline' }).catch((err: unknown) => err);
    const message = (error as Error).message;
    expect(message).toMatch(
      new RegExp(
        `^Extracting the package ${base}/p0\\.zip needs 7\\.5 MiB \\(by the sizes the package's ZIP directory gives its 3 bitstreams, which the manifest gives too\\), but the disk holding ${dest} has [\\d.]+ MiB free, of which [\\d.]+ MiB is kept for the rest of the computer, so the run stopped before it\\.`,
      ),
    );
    expect(requests).toContain('/p0.zip');
    const run = lastRun(dest);
    expect(run).toMatchObject({ status: 'failed', message, created: 0 });
    expect(run.failures).toEqual([{ uri: `${base}/p0.zip`, reason: message }]);
    // Nothing extracted into the mirror's tree.
    expect(readdirSync(dest).filter((n) => !n.startsWith('.'))).toEqual([]);
  });
});

describe.skipIf(small === null)('a Resource Dump package whose manifest gives no lengths on a small disk', () => {
  it('is sized by its ZIP directory: refused before its bitstreams are extracted, and the message says by what', async () => {
    const dest = mkdtempSync(join(small!, 'e-'));
    // Counted by the manifest's lengths alone, these bitstreams needed nothing: the check passed, and extraction ran
    // until the polled reserve (or the full disk) stopped it, with files half written into the work folder.
    const { base } = await source(3, 2.5 * MiB, true, false);
    const error = await sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, mode: 'baseline' }).catch((err: unknown) => err);
    const message = (error as Error).message;
    expect(message).toMatch(
      new RegExp(`^Extracting the package ${base}/p0\\.zip needs 7\\.5 MiB \\(by the sizes the package's ZIP directory gives its 3 bitstreams, which the manifest does not give\\), but the disk`),
    );
    expect(lastRun(dest)).toMatchObject({ status: 'failed', message, created: 0 });
    expect(readdirSync(dest).filter((n) => !n.startsWith('.'))).toEqual([]);
  });
});

describe.skipIf(small === null)('a Change Dump package on a small disk', () => {
  /** A Source with an empty Resource List and a Change Dump of one package creating `count` resources of `size` bytes. */
  async function changeSource(count: number, size: number) {
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
      '/cap.xml': `<urlset ${ns}><rs:md capability="capabilitylist"/><url><loc>${base}/rl.xml</loc><rs:md capability="resourcelist"/></url><url><loc>${base}/cd.xml</loc><rs:md capability="changedump"/></url></urlset>`,
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
      res.writeHead(404).end();
    });
    return { base, requests };
  }

  it.each([
    ['too large to download', 3, 10 * MiB, 'Downloading', false],
    ['downloaded, but its bitstreams do not fit', 3, 2.5 * MiB, 'Extracting', true],
  ])('%s: refused, the run failed with why, the checkpoint unmoved', async (_label, count, size, doing, fetched) => {
    const dest = mkdtempSync(join(small!, 'cd-'));
    const { base, requests } = await changeSource(count, size);
    const mirror = () => sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true });
    expect(await mirror()).toMatchObject({ mode: 'baseline', from: 'lists', created: 0, failed: 0 });
    const error = await mirror().catch((err: unknown) => err);
    const message = (error as Error).message;
    expect(message).toMatch(new RegExp(`^${doing} the package ${base}/p\\.zip needs [\\d.]+ MiB \\(by [^)]+\\), but the disk holding ${dest} has [\\d.]+ MiB free, of which [\\d.]+ MiB is kept for the rest of the computer, so the run stopped before it\\.`));
    expect(requests.includes('/p.zip')).toBe(fetched);
    const run = lastRun(dest);
    expect(run).toMatchObject({ mode: 'auto', status: 'failed', message, created: 0 });
    expect(run.failures).toEqual([{ uri: `${base}/p.zip`, reason: message }]);
    const state = new MirrorState(stateDirOf(dest));
    try {
      expect(state.checkpoint()?.at).toBe('2024-01-01T00:00:00Z');
    } finally {
      state.close();
    }
  });
});

describe.skipIf(small === null)('a Resource Dump package of no declared length on a small disk', () => {
  it('fills the disk only until the reserve or the full disk stops the run, which ends failed and says so', async () => {
    const dest = mkdtempSync(join(small!, 'd-'));
    const { base } = await source(3, 10 * MiB, false);
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
    const error = await sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, useDumps: true, mode: 'baseline' }).catch((err: unknown) => err);
    // Asked for only once the first was in the mirror (its package gone): and then its bitstream does not fit.
    expect(seen.firstExtracted).toBe(true);
    expect((error as Error).message).toMatch(new RegExp(`^Extracting the package ${base}/p1\\.zip needs 4 MiB`));
    expect(lastRun(dest)).toMatchObject({ status: 'failed', created: 1 });
  });
});
