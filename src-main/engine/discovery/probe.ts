// One GET during discovery, classified: a ResourceSync document (with its summary and first entries), an HTML
// page (with its resourcesync links), or something else, with a short human-readable outcome. Content-Type is a
// hint only: the first bytes decide whether the body is HTML or goes to the document reader.
import { DocumentError } from '../documents/errors.ts';
import { capabilityName, type DocumentHead, type DocumentSummary, type Entry } from '../documents/model.ts';
import type { Http } from '../http/client.ts';
import { NetworkError } from '../http/errors.ts';
import { linksWithRel, parseLinkHeader } from '../http/link-header.ts';
import { peek } from '../http/peek.ts';
import { readResponse } from '../load.ts';
import { findHtmlLinks } from './html-links.ts';

export interface Probe {
  url: string;
  finalUrl: string;
  /** Absent when no response arrived. */
  status?: number;
  headers: Record<string, string>;
  /** Targets of `Link: <…>; rel="resourcesync"` on a 2xx response. */
  linkHeaderTargets: string[];
  /**
   * `headOnly`: only the document's head was read (see probe's `listsHeadOnly`): its summary gives what the document
   * is and its root links, but no entry count and no findings.
   */
  document?: { summary: DocumentSummary; entries: Entry[]; entriesTruncated: boolean; headOnly?: boolean };
  html?: { links: string[] };
  /** The HTML page's head went on past the bytes searched for links. */
  htmlTruncated?: boolean;
  /** "Capability List", "404 Not Found", "HTML page", "not XML", a network error, ... */
  message: string;
  /** Why no document came of it, when a refusal or a network error says so. */
  error?: DocumentError | NetworkError;
}

export const PROBE_ACCEPT = 'application/xml, text/xml;q=0.9, text/html;q=0.8, */*;q=0.5';
/** Entries kept per document: Source Descriptions and Capability Lists are small; big lists are only counted. */
export const KEPT_ENTRIES = 1000;
const SNIFF_BYTES = 4096;


export function documentName(summary: Pick<DocumentSummary, 'capability' | 'isIndex'>): string {
  return capabilityName(summary.capability, summary.isIndex);
}

const REFUSALS: Partial<Record<DocumentError['code'], string>> = {
  empty: 'empty response',
  'not-xml': 'not XML',
  html: 'an HTML page, not a ResourceSync document',
  malformed: 'malformed XML',
  truncated: 'truncated XML',
  doctype: 'XML with a DOCTYPE (refused)',
  'wrong-root': 'XML, but not a sitemap',
  'wrong-namespace': 'XML in a namespace other than the sitemap/ResourceSync ones',
  'missing-md': 'a plain Sitemap, not a ResourceSync document (no rs:md)',
  'missing-capability': 'a ResourceSync document without a capability',
};

/** What a route step says of a refused document: a short phrase for the usual refusals, else the error itself. */
export function refusalMessage(err: DocumentError | NetworkError): string {
  return err instanceof DocumentError ? (REFUSALS[err.code] ?? err.message) : err.message;
}

/** A probe answered from memory: the document was refused a short while ago and is not fetched again. */
export function rememberedProbe(url: string, error: DocumentError | NetworkError, note: string): Probe {
  return { url, finalUrl: url, headers: {}, linkHeaderTargets: [], message: `${refusalMessage(error)} (${note})`, error };
}

/** Thrown from onStart to stop reading a document once its head is known. */
class HeadRead extends Error {
  readonly head: DocumentHead;
  constructor(head: DocumentHead) {
    super('head read');
    this.head = head;
  }
}

/** Documents whose entries discovery needs: the Source Description's Capability Lists, a Capability List's capabilities. */
const ENTRIES_NEEDED = new Set(['description', 'capabilitylist']);

/**
 * `listsHeadOnly`: a list, dump or manifest is read only up to its first entry, which is enough to place it in the
 * Source (its capability, its up and index links). For a caller that reads the list itself next (a sync), so that a
 * Resource List of 50,000 entries is not downloaded and parsed twice. Its entries, count and findings are then not known.
 */
export async function probe(http: Http, url: string, signal?: AbortSignal, deadlineAt?: number, listsHeadOnly = false): Promise<Probe> {
  const result: Probe = { url, finalUrl: url, headers: {}, linkHeaderTargets: [], message: '' };
  let response;
  try {
    response = await http.get(url, { signal, accept: PROBE_ACCEPT, deadlineAt });
  } catch (err) {
    if (!(err instanceof NetworkError) || err.code === 'aborted') throw err;
    result.message = err.message;
    result.error = err;
    return result;
  }
  result.finalUrl = response.url;
  result.status = response.status;
  result.headers = response.headers;
  if (response.status < 200 || response.status > 299) {
    await response.discard();
    result.message = `${response.status} ${response.statusText}`.trim();
    return result;
  }
  if (response.headers.link) {
    result.linkHeaderTargets = linksWithRel(parseLinkHeader(response.headers.link, response.url), 'resourcesync', response.url);
  }
  try {
    const { head, stream } = await peek(response.body, SNIFF_BYTES);
    if (looksLikeHtml(head, response.headers['content-type'])) {
      const charset = /charset\s*=\s*"?([^";\s]+)/i.exec(response.headers['content-type'] ?? '')?.[1];
      const { links, truncated } = await findHtmlLinks(stream, response.url, 'resourcesync', { charset });
      await response.discard();
      result.html = { links };
      if (truncated) result.htmlTruncated = true;
      result.message = 'HTML page';
      return result;
    }
    const entries: Entry[] = [];
    let entriesTruncated = false;
    const loaded = await readResponse(
      response,
      url,
      {
        signal,
        onStart: listsHeadOnly
          ? (head) => {
              if (!ENTRIES_NEEDED.has(head.capability)) throw new HeadRead(head);
            }
          : undefined,
        onEntry: (entry) => {
          if (entries.length < KEPT_ENTRIES) entries.push(entry);
          else entriesTruncated = true;
        },
      },
      stream,
    );
    result.document = { summary: loaded.summary, entries, entriesTruncated };
    result.message = documentName(loaded.summary);
  } catch (err) {
    // The rest of a list read only to its head is not wanted (and may be large, or stall).
    await (err instanceof HeadRead ? response.abandon() : response.discard()).catch(() => undefined);
    if (err instanceof HeadRead) {
      const { head } = err;
      const summary: DocumentSummary = { url, root: head.root, capability: head.capability, isIndex: head.isIndex, md: head.md, links: head.links, entries: 0, findings: [] };
      result.document = { summary, entries: [], entriesTruncated: true, headOnly: true };
      result.message = documentName(summary);
    } else if (err instanceof DocumentError) {
      if (err.code === 'aborted') throw err;
      result.message = refusalMessage(err);
      result.error = err;
    } else if (err instanceof NetworkError) {
      if (err.code === 'aborted') throw err;
      result.message = err.message;
      result.error = err;
    } else throw err;
  }
  return result;
}

/**
 * HTML when the markup starts like HTML, whatever the Content-Type says; when the bytes say nothing (no markup
 * at all) the Content-Type decides. An XML sitemap served as text/html is still read as XML.
 */
export function looksLikeHtml(head: Uint8Array, contentType: string | undefined): boolean {
  let text = Buffer.from(head).toString('latin1');
  if (text.startsWith('\xef\xbb\xbf')) text = text.slice(3);
  // Skip the XML declaration, processing instructions, comments and whitespace before the first real markup.
  for (;;) {
    const trimmed = text.trimStart();
    if (trimmed.startsWith('<?')) {
      const end = trimmed.indexOf('?>');
      text = end < 0 ? '' : trimmed.slice(end + 2);
    } else if (trimmed.startsWith('<!--')) {
      const end = trimmed.indexOf('-->');
      text = end < 0 ? '' : trimmed.slice(end + 3);
    } else {
      text = trimmed;
      break;
    }
  }
  if (/^<!doctype\s+html/i.test(text) || /^<html[\s>]/i.test(text) || /^<head[\s>]/i.test(text)) return true;
  if (text.startsWith('<')) return false;
  return /\bhtml\b/i.test(contentType ?? '');
}
