// The mirrors list's line for a mirror's schedule: when it syncs next, in words relative to now ("Next sync in 3
// hours"), or why it waits. The mirror's facts say the same at length, with the exact time (scheduleText).
import type { MirrorSummary } from '../../src-main/contract/types.ts';
import { formatInstant } from './format.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** "in 1 minute", "in 40 minutes", "in 6 hours", "in 3 days": the nearest whole unit, never "in 0". */
export function inWords(ms: number): string {
  const unit = (n: number, one: string) => `in ${n} ${one}${n === 1 ? '' : 's'}`;
  if (ms < HOUR - MINUTE / 2) return unit(Math.max(1, Math.ceil(ms / MINUTE)), 'minute');
  if (ms < 36 * HOUR) return unit(Math.max(1, Math.round(ms / HOUR)), 'hour');
  return unit(Math.round(ms / (24 * HOUR)), 'day');
}

/**
 * The line, and its title (the exact time, when there is one); null for a mirror without a schedule, which says
 * nothing here so that the list stays short.
 */
export function nextSyncLine(m: Pick<MirrorSummary, 'options' | 'nextSync' | 'status'>, now: number): { text: string; title?: string } | null {
  if (!(m.options.syncEveryHours > 0)) return null;
  if (m.nextSync !== null) {
    const due = Date.parse(m.nextSync);
    const title = `Next scheduled sync: ${formatInstant(m.nextSync)}`;
    // A run stopped by the app's closing or by the Source is taken up by the schedule, not started afresh.
    if (m.status === 'paused' || m.status === 'interrupted') return { text: due <= now ? 'Resumes by itself now' : `Resumes by itself ${inWords(due - now)}`, title };
    return due <= now ? { text: 'Next sync: due now', title } : { text: `Next sync ${inWords(due - now)}`, title };
  }
  const why: Partial<Record<MirrorSummary['status'], string>> = {
    paused: 'paused',
    interrupted: 'paused',
    missing: 'waits, folder missing',
    busy: 'waits, folder in use',
    ready: 'waits',
  };
  return { text: `Syncs by itself: ${why[m.status] ?? 'after this run'}` };
}
