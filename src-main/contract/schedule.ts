// The intervals of scheduled syncs, in words, for the app's engine (run notes) and its UI alike.

/** The intervals the UI offers, in hours (0: none); the contract takes any whole number up to a year. */
export const SCHEDULE_CHOICES = [0, 1, 6, 12, 24, 168] as const;

/** Minutes in a day: a time of day is a whole number of minutes after midnight, below this. */
export const MINUTES_PER_DAY = 1440;

/** "every 6 hours", "every day", "every week"… */
export function everyText(hours: number): string {
  if (hours === 1) return 'every hour';
  if (hours === 24) return 'every day';
  if (hours === 168) return 'every week';
  if (hours % 168 === 0) return `every ${hours / 168} weeks`;
  if (hours % 24 === 0) return `every ${hours / 24} days`;
  return `every ${hours} hours`;
}

/**
 * Whether a schedule keeps to its time of day: only one of whole days does (a time of day every 6 hours would mean
 * nothing), so the time is kept but not used while the interval is not.
 */
export function keepsTimeOfDay(hours: number, atMinute: number | null): atMinute is number {
  return hours > 0 && hours % 24 === 0 && atMinute !== null;
}

/** "02:00", "14:30": the clock's own time, on the 24-hour clock that a schedule is read on. */
export function clockText(atMinute: number): string {
  return `${String(Math.floor(atMinute / 60)).padStart(2, '0')}:${String(atMinute % 60).padStart(2, '0')}`;
}

/** "every 6 hours", "every day at 02:00". */
export function scheduleText(hours: number, atMinute: number | null): string {
  return keepsTimeOfDay(hours, atMinute) ? `${everyText(hours)} at ${clockText(atMinute)}` : everyText(hours);
}
