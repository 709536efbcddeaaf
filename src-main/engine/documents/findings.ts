// Collects Findings with a cap per code: a hostile 50,000-entry document with the same fault on every entry
// must not become 50,000 findings in memory (or in the UI).
import type { Finding, Severity } from './model.ts';

/**
 * Every code the reader reports a Finding with (a document that is read; refusals are DOCUMENT_ERROR_CODES).
 * Each one has a test document under fixtures/documents/ that produces it (fixtures.test.ts checks that): a new
 * rule comes with its fixture.
 */
export const FINDING_CODES = [
  // The reader (parser.ts): the document's structure.
  'duplicate-element',
  'duplicate-md',
  'foreign-element',
  'foreign-entry',
  'prefixed-attribute',
  'ln-after-entry',
  'md-after-entry',
  'too-many-links',
  'unexpected-element',
  'unknown-attribute',
  'unknown-element',
  // Conformance rules (conformance.ts): the document level.
  'attribute-not-applicable',
  'completed-before-at',
  'index-not-allowed',
  'index-not-expected',
  'missing-at',
  'missing-describedby',
  'missing-from',
  'missing-until',
  'missing-up',
  'until-before-from',
  // Values.
  'invalid-changefreq',
  'invalid-datetime',
  'invalid-hash',
  'invalid-length',
  'invalid-link',
  'invalid-pri',
  // Entries.
  'capabilitylist-entry',
  'change-order',
  'datetime-out-of-range',
  'description-entry',
  'duplicate-capability',
  'index-entry-capability',
  'invalid-change',
  'invalid-path',
  'lastmod-not-expected',
  'missing-change',
  'missing-entry-capability',
  'missing-entry-from',
  'missing-hub-link',
  'missing-loc',
  'missing-path',
  'package-md',
  'patch-link',
  'relative-loc',
  'too-many-entries',
  'unregistered-rel',
] as const;
export type FindingCode = (typeof FINDING_CODES)[number];

/** Findings kept per code; further ones are only counted. */
export const MAX_FINDINGS_PER_CODE = 100;

export class FindingList {
  private readonly list: Finding[] = [];
  private readonly counts = new Map<string, { count: number; severity: Severity }>();

  add(severity: Severity, code: FindingCode, message: string, line?: number): void {
    const seen = this.counts.get(code);
    if (seen === undefined) this.counts.set(code, { count: 1, severity });
    else {
      seen.count++;
      if (seen.count > MAX_FINDINGS_PER_CODE) return;
    }
    this.list.push(line === undefined ? { severity, code, message } : { severity, code, message, line });
  }

  /**
   * The findings in line order (whatever order the checks ran in), then one finding per code that went over the
   * cap saying how many were left out.
   */
  finish(): Finding[] {
    const out = this.list.slice().sort((a, b) => (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER));
    for (const [code, { count, severity }] of this.counts) {
      if (count > MAX_FINDINGS_PER_CODE) {
        out.push({
          severity,
          code,
          message: `${count - MAX_FINDINGS_PER_CODE} more "${code}" findings not listed (${count} in all)`,
        });
      }
    }
    return out;
  }
}
