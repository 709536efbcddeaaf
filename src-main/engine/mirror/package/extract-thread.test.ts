import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { crc32, deflateRawSync } from 'node:zlib';
import { mkdtempSync, openSync, closeSync, readFileSync, rmSync, writeFileSync, existsSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExtractThreads, extractThreads } from './extract-thread.ts';
import { smallDisk } from '../small-disk.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rsdesk-extract-thread-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface ExtractOptions {
  crc?: boolean;
  threads?: ExtractThreads;
  /** Cancels the job this long after it was handed to its thread. */
  cancelAfterMs?: number;
}

/** Runs one job over `stored` (the bytes as a package holds them) and returns its result. */
async function extract(stored: Buffer, method: 0 | 8, length: number, out: string | null, options: ExtractOptions = {}) {
  const source = join(dir, `src-${Math.random().toString(36).slice(2)}`);
  writeFileSync(source, stored);
  const fd = openSync(source, 'r');
  try {
    const stop = new AbortController();
    const job = { fd, start: 0, end: stored.length, method, length, algorithms: ['md5'], crc: options.crc ?? true, out };
    const running = (options.threads ?? extractThreads).run(job, stop.signal);
    if (options.cancelAfterMs !== undefined) setTimeout(() => stop.abort(), options.cancelAfterMs);
    return await running;
  } finally {
    closeSync(fd);
  }
}

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

describe('extraction thread: large bitstreams written past the page cache', () => {
  // Sizes around the 512 KiB slabs and the 4 KiB blocks: a whole number of slabs, a tail, a tail of one byte.
  it.each([
    ['several slabs and an odd tail', 3 * (1 << 20) + 4097],
    ['exactly two slabs', 2 * (1 << 20)],
    ['one slab and one byte', (1 << 20) + 1],
  ])('%s: the file holds exactly the bytes', async (_label, size) => {
    const body = randomBytes(size);
    for (const method of [0, 8] as const) {
      const out = join(dir, `out-${size}-${method}`);
      const result = await extract(method === 8 ? deflateRawSync(body) : body, method, size, out);
      expect(result).toMatchObject({ ok: true, bytes: size, crc: crc32(body), digests: [md5(body)] });
      // On Linux the file system here takes O_DIRECT; elsewhere the same bytes come through the page cache.
      if (process.platform === 'linux') expect(result.ok && result.direct).toBe(true);
      const written = readFileSync(out);
      expect(written.length).toBe(size);
      expect(written.equals(body)).toBe(true);
    }
  });

  it('small bitstreams go through the page cache as before', async () => {
    const body = randomBytes(5000);
    const out = join(dir, 'small');
    const result = await extract(body, 0, body.length, out);
    expect(result).toMatchObject({ ok: true, direct: false });
    expect(readFileSync(out).equals(body)).toBe(true);
  });

  it('small bitstreams of every size, stored and deflated, come out whole (through the slabs, via the page cache)', async () => {
    for (const size of [0, 1, 4095, 4097, (1 << 19) + 3, (1 << 20) - 1]) {
      const body = randomBytes(size);
      for (const method of [0, 8] as const) {
        const out = join(dir, `small-${size}-${method}`);
        const result = await extract(method === 8 ? deflateRawSync(body) : body, method, size, out);
        expect(result).toMatchObject({ ok: true, bytes: size, crc: crc32(body), digests: [md5(body)], direct: false });
        expect(readFileSync(out).equals(body)).toBe(true);
      }
    }
  });

  it('leaves the CRC-32 out when asked (a manifest digest covers the bytes), and still hashes every byte', async () => {
    const body = randomBytes(3 * (1 << 20) + 11);
    const result = await extract(deflateRawSync(body), 8, body.length, null, { crc: false });
    expect(result).toMatchObject({ ok: true, bytes: body.length, crc: 0, digests: [md5(body)] });
  });

  it('a bitstream longer than declared stops, and its direct file is removed', async () => {
    const body = randomBytes(3 * (1 << 20));
    const out = join(dir, 'too-long');
    const result = await extract(body, 0, 2 * (1 << 20) + 10, out);
    expect(result).toMatchObject({ ok: false, code: 'size-mismatch' });
    expect(existsSync(out)).toBe(false);
  });

  it('a direct file that cannot be created fails as a sink failure', async () => {
    const body = randomBytes(2 * (1 << 20));
    const result = await extract(body, 0, body.length, join(dir, 'no-such-folder', 'out'));
    expect(result).toMatchObject({ ok: false, code: 'sink-failed' });
  });

  it('stored and deflated bitstreams at once, on both threads, all come out whole', async () => {
    const bodies = Array.from({ length: 8 }, (_, i) => randomBytes((1 << 20) + i * 4099));
    const results = await Promise.all(
      bodies.map((b, i) => (i % 2 === 0 ? extract(b, 0, b.length, join(dir, `mixed-${i}`)) : extract(deflateRawSync(b), 8, b.length, join(dir, `mixed-${i}`)))),
    );
    results.forEach((r, i) => {
      expect(r).toMatchObject({ ok: true, bytes: bodies[i]!.length, crc: crc32(bodies[i]!), digests: [md5(bodies[i]!)] });
      expect(readFileSync(join(dir, `mixed-${i}`)).equals(bodies[i]!)).toBe(true);
    });
  });

  it('jobs one at a time take one thread; jobs at once are spread over two', async () => {
    const threads = new ExtractThreads();
    const body = randomBytes((1 << 20) + 1);
    const job = (i: number, method: 0 | 8) =>
      extract(method === 8 ? deflateRawSync(body) : body, method, body.length, join(dir, `spread-${i}`), { crc: false, threads });
    for (let i = 0; i < 3; i++) expect(await job(i, 8)).toMatchObject({ ok: true, digests: [md5(body)] });
    expect(threads.threads).toBe(1);
    const results = await Promise.all([0, 1, 2, 3].map((i) => job(10 + i, i % 2 === 0 ? 8 : 0)));
    for (const r of results) expect(r).toMatchObject({ ok: true, digests: [md5(body)] });
    expect(threads.threads).toBe(2);
  });

  it('a stored bitstream cancelled while it is read stops, says so, and leaves no file', async () => {
    const body = randomBytes(64 << 20);
    const out = join(dir, 'cancelled');
    expect(await extract(body, 0, body.length, out, { crc: false, cancelAfterMs: 5 })).toMatchObject({ ok: false, code: 'cancelled' });
    expect(existsSync(out)).toBe(false);
  });

  it('many large bitstreams at once share the slabs and all come out whole', async () => {
    const bodies = Array.from({ length: 12 }, (_, i) => randomBytes((1 << 20) + i * 7919));
    const results = await Promise.all(bodies.map((b, i) => extract(b, 0, b.length, join(dir, `many-${i}`))));
    results.forEach((r, i) => {
      expect(r).toMatchObject({ ok: true, digests: [md5(bodies[i]!)] });
      expect(readFileSync(join(dir, `many-${i}`)).equals(bodies[i]!)).toBe(true);
    });
  });
});

describe('extraction thread: deflated bitstreams inflated straight into the slabs', () => {
  // The same jobs through Node's zlib stream, as where the zlib handle's synchronous call is missing: outcomes must
  // not differ between the two ways.
  let streamed: ExtractThreads;
  beforeAll(async () => {
    process.env.RSDESK_STREAM_INFLATE = '1';
    streamed = new ExtractThreads();
    // A thread reads its environment when it starts: the first is started now, with the setting. (The jobs below
    // run one at a time, so they all go to it.)
    try {
      await streamed.run({ fd: -1, start: 0, end: 0, method: 8, length: 0, algorithms: [], crc: false, out: null });
    } finally {
      delete process.env.RSDESK_STREAM_INFLATE;
    }
  });
  const both = async (stored: Buffer, length: number, name: string) => {
    const slabs = await extract(stored, 8, length, join(dir, `${name}-slabs`));
    const stream = await extract(stored, 8, length, join(dir, `${name}-stream`), { threads: streamed });
    return { slabs, stream, slabsFile: join(dir, `${name}-slabs`), streamFile: join(dir, `${name}-stream`) };
  };
  // Compressible: each 256 KiB read inflates into many slabs.
  const text = (size: number) => Buffer.from('ResourceSync bitstream '.repeat(Math.ceil(size / 23)).slice(0, size));

  it('a highly compressed bitstream comes out whole, written direct', async () => {
    const body = Buffer.concat([text(9 * (1 << 20) + 333), randomBytes(70_001), text(1 << 20)]);
    const r = await both(deflateRawSync(body, { level: 9 }), body.length, 'text');
    for (const result of [r.slabs, r.stream]) expect(result).toMatchObject({ ok: true, bytes: body.length, crc: crc32(body), digests: [md5(body)] });
    if (process.platform === 'linux') expect(r.slabs.ok && r.slabs.direct).toBe(true);
    expect(readFileSync(r.slabsFile).equals(body)).toBe(true);
    expect(readFileSync(r.streamFile).equals(body)).toBe(true);
  });

  it('a bomb (64 MiB of zeros declared as 2 MiB) stops with size-mismatch and leaves no file', async () => {
    const r = await both(deflateRawSync(Buffer.alloc(64 << 20)), 2 << 20, 'bomb');
    for (const result of [r.slabs, r.stream]) expect(result).toMatchObject({ ok: false, code: 'size-mismatch' });
    expect(existsSync(r.slabsFile)).toBe(false);
  });

  // (The stream way used to call these the file's own failure, 'sink-failed': the pipeline hands the inflater's error
  // on to the file being written.)
  it('damaged deflate data fails as corrupt with zlib\'s reason and leaves no file', async () => {
    const damaged = deflateRawSync(text(3 << 20));
    // A final block of the reserved type 3.
    damaged[0] = 0x07;
    const r = await both(damaged, 3 << 20, 'damaged');
    for (const result of [r.slabs, r.stream]) expect(result).toMatchObject({ ok: false, code: 'corrupt' });
    expect(r.slabs.ok ? '' : r.slabs.message).toMatch(/invalid|incorrect|distance|code/i);
    expect(existsSync(r.slabsFile)).toBe(false);
  });

  it('a deflate stream cut short fails (unexpected end), whatever length is declared', async () => {
    const body = randomBytes(3 << 20);
    const cut = deflateRawSync(body).subarray(0, (2 << 20) + 12345);
    const r = await both(cut, body.length, 'cut');
    for (const result of [r.slabs, r.stream]) expect(result).toMatchObject({ ok: false, code: 'corrupt' });
    expect(r.slabs.ok ? '' : r.slabs.message).toMatch(/unexpected end/i);
    expect(existsSync(r.slabsFile)).toBe(false);
  });

  it('bytes after the end of the deflate stream are ignored, as the stream way ignores them', async () => {
    const body = text((2 << 20) + 77);
    const r = await both(Buffer.concat([deflateRawSync(body), randomBytes(5000)]), body.length, 'trailing');
    for (const result of [r.slabs, r.stream]) expect(result).toMatchObject({ ok: true, bytes: body.length, digests: [md5(body)] });
    expect(readFileSync(r.slabsFile).equals(body)).toBe(true);
  });

  it('a bitstream shorter than declared is given back with its real length (the caller fails it)', async () => {
    const body = text((1 << 20) + 5);
    const r = await both(deflateRawSync(body), body.length + 100, 'short');
    for (const result of [r.slabs, r.stream]) expect(result).toMatchObject({ ok: true, bytes: body.length });
  });

  it('a deflated bitstream cancelled while it is inflated stops, says so, and leaves no file', async () => {
    const stored = deflateRawSync(Buffer.concat([randomBytes(8 << 20), text(200 << 20)]), { level: 1 });
    const out = join(dir, 'cancelled-deflated');
    const result = await extract(stored, 8, (8 << 20) + (200 << 20), out, { crc: false, cancelAfterMs: 20 });
    expect(result).toMatchObject({ ok: false, code: 'cancelled' });
    expect(existsSync(out)).toBe(false);
  });

  it('more deflated bitstreams at once than there are slabs: all come out whole', async () => {
    const bodies = Array.from({ length: 10 }, (_, i) => Buffer.concat([text((1 << 20) + i * 5003), randomBytes(i * 1000)]));
    const results = await Promise.all(bodies.map((b, i) => extract(deflateRawSync(b), 8, b.length, join(dir, `many-deflated-${i}`))));
    results.forEach((r, i) => {
      expect(r).toMatchObject({ ok: true, bytes: bodies[i]!.length, digests: [md5(bodies[i]!)] });
      expect(readFileSync(join(dir, `many-deflated-${i}`)).equals(bodies[i]!)).toBe(true);
    });
  });
});

// A small tmpfs stands for a full disk: only root may mount one, so elsewhere these are skipped.
const small = smallDisk('rsdesk-extract-full-', '1m');

describe.skipIf(small === null)('extraction thread: a full disk', () => {
  // The disk takes the whole slabs and refuses the tail (or, for a small bitstream, everything): that write comes
  // with the file's end, and was reported as a corrupt package.
  it.each([
    ['a small bitstream', 100_000, 1_000_000],
    ['a full slab taken, the tail refused', 600_000, 450_000],
    ['refused within the slabs', 3 << 20, 0],
  ])('%s: a failure to write, not a corrupt package, and no file left', async (_label, size, taken) => {
    const filler = join(small!, 'filler');
    writeFileSync(filler, Buffer.alloc(taken));
    try {
      const body = randomBytes(size);
      for (const method of [0, 8] as const) {
        const out = join(small!, `out-${size}-${method}`);
        const result = await extract(method === 8 ? deflateRawSync(body) : body, method, size, out);
        expect(result).toMatchObject({ ok: false, code: 'sink-failed', message: expect.stringContaining('ENOSPC') });
        expect(existsSync(out)).toBe(false);
      }
    } finally {
      unlinkSync(filler);
    }
  });
});
