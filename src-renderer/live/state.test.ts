import { describe, expect, it, vi } from 'vitest';
import type { LiveEvent } from '../../src-main/contract/types.ts';
import { ANNOUNCE_EVERY_MS, announcement, announcer, arrived, isNote } from './announce.ts';
import { matches, perMinute, rowsOf } from './feed.ts';
import { addEvents, useLive } from './state.ts';

const at = '2026-01-01T10:00:30.000Z';
const base = { at, subscriptionId: 1, topic: 'http://s.example/notify', dest: '/m' };

function notification(uris: string[]): LiveEvent {
  return { ...base, type: 'notification', inboxId: 1, from: 'a', until: 'b', count: uris.length, changes: uris.map((uri) => ({ uri, change: 'created', datetime: '2026-01-01T09:00:00Z' })), warnings: [] };
}

describe('a full feed with thousands of changes waiting', () => {
  it('gives each applied event the rows it concerns without a pass over the whole feed', () => {
    // A mirror locked by a sync for a while: 5,000 notified changes wait for their outcome in the feed.
    const waiting = addEvents([], Array.from({ length: 5_000 }, (_, i) => ({ ...notification([`http://s.example/w/${i}`]), inboxId: i }) as LiveEvent)).rows;
    // Every look at a row reads its kind: counted.
    let reads = 0;
    const counted = waiting.map((r) => {
      const { kind, ...rest } = r;
      return Object.defineProperty(rest, 'kind', { enumerable: true, get: () => (reads++, kind) }) as typeof r;
    });
    const batch: LiveEvent[] = [];
    for (let i = 0; i < 50; i++) {
      const uri = `http://s.example/new/${i}`;
      batch.push({ ...notification([uri]), inboxId: 10_000 + i } as LiveEvent);
      batch.push({ ...base, type: 'applied', inboxIds: [10_000 + i], runId: 1, created: 1, updated: 0, deleted: 0, unchanged: 0, skipped: 0, failed: 0, changes: [{ uri, change: 'created', datetime: '2026-01-01T09:00:00Z', outcome: 'created' }] });
    }
    const { rows } = addEvents(counted, batch);
    expect(rows.slice(0, 50).every((r) => r.outcome === 'created')).toBe(true);
    expect(rows.slice(50, 100).every((r) => r.outcome === null)).toBe(true);
    // Before: every applied event read every row (50 × 5,000 twice); 20 such batches took seconds, the page stalled.
    expect(reads).toBeLessThan(4 * waiting.length);
  });
});

describe('leases that end', () => {
  it('lists a lease that ended unforeseen as an error, and not each end of a lease the hub grants shorter than the renewal interval', () => {
    const ended = (foreseen: boolean): LiveEvent => ({ ...base, type: 'expired', hub: 'http://s.example/hub', foreseen });
    const { rows } = addEvents([], [ended(true), ended(true), ended(false)]);
    expect(rows.map((r) => [r.kind, r.text])).toEqual([
      ['error', 'The lease of the subscription to http://s.example/notify ended before a renewal was confirmed: the hub sends nothing until it is.'],
    ]);
  });
});

describe('renewals', () => {
  it('lists a renewal only when something changed: not each of a hub that grants leases of seconds', () => {
    const renewed = (routine: boolean, leaseSeconds = 5): LiveEvent => ({ ...base, type: 'renewed', hub: 'http://s.example/hub', leaseSeconds, expiresAt: at, routine });
    const failed: LiveEvent = { at, type: 'error', message: 'Renewing the subscription to http://s.example/notify failed (the hub answered HTTP 503); trying again in 2 s', subscriptionId: 1 };
    const { rows } = addEvents([], [renewed(true), renewed(true), failed, renewed(false), renewed(true), renewed(false, 60)]);
    // Newest first: the lease that changed, the renewal after the failure, the failure.
    expect(rows.map((r) => [r.kind, r.text])).toEqual([
      ['subscription', "Renewed the subscription to http://s.example/notify for 60 seconds (the hub's lease); the app renews it before it ends."],
      ['subscription', "Renewed the subscription to http://s.example/notify for 5 seconds (the hub's lease); the app renews it before it ends."],
      ['error', `Error: ${failed.type === 'error' && failed.message}`],
    ]);
  });
});

describe('finding what failed among many rows', () => {
  it("lists each resource a gap's catch-up could not fetch as a failed row, and the Failed filter finds it among thousands", () => {
    const many = Array.from({ length: 2_000 }, (_, i) => notification([`http://s.example/ok/${i}`]));
    const caught: LiveEvent = {
      ...base,
      type: 'caught-up',
      from: '2026-01-01T09:00:00Z',
      until: '2026-01-01T09:01:00Z',
      runId: 7,
      created: 2,
      updated: 0,
      deleted: 0,
      failed: 1,
      failures: [{ uri: 'http://s.example/gone', change: 'unknown', datetime: null, outcome: 'failed', reason: 'HTTP 404 for http://s.example/gone' }],
      covered: 0,
      coveredChanges: [],
    };
    const error: LiveEvent = { at, type: 'error', message: 'Subscribing to http://s.example/notify failed (the hub answered HTTP 500); trying again in 4 s', subscriptionId: 1 };
    const { rows } = addEvents([], [...many.slice(0, 1_000), caught, ...many.slice(1_000), error]);
    const failed = rows.filter((r) => matches(r, '', 'failed'));
    expect(failed.map((r) => r.uri ?? r.text)).toEqual([error.type === 'error' && `Error: ${error.message}`, 'http://s.example/gone']);
    expect(failed[1]).toMatchObject({ kind: 'change', outcome: 'failed', reason: 'HTTP 404 for http://s.example/gone', runId: 7 });
    // The summary names the run that has it.
    const summary = rows.find((r) => r.kind === 'sync')!;
    expect(summary.text).toContain('1 failed. Run #7 records the failure');
    // A catch-up's failure is no notified change: the chart of changes per minute does not count it.
    const counted = perMinute(rows, Date.parse(at), 1).reduce((n, b) => n + b.count, 0);
    expect(counted).toBe(2_000);
  });
});

describe('the live feed rows', () => {
  it('shows each change newest first, then fills in what applying it did', () => {
    let { rows } = addEvents([], [notification(['http://s.example/a', 'http://s.example/b'])]);
    expect(rows.map((r) => [r.uri, r.outcome])).toEqual([
      ['http://s.example/b', null],
      ['http://s.example/a', null],
    ]);
    const applied: LiveEvent = {
      ...base,
      type: 'applied',
      inboxIds: [1],
      runId: 1,
      created: 1,
      updated: 0,
      deleted: 0,
      unchanged: 0,
      skipped: 0,
      failed: 1,
      changes: [
        { uri: 'http://s.example/a', change: 'created', datetime: '2026-01-01T09:00:00Z', outcome: 'created' },
        { uri: 'http://s.example/b', change: 'created', datetime: '2026-01-01T09:00:00Z', outcome: 'failed', reason: 'HTTP 404' },
      ],
    };
    ({ rows } = addEvents(rows, [applied]));
    expect(rows.map((r) => [r.uri, r.outcome, r.reason])).toEqual([
      ['http://s.example/b', 'failed', 'HTTP 404'],
      ['http://s.example/a', 'created', undefined],
    ]);
  });

  it('keeps at most the cap and says how many fell off', () => {
    const { rows, dropped } = addEvents([], [notification(['1', '2', '3', '4', '5'].map((n) => `http://s.example/${n}`))], 3);
    expect(rows.map((r) => r.uri)).toEqual(['http://s.example/5', 'http://s.example/4', 'http://s.example/3']);
    expect(dropped).toBe(2);
  });

  it('marks gaps, refused deliveries, errors and notes, each in words', () => {
    const { rows } = addEvents([], [
      { ...base, type: 'gap', from: '2026-01-01T09:00:00Z', until: '2026-01-01T09:05:00Z', action: 'catch-up' },
      { at, type: 'rejected', what: 'delivery', reason: 'the signature does not match' },
      { at, type: 'error', message: 'The disk is full' },
      { at, type: 'note', message: 'The hub granted a lease of 5 seconds' },
    ]);
    expect(rows.map((r) => [r.kind, r.text])).toEqual([
      ['note', 'The hub granted a lease of 5 seconds'],
      ['error', 'Error: The disk is full'],
      ['rejected', 'Refused a delivery: the signature does not match'],
      ['gap', 'Gap: no notification covered 2026-01-01T09:00:00Z to 2026-01-01T09:05:00Z; catching up from the Change List.'],
    ]);
  });

  it('counts changes per minute of arrival', () => {
    const { rows } = addEvents([], [notification(['http://s.example/a', 'http://s.example/b']), { ...notification(['http://s.example/c']), at: '2026-01-01T10:02:10.000Z' }]);
    const buckets = perMinute(rows, Date.parse('2026-01-01T10:02:59.000Z'), 5);
    expect(buckets.map((b) => b.count)).toEqual([0, 0, 2, 0, 1]);
  });
});

describe('events lost on the way to the page', () => {
  it('are said so at the top of the feed, and the subscriptions are read again', () => {
    useLive.getState().clear();
    useLive.getState().receive({ events: [notification(['http://s.example/a'])], dropped: 0 });
    const seq = useLive.getState().subscriptionsSeq;
    useLive.getState().missed('The app server was restarted: everything shown is read again.', at);
    const { rows, subscriptionsSeq } = useLive.getState();
    expect(rows[0]).toMatchObject({
      kind: 'gap',
      at,
      text: 'The app server was restarted: everything shown is read again. Live events of that time are not in this feed.',
    });
    expect(rows[1]!.uri).toBe('http://s.example/a');
    expect(subscriptionsSeq).toBe(seq + 1);
  });
});

describe('a notification that holds more changes than its event lists', () => {
  const listed = (n: number) => Array.from({ length: n }, (_, i) => `http://s.example/${i}`);

  it('says "and N more" below the ones listed, N exact', () => {
    const e = { ...notification(listed(500)), count: 10_234 } as LiveEvent;
    const { rows } = addEvents([], [e]);
    expect(rows).toHaveLength(501);
    expect(rows[500]!.kind).not.toBe('change');
    expect(rows[500]!.text).toBe(
      `…and 9,734 more changes in this notification from ${base.topic} (10,234 in all; the feed lists the first 500). They are applied all the same; the mirror's run history says what became of each.`,
    );
  });

  it('counts them all in the changes per minute', () => {
    const { rows } = addEvents([], [{ ...notification(listed(500)), count: 10_234 } as LiveEvent]);
    expect(perMinute(rows, Date.parse(at), 1)[0]!.count).toBe(10_234);
  });

  it('adds no such row when every change is listed', () => {
    const { rows } = addEvents([], [notification(listed(3))]);
    expect(rows.every((r) => r.kind === 'change')).toBe(true);
  });

  it('does not leave a change "waiting" once its notification was applied, when the applied event did not list it', () => {
    let { rows } = addEvents([], [{ ...notification(['http://s.example/a', 'http://s.example/b']), inboxId: 7 } as LiveEvent]);
    const applied = (failed: number, changes: { uri: string; outcome: string }[]): LiveEvent => ({
      ...base, type: 'applied', inboxIds: [7], runId: 12, created: 2 - failed, updated: 0, deleted: 0, unchanged: 0, skipped: 0, failed,
      changes: changes.map((c) => ({ ...c, change: 'created', datetime: '2026-01-01T09:00:00Z' })),
    });
    const one = addEvents(rows, [applied(0, [{ uri: 'http://s.example/a', outcome: 'created' }])]).rows;
    expect(one.map((r) => [r.uri, r.outcome, r.reason])).toEqual([
      ['http://s.example/b', 'journal', 'not failed; run #12 records whether it was created, updated, deleted or already up to date'],
      ['http://s.example/a', 'created', undefined],
    ]);
    // More failures than the event listed: one not listed may be among them, and it says so.
    ({ rows } = addEvents(rows, [applied(2, [{ uri: 'http://s.example/a', outcome: 'failed' }])]));
    expect(rows[0]!.reason).toBe('run #12 records what became of it (2 of its changes failed, more than the feed was given)');
  });
});

describe('what a screen reader is told', () => {
  it('is the notes that arrived, not the changes, several said at once', () => {
    const before = addEvents([], [notification(['http://s.example/a'])]).rows;
    const after = addEvents(before, [
      { at, type: 'rejected', what: 'delivery', reason: '1,200 notifications were not stored' },
      notification(['http://s.example/b']),
      { at, type: 'note', message: 'The hub granted a lease of 5 seconds' },
    ]).rows;
    const notes = arrived(before, after).filter(isNote);
    expect(notes.map((r) => r.kind)).toEqual(['note', 'rejected']);
    expect(announcement(notes)).toBe('Live feed: 2 new notes; the latest: The hub granted a lease of 5 seconds');
    expect(announcement(notes.slice(1))).toBe('Live feed: Refused deliveries: 1,200 notifications were not stored');
    expect(announcement([])).toBeNull();
    expect(announcement(notes.slice(1))).not.toContain('a delivery');
    // Rows read from before the page opened go below: nothing new at the top.
    expect(arrived(after, [...after, ...addEvents([], [{ at, type: 'error', message: 'old' }]).rows])).toEqual([]);
  });
});

describe('the announcer', () => {
  it('says the first note at once, then one sentence per interval for a flood, none for silence', () => {
    vi.useFakeTimers();
    try {
      const said: string[] = [];
      const a = announcer((t) => said.push(t));
      const note = (message: string) => addEvents([], [{ at, type: 'error', message }]).rows;
      a.add(note('one'));
      vi.advanceTimersByTime(0);
      expect(said).toEqual(['Live feed: Error: one']);
      for (let i = 0; i < 1_000; i++) a.add(note(`n${i}`));
      vi.advanceTimersByTime(ANNOUNCE_EVERY_MS - 1);
      expect(said).toHaveLength(1);
      vi.advanceTimersByTime(1);
      expect(said).toEqual(['Live feed: Error: one', 'Live feed: 1,000 new notes; the latest: Error: n999']);
      vi.advanceTimersByTime(ANNOUNCE_EVERY_MS * 5);
      expect(said).toHaveLength(2);
      a.stop();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('the Live view and the Check report', () => {
  it('a check started while the Live view covers a report still counted as shown hides the Live view', async () => {
    const { useCheck } = await import('../state/check.ts');
    useCheck.getState().start('http://s.example/', 's.example');
    // Shown without hiding the report first, as any path to the Live view but its own button could do.
    useLive.getState().show();
    expect(useLive.getState().visible).toBe(true);
    useCheck.getState().start('http://s.example/', 's.example');
    expect(useLive.getState().visible).toBe(false);
    useCheck.getState().hide();
  });
});

describe('a subscription in the feed', () => {
  it('says how long the hub keeps it in words, not in seconds', () => {
    const text = (leaseSeconds: number | null) => rowsOf({ ...base, type: 'subscribed', leaseSeconds } as LiveEvent)[0].text;
    expect(text(3_600)).toBe("Subscribed to http://s.example/notify for 1 hour (the hub's lease); the app renews it before it ends.");
    expect(text(12)).toContain('for 12 seconds');
    expect(text(300)).toContain('for 5 minutes');
    expect(text(864_000)).toContain('for 10 days');
    expect(text(null)).toBe('Subscribed to http://s.example/notify.');
  });
});
