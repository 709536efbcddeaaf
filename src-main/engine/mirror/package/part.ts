// A package's part file as it is written, for a reader that follows the download (growing.ts): how many bytes
// from the start are on disk, in which file, and whether the download started over (then what was read is void).
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { Writable } from 'node:stream';

export class PartProgress {
  /** The file the bytes are in: the part file, then the package once complete. */
  path: string | null = null;
  /** Bytes from the start of the package that are written to `path`. */
  written = 0;
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
    if (offset < this.written) this.generation++;
    this.path = path;
    this.written = offset;
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

/** A file stream that says how many bytes each write put on disk, once it is done. */
export function partWriter(path: string, flags: 'a' | 'w', onWritten?: (bytes: number) => void): Writable {
  let handle: FileHandle | null = null;
  const writev = (buffers: Buffer[], callback: (err?: Error | null) => void) => {
    writeAll(handle!, buffers).then(
      (n) => {
        onWritten?.(n);
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
