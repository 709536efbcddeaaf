// What a gap's catch-up must leave alone: the resources that the notifications after the gap change again. A gap's
// catch-up runs before them (one write at a time, in order), but the Source already serves their versions: a
// `created` or `updated` of the gap, fetched now, got the later bytes (its listed length and hash no longer match) or
// 410 for a resource deleted since. Those failures were mended by the later notification a moment after, yet the
// catch-up's run stayed failed, and its failures were listed in the feed. An older change of a resource whose later
// change is about to be applied is covered by it: not fetched, and said so with why.
import type { Timed } from '../mirror/change-timeline.ts';
import { entryProblem } from '../mirror/entries.ts';
import { canonicalUri } from '../mirror/uri.ts';
import type { AppliedChange } from './model.ts';
import type { ChangeItem } from './payload.ts';
import type { Taken } from './apply-live.ts';

export class LaterChanges {
  /** The latest change per URI (as the mirror keeps it), of the notifications after the gap. */
  readonly #latest = new Map<string, ChangeItem>();
  /** The catch-up's changes left out for them, the first `max`, and how many in all. */
  readonly covered: AppliedChange[] = [];
  coveredCount = 0;
  readonly #max: number;

  /**
   * `later`: the notifications taken after the gap, to be applied next. Only their changes at or after the gap's end
   * count: those before it are left out as covered when they are applied (collapse, apply-live.ts), so they change
   * nothing. Nor does an entry that breaks the spec (it fails alone).
   */
  constructor(later: Taken[], gapUntilMs: number, max: number) {
    this.#max = max;
    for (const { notification } of later) {
      for (const c of notification.changes) {
        if (c.ms === null || c.ms < gapUntilMs || entryProblem(c.entry) !== null) continue;
        if (c.change !== 'created' && c.change !== 'updated' && c.change !== 'deleted') continue;
        const uri = canonicalUri(c.uri);
        const prior = this.#latest.get(uri);
        if (prior === undefined || c.ms >= prior.ms!) this.#latest.set(uri, c);
      }
    }
  }

  get size(): number {
    return this.#latest.size;
  }

  /** True (and recorded) when a later notification changes the resource of `change` after it. */
  passOver = (change: Timed): boolean => {
    const later = this.#latest.get(change.entry.loc);
    if (later === undefined || (change.ms !== null && change.ms > later.ms!)) return false;
    this.coveredCount++;
    if (this.covered.length < this.#max) {
      this.covered.push({
        uri: change.entry.loc,
        change: change.entry.md.change ?? 'unknown',
        datetime: change.entry.md.datetime ?? null,
        outcome: 'covered',
        reason: `not fetched: a later notification ${later.change === 'deleted' ? 'deletes' : 'changes'} it (${later.change}, ${later.datetime}), and applying it next covers this change`,
      });
    }
    return true;
  };
}
