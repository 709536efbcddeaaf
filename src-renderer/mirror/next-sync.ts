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
export function nextSyncLine(m: Pick<MirrorSummary, 'options' | 'nextSync' | 'status'> & Partial<Pick<MirrorSummary, 'putOff' | 'sourceWait'>>, now: number): { text: string; title?: string } | null {
  if (!(m.options.syncEveryHours > 0)) return null;
  // A scheduled sync that could not start (rsdesk took the folder as it was due): said, with why in the title.
  const putOff = m.putOff ? `The scheduled sync of ${formatInstant(m.putOff.at)} was put off: ${m.putOff.because}.` : null;
  if (m.nextSync !== null) {
    const due = Date.parse(m.nextSync);
    // The Source's Retry-After holds it back: said, so that a wait longer than the schedule's is not taken for a fault.
    const asked = m.sourceWait ? `The Source asked not to be asked again before ${formatInstant(m.sourceWait)} (Retry-After).` : null;
    const title = `Next scheduled sync: ${formatInstant(m.nextSync)}${putOff ? `. ${putOff}` : ''}${asked ? `. ${asked}` : ''}`;
    const off = putOff ? ' (put off)' : asked ? ', as the Source asked' : '';
    // A run stopped by the app's closing or by the Source is taken up by the schedule, not started afresh.
    if (m.status === 'paused' || m.status === 'interrupted') return { text: due <= now ? 'Resumes by itself now' : `Resumes by itself ${inWords(due - now)}${off}`, title };
    if (due <= now) return { text: 'Next sync: due now', title };
    return { text: `Next sync ${inWords(due - now)}${off}`, title };
  }
  if (putOff && m.status === 'busy') return { text: 'Syncs by itself: put off, folder in use', title: putOff };
  const why: Partial<Record<MirrorSummary['status'], string>> = {
    paused: 'paused',
    interrupted: 'paused',
    missing: 'waits, folder missing',
    busy: 'waits, folder in use',
    ready: 'waits',
  };
  return { text: `Syncs by itself: ${why[m.status] ?? 'after this run'}` };
}
