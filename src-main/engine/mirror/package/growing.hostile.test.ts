// A hostile Source against a Resource Dump package read while it downloads (growing.ts, source.ts): ranges that lie
// about the package's length, answer out of turn, stall or trickle, a download that breaks, resumes or starts over,
// a run stopped at each phase. Whatever the Source does, nothing is reported that the downloaded package does not
// hold, everything written for a discarded read is removed, and every wait ends.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yazl from 'yazl';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Entry } from '../../documents/index.ts';
import { Http } from '../../http/index.ts';
import type { EntryOutcome } from './model.ts';
import { tempFileSink, type TempFile } from './sinks.ts';
import { readPackage } from './extract.ts';
import { GrowingPackage } from './growing.ts';
import { PartProgress } from './part.ts';
import { fetchPackage, type DumpPackage } from './source.ts';
import { buildZip, manifestXml, md5, patch, storedPackage } from './test-zips.ts';

/** How the server answers one request; `range` is the Range header (undefined for the whole package). */
type Route = (req: IncomingMessage, res: ServerResponse, range: string | undefined) => void;

let server: Server;
let base: string;
let route: Route;
let requests: string[];
let dir: string;
// Waits far longer than a test may take: a read that only ends by the client's own timeouts fails the test.
const http = new Http({ timeoutMs: 120_000 });

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(req.headers.range ?? 'whole');
    route(req, res, req.headers.range);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await http.close();
  await new Promise((r) => server.close(r));
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rsdesk-hostile-growing-'));
  requests = [];
});
afterEach(async () => {
  // Stalled responses of the test that just ended.
  server.closeAllConnections();
  await rm(dir, { recursive: true, force: true });
});

/** Parses `bytes=-N` / `bytes=A-B` / `bytes=A-` against a body of `total` bytes. */
function spanOf(range: string, total: number): { start: number; end: number } {
  const suffix = /^bytes=-(\d+)$/.exec(range);
  if (suffix) return { start: Math.max(0, total - Number(suffix[1])), end: total - 1 };
  const m = /^bytes=(\d+)-(\d*)$/.exec(range)!;
  return { start: Number(m[1]), end: m[2] === '' ? total - 1 : Math.min(total - 1, Number(m[2])) };
}

function sendWhole(res: ServerResponse, body: Buffer, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'application/zip', 'content-length': String(body.length), ...headers });
  res.end(body);
}

/** A 206 of `from`'s bytes, claiming the package is `total` bytes long. */
function sendRange(res: ServerResponse, from: Buffer, range: string, total = from.length, headers: Record<string, string> = {}): void {
  const { start, end } = spanOf(range, total);
  res.writeHead(206, { 'content-type': 'application/zip', 'content-range': `bytes ${start}-${end}/${total}`, 'content-length': String(end - start + 1), ...headers });
  res.end(from.subarray(start, end + 1));
}

/** The whole package in slices of 64 KiB, `everyMs` apart (so readers wait for it). */
function trickle(res: ServerResponse, body: Buffer, everyMs: number, status = 200, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/zip', 'content-length': String(body.length), ...headers });
  let at = 0;
  const next = () => {
    if (res.destroyed) return;
    if (at >= body.length) return void res.end();
    res.write(body.subarray(at, at + 65536));
    at += 65536;
    setTimeout(next, everyMs);
  };
  next();
}

/** `n` stored bitstreams of 256 KiB each, manifest last (test-zips.ts). */
const makePackage = (n = 6) => storedPackage(n);

/** The Dump's entry for the package: `md` as given (no length or hash unless the test gives them). */
function pkgOf(md: Record<string, string>): DumpPackage {
  const entry = { loc: `${base}/package.zip`, md, links: [] } as unknown as Entry;
  return { entry, dumpUrl: `${base}/resourcedump.xml` };
}
// A stopped run rejects with the stop's reason, or with the download's own word for it, whichever notices first.
const stopped = /stopped by the test|^Cancelled: /;
const fixity = (zip: Buffer) => ({ length: String(zip.length), hash: `md5:${md5(zip)}` });

async function read(pkg: DumpPackage, extra: { signal?: AbortSignal } = {}) {
  const out = join(dir, 'out');
  const work = join(dir, 'work');
  await mkdir(out);
  await mkdir(work);
  const sink = tempFileSink(out);
  const seen = { sunk: 0, outcomes: [] as EntryOutcome[], discarded: [] as EntryOutcome[] };
  const result = fetchPackage({
    http,
    package: pkg,
    kind: 'resourcedump',
    workDir: work,
    readAheadFrom: 0,
    quickDownloadSeconds: 0,
    signal: extra.signal,
    sink: async (entry, stream) => {
      seen.sunk++;
      return sink(entry, stream);
    },
    onOutcome: (o) => {
      seen.outcomes.push(o);
    },
    discard: async (o) => {
      seen.discarded.push(o);
      if (o.status !== 'deleted' && o.status !== 'failed') await rm((o.sinkResult as TempFile).path, { force: true });
    },
  });
  result.catch(() => undefined);
  return { result, seen, out, work };
}

/** Every outcome verified, with the package's own bytes; one file per outcome in `out`, nothing else. */
async function expectAllVerified(seen: { outcomes: EntryOutcome[] }, bodies: Map<string, Buffer>, out: string): Promise<void> {
  expect(seen.outcomes).toHaveLength(bodies.size);
  for (const o of seen.outcomes) {
    if (o.status !== 'verified') throw new Error(`${o.entry.loc}: ${o.status} ${'reason' in o ? o.reason : ''}`);
    expect((await readFile((o.sinkResult as TempFile).path)).equals(bodies.get(o.entry.loc)!)).toBe(true);
  }
  expect((await readdir(out)).length).toBe(bodies.size);
}

describe('a hostile Source against a package read while it downloads', () => {
  it('ranges that say the package is longer than the one sent (no length in the Dump): no endless wait, nothing reported', async () => {
    // The ranges are a package of 6 bitstreams; the download is its first half only, a complete response.
    const { zip } = await makePackage();
    const half = zip.subarray(0, Math.floor(zip.length / 2));
    // Slowly, so that readers wait for bytes past its end when it completes.
    route = (_req, res, range) => (range === undefined ? trickle(res, half, 20) : sendRange(res, zip, range));
    const { result, seen, out } = await read(pkgOf({}));
    // Read again from the file, the half package is no ZIP at all.
    await expect(result).rejects.toThrow(/not a readable ZIP/);
    expect(seen.outcomes).toEqual([]);
    // Every outcome held was discarded (failed ones too, which were never given to the sink).
    expect(seen.discarded.length).toBeGreaterThanOrEqual(seen.sunk);
    expect(await readdir(out)).toEqual([]);
  });

  it('ranges that say the package is shorter than the one sent (no length in the Dump): what the file holds decides', async () => {
    // The ranges are a whole, valid package; the download is that package followed by 100 more bytes, which no
    // ZIP reader takes (its end record is no longer at its end). Read ahead, the package looked fine.
    const { zip } = await makePackage(3);
    const longer = Buffer.concat([zip, randomBytes(100)]);
    route = (_req, res, range) => (range === undefined ? sendWhole(res, longer) : sendRange(res, zip, range));
    const { result, seen, out } = await read(pkgOf({ hash: `md5:${md5(longer)}` }));
    await expect(result).rejects.toThrow(/not a readable ZIP/);
    expect(seen.outcomes).toEqual([]);
    // Every outcome held was discarded (failed ones too, which were never given to the sink).
    expect(seen.discarded.length).toBeGreaterThanOrEqual(seen.sunk);
    expect(await readdir(out)).toEqual([]);
  });

  it.each([
    ['stalls after its headers', (res: ServerResponse, zip: Buffer) => {
      res.writeHead(206, { 'content-range': `bytes ${zip.length - 131072}-${zip.length - 1}/${zip.length}`, 'content-length': '131072' });
      res.flushHeaders();
    }],
    ['trickles a byte a second', (res: ServerResponse, zip: Buffer) => {
      res.writeHead(206, { 'content-range': `bytes ${zip.length - 131072}-${zip.length - 1}/${zip.length}`, 'content-length': '131072' });
      const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write(Buffer.alloc(1))), 1000);
    }],
    ['never answers', () => undefined],
  ])('a request for the end of the package that %s: the package is read from the file once downloaded', async (_how, tail) => {
    const { zip, bodies } = await makePackage(3);
    route = (_req, res, range) => (range === undefined ? sendWhole(res, zip) : tail(res, zip));
    const { result, seen, out } = await read(pkgOf(fixity(zip)));
    const { report } = await result;
    expect(report.counts).toMatchObject({ verified: 3, failed: 0 });
    await expectAllVerified(seen, bodies, out);
    expect(requests.filter((r) => r === 'whole')).toHaveLength(1);
  });

  it('a range fetched ahead that stalls while the download completes: the package is read from the file', async () => {
    const { zip, bodies } = await makePackage(3);
    // The end comes at once but holds only part of the directory; the range fetched ahead for the rest never does.
    route = (_req, res, range) => {
      if (range === undefined) return void setTimeout(() => sendWhole(res, zip), 100);
      if (range.startsWith('bytes=-')) return sendRange(res, zip, 'bytes=-200');
    };
    const { result, seen, out } = await read(pkgOf(fixity(zip)));
    const { report } = await result;
    expect(report.counts).toMatchObject({ verified: 3, failed: 0 });
    await expectAllVerified(seen, bodies, out);
  });

  it.each([
    ['other bytes', (res: ServerResponse, zip: Buffer, range: string) => sendRange(res, patch(zip, 'r0.bin', 'central', 'crc', 0x12345678), range)],
    ['500', (res: ServerResponse) => void res.writeHead(500).end()],
  ])('a range ahead held back until the download is complete, then answered with %s: not used', async (_how, answer) => {
    const { zip, bodies } = await makePackage(3);
    // Were the answer used, r0 would be reported failed (the directory as the ranges give it says r0.bin has
    // another CRC-32), or the whole package refused (a range not served).
    let downloaded: () => void;
    const done = new Promise<void>((r) => (downloaded = r));
    route = (_req, res, range) => {
      if (range === undefined) {
        res.writeHead(200, { 'content-length': String(zip.length) });
        return void res.end(zip, () => downloaded());
      }
      // The end record only: the directory is fetched ahead, and answered once the whole package was sent.
      if (range.startsWith('bytes=-')) return sendRange(res, zip, 'bytes=-22');
      void done.then(() => setTimeout(() => answer(res, zip, range), 200));
    };
    const { result, seen, out } = await read(pkgOf(fixity(zip)));
    expect((await result).report.counts).toMatchObject({ verified: 3, failed: 0 });
    await expectAllVerified(seen, bodies, out);
  });

  it.each([
    ['200 with the whole package', (res: ServerResponse, zip: Buffer) => sendWhole(res, zip)],
    ['206 with another range', (res: ServerResponse, zip: Buffer, range: string) => sendRange(res, zip, range.replace(/=(\d+)-/, (_m, a: string) => `=${Number(a) + 1}-`))],
    ['206 whose total is not the Dump\'s length', (res: ServerResponse, zip: Buffer, range: string) => sendRange(res, zip, range, zip.length + 1)],
    ['416', (res: ServerResponse) => void res.writeHead(416).end()],
    ['500', (res: ServerResponse) => void res.writeHead(500).end()],
    ['206 cut short', (res: ServerResponse, zip: Buffer, range: string) => {
      const { start, end } = spanOf(range, zip.length);
      res.writeHead(206, { 'content-range': `bytes ${start}-${end}/${zip.length}`, 'content-length': String(end - start + 1) });
      res.write(zip.subarray(start, start + 10), () => res.destroy());
    }],
  ])('ranges ahead of the download answered with %s: the package is read from the file, downloaded once', async (_how, answer) => {
    // The package's end is small, so the manifest (before it) is fetched ahead while the download trickles.
    const { zip, bodies } = await makePackage(4);
    route = (_req, res, range) => {
      if (range === undefined) return trickle(res, zip, 10);
      if (range.startsWith('bytes=-')) return sendRange(res, zip, 'bytes=-200');
      answer(res, zip, range);
    };
    const { result, seen, out } = await read(pkgOf(fixity(zip)));
    const { report } = await result;
    expect(report.counts).toMatchObject({ verified: 4, failed: 0 });
    await expectAllVerified(seen, bodies, out);
    expect(requests.filter((r) => r === 'whole')).toHaveLength(1);
  });

  it.each([
    ['200 with the whole package', (res: ServerResponse, zip: Buffer) => sendWhole(res, zip)],
    ['416', (res: ServerResponse) => void res.writeHead(416, { 'content-range': 'bytes */1' }).end()],
    ['206 of another range than its end', (res: ServerResponse, zip: Buffer) => sendRange(res, zip, 'bytes=0-99')],
    ['206 gzipped', (res: ServerResponse, zip: Buffer) => sendRange(res, zip, 'bytes=-131072', zip.length, { 'content-encoding': 'gzip' })],
    ['206 longer than asked for', (res: ServerResponse, zip: Buffer) => sendRange(res, zip, 'bytes=-300000')],
  ])('the end of the package answered with %s: read from the file once downloaded', async (_how, tail) => {
    const { zip, bodies } = await makePackage(3);
    route = (_req, res, range) => (range === undefined ? sendWhole(res, zip) : tail(res, zip));
    const { result, seen, out } = await read(pkgOf(fixity(zip)));
    expect((await result).report.counts).toMatchObject({ verified: 3, failed: 0 });
    await expectAllVerified(seen, bodies, out);
    expect(seen.discarded).toEqual([]);
    expect(requests.filter((r) => r === 'whole')).toHaveLength(1);
  });

  it('the end of the package answered with another package\'s length: read from the file', async () => {
    const { zip, bodies } = await makePackage(3);
    route = (_req, res, range) => (range === undefined ? sendWhole(res, zip) : sendRange(res, zip, range, zip.length - 1));
    const { result, seen, out } = await read(pkgOf(fixity(zip)));
    expect((await result).report.counts).toMatchObject({ verified: 3, failed: 0 });
    await expectAllVerified(seen, bodies, out);
    expect(seen.sunk).toBe(3);
  });

  it('a download that breaks while readers wait is resumed, and what was read holds', async () => {
    const { zip, bodies } = await makePackage();
    let first = true;
    route = (_req, res, range) => {
      if (range === undefined && first) {
        first = false;
        // Half the package, slowly, then the connection drops.
        res.writeHead(200, { 'content-length': String(zip.length), etag: '"v1"' });
        let at = 0;
        const next = () => {
          if (at >= zip.length / 2) return void res.destroy();
          res.write(zip.subarray(at, at + 65536));
          at += 65536;
          setTimeout(next, 10);
        };
        return next();
      }
      if (range === undefined) return sendWhole(res, zip, { etag: '"v1"' });
      if (/^bytes=\d+-$/.test(range)) return sendRange(res, zip, range, zip.length, { etag: '"v1"' });
      sendRange(res, zip, range, zip.length, { etag: '"v1"' });
    };
    const { result, seen, out } = await read(pkgOf(fixity(zip)));
    const { report, download } = await result;
    expect(download.resumes).toBe(1);
    expect(report.counts).toMatchObject({ verified: 6, failed: 0 });
    await expectAllVerified(seen, bodies, out);
    expect(seen.discarded).toEqual([]);
  });

  it('a download that starts over (200 to its resumption, the package changed) while readers wait: read again from the file', async () => {
    const { zip, bodies } = await makePackage();
    // The earlier version differs in r0.bin's bytes (its first half is what the download first gets).
    const old = Buffer.from(zip);
    randomBytes(100_000).copy(old, 1000);
    let first = true;
    route = (_req, res, range) => {
      if (range === undefined && first) {
        first = false;
        res.writeHead(200, { 'content-length': String(old.length), etag: '"old"' });
        res.write(old.subarray(0, old.length / 2), () => setTimeout(() => res.destroy(), 50));
        return;
      }
      // The package changed: a resumption gets all of it, ranges are of the new one.
      if (range === undefined || /^bytes=\d+-$/.test(range)) return trickle(res, zip, 5, 200, { etag: '"new"' });
      sendRange(res, range.startsWith('bytes=-') ? old : zip, range, zip.length, { etag: '"old"' });
    };
    const { result, seen, out } = await read(pkgOf({ length: String(zip.length), hash: `md5:${md5(zip)}` }));
    const { report, download } = await result;
    expect(download.restarts).toBe(1);
    expect(report.counts).toMatchObject({ verified: 6, failed: 0 });
    await expectAllVerified(seen, bodies, out);
  });

  it.each([
    ['its end is requested', (range: string | undefined) => range?.startsWith('bytes=-') === true],
    ['a range ahead is requested', (range: string | undefined) => /^bytes=\d+-\d+$/.test(range ?? '')],
  ])('a run stopped when %s: rejects, nothing reported, nothing left in the output', async (_when, at) => {
    const { zip } = await makePackage(4);
    const stop = new AbortController();
    route = (_req, res, range) => {
      if (at(range)) stop.abort(new Error('stopped by the test'));
      if (range === undefined) return trickle(res, zip, 10);
      if (range.startsWith('bytes=-')) return sendRange(res, zip, 'bytes=-200');
      sendRange(res, zip, range);
    };
    const { result, seen, out } = await read(pkgOf(fixity(zip)), { signal: stop.signal });
    await expect(result).rejects.toThrow(stopped);
    expect(seen.outcomes).toEqual([]);
    // Every outcome held was discarded (failed ones too, which were never given to the sink).
    expect(seen.discarded.length).toBeGreaterThanOrEqual(seen.sunk);
    expect(await readdir(out)).toEqual([]);
  });

  it('a run stopped while readers wait for the download: rejects at once, nothing reported, nothing left', async () => {
    const { zip } = await makePackage(4);
    const stop = new AbortController();
    let sent = 0;
    route = (_req, res, range) => {
      if (range !== undefined) return sendRange(res, zip, range);
      // A quarter of the package, then nothing more (a stalled download).
      res.writeHead(200, { 'content-length': String(zip.length) });
      res.write(zip.subarray(0, zip.length / 4), () => (sent = 1));
    };
    const { result, seen, out } = await read(pkgOf(fixity(zip)), { signal: stop.signal });
    for (let waited = 0; (sent === 0 || seen.sunk === 0) && waited < 10_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
    stop.abort(new Error('stopped by the test'));
    await expect(result).rejects.toThrow(stopped);
    expect(seen.outcomes).toEqual([]);
    // Every outcome held was discarded (failed ones too, which were never given to the sink).
    expect(seen.discarded.length).toBeGreaterThanOrEqual(seen.sunk);
    expect(await readdir(out)).toEqual([]);
  });

  it('entries listed in another order than they lie in the package: read in one pass, no byte fetched twice', async () => {
    const bodies = new Map<string, Buffer>();
    const files = [];
    const items = [];
    for (let i = 0; i < 6; i++) {
      const body = randomBytes(200 * 1024);
      bodies.set(`http://example.com/r${i}`, body);
      files.push({ name: `r${i}.bin`, body, compress: false });
      items.push({ loc: `http://example.com/r${i}`, path: `/r${i}.bin`, hash: `md5:${md5(body)}`, length: body.length });
    }
    // The manifest lists them backwards (and the manifest is last, inside the end fetched first).
    files.push({ name: 'manifest.xml', body: manifestXml('resourcedump-manifest', items.reverse()) });
    const zip = await buildZip(files);
    route = (_req, res, range) => (range === undefined ? trickle(res, zip, 10) : sendRange(res, zip, range));
    const { result, seen, out } = await read(pkgOf(fixity(zip)));
    expect((await result).report.counts).toMatchObject({ verified: 6, failed: 0 });
    await expectAllVerified(seen, bodies, out);
    expect(requests.sort()).toEqual(['bytes=-131072', 'whole']);
  });

  it('a ZIP64 package with data descriptors (sizes after the data) is read while it downloads', async () => {
    const bodies = new Map<string, Buffer>();
    const zip = new yazl.ZipFile();
    const items = [];
    for (let i = 0; i < 4; i++) {
      const body = randomBytes(150 * 1024);
      bodies.set(`http://example.com/r${i}`, body);
      // A stream: yazl cannot know the sizes before the data, so it writes a data descriptor after it.
      zip.addReadStream(Readable.from([body]), `r${i}.bin`, { compress: i % 2 === 0, forceZip64Format: true });
      items.push({ loc: `http://example.com/r${i}`, path: `/r${i}.bin`, hash: `md5:${md5(body)}`, length: body.length });
    }
    zip.addBuffer(Buffer.from(manifestXml('resourcedump-manifest', items)), 'manifest.xml', { forceZip64Format: true });
    zip.end({ forceZip64Format: true, comment: '' });
    const chunks: Buffer[] = [];
    for await (const c of zip.outputStream) chunks.push(c as Buffer);
    const pkg = Buffer.concat(chunks);
    route = (_req, res, range) => (range === undefined ? trickle(res, pkg, 10) : sendRange(res, pkg, range));
    const { result, seen, out } = await read(pkgOf(fixity(pkg)));
    expect((await result).report.counts).toMatchObject({ verified: 4, failed: 0 });
    await expectAllVerified(seen, bodies, out);
    expect(seen.discarded).toEqual([]);
    expect(requests).toContain('bytes=-131072');
  });

  it('a central directory larger than may be held ahead of the download: refused with a reason, memory bounded', async () => {
    // 4,000 entries with long names: a directory of about 500 KiB, more than the 256 KiB allowed here.
    const files = [];
    for (let i = 0; i < 4000; i++) files.push({ name: `${'n'.repeat(60)}-${i}.bin`, body: 'x', compress: false });
    files.push({ name: 'manifest.xml', body: manifestXml('resourcedump-manifest', []) });
    const zip = await buildZip(files);
    // Ranges only: the download never moves, so everything read comes from ranges fetched ahead.
    route = (_req, res, range) => (range === undefined ? undefined : sendRange(res, zip, range));
    const growing = await GrowingPackage.open({ http, url: `${base}/package.zip`, part: new PartProgress(), length: zip.length, maxAheadBytes: 256 * 1024 });
    try {
      const reading = readPackage(growing, { kind: 'resourcedump', url: `${base}/package.zip`, sink: async () => null });
      await expect(reading).rejects.toThrow(/directory and manifest are too large to fetch ahead of the download/);
      expect(growing.invalid).not.toBeNull();
    } finally {
      await growing.close();
    }
  });
});
