// A mirror folder seen from outside a run: bind a new folder to a Source list (discovery once, no fetching of
// resources), and read what a folder's `.resourcesync/state.sqlite` says (binding, checkpoint, runs, inventory size,
// who holds its lock) without creating anything in a folder that is not a mirror.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Http } from '../http/client.ts';
import type { PathMap } from './local-path.ts';
import { acquireLock, LOCK_NAME, processAlive, type LockHolder } from './lock.ts';
import { MirrorState, STATE_FILE, stateDirOf, type Binding, type Checkpoint, type RunRecord } from './state.ts';
import { bind } from './sync.ts';

export interface PrepareOptions {
  url: string;
  dest: string;
  capabilityListUrl?: string;
  maps?: PathMap[];
  allowHosts?: string[];
  token?: string | null;
  timeoutMs?: number;
  userAgent?: string;
}

/**
 * Makes `dest` a mirror of the list `url` leads to (its folder and state created, its binding written), or, when it
 * is one already bound to that URL, leaves it as it is. Throws SyncError (what discovery found cannot be mirrored)
 * or MirrorLockedError (another process writes the folder).
 */
export async function prepareMirror(options: PrepareOptions): Promise<Binding> {
  mkdirSync(options.dest, { recursive: true });
  const stateDir = stateDirOf(options.dest);
  const lock = acquireLock(stateDir, 'ResourceSync Desktop', options.dest);
  const state = new MirrorState(stateDir);
  const http = new Http({ bearerToken: options.token ?? null, timeoutMs: options.timeoutMs, userAgent: options.userAgent });
  try {
    const old = state.binding();
    if (old !== null && old.url === options.url && options.capabilityListUrl === undefined) return old;
    const binding = await bind(http, { url: options.url, dest: options.dest, capabilityListUrl: options.capabilityListUrl, maps: options.maps, allowHosts: options.allowHosts }, old);
    state.setBinding(binding);
    return binding;
  } finally {
    await http.close();
    state.close();
    lock.release();
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
}

export function isMirror(dest: string): boolean {
  return existsSync(join(stateDirOf(dest), STATE_FILE));
}

/** What the folder's state says, or null when it is not (or no longer) a mirror. */
export function readFolder(dest: string): FolderStatus | null {
  if (!isMirror(dest)) return null;
  const state = new MirrorState(stateDirOf(dest));
  try {
    const resources = Number(
      (state.db.prepare("SELECT COUNT(*) AS n FROM inventory WHERE status NOT IN ('deleted', 'quarantined')").get() as { n: number }).n,
    );
    return { binding: state.binding(), checkpoint: state.checkpoint(), runs: state.runs(), resources, heldBy: lockHolder(dest) };
  } finally {
    state.close();
  }
}

/** Failures recorded for one run, at most `limit`, with how many there are. */
export function readFailures(dest: string, runId: number, limit = 1000): { total: number; failures: { uri: string; reason: string }[] } {
  if (!isMirror(dest)) return { total: 0, failures: [] };
  const state = new MirrorState(stateDirOf(dest));
  try {
    const total = Number((state.db.prepare('SELECT COUNT(*) AS n FROM failures WHERE run_id = ?').get(runId) as { n: number }).n);
    const failures = state.db.prepare('SELECT uri, reason FROM failures WHERE run_id = ? ORDER BY rowid LIMIT ?').all(runId, limit) as { uri: string; reason: string }[];
    return { total, failures };
  } finally {
    state.close();
  }
}

/** The holder of the folder's lock when it is another process that still runs. */
function lockHolder(dest: string): LockHolder | null {
  try {
    const holder = JSON.parse(readFileSync(join(stateDirOf(dest), LOCK_NAME), 'utf8')) as LockHolder;
    if (typeof holder.pid !== 'number' || holder.pid === process.pid) return null;
    return processAlive(holder.pid) ? holder : null;
  } catch {
    return null;
  }
}
