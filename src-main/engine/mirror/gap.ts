// Changes no Change List holds (core spec §7 `from`: a Change List holds every change from its `from` on, and nothing
// is promised before). When the lists a run reads begin after the time the mirror was last known to be in step with
// its Source, changes made in between are listed nowhere:
// - if the lists begin after the mirror last read the Source (not synced for a while, and the Source moved on to new
//   lists), a new baseline compared with the inventory finds them: the next sync is one;
// - if they began before that read, the Resource List the mirror's baseline read was already older than the Change
//   List then: another baseline would most likely read the same list, so it is said, once.
// "In step up to" is not the checkpoint: a quiet Source's checkpoint stays at its last change, while a run that read
// the lists whole and applied everything was in step when it read them.
import type { IncrementalResult } from './incremental.ts';
import type { MirrorState } from './state.ts';

/** Clock differences between a Source and this computer within which a gap is not worth a word. */
export const GAP_SLACK_MS = 5 * 60 * 1000;

export interface AfterIncremental {
  result: Pick<IncrementalResult, 'begins' | 'readAt'>;
  /** The checkpoint the run started from (what a mirror made before `syncedThrough` was kept is in step up to). */
  checkpointMs: number;
  /** Every change was applied (no failure that a later run may mend, not paused): the mirror is in step as read. */
  complete: boolean;
  dryRun: boolean;
  onNote?: (note: string) => void;
}

export function afterIncremental(state: MirrorState, o: AfterIncremental): void {
  const synced = state.syncedThrough() ?? { ms: o.checkpointMs, readAt: o.checkpointMs };
  const begins = o.result.begins;
  if (begins !== null && begins.ms > synced.ms + GAP_SLACK_MS) {
    const through = new Date(synced.ms).toISOString();
    if (begins.ms > synced.readAt + GAP_SLACK_MS) {
      const why = `The Change List begins at ${begins.value}, after the mirror was last in step with the Source (${through}): changes made between them are listed nowhere, and only a new baseline finds them.`;
      o.onNote?.(`${why} ${o.dryRun ? 'A real run would make the next sync' : 'The next sync is'} that baseline (compared with the inventory: only what differs is fetched).`);
      if (!o.dryRun) state.setBaselineNeeded(why);
    } else {
      o.onNote?.(
        `The Change List begins at ${begins.value}, after the Resource List the mirror's baseline read (${through}): changes made between them are ` +
          'listed nowhere. The Source\'s Resource List was older than its Change List already then; they may be missing until it publishes a newer one ' +
          '(a baseline, `--mode baseline`, would find them then).',
      );
    }
  }
  if (!o.dryRun && o.complete) {
    const readAt = Math.max(synced.readAt, o.result.readAt);
    const ms = Math.max(synced.ms, o.result.readAt);
    state.setSyncedThrough({ ms, readAt });
    settleNeedsSync(state, ms);
  }
}

/** Changes the live side missed are in the mirror once it is in step with its Source past their end. */
function settleNeedsSync(state: MirrorState, syncedMs: number): void {
  const needs = state.needsSync();
  if (needs !== null && syncedMs >= (Date.parse(needs.until) || Infinity)) state.setNeedsSync(null);
}

/** After a completed baseline: in step with its Resource List's `at` (read at `readAt`); no baseline owed any more. */
export function afterBaseline(state: MirrorState, atMs: number, readAt: number): void {
  state.setSyncedThrough({ ms: atMs, readAt });
  state.setBaselineNeeded(null);
  settleNeedsSync(state, atMs);
}
