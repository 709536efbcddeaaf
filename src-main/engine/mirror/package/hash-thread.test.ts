import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { HashThread, hashThread } from './hash-thread.ts';
import { FixityError, VerifyStream, type Expected } from './verify.ts';

const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** `data` in chunks of `size` bytes. */
function chunks(data: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < data.length; at += size) out.push(data.subarray(at, at + size));
  return out;
}

async function hashOn(thread: HashThread, data: Buffer, size: number): Promise<{ digests: string[]; crc: number }> {
  const lane = thread.acquire(['md5', 'sha256'], true);
  expect(lane).not.toBeNull();
  for (const chunk of chunks(data, size)) await lane!.update(chunk);
  return lane!.digest();
}

describe('the hashing thread', () => {
  it('computes the same digests and CRC-32 as hashing here, across the ring’s wrap and with chunks larger than the ring', async () => {
    const thread = new HashThread();
    // 13 MiB + 7 bytes: the 4 MiB ring wraps several times, at odd offsets.
    const data = randomBytes(13 * 1024 * 1024 + 7);
    for (const size of [65_537, 1 << 20, 9 << 20]) {
      const { digests, crc } = await hashOn(thread, data, size);
      expect(digests).toEqual([md5(data), sha256(data)]);
      expect(crc >>> 0).toBe(crc32(data) >>> 0);
    }
  });

  it('serves two lanes at once and says so when none is free; an abandoned lane is reused with fresh digests', async () => {
    const thread = new HashThread();
    const a = thread.acquire(['md5'], false)!;
    const b = thread.acquire(['md5'], false)!;
    expect(thread.acquire(['md5'], false)).toBeNull();
    const x = randomBytes(6 << 20);
    const y = randomBytes(5 << 20);
    // Interleaved, as two bitstreams of a Resource Dump are.
    const xs = chunks(x, 300_000);
    const ys = chunks(y, 300_000);
    for (let i = 0; i < Math.max(xs.length, ys.length); i++) {
      if (xs[i]) await a.update(xs[i]!);
      if (ys[i]) await b.update(ys[i]!);
    }
    // b is abandoned half-way (its bitstream failed): released without a digest.
    b.release();
    expect((await a.digest()).digests).toEqual([md5(x)]);
    const again = thread.acquire(['md5'], false)!;
    const z = randomBytes(3 << 20);
    await again.update(z);
    expect((await again.digest()).digests).toEqual([md5(z)]);
  });

  it('rejects an unknown algorithm at the digest, and the lane still works afterwards', async () => {
    const thread = new HashThread();
    const lane = thread.acquire(['no-such-hash'], false)!;
    await lane.update(randomBytes(1000));
    await expect(lane.digest()).rejects.toThrow(/no-such-hash|Digest method not supported|Invalid digest/i);
    const ok = thread.acquire(['md5'], false)!;
    await ok.update(Buffer.from('abc'));
    expect((await ok.digest()).digests).toEqual([md5(Buffer.from('abc'))]);
  });
});

describe('VerifyStream on the hashing thread (bitstreams of 1 MiB or more)', () => {
  const data = randomBytes((3 << 20) + 123);
  const expected = (over: Partial<{ crc32: number; md5: string }> = {}) => ({
    length: data.length,
    crc32: over.crc32 ?? crc32(data),
    hashes: { md5: over.md5 ?? md5(data) },
    alsoCompute: ['sha-256' as const],
    label: 'big.bin',
  });

  async function run(e: Expected): Promise<{ verify: VerifyStream; out: Buffer; error: unknown }> {
    const verify = new VerifyStream(e);
    const parts: Buffer[] = [];
    let error: unknown = null;
    try {
      await pipeline(Readable.from(chunks(data, 256 * 1024)), verify, async function* (source) {
        for await (const chunk of source) parts.push(chunk as Buffer);
      });
    } catch (err) {
      error = err;
    }
    return { verify, out: Buffer.concat(parts), error };
  }

  it('passes every byte through and ends with the digests', async () => {
    const { verify, out, error } = await run(expected());
    expect(error).toBeNull();
    expect(out.equals(data)).toBe(true);
    expect(verify.digests).toEqual({ md5: md5(data), 'sha-256': sha256(data) });
  });

  it('errors on a wrong md5, or on a wrong CRC-32 where no digest is given, instead of ending', async () => {
    const badHash = await run(expected({ md5: '0'.repeat(32) }));
    expect(badHash.error).toBeInstanceOf(FixityError);
    expect((badHash.error as FixityError).code).toBe('hash-mismatch');
    expect(badHash.verify.digests).toBeNull();
    // The CRC-32 is checked where the manifest gives no digest (where it does, the digest stands for the bytes).
    const badCrc = await run({ ...expected({ crc32: (crc32(data) + 1) >>> 0 }), hashes: {} });
    expect((badCrc.error as FixityError).code).toBe('crc-mismatch');
    const digestOnly = await run(expected({ crc32: (crc32(data) + 1) >>> 0 }));
    expect(digestOnly.error).toBeNull();
    expect(digestOnly.verify.digests).toEqual({ md5: md5(data), 'sha-256': sha256(data) });
  });

  it('gives its lane back when destroyed half-way, so later bitstreams still use the thread', async () => {
    for (let i = 0; i < 4; i++) {
      const verify = new VerifyStream(expected());
      verify.on('error', () => undefined);
      verify.write(data.subarray(0, 1 << 20));
      verify.destroy(new Error('the sink failed'));
    }
    await new Promise((r) => setImmediate(r));
    const lanes = [hashThread.acquire(['md5'], false), hashThread.acquire(['md5'], false)];
    expect(lanes.every((l) => l !== null)).toBe(true);
    for (const l of lanes) l!.release();
    const { error } = await run(expected());
    expect(error).toBeNull();
  });
});
