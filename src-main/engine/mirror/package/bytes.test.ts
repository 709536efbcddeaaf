import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readFully, windowed, type PackageBytes } from './bytes.ts';

/** A package in memory whose reads return at most `most` bytes (as one still downloading does), counted. */
function inMemory(data: Buffer, most = Infinity): PackageBytes & { reads: number } {
  const bytes = {
    size: data.length,
    reads: 0,
    async read(buffer: Buffer, offset: number, length: number, position: number) {
      bytes.reads++;
      const n = Math.max(0, Math.min(length, most, data.length - position));
      if (n > 0) data.copy(buffer, offset, position, position + n);
      return n;
    },
    close: async () => undefined,
  };
  return bytes;
}

describe('windowed package bytes', () => {
  const data = randomBytes(1_000_000);

  it('reads the same bytes as the package, with one read per window for small reads one after another', async () => {
    const source = inMemory(data);
    const bytes = windowed(source, 64 * 1024);
    // Local headers and small bitstreams, one after another: 30, then 20, then 300 bytes, over and over.
    let position = 0;
    for (const length of Array.from({ length: 3000 }, (_, i) => [30, 20, 300][i % 3]!)) {
      const got = Buffer.alloc(length);
      expect(await readFully(bytes, got, 0, length, position)).toBe(length);
      expect(got.equals(data.subarray(position, position + length))).toBe(true);
      position += length;
    }
    expect(position).toBe(350_000);
    expect(source.reads).toBeLessThanOrEqual(Math.ceil(350_000 / (64 * 1024)) + 1);
  });

  it('reads at random positions, across windows, up to the end, and past it', async () => {
    const bytes = windowed(inMemory(data), 4096);
    for (let i = 0; i < 500; i++) {
      const position = Math.floor(Math.random() * (data.length + 100));
      const length = 1 + Math.floor(Math.random() * 3000);
      const got = Buffer.alloc(length);
      const n = await readFully(bytes, got, 0, length, position);
      expect(n).toBe(Math.max(0, Math.min(length, data.length - position)));
      expect(got.subarray(0, n).equals(data.subarray(position, position + n))).toBe(true);
    }
  });

  it('copes with a package that gives fewer bytes than asked (still downloading), and passes large reads through', async () => {
    const source = inMemory(data, 1000);
    const bytes = windowed(source, 64 * 1024);
    const got = Buffer.alloc(5000);
    expect(await readFully(bytes, got, 0, 5000, 123_456)).toBe(5000);
    expect(got.equals(data.subarray(123_456, 128_456))).toBe(true);
    const before = source.reads;
    const large = Buffer.alloc(16 * 1024);
    expect(await bytes.read(large, 0, large.length, 0)).toBe(1000);
    expect(source.reads).toBe(before + 1);
  });
});
