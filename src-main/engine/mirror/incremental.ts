// Incremental sync from a Change List or Change List Index (core spec §12): the changes at or after the checkpoint,
// in forward chronological order (by `datetime`, else document order), only the last change per URI applied;
// created/updated fetched (a copy that already matches is not fetched again), deleted by the mirror's policy. An
// entry that breaks a MUST (an unknown `change`) fails alone. The checkpoint advances only past what was applied:
// with a failure it stops just before the earliest failed change.
import { clip } from '../clip.ts';
import { parseW3cDatetime } from '../documents/datetime.ts';
import type { Entry } from '../documents/model.ts';
import type { Http } from '../http/client.ts';
import { HttpStatusError } from '../http/errors.ts';
import { entryLabel, entryProblem } from './entries.ts';
import { MAX_LISTED_ENTRY_FAILURES, type Applier } from './apply.ts';
import type { Checkpoint, MirrorState } from './state.ts';
import { WorkSlots } from './work-slots.ts';
import { CLOCK_SLACK_MS, type Timed } from './change-timeline.ts';
import { readChangeLists, type ChangeListsRead, type ReadChangeListsOptions } from './change-lists.ts';
import { canonicalEntry } from './uri.ts';
import { LastChanges } from './last-changes.ts';

export interface IncrementalOptions {
  http: Http;
  applier: Applier;
  state: MirrorState;
  changeListUrl: string;
  checkpoint: Checkpoint;
  /** Only changes up to this instant (epoch ms), for filling one missing interval (live notifications' gaps). */
  untilMs?: number;
  concurrency: number;
  signal?: AbortSignal;
  /** Stop starting changes (those in flight finish); the checkpoint then stays where it was. */
  pauseSignal?: AbortSignal;
  /** Called once every list was read, with the number of changes to consider. */
  onListed?: (changes: number) => void;
  phases: Record<string, number>;
  onNote?: (note: string) => void;
  /** Applies a created/updated change (default: `applier.apply`; the sync passes one that tries JSON Patches first). */
  applyChange?: (entry: Entry) => Promise<void>;
  /** Called for every deletion handed to the deletion policy. */
  onDeleted?: (uri: string) => void;
  /** What the reader found against the spec in each list read. */
  onFindings?: ReadChangeListsOptions['onFindings'];
  /** URIs whose last change is held in memory before they move to a temporary database (last-changes.ts; tests set a few). */
  inMemoryUris?: number;
  /**
   * The lists must be read: a Change List answering a server error is an error, not taken for "no change listed".
   * Filling a live gap sets it: the gap is recorded as filled when this returns, so a 503 to the Change List lost
   * every change of the gap for good (the cursor and the checkpoint moved past it, nothing applied, nothing said).
   */
  mustRead?: boolean;
  /**
   * A change (the last of its URI read) that must not be applied: true leaves it out, and the caller says why. A live
   * gap's catch-up sets it for resources a later notification changes again: fetched now, a `created` or `updated`
   * of the gap got the later version (length and hash mismatch) or 410 for a resource deleted since.
   */
  passOver?: (change: Timed) => boolean;
}

export interface IncrementalResult {
  changes: number;
  checkpoint: Checkpoint | null;
  /** Where the lists begin (the top document's `from`, else its earliest list's), for gap.ts; null if not given. */
  begins: { value: string; ms: number } | null;
  /** When the lists were read (epoch ms). */
  readAt: number;
  /** A list the index names could not be read (a loop): the mirror is not in step with what was read. */
  listSkipped?: boolean;
}

export async function runIncremental(o: IncrementalOptions): Promise<IncrementalResult> {
  const t0 = Date.now();
  const since = parseW3cDatetime(o.checkpoint.at);
  if (since === null) throw new Error(`The mirror's checkpoint "${clip(o.checkpoint.at)}" is not a datetime`);
  const last = new LastChanges(o.inMemoryUris);
  try {
    return await incremental(o, t0, since, last);
  } finally {
    last.close();
  }
}

async function incremental(o: IncrementalOptions, t0: number, since: number, last: LastChanges): Promise<IncrementalResult> {
  const bad: { uri: string; reason: string }[] = [];
  // Past the failures listed one by one (the Applier's limit), broken entries are only counted: not kept either.
  let moreBad = 0;
  const noteBad = (uri: string, reason: string) => {
    if (bad.length < MAX_LISTED_ENTRY_FAILURES) bad.push({ uri, reason });
    else moreBad++;
  };
  let considered = 0;
  // Changes before the checkpoint were applied already (or are covered by the baseline's snapshot); a broken one
  // among them was reported then.
  const onChange = ({ entry, ms, seq }: Timed, documentUrl: string) => {
    if (o.untilMs !== undefined && ms !== null && ms > o.untilMs) return;
    considered++;
    const problem = entryProblem(entry);
    if (problem !== null) {
      noteBad(entryLabel(entry, documentUrl), problem);
      return;
    }
    const change = entry.md.change;
    if (change !== 'created' && change !== 'updated' && change !== 'deleted') {
      noteBad(entry.loc, change === undefined ? 'not applied: the entry has no change attribute' : `not applied: change="${clip(change, 40)}" is not created, updated or deleted`);
      return;
    }
    canonicalEntry(entry);
    // Only the last change per URI matters (by time; reading order among equals).
    last.offer({ entry, ms, seq });
  };
  let read: ChangeListsRead;
  try {
    read = await readChangeLists(o.http, o.changeListUrl, { since, untilMs: o.untilMs, signal: o.signal, onChange, onNote: o.onNote, onFindings: o.onFindings });
  } catch (err) {
    // Some Sources answer a server error rather than an empty Change List. Nothing was read, so nothing is lost by
    // waiting: the checkpoint stays, and the next run asks again. Said, not hidden.
    if (err instanceof HttpStatusError && err.status >= 500 && err.url === o.changeListUrl && !o.signal?.aborted && !o.mustRead) {
      o.onNote?.(
        `The Change List answered HTTP ${err.status} (${clip(o.changeListUrl)}). Some Sources do so when no change is listed; ` +
          `nothing was applied and the checkpoint stays at ${o.checkpoint.at}. If it persists, the Source has a problem.`,
      );
      o.phases.lists = (Date.now() - t0) / 1000;
      return { changes: 0, checkpoint: o.checkpoint, begins: null, readAt: t0 };
    }
    // Stopped while the lists were read (a pause, a cancel, a list that cannot be had): the journal says how long.
    o.phases.lists = (Date.now() - t0) / 1000;
    throw err;
  }
  const { begins, closedUntil } = read;
  o.phases.lists = (Date.now() - t0) / 1000;
  o.onListed?.(last.size);

  const t1 = Date.now();
  const inflight = new WorkSlots(Math.max(2, o.concurrency * 2));
  for (const change of last.ordered()) {
    if (o.signal?.aborted || o.pauseSignal?.aborted) break;
    if (o.passOver?.(change)) continue;
    if (change.entry.md.change === 'deleted') {
      o.applier.delete(change.entry.loc);
      o.onDeleted?.(change.entry.loc);
      o.applier.settledOne();
      continue;
    }
    const full = inflight.add(o.applyChange ? o.applyChange(change.entry) : o.applier.apply(change.entry));
    if (full) await full;
  }
  await inflight.all();
  await o.applier.finish();
  o.phases.fetch = (Date.now() - t1) / 1000;
  // Cancelled: what was applied is recorded (above), but the checkpoint must not move past the changes never started.
  o.signal?.throwIfAborted();
  for (const b of bad) o.applier.fail(b.uri, b.reason, true);
  o.applier.failUnlisted(moreBad);
  await o.applier.finish();
  // Paused: the changes not started are after the checkpoint still; a resumed run skips what this one applied.
  if (o.pauseSignal?.aborted) return { changes: considered, checkpoint: o.checkpoint, begins, readAt: t0, listSkipped: read.unreadFrom !== null };

  // The new checkpoint: the latest change applied, but never past a failed one.
  // Entries that break the spec (bad) fail for good: waiting for them would hold the mirror back forever.
  let earliestFailed = Infinity;
  // An undated change is placed no later than the dated one before it (-Infinity: nothing before it is dated).
  for (const c of last.times()) if (o.applier.failedRetriably(c.entry.loc)) earliestFailed = Math.min(earliestFailed, c.ms ?? -Infinity);
  let latest = since;
  for (const c of last.times()) if (c.ms !== null && c.ms < earliestFailed && c.ms > latest) latest = c.ms;
  // A closed list read whole, nothing failed: the mirror is in step up to its `until`, changes or none (so the list
  // after it, which begins there, leaves no gap).
  if (earliestFailed === Infinity && closedUntil !== null && closedUntil > latest && o.untilMs === undefined) latest = closedUntil;
  // Never past the time the lists were read: a change (or an `until`) dated in the future, year 9999, would otherwise
  // put every later change before the checkpoint.
  if (latest > t0) {
    let future = 0;
    for (const c of last.times()) if (c.ms !== null && c.ms > t0 + CLOCK_SLACK_MS) future++;
    if (future > 0) o.onNote?.(`${future} change${future === 1 ? ' is' : 's are'} dated in the future; the checkpoint moves no further than the time the lists were read.`);
    latest = Math.max(since, t0);
  }
  if (earliestFailed !== Infinity && earliestFailed <= latest) latest = since;
  // A list of the index that could not be read (a loop, change-lists.ts): its changes may be missing, so the
  // checkpoint goes no further than where its period begins (its changes at that instant are asked again).
  if (read.unreadFrom !== null && latest > read.unreadFrom) latest = Math.max(since, read.unreadFrom);
  const checkpoint = latest === since ? o.checkpoint : { at: new Date(latest).toISOString(), from: o.changeListUrl };
  return { changes: considered, checkpoint, begins, readAt: t0, listSkipped: read.unreadFrom !== null };
}
