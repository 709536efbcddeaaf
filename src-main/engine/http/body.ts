// The response body as a one-shot stream of bytes: decoded (if the server insisted on a content-coding), counted
// against a byte limit while it streams, and with socket errors turned into NetworkErrors.
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable, Transform } from 'node:stream';
import { NetworkError, formatBytes, toNetworkError } from './errors.ts';

export interface BodyOptions {
  url: string;
  contentEncoding: string | undefined;
  maxBytes: number | undefined;
  timeoutMs: number;
  /** The deadline's error when it ended the body (given the bytes received so far); null otherwise. */
  expired?: (bytes: number) => NetworkError | null;
  /** Called once the body is finished with, whichever way. */
  done?: () => void;
}

function decoderFor(encoding: string | undefined): Transform | null {
  switch ((encoding ?? '').trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return createGunzip();
    case 'deflate':
      return createInflate();
    case 'br':
      return createBrotliDecompress();
    default:
      return null;
  }
}

export function tooLarge(url: string, maxBytes: number): NetworkError {
  return new NetworkError('too-large', `${url} is larger than the limit of ${formatBytes(maxBytes)}`, url);
}

/**
 * Yields the body's chunks. Reading starts at once (see `eager`), so call this as soon as the response arrives.
 * Stopping early (break, or an error thrown by the consumer) destroys the socket stream, so an abandoned body never
 * keeps a connection busy.
 */
export function streamBody(raw: Readable, options: BodyOptions): AsyncGenerator<Uint8Array> {
  const decoder = decoderFor(options.contentEncoding);
  // The limit counts decoded bytes: a small compressed body must not expand past it.
  const source: Readable = decoder ? raw.pipe(decoder) : raw;
  if (decoder) raw.on('error', (err) => decoder.destroy(err));
  return readBody(raw, decoder, eager(source), options);
}

async function* readBody(raw: Readable, decoder: Transform | null, chunks: AsyncIterable<Buffer | string>, options: BodyOptions): AsyncGenerator<Uint8Array> {
  let bytes = 0;
  try {
    for await (const chunk of chunks) {
      const bytesChunk: Uint8Array = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      bytes += bytesChunk.byteLength;
      if (options.maxBytes !== undefined && bytes > options.maxBytes) throw tooLarge(options.url, options.maxBytes);
      yield bytesChunk;
    }
  } catch (err) {
    if (err instanceof NetworkError) throw err;
    const late = options.expired?.(bytes);
    if (late) throw late;
    if (decoder && errorCodeOf(err).startsWith('Z_')) {
      throw new NetworkError('network', `Could not decode the ${options.contentEncoding} body of ${options.url}`, options.url, {
        cause: err,
      });
    }
    throw toNetworkError(err, options.url, options.timeoutMs, 'body');
  } finally {
    options.done?.();
    if (!raw.destroyed) raw.destroy();
    if (decoder && !decoder.destroyed) decoder.destroy();
  }
}

/** How much a body may hold ahead of its consumer before the socket is paused. */
const AHEAD = 1 << 20;
/**
 * Chunks held ahead at most, however small: a body sent a byte at a time (chunked encoding allows it) made a million
 * one-byte chunks of the 1 MiB ahead, some 450 MB for a 5 MB document.
 */
const AHEAD_CHUNKS = 4096;
/** Small chunks waiting are handed on together up to this size: each chunk costs its consumer as much as a big one. */
const COALESCE_BYTES = 64 * 1024;

/**
 * Starts reading a stream at once, keeping its chunks (up to `ahead` bytes ahead of the consumer, then the stream is
 * paused), and yields every one of them before any error. A plain `for await` loses what arrived while the consumer
 * was busy, or before it began, when the stream is then destroyed by an error (a transfer that broke off): those
 * bytes did arrive, and a resumed download must not ask for them again.
 */
export function eager(source: Readable, ahead = AHEAD): AsyncIterable<Buffer | string> {
  const queue: (Buffer | string)[] = [];
  let queued = 0;
  let ended = source.readableEnded;
  const prematureClose = () => Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
  let failure: { error: unknown } | null = source.errored ? { error: source.errored } : source.destroyed && !ended ? { error: prematureClose() } : null;
  let wake: (() => void) | null = null;
  const notify = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const onData = (chunk: Buffer | string) => {
    queue.push(chunk);
    queued += chunk.length;
    if (queued >= ahead || queue.length >= AHEAD_CHUNKS) source.pause();
    notify();
  };
  const onEnd = () => {
    ended = true;
    notify();
  };
  const onError = (error: unknown) => {
    failure ??= { error };
    notify();
  };
  const onClose = () => {
    // Closed without an end nor an error: cut off (what `for await` reports as a premature close).
    if (!ended && failure === null) failure = { error: prematureClose() };
    notify();
  };
  source.on('data', onData);
  source.on('end', onEnd);
  source.on('error', onError);
  source.on('close', onClose);
  /** The next chunk, joined with the small ones waiting after it. */
  const take = (): Buffer | string => {
    const first = queue.shift()!;
    if (typeof first === 'string' || first.length >= COALESCE_BYTES || queue.length === 0 || typeof queue[0] === 'string') return first;
    const parts = [first];
    let size = first.length;
    while (queue.length > 0 && typeof queue[0] !== 'string' && size + queue[0].length <= COALESCE_BYTES) {
      const next = queue.shift() as Buffer;
      parts.push(next);
      size += next.length;
    }
    return parts.length === 1 ? first : Buffer.concat(parts, size);
  };
  async function* chunks(): AsyncGenerator<Buffer | string> {
    try {
      for (;;) {
        if (queue.length > 0) {
          const chunk = take();
          queued -= chunk.length;
          if (source.isPaused() && queued < ahead / 2 && queue.length < AHEAD_CHUNKS / 2 && !source.destroyed) source.resume();
          yield chunk;
          continue;
        }
        if (failure !== null) throw (failure as { error: unknown }).error;
        if (ended) return;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
      source.off('close', onClose);
    }
  }
  return { [Symbol.asyncIterator]: chunks };
}

function errorCodeOf(err: unknown): string {
  return err && typeof err === 'object' && 'code' in err && typeof err.code === 'string' ? err.code : '';
}

/** Charset from a Content-Type header, when TextDecoder knows it; UTF-8 otherwise. */
export function charsetOf(contentType: string | undefined): string {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '');
  if (match) {
    try {
      return new TextDecoder(match[1]).encoding;
    } catch {
      // An unknown label falls through to UTF-8.
    }
  }
  return 'utf-8';
}

export async function readText(
  body: AsyncIterable<Uint8Array>,
  url: string,
  limitBytes: number,
  charset: string,
): Promise<string> {
  const decoder = new TextDecoder(charset);
  let text = '';
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.byteLength;
    if (bytes > limitBytes) throw tooLarge(url, limitBytes);
    text += decoder.decode(chunk, { stream: true });
  }
  return text + decoder.decode();
}
