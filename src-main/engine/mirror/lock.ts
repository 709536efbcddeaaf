// One writer per mirror: a lock file in the mirror's `.resourcesync/` folder, created exclusively, naming its holder
// (pid, host, command, since when). A lock left by a process of this host that no longer runs is stale and taken
// over; any other lock is refused with a message that names the holder.
import { accessSync, closeSync, constants, existsSync, mkdirSync, openSync, readFileSync, realpathSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { DiskFullError, isDiskFull } from './disk-full.ts';
import { checkStateDir } from './within-folder.ts';

export const LOCK_NAME = 'lock';

export interface LockHolder {
  pid: number;
  host: string;
  /** What holds it, e.g. `rsdesk sync`. */
  command: string;
  /** ISO time it was taken. */
  since: string;
  /**
   * Linux: the boot it was taken in (`/proc/sys/kernel/random/boot_id`) and when its process started, in clock ticks
   * since that boot. Neither moves with the clock, so together they tell a lock whose process is gone from one of a
   * process that now has its pid (after a power cut and a restart, or in a container started again).
   */
  boot?: string;
  startTicks?: number;
}

export class MirrorLockedError extends Error {
  readonly holder: LockHolder | null;
  constructor(message: string, holder: LockHolder | null) {
    super(message);
    this.name = 'MirrorLockedError';
    this.holder = holder;
  }
}

export interface MirrorLock {
  readonly path: string;
  readonly holder: LockHolder;
  /** A stale lock this one replaced, if any. */
  readonly tookOver: LockHolder | null;
  release(): void;
}

function readHolder(path: string): LockHolder | null {
  try {
    const value = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockHolder>;
    if (typeof value.pid !== 'number' || typeof value.host !== 'string') return null;
    return {
      pid: value.pid,
      host: value.host,
      command: String(value.command ?? 'another process'),
      since: String(value.since ?? ''),
      ...(typeof value.boot === 'string' ? { boot: value.boot } : {}),
      ...(typeof value.startTicks === 'number' ? { startTicks: value.startTicks } : {}),
    };
  } catch {
    return null;
  }
}

/** True unless the process certainly does not exist (EPERM means it exists but is someone else's). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Lock files this process holds now. One that names this process's pid without being among them was left by an
 * earlier process that had the same pid: a container started again gives its first processes the same small pids, and
 * "process 7 is still running" is then this process itself.
 */
const heldHere = new Set<string>();

/**
 * Whether the process that wrote `holder` (a lock of this host, in `path`) certainly no longer runs: it is gone, the
 * lock was taken in an earlier boot (a power cut in a run: its pid may well be another process's by now), its pid runs
 * a process that started at another moment, or its pid is this process's, which does not hold the lock.
 */
export function holderGone(holder: LockHolder, path: string): boolean {
  if (holder.pid === process.pid) return !heldHere.has(lockKey(path));
  // Taken before the computer last started: its process ended then, whatever has its pid now. (Not told by the clock:
  // one set right after the start, by hours on a computer without a clock of its own, would take live locks over.)
  const boot = bootId();
  if (holder.boot !== undefined && boot !== null && holder.boot !== boot) return true;
  if (!processAlive(holder.pid)) return true;
  // Alive, but not the process that took the lock: it started at another moment.
  const ticks = holder.startTicks === undefined ? null : startTicks(holder.pid);
  return ticks !== null && ticks !== holder.startTicks;
}

/** This boot of the computer (Linux), else null. */
function bootId(): string | null {
  if (process.platform !== 'linux') return null;
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    return null;
  }
}

/** When a process started, in clock ticks since the computer started (Linux), else null. */
function startTicks(pid: number): number | null {
  if (process.platform !== 'linux') return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command name in parentheses (which may hold spaces and parentheses) come fields 3 on; starttime is 22.
    const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    return Number.isSafeInteger(ticks) ? ticks : null;
  } catch {
    return null;
  }
}

/** The same lock file however it is named: a mirror reached through a link is the same mirror. */
function lockKey(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

function describe(holder: LockHolder): string {
  return `${holder.command} (process ${holder.pid} on ${holder.host}${holder.since ? `, since ${holder.since}` : ''})`;
}

/** Takes the lock of the mirror whose state folder is `stateDir`, or throws MirrorLockedError. */
export function acquireLock(stateDir: string, command: string, mirrorDir = stateDir): MirrorLock {
  checkStateDir(stateDir);
  try {
    mkdirSync(stateDir, { recursive: true });
  } catch (err) {
    throw cannotWrite(writeAccess(dirname(stateDir)) ?? err, mirrorDir, stateDir) ?? (isDiskFull(err) ? new DiskFullError(mirrorDir, false) : err);
  }
  const path = join(stateDir, LOCK_NAME);
  const boot = bootId();
  const ticks = startTicks(process.pid);
  const holder: LockHolder = {
    pid: process.pid,
    host: hostname(),
    command,
    since: new Date().toISOString(),
    ...(boot !== null ? { boot } : {}),
    ...(ticks !== null ? { startTicks: ticks } : {}),
  };
  let tookOver: LockHolder | null = null;
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx', 0o644);
    } catch (err) {
      const refused = cannotWrite(err, mirrorDir, stateDir);
      if (refused) throw refused;
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw isDiskFull(err) ? new DiskFullError(mirrorDir, false) : err;
      const current = readHolder(path);
      if (current === null) {
        // Unreadable: a writer that died between creating and writing it, or one writing it right now.
        if (attempt < 2) {
          sleepMs(50);
          continue;
        }
        throw new MirrorLockedError(
          `The mirror ${mirrorDir} is locked by a lock file that cannot be read (${path}). If no other rsdesk or ResourceSync Desktop is using this folder, delete that file and try again.`,
          null,
        );
      }
      if (current.host === holder.host && holderGone(current, path)) {
        if (removeStale(path, current, mirrorDir)) tookOver = current;
        continue;
      }
      const where = current.host === holder.host ? '' : ' If that host no longer uses this folder, delete the lock file.';
      if (current.host === holder.host && current.pid === process.pid) {
        // Held by this very process (the app's live notifications while the person starts a sync, say): "another
        // process" would be wrong, and there is no lock file for anyone to delete.
        throw new MirrorLockedError(`The mirror ${mirrorDir} is busy with ${current.command} here, since ${current.since}. One thing at a time may write a mirror; try again once it is done.`, current);
      }
      throw new MirrorLockedError(
        `The mirror ${mirrorDir} is in use by ${describe(current)}. Only one process at a time may write a mirror; wait for it to finish.${where} (lock file: ${path})`,
        current,
      );
    }
    try {
      try {
        const text = Buffer.from(JSON.stringify(holder) + '\n');
        // A short write (the disk filling up) leaves an unreadable lock just as a failed one does.
        if (writeSync(fd, text) !== text.length) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      } finally {
        closeSync(fd);
      }
    } catch (err) {
      // A lock file left empty or cut off would refuse every later run as "cannot be read" until someone deletes it
      // by hand: it is ours (created above), so it goes.
      try {
        unlinkSync(path);
      } catch {
        // Already gone.
      }
      throw isDiskFull(err) ? new DiskFullError(mirrorDir, false) : err;
    }
    let released = false;
    const key = lockKey(path);
    heldHere.add(key);
    const release = () => {
      if (released) return;
      released = true;
      heldHere.delete(key);
      process.off('exit', release);
      const now = readHolder(path);
      if (now && now.pid === holder.pid && now.since === holder.since) {
        try {
          unlinkSync(path);
        } catch {
          // Already gone.
        }
      }
    };
    process.on('exit', release);
    return { path, holder, tookOver, release };
  }
  throw new MirrorLockedError(`The mirror ${mirrorDir} could not be locked: its lock file keeps changing (${path}).`, null);
}

/** Why a folder that is there cannot be written, or null (Node's recursive mkdir says ENOENT on a read-only one). */
function writeAccess(dir: string): unknown {
  try {
    accessSync(dir, constants.W_OK);
    return null;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? null : err;
  }
}

/** The error to give for a mirror folder that cannot be written (read-only file system, no permission), else null. */
function cannotWrite(err: unknown, mirrorDir: string, stateDir: string): Error | null {
  const code = (err as NodeJS.ErrnoException).code;
  if (code !== 'EROFS' && code !== 'EACCES' && code !== 'EPERM') return null;
  const why = code === 'EROFS' ? 'it is on a read-only file system' : 'permission denied';
  // A mirror already: what it holds can still be read.
  const readable = existsSync(join(stateDir, 'state.sqlite')) ? ' rsdesk runs and rsdesk audit --last still read it.' : '';
  return new Error(`The mirror ${mirrorDir} cannot be written (${why}), and a sync or an audit records what it does in it.${readable}`);
}

/** A takeover under way older than this was left by a process killed in its few lines: it is removed. */
const TAKEOVER_STALE_MS = 5_000;

/**
 * Removes the stale lock `seen` if it is still the one in `path`; true when it did. Under a second file created
 * exclusively: two processes that found the same stale lock (two runs started at once after a crash) could otherwise
 * both read it again, the first remove it and take the lock, and the second then remove the first's new lock and take
 * it too, both writing the mirror.
 */
function removeStale(path: string, seen: LockHolder, mirrorDir: string): boolean {
  const guard = `${path}.takeover`;
  const deadline = Date.now() + 4 * TAKEOVER_STALE_MS;
  for (;;) {
    try {
      closeSync(openSync(guard, 'wx', 0o644));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw isDiskFull(err) ? new DiskFullError(mirrorDir, false) : err;
      let age = 0;
      try {
        age = Date.now() - statSync(guard).mtimeMs;
      } catch {
        // Gone already: try again at once.
        continue;
      }
      if (age > TAKEOVER_STALE_MS) {
        try {
          unlinkSync(guard);
        } catch {
          // Someone else removed it first.
        }
        continue;
      }
      if (Date.now() > deadline) {
        throw new MirrorLockedError(`The mirror ${mirrorDir} could not be locked: another process is taking its stale lock over, or left ${guard} behind. If no other rsdesk or ResourceSync Desktop is using this folder, delete that file and try again.`, null);
      }
      sleepMs(5);
    }
  }
  try {
    const again = readHolder(path);
    if (!again || again.pid !== seen.pid || again.since !== seen.since) return false;
    try {
      unlinkSync(path);
    } catch {
      // Someone removed it first (by hand).
    }
    return true;
  } finally {
    try {
      unlinkSync(guard);
    } catch {
      // Removed as stale by another process: only if this one stood still for seconds.
    }
  }
}

/**
 * What `open` gives (the mirror's state, as a rule), opened under a lock just taken; the lock goes again when it throws
 * (a state.sqlite that is damaged, or written by a newer version): else a process that carries on (the app) would keep
 * the lock, and refuse every later run of the mirror as one "in use" by itself until it is restarted.
 */
export function openLocked<T>(lock: MirrorLock, open: () => T): T {
  try {
    return open();
  } catch (err) {
    lock.release();
    throw err;
  }
}

function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
