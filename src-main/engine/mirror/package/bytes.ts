// Where a package's bytes are read from: a finished file, or (growing.ts) a package still downloading. The ZIP
// reader only ever asks for byte ranges, so both look the same to it; yauzl reads through the adapter below.
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import yauzl from 'yauzl';

export interface PackageBytes {
  /** The package's whole length in bytes. */
  readonly size: number;
  /** Reads up to `length` bytes at `position` into `buffer` at `offset`; fewer only at the end of the package. */
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<number>;
  /**
   * Told once the manifest is read: from then on only bitstreams are read, in the package's order. A package
   * still downloading stops fetching ranges ahead of the download then.
   */
  entriesPhase?(): void;
  /**
   * For a reader on another thread: a file descriptor that holds the bytes [start, end) at their own offsets, once
   * they are all there (a package still downloading waits for them); null when some are only in memory. The
   * descriptor stays open until `close`.
   */
  fileRange?(start: number, end: number): Promise<number | null>;
  close(): Promise<void>;
}

/** A package on disk. */
export async function fileBytes(path: string): Promise<PackageBytes> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    return {
      size,
      read: async (buffer, offset, length, position) => (await handle.read(buffer, offset, length, position)).bytesRead,
      fileRange: async () => handle.fd,
      close: () => handle.close(),
    };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** yauzl's view of PackageBytes (it reads the end record, the central directory and local headers through it). */
export class BytesReader extends yauzl.RandomAccessReader {
  readonly #bytes: PackageBytes;

  constructor(bytes: PackageBytes) {
    super();
    this.#bytes = bytes;
  }

  override read(buffer: Buffer, offset: number, length: number, position: number, callback: (err: Error | null, bytesRead?: number) => void): void {
    readFully(this.#bytes, buffer, offset, length, position).then(
      (n) => callback(null, n),
      (err: unknown) => callback(err as Error),
    );
  }

  override _readStreamForRange(start: number, end: number): Readable {
    return rangeStream(this.#bytes, start, end);
  }

  // The bytes are the caller's to close (they outlive the several directory reads of one package).
  override close(callback: (err: Error | null) => void): void {
    setImmediate(() => callback(null));
  }
}

/** Reads until `length` bytes or the end of the package; returns how many. */
export async function readFully(bytes: PackageBytes, buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
  let done = 0;
  while (done < length) {
    const n = await bytes.read(buffer, offset + done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}

/**
 * The same bytes, small reads served from one window of `size` bytes read at once: a package of many small
 * bitstreams needs two reads for each local header and one for each bitstream, lying one after another, which then
 * cost one read per window instead (20,000 entries of 100 bytes: 60,000 reads, 2.6 s of the main thread). Reads of
 * a quarter of the window or more go straight through. Package bytes never change, so nothing is ever stale.
 */
export function windowed(bytes: PackageBytes, size = 256 * 1024): PackageBytes {
  let window = Buffer.alloc(0);
  let windowAt = 0;
  return {
    size: bytes.size,
    async read(buffer, offset, length, position) {
      if (length >= size / 4) return bytes.read(buffer, offset, length, position);
      if (position < windowAt || position + length > windowAt + window.length) {
        // A short read (a package still downloading) leaves a short window: the next read fills it again.
        const fresh = Buffer.allocUnsafe(Math.min(size, Math.max(0, bytes.size - position)));
        const n = fresh.length === 0 ? 0 : await bytes.read(fresh, 0, fresh.length, position);
        window = fresh.subarray(0, n);
        windowAt = position;
      }
      const from = position - windowAt;
      const n = Math.max(0, Math.min(length, window.length - from));
      window.copy(buffer, offset, from, from + n);
      return n;
    },
    entriesPhase: bytes.entriesPhase?.bind(bytes),
    fileRange: bytes.fileRange?.bind(bytes),
    close: () => bytes.close(),
  };
}

const SLICE = 1 << 20;

/** The bytes [start, end) as a stream of slices of at most 1 MiB; errors if the package ends first. */
export function rangeStream(bytes: PackageBytes, start: number, end: number, onShort?: () => Error): Readable {
  let position = start;
  return new Readable({
    highWaterMark: SLICE,
    read() {
      const want = Math.min(SLICE, end - position);
      if (want <= 0) {
        this.push(null);
        return;
      }
      const buffer = Buffer.allocUnsafe(want);
      bytes.read(buffer, 0, want, position).then(
        (n) => {
          if (n === 0) {
            this.destroy(onShort?.() ?? new Error('The package ends before the range does'));
            return;
          }
          position += n;
          this.push(n === want ? buffer : buffer.subarray(0, n));
        },
        (err: unknown) => this.destroy(err as Error),
      );
    },
  });
}
