// Syncs on a schedule, for a mirror whose Source sends no change notifications (most do not): every N hours after
// its last sync began or ended, while the app runs, and at once when the app starts past that time. rsdesk leaves
// this to cron.
import type { RunRecord } from '../engine/mirror/state.ts';

export { everyText } from '../contract/schedule.ts';

const HOUR_MS = 3_600_000;

/**
 * How long a scheduled sync that could not start (the folder in use by rsdesk, or gone) waits before it is tried
 * again: an hour, or the schedule's own interval when that is shorter.
 */
export const REFUSED_WAIT_MS = HOUR_MS;

/**
 * When the mirror's next scheduled sync is due (ms since the epoch), or null when it has no schedule. Counted from the
 * end of its last sync (its start when it has no end), else from when the mirror was added; a start the mirror
 * refused (`refusedAt`) puts it off by REFUSED_WAIT_MS at most.
 */
export function nextSyncAt(everyHours: number, lastSync: Pick<RunRecord, 'startedAt' | 'endedAt'> | null, addedAt: string, refusedAt?: number): number | null {
  if (!(everyHours > 0)) return null;
  const interval = everyHours * HOUR_MS;
  const from = Date.parse(lastSync ? (lastSync.endedAt ?? lastSync.startedAt) : addedAt);
  const due = (Number.isNaN(from) ? 0 : from) + interval;
  return refusedAt === undefined ? due : Math.max(due, refusedAt + Math.min(interval, REFUSED_WAIT_MS));
}
