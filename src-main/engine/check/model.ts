// What a check of a whole Source yields. Pure types: the contract and the renderer import them.
import type { Finding } from '../documents/model.ts';

/** One document the check reached (fetched, or tried and refused). */
export interface CheckedDocument {
  url: string;
  /** The capability it declares; null when it could not be read. */
  capability: string | null;
  isIndex: boolean;
  /** The document that listed it; null for where the walk started. */
  parent: string | null;
  entries: number;
  findings: Finding[];
}

/** A finding with the document it is about: one row of the report's table. */
export interface CheckFinding extends Finding {
  document: string;
}

export interface CheckSummary {
  documents: number;
  entries: number;
  errors: number;
  warnings: number;
  /** True when the walk stopped early (document limit or cancel): documents were left unchecked. */
  truncated: boolean;
  cancelled: boolean;
}

export interface CheckReport {
  start: string;
  sourceDescription: string | null;
  documents: CheckedDocument[];
  findings: CheckFinding[];
  summary: CheckSummary;
}

export interface CheckProgress {
  /** Documents checked so far. */
  done: number;
  /** Documents known so far (checked, being checked and waiting). */
  known: number;
  /** Entries read so far, in all documents. */
  entries: number;
  /** A document being read now, if any. */
  current: string | null;
}
