import { describe, expect, it } from 'vitest';
import type { MirrorSummary } from '../../src-main/contract/types.ts';
import { inWords, nextSyncLine } from './next-sync.ts';
import { scheduleText } from './format.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const now = Date.parse('2026-11-28T10:00:00Z');
const mirror = (every: number, nextSync: number | null, status: MirrorSummary['status'] = 'ready') => ({
  options: { syncEveryHours: every } as MirrorSummary['options'],
  nextSync: nextSync === null ? null : new Date(nextSync).toISOString(),
  status,
});

describe('inWords', () => {
  it('says the nearest whole unit, never none', () => {
    expect(inWords(10_000)).toBe('in 1 minute');
    expect(inWords(40 * MINUTE)).toBe('in 40 minutes');
    expect(inWords(HOUR)).toBe('in 1 hour');
    expect(inWords(6 * HOUR - 30_000)).toBe('in 6 hours');
    expect(inWords(3 * HOUR + 20 * MINUTE)).toBe('in 3 hours');
    expect(inWords(7 * 24 * HOUR)).toBe('in 7 days');
  });
});

describe('nextSyncLine', () => {
  it('says nothing for a mirror without a schedule', () => {
    expect(nextSyncLine(mirror(0, null), now)).toBeNull();
  });

  it('says when the next sync is, relative to now, with the exact time in the title', () => {
    expect(nextSyncLine(mirror(6, now + 3 * HOUR), now)).toEqual({ text: 'Next sync in 3 hours', title: expect.stringMatching(/^Next scheduled sync: 28 Nov 2026, /) });
    expect(nextSyncLine(mirror(6, now - MINUTE), now)?.text).toBe('Next sync: due now');
  });

  it('says why a scheduled mirror waits, as its facts do', () => {
    expect(nextSyncLine(mirror(6, null, 'paused'), now)).toEqual({ text: 'Syncs by itself: paused' });
    expect(nextSyncLine(mirror(6, null, 'interrupted'), now)?.text).toBe('Syncs by itself: paused');
    expect(nextSyncLine(mirror(6, null, 'missing'), now)?.text).toBe('Syncs by itself: waits, folder missing');
    expect(nextSyncLine(mirror(6, null, 'running'), now)?.text).toBe('Syncs by itself: after this run');
    // Paused by the app's closing or by the Source: the schedule resumes it.
    expect(nextSyncLine(mirror(6, now + 2 * HOUR, 'paused'), now)?.text).toBe('Resumes by itself in 2 hours');
    expect(nextSyncLine(mirror(6, now - MINUTE, 'interrupted'), now)?.text).toBe('Resumes by itself now');
  });

  it('says a scheduled sync was put off (rsdesk took the folder as it was due), and why in the title', () => {
    const putOff = { at: new Date(now - MINUTE).toISOString(), because: 'the folder was in use by rsdesk sync (process 4242)' };
    expect(nextSyncLine({ ...mirror(6, null, 'busy'), putOff }, now)).toEqual({
      text: 'Syncs by itself: put off, folder in use',
      title: expect.stringMatching(/^The scheduled sync of 28 Nov 2026, .* was put off: the folder was in use by rsdesk sync \(process 4242\)\.$/),
    });
    expect(nextSyncLine({ ...mirror(6, now + HOUR), putOff }, now)).toEqual({
      text: 'Next sync in 1 hour (put off)',
      title: expect.stringMatching(/^Next scheduled sync: 28 Nov 2026, .*\. The scheduled sync of .* was put off: the folder was in use by rsdesk sync \(process 4242\)\.$/),
    });
    expect(nextSyncLine({ ...mirror(6, now + HOUR), putOff: null }, now)?.text).toBe('Next sync in 1 hour');
  });

  it("says a run the Source paused waits as the Source asked (Retry-After), with its time in the title", () => {
    const sourceWait = new Date(now + 5 * HOUR).toISOString();
    expect(nextSyncLine({ ...mirror(1, now + 5 * HOUR, 'paused'), sourceWait }, now)).toEqual({
      text: 'Resumes by itself in 5 hours, as the Source asked',
      title: expect.stringMatching(/^Next scheduled sync: 28 Nov 2026, .*\. The Source asked not to be asked again before 28 Nov 2026, .* \(Retry-After\)\.$/),
    });
    expect(nextSyncLine({ ...mirror(1, now + HOUR, 'paused'), sourceWait: null }, now)?.text).toBe('Resumes by itself in 1 hour');
  });

  it("the mirror's facts say the Source's wait beside the next time", () => {
    const at = Date.now() + 5 * HOUR;
    const sourceWait = new Date(at).toISOString();
    expect(scheduleText({ ...mirror(1, at, 'paused'), sourceWait })).toMatch(/^every hour; next at .+ \(the Source asked not to be asked again before .+\)$/);
    expect(scheduleText({ ...mirror(1, at, 'paused'), sourceWait: null })).toMatch(/^every hour; next at [^(]+$/);
  });
});
