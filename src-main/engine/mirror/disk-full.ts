// A full disk, said in plain words. Node says "ENOSPC: no space left on device, write" and SQLite "database or disk is
// full"; the engine often passes errors on by their message alone (a run's error becomes a SyncError of its text), so
// both the code and the wording are recognised.

/** True when `error` (or its message) says the disk, or the user's quota on it, is full. */
export function isDiskFull(error: unknown): boolean {
  if (error === null || typeof error !== 'object') return typeof error === 'string' && DISK_FULL.test(error);
  const e = error as { code?: unknown; errstr?: unknown; message?: unknown };
  if (e.code === 'ENOSPC' || e.code === 'EDQUOT') return true;
  return (typeof e.errstr === 'string' && DISK_FULL.test(e.errstr)) || (typeof e.message === 'string' && DISK_FULL.test(e.message));
}

// Node's and SQLite's own wording, as they write it: not a bare "enospc", which a URL's path may hold.
const DISK_FULL = /\bENOSPC: |\bEDQUOT: |no space left on device|disk quota exceeded|database or disk is full|\bSQLITE_FULL\b/;

/**
 * True when `error` is a full disk by its code alone. For an error whose message may hold what a Source wrote (a URL,
 * a redirect's Location, a header): a Source must not stop a run by naming a resource "no space left on device".
 */
export function hasDiskFullCode(error: unknown): boolean {
  const code = error !== null && typeof error === 'object' ? (error as { code?: unknown }).code : undefined;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/**
 * True when `reason` ends with Node's words for a full disk ("ENOSPC: no space left on device, write", or ", open
 * '<path>'"): a reason that begins with what a Source wrote (a name in a package) and ends with the system's error.
 */
export function endsWithDiskFull(reason: string): boolean {
  return /\b(?:ENOSPC|EDQUOT): [a-z ]+, [a-z]+(?: '[^']*')?$/.test(reason);
}

/** What to tell a person whose run stopped on a full disk (`changed`: whether anything was written before). */
export function diskFullMessage(folder: string, changed: boolean): string {
  return changed
    ? `The disk holding ${folder} is full, so the run stopped before it finished. Free some space and run it again.`
    : `The disk holding ${folder} is full; nothing was changed. Free some space and try again.`;
}

/** A run refused or stopped by a full disk; its message is meant for people as it is. */
export class DiskFullError extends Error {
  constructor(folder: string, changed: boolean) {
    super(diskFullMessage(folder, changed));
    this.name = 'DiskFullError';
  }
}
