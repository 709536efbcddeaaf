import { describe, expect, it } from 'vitest';
import { writeAll } from './write-all.ts';

/** A file handle that takes at most `room` bytes per call, and `total` in all (then 0: a full disk). */
function fakeHandle(room: number, total = Infinity) {
  const written: number[] = [];
  let taken = 0;
  const take = (bytes: Uint8Array) => {
    const n = Math.max(0, Math.min(room, bytes.byteLength, total - taken));
    written.push(...bytes.subarray(0, n));
    taken += n;
    return n;
  };
  return {
    written,
    writev: async (chunks: Uint8Array[]) => ({ bytesWritten: take(Buffer.concat(chunks)), buffers: chunks }),
    write: async (buffer: Uint8Array, offset = 0, length = buffer.byteLength - offset) => ({ bytesWritten: take(buffer.subarray(offset, offset + length)), buffer }),
  };
}

describe('writeAll', () => {
  it('writes the rest after a short count', async () => {
    const handle = fakeHandle(3);
    await writeAll(handle as never, [Buffer.from('abcd'), Buffer.from('efgh')]);
    expect(Buffer.from(handle.written).toString()).toBe('abcdefgh');
  });

  it('fails when the disk takes no more, saying how much it took', async () => {
    const handle = fakeHandle(3, 5);
    await expect(writeAll(handle as never, [Buffer.from('abcdefgh')])).rejects.toThrow('the disk took 5 of 8 bytes and no more (is it full?)');
  });
});
