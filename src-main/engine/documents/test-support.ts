// Helpers shared by the tests of this folder (not a test file itself).
import { DocumentError } from './errors.ts';
import type { DocumentSummary, Entry, Finding } from './model.ts';
import { readDocument, type ReadOptions } from './reader.ts';

export const NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';

/** The text as a stream of string chunks of `chunkSize` characters (all of it in one chunk by default). */
export async function* chunks(text: string, chunkSize = text.length || 1): AsyncGenerator<string> {
  for (let i = 0; i < text.length; i += chunkSize) yield text.slice(i, i + chunkSize);
}

/** The text as UTF-8 bytes in chunks of `chunkSize` bytes. */
export async function* byteChunks(bytes: Uint8Array, chunkSize = bytes.length || 1): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += chunkSize) yield bytes.subarray(i, i + chunkSize);
}

export interface ReadResult {
  summary: DocumentSummary;
  entries: Entry[];
}

/** Reads a document given as text, collecting its entries (fine for the small documents of tests). */
export async function read(text: string, options: Partial<ReadOptions> & { chunkSize?: number } = {}): Promise<ReadResult> {
  const entries: Entry[] = [];
  const summary = await readDocument(chunks(text, options.chunkSize), {
    url: 'http://127.0.0.1/test.xml',
    ...options,
    onEntry: (entry) => {
      entries.push(entry);
      return options.onEntry?.(entry);
    },
  });
  return { summary, entries };
}

/** The DocumentError a read of `text` is refused with; fails if the read succeeds or fails otherwise. */
export async function refusal(text: string, options: Partial<ReadOptions> & { chunkSize?: number } = {}): Promise<DocumentError> {
  try {
    await read(text, options);
  } catch (err) {
    if (err instanceof DocumentError) return err;
    throw err;
  }
  throw new Error('expected a DocumentError, the document was read');
}

/** 1-based line of the first line of `text` containing `needle`. */
export function lineOf(text: string, needle: string, occurrence = 1): number {
  const lines = text.split('\n');
  let seen = 0;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].includes(needle) && ++seen === occurrence) return i + 1;
  }
  throw new Error(`"${needle}" not in text`);
}

export function codes(findings: Finding[]): string[] {
  return findings.map((f) => f.code);
}

/** A <urlset> document: one element per line, so that lines are easy to predict. */
export function urlset(md: string, body: string[] = [], links: string[] = []): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<urlset ${NS}>`,
    ...links,
    md,
    ...body,
    '</urlset>',
  ].join('\n');
}

export function sitemapindex(md: string, body: string[] = [], links: string[] = []): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<sitemapindex ${NS}>`,
    ...links,
    md,
    ...body,
    '</sitemapindex>',
  ].join('\n');
}

export const UP_CAPABILITY_LIST = '<rs:ln rel="up" href="http://example.com/dataset1/capabilitylist.xml"/>';
export const UP_SOURCE_DESCRIPTION = '<rs:ln rel="up" href="http://example.com/.well-known/resourcesync"/>';

export function url(loc: string, ...children: string[]): string {
  return `<url><loc>${loc}</loc>${children.join('')}</url>`;
}
