import { describe, expect, it } from 'vitest';
import { holdText } from './hold.ts';

const at = '2026-01-01T10:00:00Z';
const since = '2026-01-01T10:05:00Z';

describe('the words for a checkpoint held by live failures', () => {
  it('say where, since when, how many, in which runs, and that retrying lets it move on', () => {
    const t = holdText({ at, since, failures: 3, runIds: [4, 9], overflow: false });
    expect(t.what).toMatch(/^Live notifications have kept this mirror's checkpoint at .*2026.* since .*2026.*: 3 resources they changed could not be fetched \(runs #4 and #9\)/);
    expect(t.next).toBe('Retrying them lets the checkpoint move on as soon as they are mirrored (so does Sync now).');
    expect(holdText({ at, since: null, failures: 1, runIds: [4], overflow: false }).what).toContain(': 1 resource they changed could not be fetched (run #4)');
    expect(holdText({ at, since, failures: 2, runIds: [1, 2, 3, 4, 5, 6, 7], overflow: false }).what).toContain('(runs #1, #2, #3, #4, #5 and 2 more)');
  });

  it('past what the app keeps track of, say only a sync lets it go', () => {
    expect(holdText({ at, since, failures: 10_000, runIds: [4], overflow: true }).next).toMatch(/^Only a sync lets it move on now/);
  });
});
