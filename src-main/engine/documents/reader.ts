// The one streaming reader for every ResourceSync document (core spec §7–§13, Change Notification §3).
// Entries are handed to `onEntry` one by one and never accumulated; reading waits while onEntry's promise is
// pending (backpressure); bytes are counted as they stream and the read stops at once over the limit.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { XmlDecoder } from './decode.ts';
import { DocumentError } from './errors.ts';
import type { DocumentHead, DocumentSummary, Entry } from './model.ts';
import { DocumentParser } from './parser.ts';

export interface ReadOptions {
  /** The document's URL, for messages (nothing is resolved against it). */
  url: string;
  /** Default 50 MB (the community limit of §7); over it the read fails with DocumentError 'too-large'. */
  maxBytes?: number;
  /** Called for each <url> / <sitemap> in document order; a returned promise is awaited before reading on. */
  onEntry?: (entry: Entry) => void | Promise<void>;
  /** Called once, before the first entry, with what the document is (not called for a document without entries). */
  onStart?: (head: DocumentHead) => void;
  signal?: AbortSignal;
}

export const DEFAULT_MAX_BYTES = 50 * 1024 * 1024;

/**
 * Text is fed to the XML parser in slices this long, so entries are handed out (and awaited) in small batches:
 * about 150 entries of a typical list. Few entries then wait in the queue when the young generation is collected,
 * so few are copied; with 256 Ki characters the scavenges of a first read took about twice as long (~40 ms).
 */
const SLICE_CHARS = 32 * 1024;

function tooLarge(url: string, maxBytes: number): DocumentError {
  return new DocumentError('too-large', `${url} is larger than ${maxBytes.toLocaleString('en')} bytes`);
}

function aborted(url: string, signal: AbortSignal): DocumentError {
  return new DocumentError('aborted', `Reading ${url} was aborted`, { cause: signal.reason });
}

function nextOrAbort<T>(next: Promise<T>, signal: AbortSignal, url: string): Promise<T> {
  if (signal.aborted) return Promise.reject(aborted(url, signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(aborted(url, signal));
    signal.addEventListener('abort', onAbort, { once: true });
    next.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/**
 * Reads one ResourceSync document from a stream of bytes (encoding from BOM / XML declaration, else UTF-8) or of
 * already decoded strings. Resolves to its summary with the conformance findings. Rejects with a DocumentError
 * when the document is refused; errors thrown by `input` or by `onEntry` are passed through unchanged.
 */
export async function readDocument(input: AsyncIterable<Uint8Array | string>, options: ReadOptions): Promise<DocumentSummary> {
  const { url, onEntry, onStart, signal } = options;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  if (signal?.aborted) throw aborted(url, signal);
  const parser = new DocumentParser(url);
  let decoder: XmlDecoder | null = null;
  let bytes = 0;
  let started = false;

  const drain = async (): Promise<void> => {
    const taken = parser.take();
    if (taken === null) return;
    const checker = parser.checker;
    if (checker === null) return;
    const { entries, mdLines, linkLines } = taken;
    if (onStart !== undefined && !started) {
      started = true;
      onStart(parser.head() as DocumentHead);
    }
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i];
      checker.checkEntry(entry, mdLines[i], linkLines[i]);
      if (onEntry !== undefined) {
        const pending = onEntry(entry);
        if (pending !== undefined) await pending;
        if (signal?.aborted) throw aborted(url, signal);
      }
    }
  };

  const feed = async (text: string): Promise<void> => {
    if (text.length <= SLICE_CHARS) {
      parser.write(text);
      await drain();
      return;
    }
    for (let start = 0; start < text.length; start += SLICE_CHARS) {
      parser.write(text.slice(start, start + SLICE_CHARS));
      await drain();
    }
  };

  const iterator = input[Symbol.asyncIterator]();
  let finished = false;
  let waiting = false;
  try {
    for (;;) {
      waiting = true;
      const next = await (signal === undefined ? iterator.next() : nextOrAbort(iterator.next(), signal, url));
      waiting = false;
      if (next.done === true) break;
      const chunk = next.value;
      if (typeof chunk === 'string') {
        bytes += Buffer.byteLength(chunk, 'utf8');
        if (bytes > maxBytes) throw tooLarge(url, maxBytes);
        await feed(chunk);
      } else {
        bytes += chunk.byteLength;
        if (bytes > maxBytes) throw tooLarge(url, maxBytes);
        decoder ??= new XmlDecoder(url);
        await feed(decoder.decode(chunk));
      }
    }
    finished = true;
    if (decoder !== null) await feed(decoder.end());
    parser.close();
    await drain();
    return parser.summary();
  } finally {
    if (!finished && iterator.return !== undefined) {
      // Stop the source now (closes a file, a socket). Not awaited while a next() is still pending after an
      // abort: that could wait on the very source that hangs.
      const closing = Promise.resolve(iterator.return()).catch(() => undefined);
      if (!waiting) await closing;
    }
  }
}

/** What went wrong with a local file, in plain words (not "ENOENT: no such file or directory, stat '…'"). */
export function fileErrorMessage(path: string, err: unknown): string {
  const code = err && typeof err === 'object' && 'code' in err ? String(err.code) : '';
  switch (code) {
    case 'ENOENT':
      return `no such file: ${path}`;
    case 'ENOTDIR':
      return `no such file: ${path} (a part of its path is a file, not a folder)`;
    case 'EISDIR':
      return `${path} is a folder, not a file`;
    case 'EACCES':
    case 'EPERM':
      return `not allowed to read ${path} (permission denied)`;
    case 'ELOOP':
      return `cannot read ${path}: too many symbolic links`;
    case 'ENAMETOOLONG':
      return `cannot read ${path}: the name is too long`;
  }
  // Anything rarer (EIO, EMFILE…): node's text without its "CODE: " lead and the syscall it names.
  const text = (err instanceof Error ? err.message : String(err)).replace(/^[A-Z]+: /, '').replace(/, \w+ '.*'$/, '');
  return `cannot read ${path}: ${text}`;
}

async function* fileChunks(path: string): AsyncGenerator<Uint8Array> {
  const stream = createReadStream(path, { highWaterMark: 1 << 20 });
  try {
    for await (const chunk of stream) yield chunk as Uint8Array;
  } catch (err) {
    throw new DocumentError('io', fileErrorMessage(path, err), { cause: err });
  } finally {
    stream.destroy();
  }
}

/** Reads a document from a file; `url` defaults to the file's file: URL. File system errors become DocumentError 'io'. */
export async function readDocumentFile(
  path: string,
  options: Omit<ReadOptions, 'url'> & { url?: string } = {},
): Promise<DocumentSummary> {
  const url = options.url ?? pathToFileURL(path).href;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  let size: number;
  try {
    const stats = await stat(path);
    if (stats.isDirectory()) throw new DocumentError('io', `${path} is a folder, not a file`);
    if (!stats.isFile()) throw new DocumentError('io', `${path} is not a regular file`);
    size = stats.size;
  } catch (err) {
    if (err instanceof DocumentError) throw err;
    throw new DocumentError('io', fileErrorMessage(path, err), { cause: err });
  }
  // Known too large before a byte is read; the streaming count still guards a file that grows meanwhile.
  if (size > maxBytes) throw tooLarge(url, maxBytes);
  return readDocument(fileChunks(path), { ...options, url, maxBytes });
}

export { checkIndexChild } from './conformance.ts';
export { DocumentError } from './errors.ts';
