// A Resource Dump package read while it downloads, against a loopback server that serves ranges (or refuses to,
// or lies about them): what reaches the sink and when, what is held back until the package's fixity is known, and
// what is thrown away when it fails.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Entry } from '../../documents/index.ts';
import { Http } from '../../http/index.ts';
import type { EntryOutcome } from './model.ts';
import { tempFileSink, type TempFile } from './sinks.ts';
import { fetchPackage, type DumpPackage } from './source.ts';
import { md5, patch, storedPackage } from './test-zips.ts';

interface Behaviour {
  body: Buffer;
  /** Range requests answered 200 with the whole body. */
  noRanges?: boolean;
  /** What a range out of turn (not `bytes=N-`) is served from instead of the package: a Source that lies. */
  rangesFrom?: Buffer;
  /** The whole body is sent in slices of 64 KiB, this many ms apart. */
  trickleMs?: number;
}

let server: Server;
let base: string;
let behaviour: Behaviour;
let requests: string[];
let wholeSent: boolean;
let dir: string;
const http = new Http({ timeoutMs: 5000 });

function handle(req: IncomingMessage, res: ServerResponse): void {
  const b = behaviour;
  const range = req.headers.range;
  requests.push(range ?? 'whole');
  const total = b.body.length;
  const suffix = /^bytes=-(\d+)$/.exec(range ?? '');
  const span = /^bytes=(\d+)-(\d*)$/.exec(range ?? '');
  if (range !== undefined && !b.noRanges && (suffix || span)) {
    const start = suffix ? Math.max(0, total - Number(suffix[1])) : Number(span![1]);
    const end = suffix || span![2] === '' ? total - 1 : Math.min(total - 1, Number(span![2]));
    const outOfTurn = suffix !== null || span![2] !== '';
    const from = outOfTurn && b.rangesFrom ? b.rangesFrom : b.body;
    res.writeHead(206, { 'content-type': 'application/zip', 'content-range': `bytes ${start}-${end}/${total}`, 'content-length': String(end - start + 1) });
    res.end(from.subarray(start, end + 1));
    return;
  }
  res.writeHead(200, { 'content-type': 'application/zip', 'content-length': String(total) });
  if (!b.trickleMs) {
    res.end(b.body, () => (wholeSent = true));
    return;
  }
  let at = 0;
  const next = () => {
    if (res.destroyed) return;
    if (at >= total) {
      res.end();
      return;
    }
    // From the last slice on, the client may have everything.
    if (at + 65536 >= total) wholeSent = true;
    res.write(b.body.subarray(at, at + 65536));
    at += 65536;
    setTimeout(next, b.trickleMs);
  };
  next();
}

beforeAll(async () => {
  server = createServer(handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await http.close();
  await new Promise((r) => server.close(r));
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rsdesk-growing-'));
  requests = [];
  wholeSent = false;
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** `n` stored bitstreams of 256 KiB each, manifest last (test-zips.ts). */
const makePackage = (n = 8) => storedPackage(n);

function pkgOf(zip: Buffer, hash = `md5:${md5(zip)}`): DumpPackage {
  const entry = { loc: `${base}/package.zip`, md: { length: String(zip.length), hash }, links: [] } as unknown as Entry;
  return { entry, dumpUrl: `${base}/resourcedump.xml` };
}

/** fetchPackage reading ahead, with a sink that notes whether the whole body had been sent when it was called. */
async function read(pkg: DumpPackage, extra: { signal?: AbortSignal; quickDownloadSeconds?: number; files?: boolean } = {}) {
  const out = join(dir, 'out');
  const work = join(dir, 'work');
  await import('node:fs/promises').then((fs) => Promise.all([fs.mkdir(out), fs.mkdir(work)]));
  const sink = tempFileSink(out);
  const seen = { streamed: 0, sunkBeforeEnd: 0, sunk: 0, outcomesBeforeEnd: 0, outcomes: [] as EntryOutcome[], discarded: [] as EntryOutcome[] };
  const result = fetchPackage({
    http,
    package: pkg,
    kind: 'resourcedump',
    workDir: work,
    readAheadFrom: 0,
    quickDownloadSeconds: extra.quickDownloadSeconds ?? 0,
    signal: extra.signal,
    // Bitstreams into files on the extraction thread, reading the part file as the download writes it.
    files: extra.files
      ? {
          pathFor: (entry) => join(out, `${entry.loc.split('/').pop()}.tmp`),
          written: (_entry, path): TempFile => {
            seen.sunk++;
            if (!wholeSent) seen.sunkBeforeEnd++;
            return { path };
          },
        }
      : undefined,
    sink: async (entry, stream) => {
      // With files, only a bitstream whose bytes were fetched ahead of the download (with the directory) is streamed.
      if (extra.files) seen.streamed++;
      seen.sunk++;
      if (!wholeSent) seen.sunkBeforeEnd++;
      return sink(entry, stream);
    },
    onOutcome: (o) => {
      if (!wholeSent) seen.outcomesBeforeEnd++;
      seen.outcomes.push(o);
    },
    discard: async (o) => {
      seen.discarded.push(o);
      if (o.status !== 'deleted' && o.status !== 'failed') await rm((o.sinkResult as TempFile).path, { force: true });
    },
  });
  return { result, seen, out, work };
}

describe('a Resource Dump package read while it downloads', () => {
  it('reads bitstreams as their bytes arrive, and reports them only once the whole package is verified', async () => {
    const { zip, bodies } = await makePackage();
    behaviour = { body: zip, trickleMs: 15 };
    const { result, seen, work } = await read(pkgOf(zip));
    const { report, download } = await result;
    expect(download.digests.md5).toBe(md5(zip));
    expect(report.counts).toMatchObject({ verified: 8, failed: 0 });
    // Bitstreams were read while the body was still coming …
    expect(seen.sunkBeforeEnd).toBeGreaterThan(0);
    // … but none was reported before the package was complete and its hash checked.
    expect(seen.outcomesBeforeEnd).toBe(0);
    expect(seen.outcomes).toHaveLength(8);
    for (const o of seen.outcomes) {
      if (o.status !== 'verified') throw new Error(o.status);
      // Buffer.equals: a deep comparison of 256 KiB is slow.
      expect((await readFile((o.sinkResult as TempFile).path)).equals(bodies.get(o.entry.loc)!)).toBe(true);
    }
    // One download of the whole package, and its end fetched first; no byte of a bitstream fetched twice.
    expect(requests.filter((r) => r === 'whole')).toHaveLength(1);
    expect(requests.filter((r) => r !== 'whole').every((r) => /^bytes=-\d+$/.test(r) || /^bytes=\d+-\d+$/.test(r))).toBe(true);
    expect(seen.discarded).toEqual([]);
    expect(await readdir(work)).toEqual([]);
  });

  it('extracts bitstreams into files off the main thread as their bytes arrive, reported only once the package is verified', async () => {
    const { zip, bodies } = await makePackage();
    behaviour = { body: zip, trickleMs: 15 };
    const { result, seen } = await read(pkgOf(zip), { files: true });
    const { report } = await result;
    expect(report.counts).toMatchObject({ verified: 8, failed: 0 });
    expect(seen.streamed).toBeLessThanOrEqual(1);
    expect(seen.sunkBeforeEnd).toBeGreaterThan(0);
    expect(seen.outcomesBeforeEnd).toBe(0);
    for (const o of seen.outcomes) {
      if (o.status !== 'verified') throw new Error(o.status);
      expect((await readFile((o.sinkResult as TempFile).path)).equals(bodies.get(o.entry.loc)!)).toBe(true);
    }
    expect(requests.filter((r) => r === 'whole')).toHaveLength(1);
  });

  it('waits for a download that ends soon and reads the file; reads one that does not while it downloads', async () => {
    const { zip } = await makePackage();
    behaviour = { body: zip };
    const quick = await read(pkgOf(zip), { quickDownloadSeconds: 5 });
    expect((await quick.result).report.counts).toMatchObject({ verified: 8, failed: 0 });
    // No range asked for: the package was read once downloaded.
    expect(requests).toEqual(['whole']);
    expect(quick.seen.sunkBeforeEnd).toBe(0);
    requests = [];
    wholeSent = false;
    await rm(join(dir, 'out'), { recursive: true });
    await rm(join(dir, 'work'), { recursive: true });
    // 2 MiB at 64 KiB per 30 ms takes about a second: far longer than the 0.1 s allowed.
    behaviour = { body: zip, trickleMs: 30 };
    const slow = await read(pkgOf(zip), { quickDownloadSeconds: 0.1 });
    expect((await slow.result).report.counts).toMatchObject({ verified: 8, failed: 0 });
    expect(requests.some((r) => /^bytes=-\d+$/.test(r))).toBe(true);
    expect(slow.seen.sunkBeforeEnd).toBeGreaterThan(0);
  });

  it('a package whose hash is not the Dump\'s: nothing is reported, everything written is thrown away, the error says why', async () => {
    const { zip } = await makePackage();
    behaviour = { body: zip, trickleMs: 5 };
    const { result, seen, out } = await read(pkgOf(zip, `md5:${md5('another package')}`));
    await expect(result).rejects.toThrow(/md5 of the package .* is [0-9a-f]{32}, the Dump says/);
    expect(seen.outcomes).toEqual([]);
    expect(seen.discarded.length).toBe(seen.sunk);
    expect(await readdir(out)).toEqual([]);
  });

  it('a Source whose ranges disagree with the package it sends: the package is read again from the file', async () => {
    const { zip, bodies } = await makePackage();
    // Ranges say r0.bin has another CRC-32 than the package holds: read from them, it would fail.
    const other = patch(zip, 'r0.bin', 'central', 'crc', 0x12345678);
    behaviour = { body: zip, rangesFrom: other, trickleMs: 2 };
    const { result, seen, out } = await read(pkgOf(zip));
    const { report } = await result;
    expect(report.counts).toMatchObject({ verified: 8, failed: 0 });
    // What was read from the lying ranges was discarded; what is reported is the downloaded package's.
    expect(seen.discarded.length).toBeGreaterThan(0);
    expect(seen.outcomes).toHaveLength(8);
    for (const o of seen.outcomes) {
      if (o.status !== 'verified') throw new Error(`${o.entry.loc}: ${o.status}`);
      // Buffer.equals: a deep comparison of 256 KiB is slow.
      expect((await readFile((o.sinkResult as TempFile).path)).equals(bodies.get(o.entry.loc)!)).toBe(true);
    }
    expect((await readdir(out)).length).toBe(8);
  });

  it('a server that does not serve ranges: the package is read once downloaded', async () => {
    const { zip } = await makePackage(3);
    behaviour = { body: zip, noRanges: true };
    const { result, seen } = await read(pkgOf(zip));
    const { report } = await result;
    expect(report.counts).toMatchObject({ verified: 3, failed: 0 });
    expect(seen.sunkBeforeEnd).toBe(0);
    expect(seen.discarded).toEqual([]);
  });

  it('a run stopped mid-way: nothing is reported, what was written is thrown away, the part stays to resume', async () => {
    const { zip } = await makePackage();
    behaviour = { body: zip, trickleMs: 20 };
    const stop = new AbortController();
    const { result, seen, out, work } = await read(pkgOf(zip), { signal: stop.signal });
    for (let waited = 0; seen.sunk < 2 && waited < 10_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
    stop.abort(new Error('stopped by the test'));
    await expect(result).rejects.toThrow();
    expect(seen.outcomes).toEqual([]);
    expect(await readdir(out)).toEqual([]);
    expect((await readdir(work)).some((f) => f.endsWith('.part'))).toBe(true);
  });
});
