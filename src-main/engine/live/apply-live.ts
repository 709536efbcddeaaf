// Applies notifications to their mirror through the mirror's own machinery (engine/mirror): the Applier's fetch,
// fixity, durable batched writes and deletion policy, one journal run per batch of notifications. A batch's inbox
// rows name their run before anything is fetched; a crash leaves them `applying`, and the next start resumes that
// same run, in which the Applier skips every URI it already committed: nothing is lost, nothing applied twice.
// Within a batch only the last change per URI is applied (in datetime order), as incremental sync does.
import { clip } from '../clip.ts';
import { parseW3cDatetime } from '../documents/datetime.ts';
import type { Http } from '../http/client.ts';
import { Applier, type DeletePolicy } from '../mirror/apply.ts';
import type { Fetcher } from '../mirror/fetcher.ts';
import { runIncremental } from '../mirror/incremental.ts';
import { entryLabel, entryProblem } from '../mirror/entries.ts';
import { afterIncremental } from '../mirror/gap.ts';
import { LocalPaths } from '../mirror/local-path.ts';
import { acquireLock } from '../mirror/lock.ts';
import { WorkSlots } from '../mirror/work-slots.ts';
import { canonicalEntry, canonicalUri } from '../mirror/uri.ts';
import type { MirrorState, RunCounts } from '../mirror/state.ts';
import { RefusalWatch, type SourceRefusing } from '../mirror/refusal-watch.ts';
import { REFUSAL_SECONDS } from '../../contract/limits.ts';
import type { AppliedChange } from './model.ts';
import type { DiskLowError, DiskRoom, DiskWatch } from './disk-room.ts';
import { advanceCheckpoint, type HeldFailure } from './checkpoint.ts';
import { LaterChanges } from './later-changes.ts';
import type { ChangeItem, Notification } from './payload.ts';
import type { LiveStore, SubscriptionRow } from './store.ts';

export interface MirrorContext {
  dest: string;
  stateDir: string;
  state: MirrorState;
  store: LiveStore;
  fetcher: Fetcher;
  http: Http;
  deletePolicy: DeletePolicy;
  concurrency: number;
  batchSize?: number;
  /** Failures a run's Applier holds one by one (default MAX_KEPT_FAILURES, apply.ts; tests set a few). */
  keptFailures?: number;
  /** What a sync started by a ping has to say (a gap in the Source's Change Lists). */
  onNote?: (note: string) => void;
  /** Stops a batch before the mirror's disk is full (disk-room.ts). */
  disk?: DiskRoom;
}

export interface Taken {
  inboxId: number;
  notification: Notification;
  /**
   * Its changes before this were covered when it was taken (the cursor then): set when it joined a batch that
   * started at an earlier cursor, so batching leaves out exactly what applying it alone would have left out.
   */
  coveredBeforeMs?: number | null;
}

export interface BatchResult {
  runId: number;
  counts: RunCounts;
  changes: AppliedChange[];
}

/**
 * A batch stopped (or not started) because the mirror's disk is nearly full. `applied`: the notifications at the
 * head of the batch that were applied whole before it stopped (their inbox rows say applied, the cursor moved past
 * them), with the run's result; the others are back to `received` in the inbox, applied again once there is room.
 */
export class DiskHeldError extends Error {
  readonly low: DiskLowError;
  readonly applied: (BatchResult & { inboxIds: number[] }) | null;
  readonly pending: number;
  constructor(low: DiskLowError, applied: (BatchResult & { inboxIds: number[] }) | null, pending: number) {
    super(low.message);
    this.name = 'DiskHeldError';
    this.low = low;
    this.applied = applied;
    this.pending = pending;
  }
}

/**
 * A batch stopped because the Source asked to wait longer than a run waits for a resource (Retry-After), or refused
 * every request for the mirror's limit: its refusal watch (refusal-watch.ts) stopped asking, as a sync's does. As for
 * the disk: `applied`, the head of the batch applied whole; the rest is back to `received`, applied in order when the
 * wait is over (`refusal.retryAt`, when the Source said).
 */
export class SourceHeldError extends Error {
  readonly refusal: SourceRefusing;
  readonly applied: (BatchResult & { inboxIds: number[] }) | null;
  readonly pending: number;
  constructor(refusal: SourceRefusing, applied: (BatchResult & { inboxIds: number[] }) | null, pending: number) {
    super(refusal.message);
    this.name = 'SourceHeldError';
    this.refusal = refusal;
    this.applied = applied;
    this.pending = pending;
  }
}

const LOCK_COMMAND = 'live notifications (rsdesk watch / ResourceSync Desktop)';

function withLock<T>(ctx: MirrorContext, fn: () => Promise<T>): Promise<T> {
  // Before anything is recorded: else each notification left a run `running` and its inbox rows `applying` for ever.
  pathsOf(ctx);
  const lock = acquireLock(ctx.stateDir, LOCK_COMMAND, ctx.dest);
  return fn().finally(() => lock.release());
}

function pathsOf(ctx: MirrorContext): LocalPaths {
  const binding = ctx.state.binding();
  if (binding === null) throw new Error(`Notifications cannot be applied to ${ctx.dest} yet: it is not bound to a Source (its first sync has not run). They are kept in the inbox.`);
  return new LocalPaths({ sourceUrl: binding.capabilityListUrl ?? binding.url, maps: binding.maps, allowHosts: binding.allowHosts });
}

function newApplier(ctx: MirrorContext, runId: number, watch: DiskWatch | undefined): Applier {
  return new Applier({
    signal: watch?.signal,
    // A disk that fills between two looks of the watch stops the batch as the reserve does (what was not applied
    // waits in the inbox), instead of failing every resource after it on the full disk.
    onDiskFull: () => watch?.full(),
    dest: ctx.dest,
    stateDir: ctx.stateDir,
    state: ctx.state,
    runId,
    fetcher: ctx.fetcher,
    paths: pathsOf(ctx),
    deletePolicy: ctx.deletePolicy,
    dryRun: false,
    batchSize: ctx.batchSize,
    // Bounded as any run's: which changes failed is read back from the journal, and the hold on the checkpoint lists
    // the failures the Applier kept apart (`retriableKept`) or says it could not. Held all, a catch-up of 200,000
    // failing changes held as many failure objects until it ended.
    keptFailures: ctx.keptFailures,
  });
}

function changeProblem(change: string): string | null {
  if (change === 'created' || change === 'updated' || change === 'deleted') return null;
  return change === '' ? 'not applied: the entry has no change attribute' : `not applied: change="${clip(change, 40)}" is not created, updated or deleted`;
}

/** A change to apply; `problem`: why its entry cannot be (no `loc`, not an absolute http(s) one), and it fails alone. */
export type ToApply = ChangeItem & { problem?: string };

/**
 * The last change per URI over the batch, in datetime order; changes before `coveredBeforeMs` left out. Entries
 * that break a MUST of their `loc` come first, each on its own, named by where it stands (entries.ts).
 */
export function collapse(items: Taken[], coveredBeforeMs: number | null): ToApply[] {
  const last = new Map<string, { c: ChangeItem; seq: number }>();
  const broken: ToApply[] = [];
  let seq = 0;
  for (const { inboxId, notification, coveredBeforeMs: own } of items) {
    const covered = own === undefined || own === null ? coveredBeforeMs : coveredBeforeMs === null ? own : Math.max(own, coveredBeforeMs);
    for (const change of notification.changes) {
      seq++;
      if (covered !== null && change.ms !== null && change.ms < covered) continue;
      // As sync says it: a missing or relative `loc`, or a `change` that is none of the three, breaks the spec and
      // fails alone, for good; it is not the last change of its URI either (else a valid update before it were lost).
      const problem = entryProblem(change.entry) ?? changeProblem(change.change);
      if (problem !== null) {
        broken.push({ ...change, uri: entryLabel(change.entry, `notification ${inboxId}`), problem });
        continue;
      }
      // Keyed by the form of its URI the mirror keeps (uri.ts): two spellings of one URI are one resource. Its bytes
      // are still requested as the Source spelled it (requestLoc), as sync does: a server may check escapes as written.
      const uri = canonicalUri(change.uri);
      let c = change;
      if (uri !== change.uri) {
        const entry = { ...change.entry };
        canonicalEntry(entry);
        c = { ...change, uri: entry.loc, entry };
      }
      const prior = last.get(uri);
      if (!prior || prior.c.ms === null || c.ms === null || c.ms >= prior.c.ms) last.set(uri, { c, seq });
    }
  }
  return [...broken, ...[...last.values()].sort((a, b) => (a.c.ms ?? Infinity) - (b.c.ms ?? Infinity) || a.seq - b.seq).map((x) => x.c)];
}

/**
 * The changes `collapse` leaves out as covered: those of a notification that overlaps the ones before it, dated
 * before the point up to which they had covered every change. Left out silently, they showed in the feed as
 * applied ("run #N records what became of it") though no run had them.
 */
export function coveredChanges(items: Taken[], coveredBeforeMs: number | null): AppliedChange[] {
  const out: AppliedChange[] = [];
  for (const { notification, coveredBeforeMs: own } of items) {
    const covered = own === undefined || own === null ? coveredBeforeMs : coveredBeforeMs === null ? own : Math.max(own, coveredBeforeMs);
    if (covered === null) continue;
    for (const change of notification.changes) {
      if (change.ms === null || change.ms >= covered) continue;
      out.push({
        uri: change.uri,
        change: change.change,
        datetime: change.datetime,
        outcome: 'covered',
        reason: `not applied: it lies before ${new Date(covered).toISOString()}, up to which the notifications before this one (or a catch-up) covered every change; this notification overlaps them, which consecutive notifications must not`,
      });
    }
  }
  return out;
}

/** How the Applier's reason for a URI it does not mirror begins (apply.ts). */
const NOT_MIRRORED = 'not mirrored: ';

async function applyChanges(ctx: MirrorContext, applier: Applier, runId: number, changes: ToApply[]): Promise<AppliedChange[]> {
  const inflight = new WorkSlots(ctx.concurrency * 2);
  // Counted here, not read back from applier.wouldDelete: that names only the first MAX_NAMED of a run.
  const kept = new Set<string>();
  for (const c of changes) {
    if (c.problem !== undefined) applier.fail(c.uri, c.problem, true);
    else if (c.change === 'deleted') {
      const before = applier.wouldDeleteCount;
      applier.delete(c.uri);
      if (applier.wouldDeleteCount > before) kept.add(c.uri);
    } else {
      const full = inflight.add(applier.apply(c.entry));
      if (full) await full;
    }
  }
  await inflight.all();
  await applier.finish();
  // A broken entry's failure is its own: a valid change of the same URI beside it is not said to have failed.
  const broken = new Set(changes.filter((c) => c.problem !== undefined).map((c) => `${c.uri}\n${c.problem}`));
  const failed = new Map<string, string>();
  for (const f of partFailures(ctx, applier, runId)) if (!broken.has(`${f.uri}\n${f.reason}`)) failed.set(f.uri, f.reason);
  return changes.map((c) => {
    const reason = c.problem ?? failed.get(c.uri);
    // The Applier counts a URI it does not mirror (another host, a path it cannot map) as skipped, and journals why:
    // shown as failed, a notification for a URI outside the Source read "failed 1" above three failed rows.
    const skipped = reason !== undefined && c.problem === undefined && reason.startsWith(NOT_MIRRORED);
    const outcome = skipped ? 'skipped' : reason !== undefined ? 'failed' : kept.has(c.uri) ? 'kept' : c.change;
    return { uri: c.uri, change: c.change, datetime: c.datetime, outcome, ...(reason !== undefined ? { reason } : {}) };
  });
}

/** The failures this part of the run recorded, every one, from the journal (the Applier keeps only the first). */
function partFailures(ctx: MirrorContext, applier: Applier, runId: number): Iterable<{ uri: string; reason: string }> {
  return ctx.state.failuresPast(runId, applier.journalBefore ?? 0);
}

/** Applies taken notifications of one subscription as one run (or resumes the run they were given before a crash). */
export function applyBatch(ctx: MirrorContext, sub: SubscriptionRow, items: Taken[], coveredBeforeMs: number | null, resumeRunId: number | null): Promise<BatchResult> {
  return withLock(ctx, async () => {
    const { state, store } = ctx;
    const ids = items.map((i) => i.inboxId);
    // No room before it starts: no run, and the rows stay `received` as they are.
    if (ctx.disk && resumeRunId === null) {
      const low = await ctx.disk.check();
      if (low !== null) throw new DiskHeldError(low, null, items.length);
    }
    // The run and the rows that name it are committed together: one durable write, and no run without its rows.
    const run = store.transaction(() => {
      const r = resumeRunId !== null && state.run(resumeRunId) ? state.resumeRun(resumeRunId) : state.startRun('incremental', 'live', sub.topic);
      for (const { inboxId, notification: n } of items) store.setInbox([inboxId], { status: 'applying', runId: r.id, fromAt: n.from, untilAt: n.until });
      return r;
    });
    const t0 = Date.now();
    const watch = await ctx.disk?.watch();
    // The Source's refusals are watched as a sync's are: a short Retry-After is waited out and asked again, a long
    // one (or refusals for the mirror's limit) stops asking. Before, a notified resource answered 429 or 503 with a
    // long Retry-After failed at once, and the notifications after it were fetched from the refusing Source all the same.
    const refusals = new RefusalWatch(state.binding()?.settings?.refusalLimitMs ?? REFUSAL_SECONDS.default * 1000, 'live applying');
    ctx.fetcher.watchWith(refusals);
    const applier = newApplier(ctx, run.id, watch);
    const toApply = collapse(items, coveredBeforeMs);
    let changes: AppliedChange[];
    try {
      changes = await applyChanges(ctx, applier, run.id, toApply);
    } catch (err) {
      watch?.stop();
      const low = watch?.stopped ?? null;
      state.endRun(run.id, 'failed', { fetch: (Date.now() - t0) / 1000 }, low?.message ?? (err as Error).message);
      if (low === null) throw err;
      store.transaction(() => store.setInbox(ids, { status: 'received' }));
      throw new DiskHeldError(low, null, items.length);
    } finally {
      ctx.fetcher.watchWith(null);
      refusals.close();
    }
    watch?.stop();
    const low = watch?.stopped ?? null;
    const firstFrom = coveredBeforeMs ?? items[0].notification.fromMs;
    const failed = applier.counts.failed;
    if (low !== null) {
      const { applied, pending } = stoppedMidway(ctx, sub, run.id, items, toApply, changes, applier, low.message, firstFrom, t0);
      throw new DiskHeldError(low, applied, pending);
    }
    const refused = refusals.stopped;
    if (refused !== null) {
      const { applied, pending } = stoppedMidway(ctx, sub, run.id, items, toApply, changes, applier, `Held: ${refused.said}. The notifications not yet applied wait in the inbox.`, firstFrom, t0);
      throw new SourceHeldError(refused, applied, pending);
    }
    const last = items[items.length - 1].notification;
    store.transaction(() => {
      state.endRun(run.id, failed > 0 ? 'failed' : 'completed', { fetch: (Date.now() - t0) / 1000 }, failed > 0 ? failedMessage(failed, run.id) : null);
      store.setInbox(ids, { status: 'applied' });
      store.updateSubscription(sub.id, { cursor: last.until, lastNotificationAt: new Date().toISOString() });
      advanceCheckpoint(state, { fromMs: firstFrom, until: last.until, topic: sub.topic, ...outcomes(applier, run.id, toApply, changes, firstFrom) });
    });
    return { runId: run.id, counts: { ...applier.counts }, changes: [...changes, ...coveredChanges(items, coveredBeforeMs)] };
  });
}

/**
 * A batch the disk's reserve (or the Source's refusal) stopped midway. What was verified and recorded stays. A notification counts as applied
 * only when it and every notification before it in the batch lost nothing to the stop: its place in the order is
 * what the cursor says, and one applied after a pending one that changes the same resource would, applied again
 * later, put back an older version. So the head of the batch that lost nothing is applied; the rest go back to
 * `received`, and the next batch applies them (the resources already fetched for them are found unchanged or
 * fetched again, never lost).
 */
function stoppedMidway(
  ctx: MirrorContext,
  sub: SubscriptionRow,
  runId: number,
  items: Taken[],
  toApply: ToApply[],
  changes: AppliedChange[],
  applier: Applier,
  why: string,
  firstFrom: number,
  t0: number,
): { applied: (BatchResult & { inboxIds: number[] }) | null; pending: number } {
  const { state, store } = ctx;
  const failedUris = new Set<string>();
  for (const f of partFailures(ctx, applier, runId)) failedUris.add(f.uri);
  // Only fetches are cut off: deletions and refusals are staged at once, and recorded by finish().
  const cut = new Set(
    toApply.filter((c) => (c.change === 'created' || c.change === 'updated') && !failedUris.has(c.uri) && state.get(c.uri)?.runId !== runId).map((c) => c.uri),
  );
  let head = 0;
  while (head < items.length && !items[head].notification.changes.some((c) => cut.has(canonicalUri(c.uri)))) head++;
  const done = items.slice(0, head);
  const rest = items.slice(head);
  store.transaction(() => {
    state.endRun(runId, 'failed', { fetch: (Date.now() - t0) / 1000 }, why);
    store.setInbox(
      rest.map((i) => i.inboxId),
      { status: 'received' },
    );
    if (done.length > 0) {
      const last = done[done.length - 1].notification;
      store.setInbox(
        done.map((i) => i.inboxId),
        { status: 'applied' },
      );
      store.updateSubscription(sub.id, { cursor: last.until, lastNotificationAt: new Date().toISOString() });
      advanceCheckpoint(state, { fromMs: firstFrom, until: last.until, topic: sub.topic, ...outcomes(applier, runId, toApply, changes.filter((c) => !cut.has(c.uri)), firstFrom) });
    }
  });
  const applied = done.length > 0 ? { runId, counts: { ...applier.counts }, changes: changes.filter((c) => !cut.has(c.uri)), inboxIds: done.map((i) => i.inboxId) } : null;
  return { applied, pending: rest.length };
}

/** A live run's failures worth retrying (each with the time of its change) and the URIs it applied. */
function outcomes(
  applier: Applier,
  runId: number,
  toApply: ToApply[],
  changes: AppliedChange[],
  fromMs: number,
): { failed: HeldFailure[]; unlisted: boolean; applied: string[] } {
  const msOf = new Map(toApply.map((c) => [c.uri, c.ms ?? fromMs]));
  return {
    failed: applier.retriableKept.map((f) => ({ uri: f.uri, runId, ms: msOf.get(f.uri) ?? fromMs })),
    unlisted: !applier.retriableAllKept,
    applied: changes.filter((c) => c.outcome !== 'failed').map((c) => c.uri),
  };
}

function failedMessage(failed: number, runId: number): string {
  const one = failed === 1;
  return `${failed.toLocaleString('en')} resource${one ? '' : 's'} failed: retry ${one ? 'it' : 'them'} from this run's failures (rsdesk retry --run ${runId}), or the next sync fetches ${one ? 'it' : 'them'} again`;
}

function throwIfStopped(watch: DiskWatch | undefined): void {
  const low = watch?.stopped ?? null;
  if (low !== null) throw low;
}

/** What a catch-up did: its `changes` are its failures; `covered`, the changes left to the notifications after it. */
export interface CatchUpResult extends BatchResult {
  covered: AppliedChange[];
  coveredCount: number;
}

/**
 * Fills a gap [from, until] from the Source's Change List through the mirror's incremental sync. `later`: the
 * notifications after the gap, applied next; a resource they change again is left to them (later-changes.ts).
 */
export function catchUp(ctx: MirrorContext, sub: SubscriptionRow, changeListUrl: string, from: string, until: string, later: Taken[] = [], listed = 500): Promise<CatchUpResult> {
  return withLock(ctx, async () => {
    const { state, store } = ctx;
    const run = state.startRun('incremental', 'live-catch-up', changeListUrl);
    const watch = await ctx.disk?.watch();
    const applier = newApplier(ctx, run.id, watch);
    const phases: Record<string, number> = {};
    const untilMs = parseW3cDatetime(until)!;
    const newer = new LaterChanges(later, untilMs, listed);
    const passOver = newer.size > 0 ? newer.passOver : undefined;
    try {
      await runIncremental({ http: ctx.http, applier, state, changeListUrl, checkpoint: { at: from, from: changeListUrl }, untilMs, concurrency: ctx.concurrency, signal: watch?.signal, phases, mustRead: true, passOver });
      await applier.finish();
      // What the stop cut off was not fetched: the gap is not filled.
      throwIfStopped(watch);
    } catch (err) {
      await applier.finish().catch(() => undefined);
      const message = watch?.stopped?.message ?? (err as Error).message;
      state.endRun(run.id, 'failed', phases, message);
      throw watch?.stopped ?? err;
    } finally {
      watch?.stop();
    }
    const failed = applier.counts.failed;
    const fromMs = parseW3cDatetime(from)!;
    store.transaction(() => {
      state.endRun(run.id, failed > 0 ? 'failed' : 'completed', phases, failed > 0 ? failedMessage(failed, run.id) : null);
      store.updateSubscription(sub.id, { cursor: until });
      // When each change was is not known here: a failure holds the checkpoint at the gap's start.
      const held = applier.retriableKept.map((f) => ({ uri: f.uri, runId: run.id, ms: fromMs }));
      advanceCheckpoint(state, { fromMs, until, topic: sub.topic, failed: held, unlisted: !applier.retriableAllKept, applied: [] });
    });
    // The first of its failures (MAX_KEPT_FAILURES); `counts.failed` counts them all, and the journal has them.
    const changes = applier.failures.map((f) => ({ uri: f.uri, change: 'unknown', datetime: null, outcome: 'failed', reason: f.reason }));
    return { runId: run.id, counts: { ...applier.counts }, changes, covered: newer.covered, coveredCount: newer.coveredCount };
  });
}

/** An incremental sync of the whole mirror from its checkpoint (a ping asked for it). */
export function syncFromCheckpoint(ctx: MirrorContext, changeListUrl: string): Promise<RunCounts> {
  return withLock(ctx, async () => {
    const { state } = ctx;
    const checkpoint = state.checkpoint();
    if (checkpoint === null) throw new Error(`${ctx.dest} has no checkpoint yet (no baseline completed); run rsdesk sync first`);
    const run = state.startRun('incremental', 'ping', changeListUrl);
    const watch = await ctx.disk?.watch();
    const applier = newApplier(ctx, run.id, watch);
    const phases: Record<string, number> = {};
    try {
      // mustRead: a Change List answering a server error is a failure here, as for a gap's catch-up. Taken for "no
      // change listed" (a sync's leniency), the ping's changes were not fetched, nothing was said, and the live
      // notifications after it moved the checkpoint past them.
      const result = await runIncremental({ http: ctx.http, applier, state, changeListUrl, checkpoint, concurrency: ctx.concurrency, signal: watch?.signal, phases, onNote: ctx.onNote, mustRead: true });
      await applier.finish();
      // Stopped for the disk: the checkpoint stays where it was, and the next sync fetches what was cut off.
      throwIfStopped(watch);
      if (result.checkpoint) state.setCheckpoint(result.checkpoint);
      // As `rsdesk sync` does: a Change List that begins after the mirror was last in step is said, and owes a baseline.
      afterIncremental(state, { result, checkpointMs: parseW3cDatetime(checkpoint.at) ?? 0, complete: applier.retriableFailures === 0, dryRun: false, onNote: ctx.onNote });
      state.endRun(run.id, applier.counts.failed > 0 ? 'failed' : 'completed', phases, null);
    } catch (err) {
      await applier.finish().catch(() => undefined);
      state.endRun(run.id, 'failed', phases, watch?.stopped?.message ?? (err as Error).message);
      throw watch?.stopped ?? err;
    } finally {
      watch?.stop();
    }
    return { ...applier.counts };
  });
}
