// Refusals: a document the reader will not read at all (as opposed to Findings, which are reported on a read).

/** Every `DocumentError.code`, so callers can switch on them and the UI can name them. */
export const DOCUMENT_ERROR_CODES = [
  /** Nothing but whitespace (or nothing at all). */
  'empty',
  /** Not XML: text or garbage where the root element should be. */
  'not-xml',
  /** An HTML page (DOCTYPE html or an `<html>` root), e.g. an error page or a landing page. */
  'html',
  /** XML that is not well-formed after the root element started. */
  'malformed',
  /** The input ended before the root element was closed. */
  'truncated',
  /** A DOCTYPE (and with it any entity declaration): refused before anything in it is read. */
  'doctype',
  /** The bytes are not valid in the document's encoding, or the encoding is unknown. */
  'encoding',
  /** A root element other than `urlset` / `sitemapindex`. */
  'wrong-root',
  /** The sitemap or ResourceSync namespace is not the one the specs define. */
  'wrong-namespace',
  /** No document-level `rs:md` (mandatory, core spec §7). */
  'missing-md',
  /** The document-level `rs:md` has no `capability` attribute (mandatory, core spec §7). */
  'missing-capability',
  /** A `capability` value defined by neither the core spec nor the Change Notification spec. */
  'unknown-capability',
  /** More bytes than the limit (default 50 MB, the community limit of core spec §7). */
  'too-large',
  /** Elements nested deeper than any ResourceSync document needs. */
  'too-deep',
  /** A single text node, tag (with its attributes), comment or value larger than the reader holds. */
  'token-too-large',
  /** The read was aborted through its AbortSignal. */
  'aborted',
  /** The file could not be read (readDocumentFile only). */
  'io',
] as const;
export type DocumentErrorCode = (typeof DOCUMENT_ERROR_CODES)[number];

export class DocumentError extends Error {
  code: DocumentErrorCode;
  /** 1-based line where the problem was seen, when known. */
  line?: number;

  constructor(code: DocumentErrorCode, message: string, options?: { line?: number; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DocumentError';
    this.code = code;
    if (options?.line !== undefined) this.line = options.line;
  }
}
