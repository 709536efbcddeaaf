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
 * Yields the body's chunks. Stopping early (break, or an error thrown by the consumer) destroys the socket
 * stream, so an abandoned body never keeps a connection busy.
 */
export async function* streamBody(raw: Readable, options: BodyOptions): AsyncGenerator<Uint8Array> {
  const decoder = decoderFor(options.contentEncoding);
  // The limit counts decoded bytes: a small compressed body must not expand past it.
  const source: Readable = decoder ? raw.pipe(decoder) : raw;
  if (decoder) raw.on('error', (err) => decoder.destroy(err));
  let bytes = 0;
  try {
    for await (const chunk of source) {
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
