// A package's part file as it is written, for a reader that follows the download (growing.ts): how many bytes
// from the start are on disk, in which file, and whether the download started over (then what was read is void).
// The last chunks received are kept in memory (RING bytes), and a reader that follows sets the pace: the download
// runs at most WINDOW bytes ahead of the furthest read, so the reader finds its bytes in memory instead of reading
// back what was just written (a copy, a buffer and a system call fewer per slice).
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { Writable } from 'node:stream';

const RING = 24 * 1024 * 1024;
const WINDOW = 8 * 1024 * 1024;

export class PartProgress {
  /** The file the bytes are in: the part file, then the package once complete. */
  path: string | null = null;
  /** Bytes from the start of the package that are written to `path`. */
  written = 0;
  /** Bytes from the start of the package received (some perhaps not written yet). */
  received = 0;
  /** The furthest byte a reader has asked for; the download keeps within WINDOW of it while `paced`. */
  frontier = 0;
  paced = false;
  readonly #ring: { start: number; chunk: Buffer }[] = [];
  #ringBytes = 0;
  /** Bumped whenever the download starts writing over bytes it had written (a restart). */
  generation = 0;
  done = false;
  failure: Error | null = null;
  readonly #listeners = new Set<() => void>();

  /** Calls `listener` at every change; returns the function that stops it. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** A transfer starts appending at `offset` (0: the file is written anew). */
  begin(path: string, offset: number): void {
    if (offset < this.written || offset < this.received) this.generation++;
    this.path = path;
    this.written = offset;
    this.received = offset;
    this.#ring.length = 0;
    this.#ringBytes = 0;
    this.#changed();
  }

  /** A chunk received (in order), before it is written. */
  receive(data: Uint8Array): void {
    const chunk = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    this.#ring.push({ start: this.received, chunk });
    this.#ringBytes += chunk.byteLength;
    this.received += chunk.byteLength;
    while (this.#ringBytes > RING && this.#ring.length > 1) this.#ringBytes -= this.#ring.shift()!.chunk.byteLength;
    this.#changed();
  }

  /** Up to `length` bytes at `position` as a view of a chunk still in memory, or null. */
  view(position: number, length: number): Buffer | null {
    const ring = this.#ring;
    if (ring.length === 0 || position < ring[0]!.start || position >= this.received) return null;
    let lo = 0;
    let hi = ring.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (ring[mid]!.start <= position) lo = mid;
      else hi = mid - 1;
    }
    const { start, chunk } = ring[lo]!;
    const from = position - start;
    return chunk.subarray(from, Math.min(chunk.byteLength, from + length));
  }

  /** A reader asked for bytes up to `end`. */
  reached(end: number): void {
    if (end <= this.frontier) return;
    this.frontier = end;
    if (this.paced) this.#changed();
  }

  /** Resolves when the download may take its next chunk. */
  room(signal?: AbortSignal): Promise<void> | undefined {
    const full = () => this.paced && this.received - this.frontier > WINDOW;
    if (!full()) return undefined;
    return new Promise((resolve, reject) => {
      const onAbort = () => done(signal!.reason as Error);
      const stop = this.onChange(() => {
        if (!full()) done(null);
      });
      const done = (err: Error | null) => {
        stop();
        signal?.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) onAbort();
    });
  }

  /** Sets or lifts the pace (a reader attaches, or is done). */
  pace(on: boolean): void {
    this.paced = on;
    if (!on) {
      this.#ring.length = 0;
      this.#ringBytes = 0;
    }
    this.#changed();
  }

  wrote(bytes: number): void {
    this.written += bytes;
    this.#changed();
  }

  complete(path: string, size: number): void {
    if (size < this.written) this.generation++;
    this.path = path;
    this.written = size;
    this.done = true;
    this.#changed();
  }

  fail(err: Error): void {
    this.failure ??= err;
    this.#changed();
  }

  #changed(): void {
    for (const listener of this.#listeners) listener();
  }
}

async function writeAll(handle: FileHandle, buffers: Buffer[]): Promise<number> {
  let total = 0;
  for (const b of buffers) total += b.byteLength;
  // A short write (rare on a regular file) is finished slice by slice.
  let skip = (await handle.writev(buffers)).bytesWritten;
  for (const b of buffers) {
    if (skip >= b.byteLength) {
      skip -= b.byteLength;
      continue;
    }
    let at = skip;
    skip = 0;
    while (at < b.byteLength) {
      at += (await handle.write(b, at, b.byteLength - at)).bytesWritten;
    }
  }
  return total;
}

/** A file stream that tells `part` how many bytes are on disk after each write. */
export function partWriter(path: string, flags: 'a' | 'w', part?: PartProgress): Writable {
  let handle: FileHandle | null = null;
  const writev = (buffers: Buffer[], callback: (err?: Error | null) => void) => {
    writeAll(handle!, buffers).then(
      (n) => {
        part?.wrote(n);
        callback();
      },
      (err: unknown) => callback(err as Error),
    );
  };
  return new Writable({
    highWaterMark: 1 << 20,
    construct(callback) {
      open(path, flags).then(
        (h) => {
          handle = h;
          callback();
        },
        (err: unknown) => callback(err as Error),
      );
    },
    write(chunk: Buffer, _encoding, callback) {
      writev([chunk], callback);
    },
    writev(chunks, callback) {
      writev(
        chunks.map((c) => c.chunk as Buffer),
        callback,
      );
    },
    final(callback) {
      const h = handle;
      handle = null;
      if (h === null) return callback();
      h.close().then(() => callback(), (err: unknown) => callback(err as Error));
    },
    destroy(err, callback) {
      const h = handle;
      handle = null;
      if (h === null) return callback(err);
      h.close().then(
        () => callback(err),
        () => callback(err),
      );
    },
  });
}
