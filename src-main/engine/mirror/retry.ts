// Retrying chosen resources of a mirror (the failures of a run, or one of them): only those URIs are fetched again,
// as a run of their own in the journal (mode `retry`). What each must be (hash, length, lastmod) comes from the
// Source's lists as they are now — the Change List first for a failure of an incremental run, the Resource List
// otherwise — so a retried resource goes through the same fixity checks, durable batches and inventory as in a sync.
// Only the wanted entries are kept while the lists stream, so a retry of a few resources of a huge list stays small.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { clip } from '../clip.ts';
import type { Entry } from '../documents/model.ts';
import { Http } from '../http/client.ts';
import type { ProxyEnv } from '../http/dispatcher.ts';
import { canonicalUri } from './uri.ts';
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
import { MirrorState, STATE_DIR, stateDirOf, type RunCounts } from './state.ts';
import type { SyncProgress } from './sync.ts';

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
  onProgress?: (progress: SyncProgress) => void;
}

export interface RetryResult extends RunCounts {
  runId: number;
  /** The URIs asked for. */
  asked: number;
  failures: Failure[];
  seconds: number;
}

export class RetryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RetryError';
  }
}

export async function retryResources(options: RetryOptions): Promise<RetryResult> {
  const { dest } = options;
  const stateDir = stateDirOf(dest);
  if (!existsSync(join(stateDir, 'state.sqlite'))) throw new RetryError(`${dest} is not a mirror (no ${STATE_DIR}/state.sqlite)`);
  const lock = acquireLock(stateDir, 'retry of failed resources', dest);
  const state = openLocked(lock, () => new MirrorState(stateDir));
  let http: Http | null = null;
  let fetcher: Fetcher | null = null;
  try {
    const { failed, binding, wanted } = whatToRetry(state, dest, options.runId, options.uris);

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
    http = new Http({ sourceHeaders: source, timeoutMs: options.timeoutMs ?? settings.timeoutMs ?? undefined, userAgent: options.userAgent, proxy: settings.proxy, proxyEnv: options.proxyEnv });
    fetcher = new Fetcher({
      concurrency: options.concurrency ?? settings.concurrency ?? undefined,
      timeoutMs: options.timeoutMs ?? settings.timeoutMs ?? undefined,
      userAgent: options.userAgent,
      source,
      proxy: settings.proxy,
      proxyEnv: options.proxyEnv,
    });

    const t0 = Date.now();
    const run = state.startRun(failed.kind, 'retry', null);
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
      signal: options.signal,
      onProgress: () => report(),
      onSettled: () => report(),
    });
    let phase: SyncProgress['phase'] = 'lists';
    const report = (): void =>
      options.onProgress?.({
        ...applier.progressCounts(),
        mode: failed.kind === 'baseline' ? 'baseline' : 'incremental',
        phase,
        listed: wanted.size,
        listComplete: true,
        listedBytes: 0,
      });
    report();
    let status: 'completed' | 'failed' | 'cancelled' = 'completed';
    let message: string | null = null;
    try {
      const found = await findEntries(http, binding, failed.kind, wanted, options.signal);
      const phases = { lists: (Date.now() - t0) / 1000 };
      phase = 'fetch';
      const t1 = Date.now();
      const inflight = new WorkSlots(Math.max(2, (settings.concurrency ?? 8) * 2));
      for (const uri of wanted) {
        if (options.signal?.aborted) break;
        const entry = found.get(canonicalUri(uri));
        if (entry === undefined) {
          applier.fail(uri, 'not listed by the Source any more (neither in its Resource List nor in its Change List); not fetched');
          applier.settledOne();
        } else if (entry.md.change === 'deleted') {
          applier.delete(uri);
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
      await inflight.all();
      phase = 'finishing';
      await applier.finish();
      Object.assign(phases, { fetch: (Date.now() - t1) / 1000 });
      if (options.signal?.aborted) {
        status = 'cancelled';
        message = 'Cancelled';
      } else if (applier.counts.failed > 0) {
        status = 'failed';
        message = `${applier.counts.failed} of ${wanted.size} retried resource${wanted.size === 1 ? '' : 's'} failed again`;
      } else message = `retried ${wanted.size} resource${wanted.size === 1 ? '' : 's'} of run ${options.runId}`;
      state.endRun(run.id, status, phases, message);
    } catch (err) {
      await applier.finish().catch(() => undefined);
      status = options.signal?.aborted ? 'cancelled' : 'failed';
      state.endRun(run.id, status, { lists: (Date.now() - t0) / 1000 }, clip((err as Error).message, 500));
      throw err instanceof RetryError ? err : new RetryError((err as Error).message);
    }
    const counts = state.run(run.id)!;
    return {
      runId: run.id,
      asked: wanted.size,
      created: counts.created,
      updated: counts.updated,
      deleted: counts.deleted,
      unchanged: counts.unchanged,
      skipped: counts.skipped,
      failed: counts.failed,
      bytes: counts.bytes,
      failures: applier.failures,
      seconds: Math.round((Date.now() - t0) / 100) / 10,
    };
  } finally {
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
  const recorded = new Set(state.failures(runId).map((f) => f.uri));
  // "All failed": those a later run has not mirrored since.
  const open = () => state.failuresSince(runId, MAX_RETRY_URIS).failures.filter((f) => f.fixedBy === null).map((f) => f.uri);
  const wanted = new Set(uris ?? open());
  if (uris === undefined && wanted.size === 0 && recorded.size > 0) throw new RetryError(`Every resource that failed in run ${runId} has been mirrored since; there is nothing to retry.`);
  for (const uri of wanted) if (!recorded.has(uri)) throw new RetryError(`${clip(uri)} did not fail in run ${runId}; only its failures can be retried.`);
  if (wanted.size === 0) throw new RetryError(`Run ${runId} has no failures to retry.`);
  if (wanted.size > MAX_RETRY_URIS) throw new RetryError(`At most ${MAX_RETRY_URIS.toLocaleString('en')} resources can be retried at once.`);
  return { failed, binding, wanted };
}

/** Checks, before a retry is started, that it can be: the same checks the retry makes itself (a RetryError). */
export function checkRetry(dest: string, runId: number, uris?: string[]): void {
  const stateDir = stateDirOf(dest);
  if (!existsSync(join(stateDir, 'state.sqlite'))) throw new RetryError(`${dest} is not a mirror (no ${STATE_DIR}/state.sqlite)`);
  const state = new MirrorState(stateDir);
  try {
    whatToRetry(state, dest, runId, uris);
  } finally {
    state.close();
  }
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
        change.entry.loc = uri;
        const prior = latest.get(uri);
        if (!prior || compareChanges(change, prior) >= 0) latest.set(uri, change);
      },
    });
    for (const [uri, { entry }] of latest) found.set(uri, entry);
  };
  const fromResources = async () => {
    if (binding.resourceListUrl === null || found.size === wanted.size) return;
    const before = new Set(found.keys());
    // As a sync reads it (a sloppy Source's index written as a <urlset> included).
    await readResourceList(http, binding.resourceListUrl, {
      signal,
      onEntry: (e) => {
        e.loc = canonicalUri(e.loc);
        if (wanted.has(e.loc) && !before.has(e.loc)) found.set(e.loc, e);
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
