// Retrying chosen resources of a mirror (the failures of a run, or one of them): only those URIs are fetched again,
// as a run of their own in the journal (mode `retry`). What each must be (hash, length, lastmod) comes from the
// Source's lists as they are now — the Change List first for a failure of an incremental run, the Resource List
// otherwise — so a retried resource goes through the same fixity checks, durable batches and inventory as in a sync.
// Only the wanted entries are kept while the lists stream, so a retry of a few resources of a huge list stays small.
// A retry is paused as a sync is (no new fetch, those in flight recorded, the run left interrupted "Paused"), and
// taken up again by resumeRetry for the URIs it has not settled yet; a sync never takes it up (sync.ts, resumable).
import { pauseMessage, RefusalWatch, sourceWaitOf } from './refusal-watch.ts';
import { REFUSAL_SECONDS } from '../../contract/limits.ts';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { clip } from '../clip.ts';
import type { Entry } from '../documents/model.ts';
import type { Http } from '../http/client.ts';
import { WatchedHttp } from './watched-http.ts';
import type { ProxyEnv } from '../http/dispatcher.ts';
import { canonicalEntry, canonicalUri } from './uri.ts';
import { readResourceList } from './resource-list.ts';
import { readChangeLists } from './change-lists.ts';
import { compareChanges, type Timed } from './change-timeline.ts';
import { Applier, type DeletePolicy, type Failure } from './apply.ts';
import { entryProblem } from './entries.ts';
import { Fetcher } from './fetcher.ts';
import { LocalPaths } from './local-path.ts';
import { acquireLock, openLocked } from './lock.ts';
import type { SecretStore } from './secrets.ts';
import { accessOf, sourceHeadersOf, type AskAgain, type Credentials } from './settings.ts';
import { WorkSlots } from './work-slots.ts';
import { DiskReserve, type DiskSpaceProbe } from './disk-reserve.ts';
import { MirrorState, STATE_DIR, stateDirOf, type RunCounts, type RunRecord, type UnfinishedBaseline } from './state.ts';
import { parseW3cDatetime } from '../documents/datetime.ts';
import { afterBaseline } from './gap.ts';
import type { SyncProgress } from './sync.ts';
import { releaseMended } from '../live/checkpoint.ts';

/** The most URIs one retry takes (a run's failures beyond it wait for the next retry or sync). */
export const MAX_RETRY_URIS = 10_000;

export interface RetryOptions {
  dest: string;
  /** The run whose failures are retried. */
  runId: number;
  /** The URIs to fetch again; absent: every failure of the run (at most MAX_RETRY_URIS). */
  uris?: string[];
  deletePolicy?: DeletePolicy;
  concurrency?: number;
  token?: string | null;
  credentials?: Credentials | null;
  secretStore?: SecretStore;
  askAgain?: AskAgain;
  timeoutMs?: number;
  userAgent?: string;
  proxyEnv?: ProxyEnv;
  signal?: AbortSignal;
  /**
   * Pause: once aborted, no new resource is fetched, those in flight finish and are recorded, and the run ends
   * `interrupted` (message "Paused"); resumeRetry takes it up again.
   */
  pauseSignal?: AbortSignal;
  /** How the free space of the mirror's disk is read, and how often (disk-reserve.ts; tests give their own). */
  diskSpace?: { probe?: DiskSpaceProbe; everyMs?: number };
  /** Called once, synchronously, when the retry's end is decided: a pause or cancel after it stops nothing (sync.ts). */
  onFinishing?: () => void;
  onProgress?: (progress: SyncProgress) => void;
}

/** A retry of every failure of the mirror that still stands, whatever run it is of. */
export type RetryStandingOptions = Omit<RetryOptions, 'runId' | 'uris'>;

export interface ResumeRetryOptions extends Omit<RetryOptions, 'runId' | 'uris'> {
  /** The interrupted retry run to take up again. */
  retryRunId: number;
}

export interface RetryResult extends RunCounts {
  runId: number;
  /** The run whose failures were retried (of several, the latest). */
  of: number;
  /** Every run whose failures were retried, oldest first. */
  ofRuns: number[];
  /** Failures still standing that this retry did not take (past MAX_RETRY_URIS): the next retry takes them. */
  leftOver: number;
  /** The URIs asked for (by the retry when it started, for a resumed one). */
  asked: number;
  /** The retry was paused: it ended interrupted, and resumeRetry takes it up again. */
  paused: boolean;
  /** Why it paused itself: the Source refused every request for the mirror's limit (refusal-watch.ts); else null. */
  pausedBecause: string | null;
  resumed: boolean;
  /** The retry's failures, the first MAX_KEPT_FAILURES of `failureCount`: runFailures gives them all. */
  failures: Failure[];
  failureCount: number;
  /** Failures of the retry run its journal held before this part (one taken up again). */
  journalBefore: number | null;
  /** URIs found deleted at the Source and not in the mirror: nothing was to be done, and their failures are settled. */
  gone: string[];
  /** URIs found deleted at the Source whose copy the deletion policy keep left in the mirror (would-delete): settled too. */
  kept: string[];
  /** This retry mended the last failure of an unfinished baseline: the checkpoint that baseline now set, else null. */
  completedBaseline: { runId: number; at: string } | null;
  /** This retry mended failures of live notifications that held the checkpoint: where it moved to, else null. */
  liveCheckpoint: string | null;
  seconds: number;
}

export class RetryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RetryError';
  }
}

/** Nothing failed that still stands: no error of the mirror's (rsdesk retry exits 0 on it; a bad --run does not). */
export class NothingToRetryError extends RetryError {
  constructor(message: string) {
    super(message);
    this.name = 'NothingToRetryError';
  }
}

export function retryResources(options: RetryOptions): Promise<RetryResult> {
  return runRetry(options, null);
}

/**
 * Retries every failure of the mirror that still stands, whatever run it is of, as one retry run: on a mirror the
 * live side feeds, failures are spread over many runs (one per batch of notifications), and retrying them run by run
 * took as many actions. At most MAX_RETRY_URIS, the oldest runs' first; the result says how many are left over.
 */
export function retryStanding(options: RetryStandingOptions): Promise<RetryResult> {
  return runRetry({ ...options, runId: STANDING }, null);
}

/** The runId that stands for "every failure still standing" (run ids start at 1). */
const STANDING = 0;

/** Takes up an interrupted retry: only the URIs it asked for that no run has settled since are fetched. */
export function resumeRetry(options: ResumeRetryOptions): Promise<RetryResult> {
  return runRetry({ ...options, runId: -1 }, options.retryRunId);
}

async function runRetry(options: RetryOptions, resumeId: number | null): Promise<RetryResult> {
  const { dest } = options;
  const stateDir = stateDirOf(dest);
  if (!existsSync(join(stateDir, 'state.sqlite'))) throw new RetryError(`${dest} is not a mirror (no ${STATE_DIR}/state.sqlite)`);
  const lock = acquireLock(stateDir, 'retry of failed resources', dest);
  const state = openLocked(lock, () => new MirrorState(stateDir));
  let http: Http | null = null;
  let fetcher: Fetcher | null = null;
  let watch: RefusalWatch | null = null;
  // A retry keeps the disk's reserve as a sync does (a failure retried may be a resource of gigabytes): it stops
  // through the same signal as a cancel, what was verified stays, and it says so.
  const reserve = new DiskReserve(dest, options.diskSpace);
  const cancel = options.signal;
  const signal = cancel ? AbortSignal.any([cancel, reserve.signal]) : reserve.signal;
  try {
    // Under the lock no run of this mirror goes on: one still said to be running was stopped by a kill.
    state.markInterrupted();
    const { kind, ofRuns, ofRun, binding, wanted, asked, leftOver, resume } =
      resumeId !== null ? whatToResume(state, dest, resumeId) : options.runId === STANDING ? { ...whatStanding(state, dest), resume: null } : { ...whatToRetry(state, dest, options.runId, options.uris), resume: null };

    const given = options.credentials !== undefined ? options.credentials : options.token ? { scheme: 'bearer' as const, token: options.token } : undefined;
    const origin = binding.settings?.origin ?? new URL(binding.capabilityListUrl ?? binding.url).origin;
    let access;
    try {
      access = accessOf(binding.settings, origin, binding.id, given, options.secretStore, options.askAgain);
    } catch (err) {
      throw new RetryError((err as Error).message);
    }
    const { settings, credentials } = access;
    const source = sourceHeadersOf(settings, credentials);
    const lists = new WatchedHttp({ sourceHeaders: source, timeoutMs: options.timeoutMs ?? settings.timeoutMs ?? undefined, userAgent: options.userAgent, proxy: settings.proxy, proxyEnv: options.proxyEnv });
    http = lists;
    // A Source refusing everything pauses the retry as it pauses a sync (refusal-watch.ts), its lists as its resources:
    // before, the Resource List or Change List it reads first took the first 503 for its answer, and the retry failed
    // ("HTTP 503 Service Unavailable for …") at once, its failures still standing and nothing to resume.
    watch = new RefusalWatch(settings.refusalLimitMs ?? REFUSAL_SECONDS.default * 1000, 'the retry');
    lists.watchWith(watch);
    options = { ...options, pauseSignal: options.pauseSignal ? AbortSignal.any([options.pauseSignal, watch.signal]) : watch.signal };
    fetcher = new Fetcher({
      watch,
      concurrency: options.concurrency ?? settings.concurrency ?? undefined,
      timeoutMs: options.timeoutMs ?? settings.timeoutMs ?? undefined,
      userAgent: options.userAgent,
      source,
      proxy: settings.proxy,
      proxyEnv: options.proxyEnv,
    });

    const t0 = Date.now();
    let run: RunRecord;
    if (resume === null) {
      run = state.startRun(kind, 'retry', null);
      state.recordRetry(run.id, (uri) => ofRun(uri), [...wanted].map(canonicalUri));
    } else run = state.resumeRun(resume.id);
    const applier: Applier = new Applier({
      dest,
      stateDir,
      state,
      runId: run.id,
      fetcher,
      paths: new LocalPaths({ sourceUrl: binding.capabilityListUrl ?? binding.resourceListUrl ?? binding.url, maps: binding.maps, allowHosts: binding.allowHosts }),
      deletePolicy: options.deletePolicy ?? 'keep',
      dryRun: false,
      delayMs: settings.delayMs ?? undefined,
      signal,
      pauseSignal: options.pauseSignal,
      onProgress: () => report(),
      onSettled: () => report(),
      onDiskFull: () => reserve.full(),
    });
    reserve.start();
    if (resume !== null) applier.carry(run);
    let phase: SyncProgress['phase'] = 'lists';
    const report = (): void =>
      options.onProgress?.({
        ...applier.progressCounts(),
        mode: kind === 'baseline' ? 'baseline' : 'incremental',
        phase,
        listed: asked,
        listComplete: true,
        listedBytes: 0,
      });
    report();
    let status: 'completed' | 'failed' | 'cancelled' | 'interrupted' = 'completed';
    const gone: string[] = [];
    const kept: string[] = [];
    let message: string | null = null;
    let completedBaseline: RetryResult['completedBaseline'] = null;
    let liveCheckpoint: string | null = null;
    // Whether a cancel took, once the retry's end is decided (null before): one that comes later changes nothing.
    let cancelTook: boolean | null = null;
    // Reading the lists and starting fetches stop on a pause too; the fetches in flight keep the run's own signal.
    const intake = options.pauseSignal ? AbortSignal.any([signal, options.pauseSignal]) : signal;
    const paused = () => options.pauseSignal?.aborted === true && !signal.aborted;
    // A resumed retry's journal keeps the time of its earlier parts too.
    const earlier = resume !== null ? run.phases : {};
    const phases: Record<string, number> = {};
    const inAll = (): Record<string, number> => {
      const sum: Record<string, number> = { ...earlier };
      for (const [phase, seconds] of Object.entries(phases)) sum[phase] = (sum[phase] ?? 0) + seconds;
      return sum;
    };
    try {
      // As many in flight as the connections this retry uses, twice over: a pause lets no more than those through.
      const inflight = new WorkSlots(Math.max(2, (options.concurrency ?? settings.concurrency ?? 8) * 2));
      const t1 = Date.now();
      try {
        const found = wanted.size === 0 ? new Map<string, Entry>() : await findEntries(http, binding, kind, wanted, intake);
        phases.lists = (Date.now() - t0) / 1000;
        phase = 'fetch';
        for (const uri of wanted) {
          if (intake?.aborted) break;
          const entry = found.get(canonicalUri(uri));
          if (entry === undefined) {
            applier.fail(uri, 'not listed by the Source any more (neither in its Resource List nor in its Change List); not fetched');
            applier.settledOne();
          } else if (entry.md.change === 'deleted') {
            // Deleted at the Source: the deletion policy says what becomes of a copy in the mirror (keep leaves it,
            // reported as would-delete; delete and quarantine take it away with the batch). Either way the failure is
            // settled (with the batch), or it stood for every later retry, no verified row ever saying otherwise —
            // unless taking the copy away failed, which is a failure of this run.
            const settled = canonicalUri(uri);
            if (!applier.delete(uri)) gone.push(settled);
            else if (applier.deletePolicy === 'keep') kept.push(settled);
            applier.whenCommitted(() => {
              if (applier.deletePolicy === 'keep' || state.get(settled) === null) state.settleGone(run.id, settled);
            });
            applier.settledOne();
          } else {
            const problem = entryProblem(entry);
            if (problem !== null) {
              applier.fail(uri, problem, true);
              applier.settledOne();
              continue;
            }
            const full = inflight.add(applier.apply(entry));
            if (full) await full;
          }
        }
      } catch (err) {
        // Paused while the lists were being read: nothing was started, the run stays to be taken up again.
        if (!paused()) throw err;
        phases.lists ??= (Date.now() - t0) / 1000;
      }
      await inflight.all();
      // A pause or a cancel from here on stops nothing (every URI has settled; what is left is recording them): the
      // retry ends as what it is, not interrupted (or cancelled) with nothing left to take up.
      const cut = paused();
      const cancelled = options.signal?.aborted === true;
      cancelTook = cancelled;
      phase = 'finishing';
      options.onFinishing?.();
      report();
      await applier.finish();
      phases.fetch = (Date.now() - t1) / 1000;
      if (reserve.stopped && !cancelled) {
        status = 'failed';
        message = reserve.stopped.message;
      } else if (cancelled) {
        status = 'cancelled';
        message = 'Cancelled';
      } else if (cut) {
        status = 'interrupted';
        message = watch.stopped?.message ?? pauseMessage(options.pauseSignal);
      } else if (applier.counts.failed > 0) {
        status = 'failed';
        message = `${applier.counts.failed} of ${asked} retried resource${asked === 1 ? '' : 's'} failed again`;
      } else {
        message = `retried ${asked} resource${asked === 1 ? '' : 's'} of ${runsWords(ofRuns)}`;
        const said: string[] = [];
        if (gone.length > 0) {
          const one = gone.length === 1;
          said.push(`${gone.length} ${one ? 'was' : 'were'} deleted at the Source and ${one ? 'is' : 'are'} not in the mirror, so there was nothing to do`);
        }
        if (kept.length > 0) {
          const one = kept.length === 1;
          said.push(`${kept.length} ${one ? 'was' : 'were'} deleted at the Source; ${one ? 'its copy stays' : 'their copies stay'} in the mirror (deletion policy keep), and the next sync reports ${one ? 'it' : 'them'} as would-delete`);
        }
        if (said.length > 0) message += `: ${said.join('; ')}`;
      }
      // Failures of live notifications this retry mended let the checkpoint go now, not at the next notification.
      if (!cancelled) liveCheckpoint = state.transaction(() => releaseMended(state));
      // Not into "Paused": that message is how a paused retry is told from a killed one.
      if (liveCheckpoint !== null && status !== 'interrupted') message = `${message ?? ''}; the live notifications' hold on the checkpoint let go of what was mended: the mirror is in sync up to ${liveCheckpoint}`;
      if (status === 'completed') {
        const completed = completeBaseline(state);
        if (completed !== null) completedBaseline = { runId: completed.runId, at: completed.at };
        if (completed !== null) {
          message += `; that was the last failure of run ${completed.runId}, whose baseline is complete now: the mirror is in sync up to ${completed.at}`;
        }
      }
      state.endRun(run.id, status, inAll(), message);
      state.setSourceWait(sourceWaitOf(watch, status, run.id));
    } catch (err) {
      await applier.finish().catch(() => undefined);
      applier.close();
      const cancelled = cancelTook ?? cancel?.aborted === true;
      status = cancelled ? 'cancelled' : 'failed';
      phases.lists ??= (Date.now() - t0) / 1000;
      // Whatever was being read when the disk's reserve stopped it is beside the point.
      const why = !cancelled && reserve.stopped ? reserve.stopped.message : (err as Error).message;
      state.endRun(run.id, status, inAll(), clip(why, 500));
      state.setSourceWait(null);
      throw err instanceof RetryError ? err : new RetryError(why);
    }
    applier.close();
    // Stopped for the disk with no error on the way: said as a sync says it, not returned as if it had run through.
    if (reserve.stopped && !cancel?.aborted) throw new RetryError(reserve.stopped.message);
    const counts = state.run(run.id)!;
    return {
      runId: run.id,
      of: ofRuns.at(-1)!,
      ofRuns,
      leftOver,
      asked,
      paused: status === 'interrupted',
      pausedBecause: status === 'interrupted' ? (watch.stopped?.message ?? null) : null,
      resumed: resume !== null,
      created: counts.created,
      updated: counts.updated,
      deleted: counts.deleted,
      unchanged: counts.unchanged,
      skipped: counts.skipped,
      failed: counts.failed,
      bytes: counts.bytes,
      failures: applier.failures,
      failureCount: applier.failureCount,
      journalBefore: applier.journalBefore,
      gone,
      kept,
      completedBaseline,
      liveCheckpoint,
      seconds: Math.round((Date.now() - t0) / 100) / 10,
    };
  } finally {
    reserve.stop();
    watch?.close();
    await fetcher?.close();
    await http?.close();
    state.close();
    lock.release();
  }
}

/** The run, the binding and the URIs a retry takes; a RetryError says plainly why there is nothing to retry. */
function whatToRetry(state: MirrorState, dest: string, runId: number, uris: string[] | undefined) {
  const failed = state.run(runId);
  if (failed === null) throw new RetryError(`This mirror has no run ${runId}.`);
  if (failed.kind === 'audit') throw new RetryError(`Run ${runId} is an audit; an audit fetches nothing, so there is nothing to retry.`);
  const binding = state.binding();
  if (binding === null) throw new RetryError(`${dest} is not bound to a Source yet: run a sync first.`);
  // "All failed": those a later run has not mirrored since.
  const open = () => state.failuresSince(runId, MAX_RETRY_URIS).failures.filter((f) => f.fixedBy === null).map((f) => f.uri);
  const wanted = new Set(uris ?? open());
  // The run's failures are read through once, not held: a run against a Source that was down may have millions.
  const notFailed = new Set(wanted);
  let anyFailed = false;
  for (const uri of state.failedUris(runId)) {
    anyFailed = true;
    notFailed.delete(uri);
    if (notFailed.size === 0) break;
  }
  if (uris === undefined && wanted.size === 0 && anyFailed) throw new NothingToRetryError(`Every resource that failed in run ${runId} has been mirrored since; there is nothing to retry.`);
  const [stranger] = notFailed;
  if (stranger !== undefined) throw new RetryError(`${clip(stranger)} did not fail in run ${runId}; only its failures can be retried.`);
  if (wanted.size === 0) throw new NothingToRetryError(`Run ${runId} has no failures to retry.`);
  if (wanted.size > MAX_RETRY_URIS) throw new RetryError(`At most ${MAX_RETRY_URIS.toLocaleString('en')} resources can be retried at once.`);
  return { kind: failed.kind, ofRuns: [failed.id], ofRun: (_uri: string) => failed.id, binding, wanted, asked: wanted.size, leftOver: 0 };
}

/** Every failure still standing, whatever run it is of (at most MAX_RETRY_URIS); a RetryError when there is none. */
function whatStanding(state: MirrorState, dest: string) {
  const binding = state.binding();
  if (binding === null) throw new RetryError(`${dest} is not bound to a Source yet: run a sync first.`);
  const { total, failures } = state.standingFailures(MAX_RETRY_URIS);
  if (failures.length === 0) throw new NothingToRetryError('No failure of this mirror stands: every resource that failed has been mirrored since (or found deleted at the Source), or none failed.');
  const of = new Map(failures.map((f) => [canonicalUri(f.uri), f.runId]));
  const ofRuns = [...new Set(failures.map((f) => f.runId))].sort((a, b) => a - b);
  return { kind: kindOf(state, ofRuns), ofRuns, ofRun: (uri: string) => of.get(uri) ?? ofRuns.at(-1)!, binding, wanted: new Set(failures.map((f) => f.uri)), asked: failures.length, leftOver: total - failures.length };
}

/**
 * The kind of a retry of several runs' failures: a baseline's when every one is a baseline (the Resource List is read
 * first), else incremental (the Change List first, then the Resource List for those it does not name).
 */
function kindOf(state: MirrorState, runs: number[]): 'baseline' | 'incremental' {
  return runs.every((id) => state.run(id)?.kind === 'baseline') ? 'baseline' : 'incremental';
}

/** "run 4", "runs 4 and 7", "runs 4, 7, 9 and 12 more". */
export function runsWords(ids: number[]): string {
  if (ids.length === 1) return `run ${ids[0]}`;
  const named = ids.slice(0, 5);
  const rest = ids.length - named.length;
  return rest > 0 ? `runs ${named.join(', ')} and ${rest} more` : `runs ${named.slice(0, -1).join(', ')} and ${named.at(-1)}`;
}

/** An interrupted retry to take up: the run it is of, and the URIs it asked for that no run has settled since. */
function whatToResume(state: MirrorState, dest: string, retryId: number, beforeLock = false) {
  const resume = state.run(retryId);
  if (resume === null) throw new RetryError(`This mirror has no run ${retryId}.`);
  if (resume.mode !== 'retry') throw new RetryError(`Run ${retryId} is not a retry.`);
  // Before the lock is taken, a run a killed process left "running" counts as the interrupted run it is.
  const stale = beforeLock && resume.status === 'running' && resume.pid !== process.pid;
  if (resume.status !== 'interrupted' && !stale) throw new RetryError(`Run ${retryId} is ${resume.status}, not interrupted: there is nothing to resume.`);
  const left = state.retryLeft(retryId);
  if (left === null) throw new RetryError(`Run ${retryId} was recorded by an earlier version, which kept no list of what it retried: retry the failures of the run again instead.`);
  const failed = state.run(left.ofRun);
  if (failed === null) throw new RetryError(`Run ${left.ofRun}, whose failures run ${retryId} retried, is no longer in this mirror's journal.`);
  const binding = state.binding();
  if (binding === null) throw new RetryError(`${dest} is not bound to a Source yet: run a sync first.`);
  // Its URIs were recorded with their runs: what is left of them keeps the same.
  const kind = left.ofRuns.length === 1 ? failed.kind : kindOf(state, left.ofRuns);
  return { kind, ofRuns: left.ofRuns, ofRun: (_uri: string) => left.ofRun, binding, wanted: new Set(left.uris), asked: left.asked, leftOver: 0, resume };
}

/** Runs `check` on the mirror's state, opened for the time of it (a RetryError when `dest` is no mirror). */
function withState(dest: string, check: (state: MirrorState) => void): void {
  const stateDir = stateDirOf(dest);
  if (!existsSync(join(stateDir, 'state.sqlite'))) throw new RetryError(`${dest} is not a mirror (no ${STATE_DIR}/state.sqlite)`);
  const state = new MirrorState(stateDir);
  try {
    check(state);
  } finally {
    state.close();
  }
}

/** Checks, before a retry is started, that it can be: the same checks the retry makes itself (a RetryError). */
export function checkRetry(dest: string, runId: number, uris?: string[]): void {
  withState(dest, (state) => void whatToRetry(state, dest, runId, uris));
}

/** Checks, before an interrupted retry is taken up again, that it can be (a RetryError says why not). */
export function checkResumeRetry(dest: string, retryId: number): void {
  withState(dest, (state) => void whatToResume(state, dest, retryId, true));
}

/**
 * The current entries of the wanted URIs: from the Change List (the last change of each) when the failed run was
 * incremental, then from the Resource List for those still not found (and the other way round for a baseline).
 */
async function findEntries(
  http: Http,
  binding: { resourceListUrl: string | null; changeListUrl: string | null },
  kind: string,
  wanted: Set<string>,
  signal: AbortSignal | undefined,
): Promise<Map<string, Entry>> {
  const found = new Map<string, Entry>();
  // By the form of their URIs the mirror keeps (uri.ts): a failure recorded by an earlier version may be spelled otherwise.
  wanted = new Set([...wanted].map(canonicalUri));
  const fromChanges = async () => {
    if (binding.changeListUrl === null) return;
    const latest = new Map<string, Timed>();
    // As an incremental sync reads them (index order, undated entries placed by their neighbours): every change.
    await readChangeLists(http, binding.changeListUrl, {
      since: -Infinity,
      signal,
      onChange: (change) => {
        const uri = canonicalUri(change.entry.loc);
        if (!wanted.has(uri) || found.has(uri)) return;
        canonicalEntry(change.entry);
        const prior = latest.get(uri);
        if (!prior || compareChanges(change, prior) >= 0) latest.set(uri, change);
      },
    });
    for (const [uri, { entry }] of latest) found.set(uri, entry);
  };
  const fromResources = async () => {
    if (binding.resourceListUrl === null || found.size === wanted.size) return;
    // As a sync reads it (a sloppy Source's index written as a <urlset> included), a URI listed twice by its first
    // entry: else a retry verified a resource against the repeat, which the next sync, taking the first, undid.
    await readResourceList(http, binding.resourceListUrl, {
      signal,
      onEntry: (e) => {
        canonicalEntry(e);
        if (wanted.has(e.loc) && !found.has(e.loc)) found.set(e.loc, e);
      },
    });
  };
  if (kind === 'baseline') {
    await fromResources();
    // A resource the Resource List no longer has may have been deleted since: the Change List says so.
    if (found.size < wanted.size) await fromChanges();
  } else {
    await fromChanges();
    await fromResources();
  }
  return found;
}

/**
 * A retry that leaves none of an unfinished baseline's failures standing completes that baseline: its checkpoint is
 * set as the baseline would have set it, had nothing failed. Not when a later checkpoint is already there.
 */
function completeBaseline(state: MirrorState): UnfinishedBaseline | null {
  const unfinished = state.unfinishedBaseline();
  if (unfinished === null || state.failuresSince(unfinished.runId, 0).open > 0) return null;
  state.setUnfinishedBaseline(null);
  const atMs = parseW3cDatetime(unfinished.at) ?? 0;
  const now = state.checkpoint();
  if (now !== null && (parseW3cDatetime(now.at) ?? 0) >= atMs) return null;
  state.setCheckpoint({ at: unfinished.at, from: unfinished.from });
  afterBaseline(state, atMs, unfinished.readAt);
  return unfinished;
}
