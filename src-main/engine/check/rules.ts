// Rules across documents of one Source, each a plain function of what the walk kept: what a parent listed a
// document as, where its `up` link points, who listed it, and why it could not be read. (Index parts are checked
// against their index by conformance.ts's checkIndexChild.)
import { clip } from '../clip.ts';
import { DocumentError } from '../documents/errors.ts';
import { capabilityName, type DocumentSummary, type Finding } from '../documents/model.ts';
import { NetworkError } from '../http/errors.ts';

/**
 * The absolute form of a reference, without its fragment (never sent to the server: the same document), or the
 * reference itself if it does not parse. An index naming one part as part.xml#1, #2, … is one document, not many.
 */
export function absoluteUrl(href: string, base: string): string {
  try {
    const url = new URL(href, base);
    url.hash = '';
    return url.href;
  } catch {
    return href;
  }
}

function name(capability: string, isIndex = false): string {
  return capabilityName(capability, isIndex);
}

/** A parent (Source Description, Capability List, dump) said what the document is; the document says otherwise. */
export function capabilityMismatch(child: DocumentSummary, listedAs: string, lister: string): Finding | null {
  if (child.capability === listedAs) return null;
  return {
    severity: 'error',
    code: 'capability-mismatch',
    message: `Listed as a ${name(listedAs)} by ${clip(lister)}, but this document is a ${name(child.capability, child.isIndex)}`,
  };
}

/**
 * The `up` link must lead to the document one level up: the Source Description for a Capability List, the
 * Capability List for every document of a capability (§6.2, §9–§13). `expected` holds the URLs that count as that
 * document (as listed and after redirects). No finding without an `up` link: the document's own check says so.
 */
export function upElsewhere(child: DocumentSummary, finalUrl: string, expected: readonly string[], parentName: string): Finding | null {
  const up = child.links.find((link) => link.rel === 'up');
  if (up === undefined || expected.length === 0) return null;
  const target = absoluteUrl(up.href, finalUrl);
  if (expected.includes(target)) return null;
  return {
    severity: 'warning',
    code: 'up-link-elsewhere',
    message: `Its rs:ln rel="up" points to ${clip(up.href)}, but it was reached from the ${parentName} ${clip(expected[0] ?? '')}`,
  };
}

/**
 * The Source Description is not at the Source's well-known URI (§6.3.2: the Source must publish it there).
 * `problem`: what that URI gave instead, in a few words.
 */
export function wellKnownMissing(wellKnownUrl: string, sourceDescription: string, problem: string): Finding {
  return {
    severity: 'error',
    code: 'well-known-missing',
    message: `${clip(wellKnownUrl)} does not serve a Source Description (${problem}); it was found at ${clip(sourceDescription)}. A Source must publish its Source Description at /.well-known/resourcesync (§6.3.2)`,
  };
}

/** What a Change List Index's entry says of one of its Change Lists. */
export interface ListedPeriod {
  until: string | undefined;
  line: number;
}

/**
 * §12.2: the index entry of a closed Change List (one with until) must give its until; that of an open one must
 * not. The finding is the Change List's, naming the index and the line of its entry.
 */
export function indexEntryUntil(child: DocumentSummary, listed: ListedPeriod, index: string): Finding | null {
  if (child.capability !== 'changelist' || child.isIndex) return null;
  const closed = child.md.until !== undefined;
  if (closed === (listed.until !== undefined)) return null;
  const message = closed
    ? `This Change List is closed (until="${clip(child.md.until ?? '', 40)}"), but its entry in the Change List Index ${clip(index)} (line ${listed.line}) has no "until": the entry of a closed Change List must give it (§12.2)`
    : `This Change List is open (no "until"), but its entry in the Change List Index ${clip(index)} (line ${listed.line}) gives until="${clip(listed.until ?? '', 40)}": the entry of an open Change List must not (§12.2)`;
  return { severity: 'error', code: 'index-entry-until', message };
}

export function unlistedCapabilityList(sourceDescription: string | null): Finding {
  return {
    severity: 'warning',
    code: 'unlisted-capability-list',
    message:
      sourceDescription === null
        ? 'No Source Description lists this Capability List (none was found; §8)'
        : `The Source Description ${sourceDescription} does not list this Capability List (§8)`,
  };
}

/** The lister names a document the walk already reached: it is not fetched again. */
export function listedAgain(url: string, firstParent: string | null, loop: boolean, line: number | undefined): Finding {
  const message = loop
    ? `Lists ${clip(url)}, which is above this document in the Source: a loop; it is not checked again`
    : `Lists ${clip(url)} again; it was already reached${firstParent === null ? ' where the check started' : ` from ${clip(firstParent)}`} and is checked once`;
  const finding: Finding = { severity: 'warning', code: loop ? 'loop' : 'listed-again', message };
  if (line !== undefined) finding.line = line;
  return finding;
}

/** What listedAgain findings past the first `shown` of one document leave unsaid: how many there were. */
export function moreListedAgain(code: string, shown: number, count: number): Finding {
  const more = (count - shown).toLocaleString('en');
  const all = count.toLocaleString('en');
  const message =
    code === 'loop'
      ? `Lists ${more} more documents above it in the Source (a loop), not shown here (${all} in all); none is checked again`
      : `Lists ${more} more documents again that were already reached, not shown here (${all} in all); each is checked once`;
  return { severity: 'warning', code, message };
}

/**
 * Findings of one document a check lists at most. The reader keeps up to 100 of each kind, some 4,500 in all: a
 * hostile Source of a thousand such documents made a report of four and a half million rows.
 */
export const MAX_FINDINGS_PER_DOCUMENT = 250;

/** The findings of one document, the first MAX_FINDINGS_PER_DOCUMENT of them (errors first) and how many more. */
export function capFindings(findings: Finding[]): Finding[] {
  if (findings.length <= MAX_FINDINGS_PER_DOCUMENT) return findings;
  // Errors first, so that no error is left out for a warning; each group in its own order.
  const ordered = [...findings.filter((f) => f.severity === 'error'), ...findings.filter((f) => f.severity !== 'error')];
  const shown = ordered.slice(0, MAX_FINDINGS_PER_DOCUMENT);
  const more = findings.length - MAX_FINDINGS_PER_DOCUMENT;
  shown.push({
    severity: 'warning',
    code: 'more-findings',
    message: `${more.toLocaleString('en')} more findings of this document are not listed here (${findings.length.toLocaleString('en')} in all); inspecting the document alone lists them`,
  });
  return shown;
}

/** A document that could not be fetched or was refused by the reader: an error, in the engine's own words. */
export function failedToLoad(error: unknown): Finding {
  if (error instanceof DocumentError) {
    const finding: Finding = { severity: 'error', code: error.code, message: `Refused: ${error.message}` };
    if (error.line !== undefined) finding.line = error.line;
    return finding;
  }
  if (error instanceof NetworkError) return { severity: 'error', code: error.code, message: `Could not be fetched: ${error.message}` };
  throw error;
}

/** `uncounted`: some were listed past the limit, where a document listed twice is counted twice. */
export function stoppedAt(limit: number, left: number, uncounted = false): Finding {
  return {
    severity: 'warning',
    code: 'document-limit',
    message:
      `Stopped after ${limit.toLocaleString('en')} documents; ${left.toLocaleString('en')} more listed ${left === 1 ? 'document was' : 'documents were'} not checked (nor what they list)` +
      (uncounted ? '; past the limit, a document listed more than once is counted each time and not reported as listed again' : ''),
  };
}

export function cancelledAt(done: number, left: number): Finding {
  return {
    severity: 'warning',
    code: 'cancelled',
    message: `Check cancelled after ${done.toLocaleString('en')} documents; ${left.toLocaleString('en')} more known ${left === 1 ? 'document was' : 'documents were'} not checked`,
  };
}
