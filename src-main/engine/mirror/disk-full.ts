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
