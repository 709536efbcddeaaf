// A mirror folder seen from outside a run: bind a new folder to a Source list (discovery once, no fetching of
// resources), and read what a folder's `.resourcesync/state.sqlite` says (binding, checkpoint, runs, inventory size,
// who holds its lock) without creating anything in a folder that is not a mirror.
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { makeFolders } from './make-folders.ts';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { normalizeStartUrl } from '../discovery/discover.ts';
import { bearerFor, Http } from '../http/client.ts';
import type { PathMap } from './local-path.ts';
import { acquireLock, holderGone, openLocked, LOCK_NAME, type LockHolder } from './lock.ts';
import { MirrorState, STATE_FILE, stateDirOf, type Binding, type Checkpoint, type NeedsSync, type RunRecord, type SourceWait } from './state.ts';
import type { SecretStore } from './secrets.ts';
import { mergeSettings, resolveCredentials, SettingsError, sourceHeadersOf, type Credentials } from './settings.ts';
import { bind, SyncError } from './sync.ts';

export interface PrepareOptions {
  url: string;
  dest: string;
  capabilityListUrl?: string;
  maps?: PathMap[];
  allowHosts?: string[];
  token?: string | null;
  /**
   * Credentials the Source asks for, sent (from discovery on) to the origin of `capabilityListUrl ?? url` only; they
   * become the mirror's own (scheme and user name in its binding, the secret in `secretStore`).
   */
  credentials?: Credentials;
  secretStore?: SecretStore;
  timeoutMs?: number;
  userAgent?: string;
}

/**
 * Makes `dest` a mirror of the list `url` leads to (its folder and state created, its binding written), or, when it
 * is one already bound to that URL, leaves it as it is. Throws SyncError (what discovery found cannot be mirrored)
 * or MirrorLockedError (another process writes the folder).
 */
export async function prepareMirror(options: PrepareOptions): Promise<Binding> {
  // Not Node's recursive mkdir: it spins for ever under /proc (make-folders.ts); the app's Create froze on it.
  makeFolders(options.dest);
  const stateDir = stateDirOf(options.dest);
  const given = options.credentials;
  // Before the lock is taken: a URL refused here leaves neither the lock nor the state open.
  let origin: string;
  try {
    origin = new URL(normalizeStartUrl(options.capabilityListUrl ?? options.url)).origin;
  } catch (err) {
    throw new SyncError(err instanceof Error ? err.message : String(err));
  }
  const lock = acquireLock(stateDir, 'ResourceSync Desktop', options.dest);
  const state = openLocked(lock, () => new MirrorState(stateDir));
  // The token too goes to the Source's origin only: as one for every fetch, it went to every host discovery read after
  // a redirect had led there, and to every host a document named.
  const http = new Http({
    sourceHeaders: given ? sourceHeadersOf(mergeSettings(undefined, origin), given) : bearerFor(origin, options.token),
    timeoutMs: options.timeoutMs,
    userAgent: options.userAgent,
  });
  try {
    const old = state.binding();
    let binding =
      old !== null && old.url === options.url && options.capabilityListUrl === undefined
        ? old
        : await bind(http, { url: options.url, dest: options.dest, capabilityListUrl: options.capabilityListUrl, maps: options.maps, allowHosts: options.allowHosts }, old);
    if (given) binding = withCredentials(binding, origin, given, options.secretStore);
    if (binding !== old) state.setBinding(binding);
    return binding;
  } finally {
    await http.close();
    state.close();
    lock.release();
  }
}

/** The binding with these credentials as the mirror's own (null: none of its own); the secret goes to `store`. */
function withCredentials(binding: Binding, origin: string, credentials: Credentials | null, store: SecretStore | undefined): Binding {
  if (credentials && !store) throw new SyncError('There is nowhere to keep the credentials on this computer.');
  const id = binding.id ?? randomUUID();
  const settings = mergeSettings(binding.settings, origin, {}, credentials);
  try {
    resolveCredentials(settings, id, credentials, store);
  } catch (err) {
    throw err instanceof SettingsError ? new SyncError(err.message) : err;
  }
  return { ...binding, id, settings };
}

/**
 * Gives a mirror credentials of its own (or, with null, takes them away), without a run: the scheme and the basic user
 * name into its binding, the secret into `store`, for its Source's origin only, as `rsdesk sync --basic` would.
 * Throws MirrorLockedError when another process writes the folder, SyncError when it is not bound to a Source.
 */
export function setMirrorCredentials(dest: string, credentials: Credentials | null, store: SecretStore | undefined): Binding {
  return changeBinding(dest, (binding, origin) => withCredentials(binding, origin, credentials, store));
}

/**
 * Replaces a mirror's extra request headers (lower-case names, sent to its Source's origin only), without a run and
 * without touching its credentials.
 */
export function setMirrorHeaders(dest: string, headers: Record<string, string>): Binding {
  return changeBinding(dest, (binding, origin) => ({ ...binding, settings: mergeSettings(binding.settings, origin, { headers }) }));
}

/**
 * Sets how long the Source may refuse every request of a run before it pauses (`rsdesk sync --pause-after-refusals`),
 * without a run; null: the default again.
 */
export function setMirrorRefusalLimit(dest: string, ms: number | null): Binding {
  return changeBinding(dest, (binding, origin) => ({ ...binding, settings: mergeSettings(binding.settings, origin, { refusalLimitMs: ms }) }));
}

/** The binding changed by `change`, under the folder's lock. */
function changeBinding(dest: string, change: (binding: Binding, origin: string) => Binding): Binding {
  if (!isMirror(dest)) throw new SyncError(`${dest} is not a mirror.`);
  const stateDir = stateDirOf(dest);
  const lock = acquireLock(stateDir, 'ResourceSync Desktop', dest);
  const state = openLocked(lock, () => new MirrorState(stateDir));
  try {
    const binding = state.binding();
    if (binding === null) throw new SyncError(`${dest} is not bound to a Source yet.`);
    let origin: string;
    try {
      origin = binding.settings?.origin ?? new URL(binding.capabilityListUrl ?? normalizeStartUrl(binding.url)).origin;
    } catch (err) {
      throw new SyncError(err instanceof Error ? err.message : String(err));
    }
    const next = change(binding, origin);
    state.setBinding(next);
    return next;
  } finally {
    state.close();
    lock.release();
  }
}

/** The binding of a mirror folder alone (no count of its inventory); null when it is not a mirror or not bound. */
export function readBinding(dest: string): Binding | null {
  if (!isMirror(dest)) return null;
  const state = MirrorState.forReading(stateDirOf(dest));
  try {
    return state.binding();
  } finally {
    state.close();
  }
}

export interface FolderStatus {
  binding: Binding | null;
  checkpoint: Checkpoint | null;
  /** Oldest first. */
  runs: RunRecord[];
  /** Resources the inventory holds (deleted and quarantined ones left out). */
  resources: number;
  /** Another live process that holds the folder's lock, if any. */
  heldBy: LockHolder | null;
  /** The newest retry left interrupted (paused, or its process gone) that can be taken up again, if any. */
  retryToResume: number | null;
  /** Changes the live side missed and could not catch up: the next sync should bring them. */
  needsSync: NeedsSync | null;
  /** Until when the Source asked the run it paused to wait (Retry-After), while that is ahead; else null. */
  sourceWait: SourceWait | null;
}

export function isMirror(dest: string): boolean {
  return existsSync(join(stateDirOf(dest), STATE_FILE));
}

/** Resources the folder's inventory holds (deleted and quarantined ones left out); 0 when it is not a mirror yet. */
export function inventorySize(dest: string): number {
  if (!isMirror(dest)) return 0;
  const state = MirrorState.forReading(stateDirOf(dest));
  try {
    return state.resourceCount();
  } finally {
    state.close();
  }
}

/** What the folder's state says, or null when it is not (or no longer) a mirror. */
export function readFolder(dest: string): FolderStatus | null {
  if (!isMirror(dest)) return null;
  const state = MirrorState.forReading(stateDirOf(dest));
  try {
    const resources = state.resourceCount();
    const heldBy = lockHolder(dest);
    const runs = runsAsSeen(state.runs(), heldBy);
    const retry = runs.filter((r) => r.mode === 'retry').at(-1);
    const retryToResume = retry?.status === 'interrupted' && state.keptRetry(retry.id) ? retry.id : null;
    return { binding: state.binding(), checkpoint: state.checkpoint(), runs, resources, heldBy, retryToResume, needsSync: state.needsSync(), sourceWait: state.sourceWait() };
  } finally {
    state.close();
  }
}

/** What a run's result says of its failures (SyncResult, RetryResult). */
export interface FailuresOfResult {
  runId: number | null;
  failures: { uri: string; reason: string }[];
  failureCount: number;
  journalBefore: number | null;
}

/**
 * Every failure of a run's result, in the order recorded: those it lists, and when it lists only the first, all of
 * them streamed from the run journal (a run against a Source that was down may have millions). A dry run records
 * none: past those it lists, its failures are only counted (`failureCount`).
 */
export function* resultFailures(dest: string, r: FailuresOfResult): Generator<{ uri: string; reason: string }> {
  if (r.failureCount <= r.failures.length || r.runId === null || r.journalBefore === null) {
    yield* r.failures;
    return;
  }
  const state = MirrorState.forReading(stateDirOf(dest));
  try {
    yield* state.failuresPast(r.runId, r.journalBefore);
  } finally {
    state.close();
  }
}

/** Failures recorded for one run, at most `limit` (those still standing first), with how many there are and stand. */
export function readFailures(dest: string, runId: number, limit = 1000): ReturnType<MirrorState['failuresSince']> {
  if (!isMirror(dest)) return { total: 0, open: 0, failures: [] };
  const state = MirrorState.forReading(stateDirOf(dest));
  try {
    return state.failuresSince(runId, limit);
  } finally {
    state.close();
  }
}

/**
 * The runs as they stand: one recorded `running` by another process is `interrupted` when no live process holds the
 * lock (it was killed; the next sync records it so, and resumes it).
 */
export function runsAsSeen(runs: RunRecord[], heldBy: LockHolder | null): RunRecord[] {
  if (heldBy !== null) return runs;
  return runs.map((r) => (r.status === 'running' && r.pid !== process.pid ? { ...r, status: 'interrupted' as const } : r));
}

/** The holder of the folder's lock when it is another process that still runs. */
export function lockHolder(dest: string): LockHolder | null {
  try {
    const path = join(stateDirOf(dest), LOCK_NAME);
    const holder = JSON.parse(readFileSync(path, 'utf8')) as LockHolder;
    if (typeof holder.pid !== 'number' || holder.pid === process.pid) return null;
    // Held from another computer (a shared folder): its process cannot be looked at from here, so it holds.
    if (typeof holder.host === 'string' && holder.host !== hostname()) return holder;
    return holderGone({ ...holder, since: String(holder.since ?? '') }, path) ? null : holder;
  } catch {
    return null;
  }
}
