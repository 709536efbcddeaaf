// Syncs on a schedule, for a mirror whose Source sends no change notifications (most do not): every N hours after
// its last sync ended, or every N days at a time of day (the computer's own clock), while the app runs, and at once
// when the app starts past that time. rsdesk leaves this to cron.
import type { RunRecord } from '../engine/mirror/state.ts';
import { keepsTimeOfDay } from '../contract/schedule.ts';

export { everyText, scheduleText } from '../contract/schedule.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * How long a scheduled sync that could not start (the folder in use by rsdesk, or gone) waits before it is tried
 * again: an hour, or the schedule's own interval when that is shorter.
 */
export const REFUSED_WAIT_MS = HOUR_MS;

/**
 * The longest wait a Source's Retry-After holds a scheduled sync back: past it the schedule asks once more (one request,
 * and the run pauses again if still refused). A Source saying "a year", or a garbled date, does not stop a mirror for
 * good without a person seeing it; a sync by hand asks at any time.
 */
export const SOURCE_WAIT_MAX_MS = 7 * DAY_MS;

/**
 * The first time the local clock reads `atMinute` after `after` (ms since the epoch). Set through the local calendar,
 * so that a day of 23 or 25 hours (daylight saving) keeps the clock time.
 */
function nextClockTime(after: number, atMinute: number): number {
  const at = new Date(after);
  at.setHours(Math.floor(atMinute / 60), atMinute % 60, 0, 0);
  if (at.getTime() <= after) {
    at.setDate(at.getDate() + 1);
    at.setHours(Math.floor(atMinute / 60), atMinute % 60, 0, 0);
  }
  return at.getTime();
}

/**
 * When the mirror's next scheduled sync is due (ms since the epoch), or null when it has no schedule. Counted from the
 * end of its last sync (its start when it has no end), else from when the mirror was added. With a time of day (an
 * interval of whole days): the first time the clock reads it after the last sync started, less a day per day of the
 * interval but one. So "every day at 02:00" syncs each night even after a sync by hand at 20:00, and a night the app
 * was closed through is made up at once when it opens. A start the mirror refused (`refusedAt`) puts it off by
 * REFUSED_WAIT_MS at most. A run the Source paused asking to wait (`askedUntil`, its Retry-After's end) is not taken up
 * before then, SOURCE_WAIT_MAX_MS after it paused at most: before, the schedule took it up at each interval
 * whatever the Source had said, and one request later it paused again.
 */
export function nextSyncAt(
  everyHours: number,
  lastSync: Pick<RunRecord, 'startedAt' | 'endedAt'> | null,
  addedAt: string,
  refusedAt?: number,
  atMinute: number | null = null,
  askedUntil: number | null = null,
): number | null {
  if (!(everyHours > 0)) return null;
  const interval = everyHours * HOUR_MS;
  let due: number;
  if (keepsTimeOfDay(everyHours, atMinute)) {
    const from = Date.parse(lastSync ? lastSync.startedAt : addedAt);
    due = nextClockTime((Number.isNaN(from) ? 0 : from) + interval - DAY_MS, atMinute);
  } else {
    const from = Date.parse(lastSync ? (lastSync.endedAt ?? lastSync.startedAt) : addedAt);
    due = (Number.isNaN(from) ? 0 : from) + interval;
  }
  if (refusedAt !== undefined) due = Math.max(due, refusedAt + Math.min(interval, REFUSED_WAIT_MS));
  if (askedUntil !== null && lastSync !== null) {
    const pausedAt = Date.parse(lastSync.endedAt ?? lastSync.startedAt);
    due = Math.max(due, Math.min(askedUntil, (Number.isNaN(pausedAt) ? 0 : pausedAt) + SOURCE_WAIT_MAX_MS));
  }
  return due;
}
