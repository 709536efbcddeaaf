// The documents module: one streaming reader for every ResourceSync document, and its conformance report.
export { readDocument, readDocumentFile, DEFAULT_MAX_BYTES, type ReadOptions } from './reader.ts';
export { DocumentError, DOCUMENT_ERROR_CODES, type DocumentErrorCode } from './errors.ts';
export { checkIndexChild, MAX_ENTRIES } from './conformance.ts';
export { parseW3cDatetime } from './datetime.ts';
export { parseHashes } from './hash.ts';
export { LIMITS } from './parser.ts';
export * from './model.ts';
