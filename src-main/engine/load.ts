// Fetch one ResourceSync document and stream it through the reader: entries go to the caller as they are parsed,
// the first 256 KiB are kept for the raw-XML view, and a gzipped sitemap (`.xml.gz`) is unpacked on the way.
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { DEFAULT_MAX_BYTES, readDocument, type ReadOptions } from './documents/reader.ts';
import type { DocumentSummary } from './documents/model.ts';
import { HttpStatusError, NetworkError } from './http/errors.ts';
import type { Http, HttpResponse } from './http/client.ts';
import { peek } from './http/peek.ts';

export interface LoadedDocument {
  summary: DocumentSummary;
  /** Size of the document in bytes (after unpacking a gzipped body). */
  bytes: number;
  contentType: string | null;
  /** URL after redirects. */
  finalUrl: string;
  /** The first 256 KiB of the document as text, for the raw-XML view. */
  head: string;
}

export interface LoadOptions {
  onEntry?: ReadOptions['onEntry'];
  onStart?: ReadOptions['onStart'];
  signal?: AbortSignal;
  /** Largest document accepted. Default 50 MB (the community limit, core spec §7). */
  maxBytes?: number;
  /** Called with the URL the document came from (after redirects) before it is read. */
  onResponse?: (finalUrl: string) => void;
  /** Called as bytes arrive (at most every 100 ms) and once at the end. */
  onProgress?: (progress: { bytes: number; entries: number }) => void;
}

export const HEAD_BYTES = 256 * 1024;
/** Sitemaps are XML; a Source that negotiates gets XML, one that does not is read anyway (the reader sniffs). */
export const XML_ACCEPT = 'application/xml, text/xml;q=0.9, */*;q=0.5';
const PROGRESS_INTERVAL_MS = 100;

export async function loadDocument(http: Http, url: string, options: LoadOptions = {}): Promise<LoadedDocument> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const response = await http.get(url, { signal: options.signal, accept: XML_ACCEPT, maxBytes });
  if (response.status < 200 || response.status > 299) {
    await response.discard();
    throw new HttpStatusError(response.status, response.statusText, response.url);
  }
  return readResponse(response, url, options);
}

/**
 * Reads a 2xx response (or the rest of one whose start was peeked: pass `body`) as a ResourceSync document.
 * Content-Type is not trusted either way: the reader decides from the bytes.
 */
export async function readResponse(
  response: HttpResponse,
  url: string,
  options: LoadOptions = {},
  body: AsyncIterable<Uint8Array> = response.body,
): Promise<LoadedDocument> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  options.onResponse?.(response.url);
  const { head: magic, stream } = await peek(body, 2);
  const gzipped = magic.length >= 2 && magic[0] === 0x1f && magic[1] === 0x8b;
  const source = gzipped ? gunzip(stream, response.url, maxBytes) : stream;

  let bytes = 0;
  let entries = 0;
  let lastProgress = 0;
  const headChunks: Uint8Array[] = [];
  let headSize = 0;
  const progress = (force: boolean) => {
    if (!options.onProgress) return;
    const now = Date.now();
    if (!force && now - lastProgress < PROGRESS_INTERVAL_MS) return;
    lastProgress = now;
    options.onProgress({ bytes, entries });
  };
  async function* tee(): AsyncGenerator<Uint8Array> {
    for await (const chunk of source) {
      bytes += chunk.byteLength;
      if (headSize < HEAD_BYTES) {
        const part = chunk.subarray(0, HEAD_BYTES - headSize);
        headChunks.push(part);
        headSize += part.byteLength;
      }
      progress(false);
      yield chunk;
    }
  }

  const onEntry = options.onEntry;
  const summary = await readDocument(tee(), {
    url,
    maxBytes,
    signal: options.signal,
    onStart: options.onStart,
    onEntry: (entry) => {
      entries++;
      return onEntry?.(entry);
    },
  });
  progress(true);
  return {
    summary,
    bytes,
    contentType: response.headers['content-type'] ?? null,
    finalUrl: response.url,
    head: decodeHead(Buffer.concat(headChunks)),
  };
}

async function* gunzip(source: AsyncIterable<Uint8Array>, url: string, maxBytes: number): AsyncGenerator<Uint8Array> {
  const input = Readable.from(source);
  const inflater = createGunzip();
  input.on('error', (err) => inflater.destroy(err));
  input.pipe(inflater);
  let size = 0;
  try {
    for await (const chunk of inflater) {
      size += (chunk as Buffer).byteLength;
      // The limit is on the unpacked document: a tiny gzip must not unpack into gigabytes.
      if (size > maxBytes) throw new NetworkError('too-large', `${url} unpacks to more than ${maxBytes.toLocaleString('en')} bytes`, url);
      yield chunk as Buffer;
    }
  } catch (err) {
    if (err instanceof Error && 'code' in err && typeof err.code === 'string' && err.code.startsWith('Z_')) {
      throw new NetworkError('network', `${url} looks gzipped but could not be unpacked: ${err.message}`, url, { cause: err });
    }
    throw err;
  } finally {
    input.destroy();
    inflater.destroy();
  }
}

/** Text of the head in the document's own encoding (BOM or XML declaration), cut at a whole character. */
export function decodeHead(bytes: Uint8Array): string {
  let label = 'utf-8';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) label = 'utf-16le';
  else if (bytes[0] === 0xfe && bytes[1] === 0xff) label = 'utf-16be';
  else if (!(bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf)) {
    const declaration = /^<\?xml[^>]*encoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(
      Buffer.from(bytes.subarray(0, 200)).toString('latin1'),
    );
    if (declaration) label = declaration[1];
  }
  let decoder = new TextDecoder('utf-8');
  try {
    decoder = new TextDecoder(label);
  } catch {
    // An encoding TextDecoder does not know: show it as UTF-8.
  }
  // stream: true holds back a character cut in half at the 256 KiB boundary instead of showing U+FFFD.
  return decoder.decode(bytes, { stream: true });
}
