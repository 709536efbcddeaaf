// The intervals of scheduled syncs, in words, for the app's engine (run notes) and its UI alike.

/** The intervals the UI offers, in hours (0: none); the contract takes any whole number up to a year. */
export const SCHEDULE_CHOICES = [0, 1, 6, 12, 24, 168] as const;

/** "every 6 hours", "every day", "every week"… */
export function everyText(hours: number): string {
  if (hours === 1) return 'every hour';
  if (hours === 24) return 'every day';
  if (hours === 168) return 'every week';
  if (hours % 168 === 0) return `every ${hours / 168} weeks`;
  if (hours % 24 === 0) return `every ${hours / 24} days`;
  return `every ${hours} hours`;
}
