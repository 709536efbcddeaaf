// The live feed's store: a capped buffer of rows, newest first, with pause (events held, not lost, up to the same
// cap) and filters. Fed by the engine's live.events batches (LiveFeedSync in queries.ts).
import { create } from 'zustand';
import type { LiveBatch, LiveEvent } from '../../src-main/contract/types.ts';
import { changeKey, missedRow, rowsOf, type ChangeFilter, type FeedRow } from './feed.ts';

/** The most rows the feed keeps; older ones are dropped, and the feed says how many. */
export const FEED_CAP = 5_000;

export type { ChangeFilter } from './feed.ts';

interface LiveState {
  visible: boolean;
  /** Newest first. */
  rows: FeedRow[];
  /** Rows dropped from the end because of the cap (and events the engine dropped before they reached us). */
  dropped: number;
  paused: boolean;
  /** Events that came while paused, oldest first. */
  held: LiveEvent[];
  origin: string;
  change: ChangeFilter;
  /** Bumped when a subscription changes, so the list is read again. */
  subscriptionsSeq: number;
  show(): void;
  hide(): void;
  receive(batch: LiveBatch): void;
  /** Events were lost on their way to the page: a row says so, at the top, and the subscriptions are read again. */
  missed(message: string, at?: string): void;
  /** Events from before the page opened: they go below what is already shown. */
  receiveEarlier(events: LiveEvent[]): void;
  setPaused(paused: boolean): void;
  setOrigin(origin: string): void;
  setChange(change: ChangeFilter): void;
  clear(): void;
}

// `duplicate`: a notification covered already still sets the subscription's last notification.
const SUBSCRIPTION_EVENTS = new Set(['subscribed', 'renewed', 'unsubscribed', 'denied', 'expired', 'subscribing', 'notification', 'applied', 'duplicate', 'gap', 'caught-up']);

/** Where the change rows still waiting for their outcome are, by change and by notification. */
class Waiting {
  readonly byKey = new Map<string, number[]>();
  readonly byInbox = new Map<number, number[]>();
  add(r: FeedRow, i: number): void {
    if (r.kind !== 'change' || r.outcome !== null) return;
    push(this.byKey, changeKey(r.subscriptionId ?? 0, r.uri ?? '', r.datetime), i);
    if (r.inboxId !== undefined) push(this.byInbox, r.inboxId, i);
  }
  /** The rows an applied event may concern: those of its changes and of its notifications. */
  of(e: Extract<LiveEvent, { type: 'applied' }>): Set<number> {
    const found = new Set<number>();
    for (const c of e.changes) for (const i of this.byKey.get(changeKey(e.subscriptionId, c.uri, c.datetime)) ?? []) found.add(i);
    for (const id of e.inboxIds) for (const i of this.byInbox.get(id) ?? []) found.add(i);
    return found;
  }
}

function push<K>(map: Map<K, number[]>, key: K, i: number): void {
  const list = map.get(key);
  if (list) list.push(i);
  else map.set(key, [i]);
}

/**
 * Adds events to rows (newest first), applying outcomes to the rows they concern; returns the rows and how many fell
 * off. Each applied event looked at every row before (a pass over the whole feed, and over the batch so far, per
 * event): with thousands of rows waiting (a mirror locked by a sync while notifications came) 20 batches of 50
 * notifications and their outcomes took 2.4 s. The waiting rows are now indexed once per call.
 */
export function addEvents(rows: FeedRow[], events: readonly LiveEvent[], cap = FEED_CAP): { rows: FeedRow[]; dropped: number } {
  const fresh: FeedRow[] = [];
  const freshWaiting = new Waiting();
  let next = rows;
  let older: Waiting | null = null;
  for (const e of events) {
    if (e.type === 'applied') {
      const outcomes = new Map(e.changes.map((c) => [changeKey(e.subscriptionId, c.uri, c.datetime), c]));
      const inboxIds = new Set(e.inboxIds);
      const unlisted = unlistedOutcome(e);
      const update = (r: FeedRow): FeedRow => {
        if (r.kind !== 'change' || r.outcome !== null || r.subscriptionId !== e.subscriptionId) return r;
        const c = outcomes.get(changeKey(r.subscriptionId, r.uri ?? '', r.datetime));
        if (c) return { ...r, outcome: c.outcome, reason: c.reason };
        // Its notification was applied, but the event lists only the first few hundred changes: "waiting" for ever
        // would be false.
        return r.inboxId !== undefined && inboxIds.has(r.inboxId) ? { ...r, ...unlisted } : r;
      };
      for (const i of freshWaiting.of(e)) fresh[i] = update(fresh[i]);
      if (older === null) {
        older = new Waiting();
        for (let i = 0; i < rows.length; i++) older.add(rows[i], i);
      }
      const concerned = older.of(e);
      if (concerned.size > 0) {
        if (next === rows) next = rows.slice();
        for (const i of concerned) next[i] = update(next[i]);
      }
      continue;
    }
    for (const r of rowsOf(e)) {
      freshWaiting.add(r, fresh.length);
      fresh.push(r);
    }
  }
  const all = [...fresh.reverse(), ...next];
  const dropped = Math.max(0, all.length - cap);
  return { rows: dropped > 0 ? all.slice(0, cap) : all, dropped };
}

/** What a change row says when its notification's run did not list it in its event (see MAX_EVENT_CHANGES). */
function unlistedOutcome(e: Extract<LiveEvent, { type: 'applied' }>): Pick<FeedRow, 'outcome' | 'reason' | 'runId'> {
  // Failed ones are listed first: when every failure is listed, one not listed did not fail.
  const failedListed = e.changes.filter((c) => c.outcome === 'failed').length;
  const reason =
    failedListed >= e.failed
      ? `not failed; run #${e.runId} records whether it was created, updated, deleted or already up to date`
      : `run #${e.runId} records what became of it (${e.failed.toLocaleString('en')} of its changes failed, more than the feed was given)`;
  return { outcome: 'journal', reason, runId: e.runId };
}

export const useLive = create<LiveState>()((set, get) => ({
  visible: false,
  rows: [],
  dropped: 0,
  paused: false,
  held: [],
  origin: '',
  change: 'all',
  subscriptionsSeq: 0,
  show: () => set({ visible: true }),
  hide: () => set({ visible: false }),
  receive(batch) {
    const s = get();
    const touches = batch.events.some((e) => SUBSCRIPTION_EVENTS.has(e.type));
    const seqPatch = touches ? { subscriptionsSeq: s.subscriptionsSeq + 1 } : {};
    if (s.paused) {
      const held = [...s.held, ...batch.events];
      const over = Math.max(0, held.length - FEED_CAP);
      set({ held: over > 0 ? held.slice(over) : held, dropped: s.dropped + batch.dropped + over, ...seqPatch });
      return;
    }
    const { rows, dropped } = addEvents(s.rows, batch.events);
    set({ rows, dropped: s.dropped + batch.dropped + dropped, ...seqPatch });
  },
  missed(message, at = new Date().toISOString()) {
    const s = get();
    const all = [missedRow(message, at), ...s.rows];
    const dropped = Math.max(0, all.length - FEED_CAP);
    set({ rows: dropped > 0 ? all.slice(0, FEED_CAP) : all, dropped: s.dropped + dropped, subscriptionsSeq: s.subscriptionsSeq + 1 });
  },
  receiveEarlier(events) {
    const s = get();
    const { rows: older } = addEvents([], events);
    const all = [...s.rows, ...older];
    const dropped = Math.max(0, all.length - FEED_CAP);
    set({ rows: dropped > 0 ? all.slice(0, FEED_CAP) : all, dropped: s.dropped + dropped, subscriptionsSeq: s.subscriptionsSeq + 1 });
  },
  setPaused(paused) {
    const s = get();
    if (paused) return set({ paused: true });
    const { rows, dropped } = addEvents(s.rows, s.held);
    set({ paused: false, held: [], rows, dropped: s.dropped + dropped });
  },
  setOrigin: (origin) => set({ origin }),
  setChange: (change) => set({ change }),
  clear: () => set({ rows: [], dropped: 0, held: [] }),
}));

// Opening a document or a Source, or a check report, brings the other panes back.
import { useUi } from '../state/ui.ts';
import { useCheck } from '../state/check.ts';
// The document already selected, chosen again, comes back too.
useUi.subscribe((state, previous) => {
  if (state.node !== previous.node || state.sourceId !== previous.sourceId || state.selections !== previous.selections) useLive.getState().hide();
});
// A new check too, while a report counts as shown: the Live view would cover it (Live comes first in the main pane),
// and the check Check Source started would run out of sight.
useCheck.subscribe((state, previous) => {
  if (state.visible && (!previous.visible || state.run !== previous.run)) useLive.getState().hide();
});
