// Entry-level checks shared by baseline and incremental runs: an entry that breaks a MUST of the spec in a way that
// makes it impossible to apply (no `loc`, a `loc` that is not an absolute http(s) URI) fails alone, with its reason,
// and the rest of the document is applied. Such a failure is permanent — retrying cannot mend the Source's document —
// so it does not hold the checkpoint back.
import { clip } from '../clip.ts';
import type { Entry } from '../documents/model.ts';
import { canonicalUri } from './uri.ts';

/** Why the entry cannot be applied at all, or null. */
export function entryProblem(entry: Entry): string | null {
  if (entry.loc.trim() === '') return `not applied: the entry has no <loc> (mandatory, core spec §7)`;
  if (!/^https?:\/\/[^/?#]/i.test(entry.loc)) return `not applied: <loc> "${clip(entry.loc, 100)}" is not an absolute http(s) URI`;
  return null;
}

/** A name for the entry in a failure: its loc, or where it stands when it has none. */
export function entryLabel(entry: Entry, documentUrl: string): string {
  return entry.loc.trim() !== '' ? entry.loc : `${documentUrl} (entry at line ${entry.line})`;
}

/**
 * The one document a list's `loc` names, whatever its spelling: the case of the host, a default port and a fragment
 * (never sent to the server) make no other document. An index that names one list a million ways reads it once.
 */
export function listKey(loc: string): string {
  return canonicalUri(loc.trim());
}

/** The lists an index names, each once (by listKey), in the index's order. */
export function uniqueLists(locs: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const loc of locs) {
    const key = listKey(loc);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(loc);
  }
  return out;
}
