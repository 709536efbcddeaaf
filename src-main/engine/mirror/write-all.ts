// A write that is whole or fails. On a disk that fills up mid-way, writev first answers with a short count (no
// error), and only the next write fails with ENOSPC: a caller that trusts the first answer keeps a cut-off file whose
// bytes were hashed whole as they arrived, and records it verified.
import type { FileHandle } from 'node:fs/promises';

type Writer = Pick<FileHandle, 'writev' | 'write'>;

export async function writeAll(handle: Writer, chunks: Uint8Array[]): Promise<void> {
  let total = 0;
  for (const chunk of chunks) total += chunk.byteLength;
  const { bytesWritten } = await handle.writev(chunks);
  if (bytesWritten === total) return;
  // Rare: the rest in one buffer, written until it is all on disk or the disk says why not.
  const rest = Buffer.concat(chunks).subarray(bytesWritten);
  let at = 0;
  while (at < rest.byteLength) {
    const { bytesWritten: n } = await handle.write(rest, at, rest.byteLength - at);
    if (n <= 0) throw new Error(`the disk took ${bytesWritten + at} of ${total} bytes and no more (is it full?)`);
    at += n;
  }
}
