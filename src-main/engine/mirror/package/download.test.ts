import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appendFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { Http } from '../../http/index.ts';
import { downloadPackage, parseContentRange } from './download.ts';

// A disk that fills up on demand: the part file takes the first write, then the disk refuses.
const full = vi.hoisted(() => ({ on: false }));
vi.mock('./part.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('./part.ts')>();
  const partWriter: typeof real.partWriter = (path, flags, onWritten) => {
    if (!full.on) return real.partWriter(path, flags, onWritten);
    let writes = 0;
    return new Writable({
      write(chunk: Buffer, _encoding, callback) {
        if (writes++ > 0) return callback(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' }));
        appendFileSync(path, chunk);
        onWritten?.(chunk.byteLength);
        callback();
      },
    });
  };
  return { ...real, partWriter };
});
import { md5, sha256 } from './test-zips.ts';

/** What the test server does; each test sets it. */
interface Behaviour {
  body: Buffer;
  etag?: string;
  lastModified?: string;
  /** Ignore Range and answer 200 with the whole body. */
  ignoreRange?: boolean;
  /** Cut the connection after this many bytes of the first response(s). */
  cutAfter?: number;
  cuts?: number;
  /** Content-Length announced instead of the true one (sent chunked when null). */
  announce?: number | null;
  /** Content-Range total announced on 206. */
  rangeTotal?: number;
  /** Answer a Range request with 206 whatever If-Range says (a server that ignores it). */
  ignoreIfRange?: boolean;
  /** The first response sends its body a byte every this many ms. */
  trickleMs?: number;
  /**
   * Sends the body gzip-coded (Content-Encoding: gzip) whatever Accept-Encoding says, as a misconfigured server does;
   * Range, Content-Length and `cutAfter` count bytes of the coded representation (RFC 9110 §14.1.2).
   */
  gzip?: boolean;
}

let server: Server;
let base: string;
let behaviour: Behaviour;
let requests: { range?: string; ifRange?: string }[];
/** Each request's Accept-Encoding. */
let codings: (string | undefined)[];
let dir: string;
const http = new Http({ timeoutMs: 5000 });

function handle(req: IncomingMessage, res: ServerResponse): void {
  const b = behaviour;
  requests.push({ range: req.headers.range, ifRange: req.headers['if-range'] as string | undefined });
  codings.push(req.headers['accept-encoding']);
  const headers: Record<string, string> = { 'content-type': 'application/zip' };
  const body = b.gzip ? gzipSync(b.body) : b.body;
  if (b.gzip) headers['content-encoding'] = 'gzip';
  if (b.etag) headers.etag = b.etag;
  if (b.lastModified) headers['last-modified'] = b.lastModified;
  let start = 0;
  let status = 200;
  const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
  const ifRange = req.headers['if-range'];
  const validatorOk = b.ignoreIfRange === true || ifRange === undefined || ifRange === b.etag || ifRange === b.lastModified;
  if (range && !b.ignoreRange && validatorOk) {
    start = Number(range[1]);
    if (start >= body.length) {
      res.writeHead(416, { 'content-range': `bytes */${body.length}` }).end();
      return;
    }
    status = 206;
    headers['content-range'] = `bytes ${start}-${body.length - 1}/${b.rangeTotal ?? body.length}`;
  }
  const slice = body.subarray(start);
  if (b.announce !== null) headers['content-length'] = String(b.announce ?? slice.length);
  res.writeHead(status, headers);
  if (b.trickleMs !== undefined) {
    const every = b.trickleMs;
    delete b.trickleMs;
    let i = 0;
    const timer = setInterval(() => (i < slice.length ? res.write(slice.subarray(i, ++i)) : res.end()), every);
    res.on('close', () => clearInterval(timer));
    return;
  }
  if (b.cutAfter !== undefined && (b.cuts ?? 1) > 0) {
    b.cuts = (b.cuts ?? 1) - 1;
    res.write(slice.subarray(0, b.cutAfter), () => setTimeout(() => res.destroy(), 20));
    return;
  }
  res.end(slice);
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
  requests = [];
  codings = [];
  dir = await mkdtemp(join(tmpdir(), 'rsdesk-dl-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const BODY = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7919) % 251));

function options(extra: Partial<Parameters<typeof downloadPackage>[0]> = {}) {
  return {
    http,
    url: `${base}/package.zip`,
    dest: join(dir, 'package.zip'),
    length: String(BODY.length),
    hash: `md5:${md5(BODY)} sha-256:${sha256(BODY)}`,
    ...extra,
  };
}

/** Large enough (over 4 MiB) to be hashed by the worker that follows the part file. */
const LARGE = Buffer.concat(Array.from({ length: 6 }, (_, i) => Buffer.alloc(1 << 20, i * 37 + 1)));

describe('downloadPackage', () => {
  it('leaves no part of the package on a disk it filled', async () => {
    behaviour = { body: LARGE, etag: '"big"' };
    full.on = true;
    try {
      await expect(downloadPackage(options({ length: String(LARGE.length), hash: `md5:${md5(LARGE)}` }))).rejects.toMatchObject({ code: 'ENOSPC' });
    } finally {
      full.on = false;
    }
    expect(await readdir(dir)).toEqual([]);
  });

  it('hashes a large package off the main thread, resumed or not, and refuses one whose hash differs', async () => {
    const large = (extra: Partial<Parameters<typeof downloadPackage>[0]> = {}) =>
      options({ length: String(LARGE.length), hash: `md5:${md5(LARGE)} sha-256:${sha256(LARGE)}`, ...extra });
    behaviour = { body: LARGE, etag: '"big"' };
    const result = await downloadPackage(large());
    expect(result.digests).toEqual({ md5: md5(LARGE), 'sha-256': sha256(LARGE) });
    await rm(result.path);
    // Cut after 5 MiB and resumed: the bytes already on disk are hashed too.
    behaviour = { body: LARGE, etag: '"big"', cutAfter: 5 << 20 };
    requests = [];
    const resumed = await downloadPackage(large());
    expect(resumed).toMatchObject({ resumes: 1, bytes: LARGE.length });
    expect(resumed.digests).toEqual({ md5: md5(LARGE), 'sha-256': sha256(LARGE) });
    await rm(resumed.path);
    behaviour = { body: LARGE, etag: '"big"' };
    await expect(downloadPackage(large({ hash: `md5:${md5('another')}` }))).rejects.toMatchObject({ code: 'hash-mismatch' });
    expect(await readdir(dir)).toEqual([]);
  });

  it('downloads a package and checks it against the Dump entry\'s length and hashes', async () => {
    behaviour = { body: BODY, etag: '"v1"' };
    const result = await downloadPackage(options());
    expect(result).toMatchObject({ bytes: BODY.length, resumedFrom: 0, resumes: 0, restarts: 0, reused: false, problems: [] });
    expect(result.digests).toEqual({ md5: md5(BODY), 'sha-256': sha256(BODY) });
    expect(await readFile(result.path)).toEqual(BODY);
    expect(await readdir(dir)).toEqual(['package.zip']);
    // Already there and verified: not fetched again.
    const again = await downloadPackage(options());
    expect(again.reused).toBe(true);
    expect(requests).toHaveLength(1);
  });

  it('resumes a transfer that broke off with Range and If-Range (strong ETag)', async () => {
    behaviour = { body: BODY, etag: '"v1"', cutAfter: 100_000 };
    const result = await downloadPackage(options());
    expect(result).toMatchObject({ bytes: BODY.length, resumes: 1, restarts: 0 });
    expect(requests).toEqual([{}, { range: 'bytes=100000-', ifRange: '"v1"' }]);
    expect(await readFile(result.path)).toEqual(BODY);
  });

  it('stops a body that trickles in under the idle timeout, and resumes it from what arrived', async () => {
    behaviour = { body: BODY, etag: '"v1"', trickleMs: 20 };
    const quick = new Http({ timeoutMs: 200 });
    try {
      const t0 = Date.now();
      // A package's own deadline (as a sync gives it) replaces the client's 10 × timeout.
      const result = await downloadPackage(options({ http: quick, deadlineAt: Date.now() + 60_000 }));
      // One window (twice the 200 ms idle timeout) of a byte every 20 ms, not the package's deadline.
      expect(Date.now() - t0).toBeLessThan(3_000);
      expect(result).toMatchObject({ bytes: BODY.length, resumes: 1, restarts: 0 });
      expect(requests[1]!.range).toMatch(/^bytes=\d{1,3}-$/);
      expect(await readFile(result.path)).toEqual(BODY);
    } finally {
      await quick.close();
    }
  });

  it('asks for room for what is left to download, and refuses before a byte is fetched when there is none', async () => {
    behaviour = { body: BODY, etag: 'W/"weak"', lastModified: 'Tue, 02 Jan 2024 03:04:05 GMT', cutAfter: 50_000 };
    await expect(downloadPackage(options({ maxResumes: 0 }))).rejects.toMatchObject({ name: 'NetworkError' });
    const asked: number[] = [];
    const refused = downloadPackage(options({ room: async (needed) => (asked.push(needed), 'no room, said plainly') }));
    await expect(refused).rejects.toMatchObject({ name: 'PackageDownloadError', code: 'no-room', message: 'no room, said plainly' });
    // Only the rest of a download an earlier run left; and what it left stays to be resumed.
    expect(asked).toEqual([BODY.length - 50_000]);
    expect(requests).toHaveLength(1);
    expect((await readdir(dir)).sort()).toEqual(['package.zip.part', 'package.zip.part.json']);
    const result = await downloadPackage(options({ room: async () => null }));
    expect(result).toMatchObject({ resumedFrom: 50_000 });
  });

  it('resumes a download an earlier run left behind, with Last-Modified when the ETag is weak', async () => {
    behaviour = { body: BODY, etag: 'W/"weak"', lastModified: 'Tue, 02 Jan 2024 03:04:05 GMT', cutAfter: 50_000 };
    // The first run gives up at once (no resumption allowed) and leaves its part behind.
    await expect(downloadPackage(options({ maxResumes: 0 }))).rejects.toMatchObject({ name: 'NetworkError' });
    expect((await readdir(dir)).sort()).toEqual(['package.zip.part', 'package.zip.part.json']);
    const result = await downloadPackage(options());
    expect(result).toMatchObject({ resumedFrom: 50_000, resumes: 0, restarts: 0 });
    expect(requests[1]).toEqual({ range: 'bytes=50000-', ifRange: 'Tue, 02 Jan 2024 03:04:05 GMT' });
    expect(await readFile(result.path)).toEqual(BODY);
  });

  it('restarts cleanly when the server ignores Range or the package changed (200)', async () => {
    behaviour = { body: BODY, etag: '"v1"', cutAfter: 100_000, ignoreRange: true };
    const result = await downloadPackage(options());
    expect(result).toMatchObject({ resumes: 1, restarts: 1 });
    expect(await readFile(result.path)).toEqual(BODY);

    // The package changed between two runs: If-Range no longer matches, the server sends it whole.
    await rm(result.path);
    const changed = Buffer.from(BODY).reverse();
    behaviour = { body: changed, etag: '"v1"', cutAfter: 10_000 };
    await expect(downloadPackage(options({ maxResumes: 0, length: String(changed.length), hash: `md5:${md5(changed)}` }))).rejects.toThrow();
    behaviour = { body: changed, etag: '"v2"' };
    requests = [];
    const second = await downloadPackage(options({ length: String(changed.length), hash: `md5:${md5(changed)}` }));
    expect(requests).toEqual([{ range: 'bytes=10000-', ifRange: '"v1"' }]);
    expect(second).toMatchObject({ restarts: 1, resumedFrom: 10_000 });
    expect(await readFile(second.path)).toEqual(changed);
  });

  it('starts again when a resumption is answered 206 with another version than the one begun (If-Range ignored)', async () => {
    behaviour = { body: BODY, etag: '"v1"', cutAfter: 10_000 };
    await expect(downloadPackage(options({ maxResumes: 0 }))).rejects.toThrow();
    const changed = Buffer.from(BODY).reverse();
    behaviour = { body: changed, etag: '"v2"', ignoreIfRange: true };
    requests = [];
    const result = await downloadPackage(options({ length: String(changed.length), hash: `md5:${md5(changed)}` }));
    expect(requests).toEqual([{ range: 'bytes=10000-', ifRange: '"v1"' }, {}]);
    expect(result).toMatchObject({ restarts: 1 });
    expect(result.problems.join('\n')).toMatch(/answered a resumption with another version \("v2", not "v1"\); downloaded again from the start/);
    expect(await readFile(result.path)).toEqual(changed);
  });

  it('refuses a package whose length disagrees with the Dump, before or while writing', async () => {
    behaviour = { body: BODY, etag: '"v1"' };
    await expect(downloadPackage(options({ length: String(BODY.length - 1) }))).rejects.toMatchObject({
      name: 'PackageDownloadError',
      code: 'length-mismatch',
      message: expect.stringMatching(/as 300,000 bytes, the Dump says 299,999; refused/),
    });
    // Sent without Content-Length: counted while streaming.
    behaviour = { body: BODY, announce: null };
    await expect(downloadPackage(options({ length: String(BODY.length - 1) }))).rejects.toThrow(/longer than the 299,999 bytes/);
    await expect(downloadPackage(options({ length: String(BODY.length + 1) }))).rejects.toThrow(/ended after 300,000 bytes/);
    // A resumption whose Content-Range names another total.
    behaviour = { body: BODY, etag: '"v1"', cutAfter: 1000, rangeTotal: BODY.length + 5 };
    await expect(downloadPackage(options())).rejects.toThrow(/the server says the package .* is 300,005 bytes, the Dump says 300,000/i);
    expect(await readdir(dir)).toEqual([]);
    await expect(downloadPackage(options({ length: '12kB' }))).rejects.toMatchObject({ code: 'bad-length' });
  });

  describe('a server that codes the package although asked for identity', () => {
    // Random bytes: their gzip coding is a little longer than they are, so the cuts below fall inside it.
    const RAW = randomBytes(300_000);
    const coded = (extra: Partial<Parameters<typeof downloadPackage>[0]> = {}) =>
      options({ length: String(RAW.length), hash: `md5:${md5(RAW)} sha-256:${sha256(RAW)}`, ...extra });
    const NOTE = /^http:\/\/127\.0\.0\.1:\d+\/package\.zip was sent coded \(Content-Encoding: gzip\) although asked for as it is; a download of it broken off cannot be resumed where it stopped, so it was downloaded again from the start$/;

    it('asks for identity, and a coded transfer that broke off starts over, not a Range of the decoded bytes', async () => {
      // Before, the resumption asked for a Range counted in decoded bytes of the coded representation: the 206 was
      // the middle of a gzip stream, which failed to decode ("Could not decode the gzip body"), and the package failed.
      behaviour = { body: RAW, etag: '"v1"', gzip: true, cutAfter: 100_000 };
      const result = await downloadPackage(coded());
      expect(codings.every((c) => c === 'identity')).toBe(true);
      expect(requests).toEqual([{}, {}]);
      expect(result).toMatchObject({ bytes: RAW.length, restarts: 1 });
      expect(result.problems).toEqual([expect.stringMatching(NOTE)]);
      expect(await readFile(result.path)).toEqual(RAW);
    });

    it('does not resume a coded part an earlier run left behind: it starts over', async () => {
      behaviour = { body: RAW, etag: '"v1"', gzip: true, cutAfter: 100_000 };
      await expect(downloadPackage(coded({ maxResumes: 0 }))).rejects.toThrow();
      expect((await readdir(dir)).sort()).toEqual(['package.zip.part', 'package.zip.part.json']);
      behaviour = { body: RAW, etag: '"v1"', gzip: true };
      requests = [];
      const asked: number[] = [];
      const result = await downloadPackage(coded({ room: async (needed) => (asked.push(needed), null) }));
      expect(requests).toEqual([{}]);
      // Room is asked for the whole package, not for what a resumption would have left.
      expect(asked).toEqual([RAW.length]);
      expect(result).toMatchObject({ resumedFrom: 0, bytes: RAW.length });
      expect(result.problems).toEqual([expect.stringMatching(NOTE)]);
      expect(await readFile(result.path)).toEqual(RAW);
    });

    it('a resumption of a part sent as it was, answered 206 coded, is not spliced on: it starts over', async () => {
      behaviour = { body: RAW, etag: '"v1"', cutAfter: 100_000 };
      await expect(downloadPackage(coded({ maxResumes: 0 }))).rejects.toThrow();
      behaviour = { body: RAW, etag: '"v1"', gzip: true };
      requests = [];
      const result = await downloadPackage(coded());
      expect(requests).toEqual([{ range: 'bytes=100000-', ifRange: '"v1"' }, {}]);
      expect(result).toMatchObject({ bytes: RAW.length, restarts: 1 });
      expect(result.problems).toEqual([expect.stringMatching(NOTE)]);
      expect(await readFile(result.path)).toEqual(RAW);
    });

    it('keeps the Dump length on what is written: a coded body that decodes past it is refused and not kept', async () => {
      // A small coded body (a bomb, in small) whose decoded bytes go past the listed length.
      const zeros = Buffer.alloc(2_000_000);
      behaviour = { body: zeros, etag: '"v1"', gzip: true };
      const written: number[] = [];
      await expect(downloadPackage(options({ length: '100000', hash: undefined, onProgress: (n) => written.push(n) }))).rejects.toThrow(
        /longer than the 100,000 bytes the Dump gives; refused/,
      );
      expect(Math.max(...written)).toBeLessThanOrEqual(100_000);
      expect(await readdir(dir)).toEqual([]);
    });
  });

  it('refuses and throws away a package whose hash does not match', async () => {
    behaviour = { body: BODY, etag: '"v1"' };
    await expect(downloadPackage(options({ hash: `md5:${md5('other')}` }))).rejects.toMatchObject({
      code: 'hash-mismatch',
      message: expect.stringMatching(/md5 of the package .* the download was thrown away/),
    });
    expect(await readdir(dir)).toEqual([]);
  });

  it('reports a malformed hash and checks by length only', async () => {
    behaviour = { body: BODY };
    const result = await downloadPackage(options({ hash: 'md5:nothex' }));
    expect(result.problems).toEqual([`The Dump's hash for ${base}/package.zip cannot be used ("md5:nothex": md5 digest is not hexadecimal); the package was checked by its length only`]);
    expect(result.bytes).toBe(BODY.length);
  });

  it('does not resume without a validator or a hash to catch a changed package', async () => {
    behaviour = { body: BODY, cutAfter: 20_000 };
    await writeFile(join(dir, 'package.zip.part'), BODY.subarray(0, 20_000));
    await writeFile(join(dir, 'package.zip.part.json'), JSON.stringify({ url: `${base}/package.zip`, validator: null }));
    behaviour = { body: BODY };
    const result = await downloadPackage(options({ hash: undefined }));
    expect(requests).toEqual([{}]);
    expect(result.resumedFrom).toBe(0);
  });
});

describe('parseContentRange', () => {
  it('reads start, end and total', () => {
    expect(parseContentRange('bytes 10-99/100')).toEqual({ start: 10, end: 99, total: 100 });
    expect(parseContentRange('bytes 10-99/*')).toEqual({ start: 10, end: 99, total: null });
    expect(parseContentRange('bytes 99-10/100')).toBeNull();
    expect(parseContentRange('items 1-2/3')).toBeNull();
  });
});
