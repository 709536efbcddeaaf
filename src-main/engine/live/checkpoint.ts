// How the live side moves the mirror's checkpoint. The checkpoint says: every change before it is in the mirror
// (a sync takes the Change List from it, changes at its own instant included). A resource that failed must not be
// passed over, yet one failure must not hold the checkpoint for ever while notifications keep being applied: the
// Change Lists a later sync would read from there may be gone by then, and the mirror owe a new baseline.
//
// So the live side keeps a record (in the mirror's meta): from where it left the checkpoint up to `through` it
// applied every change but the failed ones it lists. The checkpoint stays at the earliest of those; once each is
// settled (a later notification or a retry mirrored it, or it is gone), it moves up to `through`: at the next batch,
// or at once when a retry mends it (releaseMended). A sync that moves
// the checkpoint forward says everything before it is in the mirror: what the live side applied after it still
// counts (else a ping's sync, reading a Change List that lags the notifications, stopped the checkpoint for good).
import { parseW3cDatetime } from '../documents/datetime.ts';
import type { MirrorState } from '../mirror/state.ts';

/** A retriable failure of a live run, with the time of its change (null: not dated; the batch's start stands for it). */
export interface HeldFailure {
  uri: string;
  runId: number;
  ms: number;
}

interface LiveHold {
  /** The checkpoint as the live side left it: another one means a sync moved it since, and the hold is stale. */
  checkpoint: string;
  /** Epoch ms up to which the live side applied every change from the checkpoint on, but for `failed`. */
  through: number;
  failed: HeldFailure[];
  /** More failures than a hold keeps: only a sync (or a run that moves the checkpoint) lets it go. */
  overflow?: boolean;
}

const HOLD_KEY = 'live-hold';
/** The most failures a hold lists; past it the checkpoint waits for a sync. */
export const MAX_HELD_FAILURES = 10_000;

function readHold(state: MirrorState): LiveHold | null {
  const row = state.db.prepare('SELECT value FROM meta WHERE key = ?').get(HOLD_KEY) as { value: string } | undefined;
  if (row === undefined) return null;
  try {
    return JSON.parse(row.value) as LiveHold;
  } catch {
    return null;
  }
}

function writeHold(state: MirrorState, hold: LiveHold): void {
  state.db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(HOLD_KEY, JSON.stringify(hold));
}

/** The record as it holds for the checkpoint `at` now (see the top of this file), or null when it does not. */
function holdFor(state: MirrorState, at: number): LiveHold | null {
  const hold = readHold(state);
  const left = hold === null ? null : parseW3cDatetime(hold.checkpoint);
  if (hold === null || left === null || left > at) return null;
  if (left === at) return hold;
  // Moved on by a sync: the failures before it were mended by it. Past the cap, what the unlisted ones were is not
  // known: the record no longer says anything.
  if (hold.overflow) return null;
  return { ...hold, failed: hold.failed.filter((f) => f.ms >= at) };
}

/** The live side's hold on the checkpoint: the failures that keep it back (tests, and what a view may show). */
export function liveHold(state: MirrorState): { through: number; failed: HeldFailure[]; overflow: boolean } | null {
  const at = parseW3cDatetime(state.checkpoint()?.at ?? '');
  const hold = at === null ? null : holdFor(state, at);
  if (hold === null || (hold.failed.length === 0 && !hold.overflow)) return null;
  return { through: hold.through, failed: hold.failed, overflow: hold.overflow === true };
}

/**
 * The hold as it stands now (what a view shows): the failures it lists that no later run has mended yet. The stored
 * record is brought up to date by the next live batch or a retry (releaseMended); a run between them (another
 * process's, an older version's) must not leave a mended failure shown as still failing. Reads only.
 */
export function standingLiveHold(state: MirrorState): { through: number; failed: HeldFailure[]; overflow: boolean } | null {
  const hold = liveHold(state);
  if (hold === null) return null;
  const failed = hold.failed.filter((f) => !settledSince(state, f));
  return { ...hold, failed };
}

/** A later run mirrored the resource, deleted or quarantined it, or found it gone at the Source. */
function settledSince(state: MirrorState, f: HeldFailure): boolean {
  const row = state.get(f.uri);
  if (row !== null && row.runId !== null && row.runId > f.runId && row.status !== 'unverifiable' && row.status !== 'damaged') return true;
  return state.db.prepare('SELECT 1 AS gone FROM gone WHERE uri = ? AND run_id > ?').get(f.uri, f.runId) !== undefined;
}

/**
 * After a run that is no live batch mended some of the failures the hold lists (a retry): the checkpoint moves at
 * once as far as the failures still standing allow, instead of waiting for the next notification or sync (which may
 * be days away on a quiet Source). Call under the mirror's lock, once the run's work is recorded. Returns the
 * checkpoint when it moved, else null.
 */
export function releaseMended(state: MirrorState): string | null {
  const checkpoint = state.checkpoint();
  const at = parseW3cDatetime(checkpoint?.at ?? '');
  if (checkpoint === null || at === null) return null;
  const hold = holdFor(state, at);
  // Past the cap the unlisted failures are not known: only a sync lets the checkpoint go.
  if (hold === null || hold.overflow || hold.failed.length === 0) return null;
  const failed = hold.failed.filter((f) => !settledSince(state, f));
  if (failed.length === hold.failed.length) return null;
  let earliest = hold.through;
  for (const f of failed) earliest = Math.min(earliest, f.ms);
  let kept = checkpoint.at;
  if (earliest > at) {
    kept = new Date(earliest).toISOString();
    setAt(state, kept, earliest, checkpoint.from);
  }
  writeHold(state, { checkpoint: kept, through: hold.through, failed });
  return kept === checkpoint.at ? null : kept;
}

export interface Covered {
  /** Changes before this were covered when the batch started (its first notification's `from`, or the cursor). */
  fromMs: number;
  until: string;
  topic: string;
  /** This run's failures that a retry or sync could mend. */
  failed: HeldFailure[];
  /** More of its failures could be mended than `failed` lists (its Applier kept only the first): as past the cap. */
  unlisted?: boolean;
  /** URIs this run applied (a failure of them held before is mended). */
  applied: Iterable<string>;
}

/**
 * After a batch (or a catch-up) covered [fromMs, until]: the checkpoint moves as far as nothing before it is
 * missing. Call inside the batch's transaction.
 */
export function advanceCheckpoint(state: MirrorState, c: Covered): void {
  const checkpoint = state.checkpoint();
  const untilMs = parseW3cDatetime(c.until);
  if (checkpoint === null || untilMs === null) return;
  const at = parseW3cDatetime(checkpoint.at);
  if (at === null) return;
  const hold = holdFor(state, at);
  // What the live side has applied without a hole, from the checkpoint on.
  const reach = Math.max(at, hold?.through ?? at);
  // A hole before this batch (a gap not filled): it applied what it had, but nothing after the hole is in step.
  if (reach < c.fromMs) return;
  const applied = new Set(c.applied);
  const failed = [...(hold?.failed ?? []).filter((f) => !applied.has(f.uri) && !settledSince(state, f)), ...c.failed];
  const overflow = hold?.overflow === true || c.unlisted === true || failed.length > MAX_HELD_FAILURES;
  const through = Math.max(reach, untilMs);
  if (failed.length === 0 && !overflow) {
    let kept = checkpoint.at;
    if (through > at) {
      kept = through === untilMs ? c.until : new Date(through).toISOString();
      setAt(state, kept, through, c.topic);
    }
    writeHold(state, { checkpoint: kept, through, failed: [] });
    return;
  }
  // Up to the earliest failure standing (a sync applies the changes at the checkpoint's own instant), never past
  // what was applied. Past the cap some failures are not listed: the checkpoint stays where it is.
  let earliest = through;
  for (const f of failed) earliest = Math.min(earliest, f.ms);
  let kept = checkpoint.at;
  if (earliest > at && !overflow) {
    kept = new Date(earliest).toISOString();
    setAt(state, kept, earliest, c.topic);
  }
  writeHold(state, { checkpoint: kept, through, failed: failed.slice(0, MAX_HELD_FAILURES), ...(overflow ? { overflow } : {}) });
}

function setAt(state: MirrorState, at: string, ms: number, from: string): void {
  state.setCheckpoint({ at, from });
  // In step up to there: a Change List that begins before it leaves no gap (gap.ts).
  const synced = state.syncedThrough();
  if (synced === null || synced.ms < ms) state.setSyncedThrough({ ms, readAt: Math.max(ms, synced?.readAt ?? 0) });
}
