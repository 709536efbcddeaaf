// A package read while it downloads. A ZIP's central directory is at its end, so the end is fetched first with a
// Range request (and, while the directory and manifest.xml are read, any other range not yet downloaded); from then
// on bitstreams are read from the part file as the download writes it, each read waiting for its bytes. What was
// fetched out of turn is kept in memory (bounded) and compared, once the download is complete, with the same bytes
// of the package as downloaded: the caller uses what was read only if they agree and the package's own fixity holds.
import { open, type FileHandle } from 'node:fs/promises';
import { clip } from '../../clip.ts';
import type { Http } from '../../http/index.ts';
import { parseContentRange } from './download.ts';
import type { PackageBytes } from './bytes.ts';
import type { PartProgress } from './part.ts';

/** Why a package cannot be read while it downloads; the caller reads the finished file instead. */
export class StreamingUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StreamingUnavailable';
  }
}

export interface GrowingOptions {
  http: Http;
  url: string;
  /** The download's progress (see downloadPackage's `part`). */
  part: PartProgress;
  /** The package's length when the Dump gives it: a server that says otherwise is not read ahead. */
  length?: number;
  signal?: AbortSignal;
  /** Bytes fetched out of turn that may be held (the end of the package, its manifest). Default 64 MiB. */
  maxAheadBytes?: number;
}

/** The end of a package fetched first: room for the end record, its comment and the ZIP64 records. */
const TAIL = 128 * 1024;
/** Ranges fetched out of turn are at least this long (a directory is read in many small pieces). */
const AHEAD_SLICE = 1 << 20;

interface Ahead {
  start: number;
  bytes: Buffer;
}

async function readBody(body: AsyncIterable<Uint8Array>, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const chunk of body) {
    n += chunk.byteLength;
    if (n > max) throw new StreamingUnavailable('a range came back longer than asked for');
    chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  }
  return Buffer.concat(chunks, n);
}

/** A signal aborted once the download is complete, fails or starts over (from `generation`); `stop` when done. */
function whileDownloading(part: PartProgress, generation: number): { signal: AbortSignal; stop: () => void } {
  const controller = new AbortController();
  const moved = () => part.done || part.failure !== null || part.generation !== generation;
  const check = () => {
    if (moved()) controller.abort(new StreamingUnavailable('the download moved on'));
  };
  const stop = part.onChange(check);
  check();
  return { signal: controller.signal, stop };
}

export class GrowingPackage implements PackageBytes {
  readonly size: number;
  readonly #o: GrowingOptions;
  readonly #validator: string | null;
  readonly #generation: number;
  readonly #ahead: Ahead[] = [];
  #aheadBytes = 0;
  #eager = true;
  #handle: Promise<FileHandle> | null = null;
  #invalid: Error | null = null;
  #closed = false;

  private constructor(o: GrowingOptions, size: number, validator: string | null, tail: Ahead) {
    this.#o = o;
    this.size = size;
    this.#validator = validator;
    this.#generation = o.part.generation;
    this.#keep(tail);
  }

  /** Fetches the end of the package; rejects with StreamingUnavailable when the server cannot serve ranges. */
  static async open(o: GrowingOptions): Promise<GrowingPackage> {
    const generation = o.part.generation;
    const moved = whileDownloading(o.part, generation);
    try {
      if (moved.signal.aborted) throw new StreamingUnavailable('the package was downloaded before its end was asked for');
      return await GrowingPackage.#open(o, AbortSignal.any([moved.signal, ...(o.signal ? [o.signal] : [])]));
    } catch (err) {
      // A stalled or trickling answer is not waited for once the download has the whole package (or failed).
      if (moved.signal.aborted && !o.signal?.aborted) throw new StreamingUnavailable('the package was downloaded before its end came');
      throw err;
    } finally {
      moved.stop();
    }
  }

  static async #open(o: GrowingOptions, signal: AbortSignal): Promise<GrowingPackage> {
    const response = await o.http.get(o.url, { signal, headers: { range: `bytes=-${TAIL}`, 'accept-encoding': 'identity' }, accept: 'application/zip, */*' });
    const range = parseContentRange(response.headers['content-range'] ?? '');
    if (response.status !== 206 || range === null || range.total === null || response.headers['content-encoding']) {
      await response.discard();
      throw new StreamingUnavailable(`${clip(o.url)} was not served by ranges (HTTP ${response.status})`);
    }
    if (o.length !== undefined && range.total !== o.length) {
      await response.discard();
      throw new StreamingUnavailable(`the server gives ${clip(o.url)} ${range.total} bytes, the Dump ${o.length}`);
    }
    if (range.end !== range.total - 1 || range.end - range.start + 1 > TAIL) {
      await response.discard();
      throw new StreamingUnavailable(`the server answered the end of ${clip(o.url)} with another range`);
    }
    const bytes = await readBody(response.body, range.end - range.start + 1);
    if (bytes.length !== range.end - range.start + 1) throw new StreamingUnavailable('the end of the package came back short');
    const etag = response.headers.etag;
    const validator = etag !== undefined && !etag.startsWith('W/') ? etag : null;
    return new GrowingPackage(o, range.total, validator, { start: range.start, bytes });
  }

  /** Set when what was read can no longer be trusted (the download started over, a range was refused). */
  get invalid(): Error | null {
    return this.#invalid;
  }

  entriesPhase(): void {
    this.#eager = false;
  }

  async read(buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
    for (;;) {
      this.#check();
      const want = Math.min(length, this.size - position);
      if (want <= 0) return 0;
      const ahead = this.#ahead.find((a) => position >= a.start && position < a.start + a.bytes.length);
      if (ahead !== undefined) {
        const from = position - ahead.start;
        const n = Math.min(want, ahead.bytes.length - from);
        ahead.bytes.copy(buffer, offset, from, from + n);
        return n;
      }
      const part = this.#o.part;
      if (position < part.written) {
        const n = Math.min(want, part.written - position);
        return this.#readFile(buffer, offset, n, position);
      }
      if (part.done) {
        // The download is complete and shorter than the server's ranges said: those bytes will never come (and
        // waiting again would spin forever).
        this.#invalid = new StreamingUnavailable('the package downloaded is shorter than its ranges said');
        throw this.#invalid;
      }
      if (this.#eager) await this.#fetchAhead(position, want);
      else await this.#waitFor(position);
    }
  }

  async fileRange(start: number, end: number): Promise<number | null> {
    // Bytes fetched out of turn are in memory only (the directory, the manifest): read through `read`.
    if (this.#ahead.some((a) => a.start < end && start < a.start + a.bytes.length)) return null;
    for (;;) {
      this.#check();
      const part = this.#o.part;
      if (part.written >= end) break;
      if (part.done) {
        this.#invalid = new StreamingUnavailable('the package downloaded is shorter than its ranges said');
        throw this.#invalid;
      }
      await this.#waitFor(part.written);
    }
    this.#handle ??= this.#openPart();
    return (await this.#handle).fd;
  }

  #check(): void {
    if (this.#closed) throw new Error('The package was closed');
    const part = this.#o.part;
    if (this.#invalid === null && part.generation !== this.#generation) {
      this.#invalid = new StreamingUnavailable('the download of the package started over');
    }
    if (this.#invalid !== null) throw this.#invalid;
    if (part.failure !== null) throw part.failure;
    this.#o.signal?.throwIfAborted();
  }

  async #readFile(buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
    // One handle for the whole read: the part file is renamed when complete, and a handle opened before still
    // reads it (a restart, which would write a new file, voids the reading anyway).
    this.#handle ??= this.#openPart();
    const { bytesRead } = await (await this.#handle).read(buffer, offset, length, position);
    return bytesRead;
  }

  async #openPart(): Promise<FileHandle> {
    const path = this.#o.part.path!;
    try {
      return await open(path, 'r');
    } catch (err) {
      // Renamed between the look and the open.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' && this.#o.part.path !== path) return open(this.#o.part.path!, 'r');
      throw err;
    }
  }

  #waitFor(position: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const part = this.#o.part;
      const onAbort = () => done(this.#o.signal!.reason as Error);
      const stop = part.onChange(() => {
        if (part.written > position || part.failure !== null || part.generation !== this.#generation || part.done) done(null);
      });
      const done = (err: Error | null) => {
        stop();
        this.#o.signal?.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve();
      };
      this.#o.signal?.addEventListener('abort', onAbort, { once: true });
      // The download may have moved between the caller's look and now.
      if (part.written > position || part.failure !== null || part.generation !== this.#generation || part.done || this.#closed) done(null);
    });
  }

  async #fetchAhead(position: number, want: number): Promise<void> {
    const start = position;
    const end = Math.min(this.size, position + Math.max(want, AHEAD_SLICE));
    // Not past what is held already (the end of the package, fetched first).
    const next = this.#ahead.filter((a) => a.start > start).reduce((m, a) => Math.min(m, a.start), end);
    const stop = Math.min(end, next);
    if (this.#aheadBytes + (stop - start) > (this.#o.maxAheadBytes ?? 64 * 1024 * 1024)) {
      this.#invalid = new StreamingUnavailable('the package\'s directory and manifest are too large to fetch ahead of the download');
      throw this.#invalid;
    }
    const headers: Record<string, string> = { range: `bytes=${start}-${stop - 1}`, 'accept-encoding': 'identity' };
    if (this.#validator !== null) headers['if-range'] = this.#validator;
    // A range that stalls or trickles is given up once the download has moved on (complete, failed, started
    // over): the caller's loop then reads the bytes from the file, or fails with the download.
    const moved = whileDownloading(this.#o.part, this.#generation);
    const signal = this.#o.signal ? AbortSignal.any([this.#o.signal, moved.signal]) : moved.signal;
    try {
      const response = await this.#o.http.get(this.#o.url, { signal, headers, accept: 'application/zip, */*' });
      // Judged only while the download has not moved on: once it is complete, what was read so far has been
      // judged already (see matches), and a range refused now must not void it.
      if (moved.signal.aborted) {
        await response.discard();
        return;
      }
      const range = parseContentRange(response.headers['content-range'] ?? '');
      if (response.status !== 206 || range === null || range.start !== start || range.end !== stop - 1 || range.total !== this.size || response.headers['content-encoding']) {
        await response.discard();
        this.#invalid = new StreamingUnavailable(`a range of ${clip(this.#o.url)} was not served as asked (HTTP ${response.status})`);
        throw this.#invalid;
      }
      const bytes = await readBody(response.body, stop - start);
      // Bytes that arrive once the download is complete would never be compared with it (see matches): the
      // package's own bytes are read from the file instead.
      if (moved.signal.aborted) return;
      if (bytes.length !== stop - start) {
        this.#invalid = new StreamingUnavailable('a range of the package came back short');
        throw this.#invalid;
      }
      this.#keep({ start, bytes });
    } catch (err) {
      if (moved.signal.aborted && !this.#o.signal?.aborted && err !== this.#invalid) return;
      throw err;
    } finally {
      moved.stop();
    }
  }

  #keep(ahead: Ahead): void {
    this.#ahead.push(ahead);
    this.#aheadBytes += ahead.bytes.length;
  }

  /**
   * Whether every range fetched out of turn equals the same bytes of the downloaded package at `path`: only then
   * is what was read from them (the directory, the manifest) the package's.
   */
  async matches(path: string): Promise<boolean> {
    if (this.#invalid !== null || this.#o.part.generation !== this.#generation) return false;
    const handle = await open(path, 'r');
    try {
      // The package downloaded is another length than its ranges gave: what was read from them (its end record
      // above all) is not where the package's is, even if every byte fetched ahead is found in it.
      if ((await handle.stat()).size !== this.size) return false;
      for (const a of this.#ahead) {
        const got = Buffer.allocUnsafe(a.bytes.length);
        const { bytesRead } = await handle.read(got, 0, got.length, a.start);
        if (bytesRead !== got.length || !got.equals(a.bytes)) return false;
      }
      return true;
    } finally {
      await handle.close();
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#ahead.length = 0;
    const h = this.#handle;
    this.#handle = null;
    await (await h?.catch(() => null))?.close();
  }
}
