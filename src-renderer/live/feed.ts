// The live feed's rows, built from the engine's live events: one row per change of a notification (its outcome
// filled in when the change is applied), and one per ping, gap, rejected delivery, error or subscription change.
// Pure functions: the store (state.ts) keeps the capped buffer.
import type { AppliedChange, LiveEvent } from '../../src-main/contract/types.ts';

export type RowKind = 'change' | 'ping' | 'gap' | 'rejected' | 'error' | 'note' | 'subscription' | 'sync';

export interface FeedRow {
  /** Unique and stable: the virtualizer's key. */
  key: string;
  kind: RowKind;
  /** When it arrived (ISO). */
  at: string;
  /** created | updated | deleted for changes. */
  change?: string;
  uri?: string;
  /** The change's own datetime. */
  datetime?: string | null;
  /** For changes: what applying it did (null: not applied yet). */
  outcome?: string | null;
  reason?: string;
  /** Where it came from: the origin of the topic or the URI (the Source filter). */
  origin: string | null;
  /** A sentence for every other kind of row. */
  text?: string;
  subscriptionId?: number;
  /** For changes: the inbox row of the notification that listed it (its `applied` event names it). */
  inboxId?: number;
  /** For the row under a notification's listed changes: how many more it held (counted per minute too). */
  more?: number;
  /** For changes applied in a run whose event did not list them: the run whose journal says what became of them. */
  runId?: number;
}

/** The change column of a resource a gap's catch-up failed to fetch (the Change List's change type is not kept). */
export const CATCH_UP = 'catch-up';

/** What the feed's Show filter offers. */
export type ChangeFilter = 'all' | 'created' | 'updated' | 'deleted' | 'failed' | 'other';

/** Whether a row is shown under the Source and Show filters. */
export function matches(r: FeedRow, origin: string, change: ChangeFilter): boolean {
  if (origin && r.origin !== origin) return false;
  if (change === 'all') return true;
  // Among thousands of rows, what needs a person: changes that failed, and errors.
  if (change === 'failed') return (r.kind === 'change' && r.outcome === 'failed') || r.kind === 'error';
  if (change === 'other') return r.kind !== 'change';
  return r.kind === 'change' && r.change === change;
}

let seq = 0;
const nextKey = () => `r${++seq}`;

export function originOf(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

export function changeKey(subscriptionId: number, uri: string, datetime: string | null | undefined): string {
  return `${subscriptionId}|${uri}|${datetime ?? ''}`;
}

/** The row that says live events were lost on the way to the page (its event stream came back too late). */
export function missedRow(message: string, at: string): FeedRow {
  return { key: nextKey(), kind: 'gap', at, origin: null, text: `${message} Live events of that time are not in this feed.` };
}

/** The rows an event adds, oldest first (the store shows them newest first). Applied events add none. */
export function rowsOf(e: LiveEvent): FeedRow[] {
  switch (e.type) {
    case 'notification': {
      const rows: FeedRow[] = e.changes.map((c) => ({
        key: nextKey(),
        kind: 'change',
        at: e.at,
        change: c.change,
        uri: c.uri,
        datetime: c.datetime,
        outcome: null,
        origin: originOf(c.uri) ?? originOf(e.topic),
        subscriptionId: e.subscriptionId,
        inboxId: e.inboxId,
      }));
      // The engine lists at most a few hundred changes of a notification; the rest are applied all the same. Without
      // this row a notification of 10,000 changes looked like one of 500. First here: shown below the ones listed.
      const more = e.count - e.changes.length;
      if (more > 0) rows.unshift({ key: nextKey(), kind: 'subscription', more, at: e.at, origin: originOf(e.topic), subscriptionId: e.subscriptionId, text: moreText(more, e.changes.length, e.topic) });
      return rows;
    }
    case 'ping': {
      const p = e.ping;
      const where = p.siteUri ?? p.feedUri ?? p.items[0]?.link ?? '';
      const name = p.siteName ? `${p.siteName} ` : '';
      const items = p.items.length > 0 ? ` (${p.items.length} item${p.items.length === 1 ? '' : 's'})` : '';
      const sync = e.triggered.length > 0 ? `; syncing ${e.triggered.join(', ')}` : '';
      return [{ key: nextKey(), kind: 'ping', at: e.at, uri: where, origin: originOf(where), text: `Ping (${pingName(p.kind)}) from ${name}${where}${items}${sync}` }];
    }
    case 'gap': {
      const action = e.action === 'catch-up' ? 'catching up from the Change List' : e.action === 'needs-sync' ? 'the mirror needs an incremental sync' : 'not applied';
      return [{ key: nextKey(), kind: 'gap', at: e.at, origin: originOf(e.topic), subscriptionId: e.subscriptionId, text: `Gap: no notification covered ${e.from} to ${e.until}; ${action}.` }];
    }
    case 'caught-up': {
      // A row per change, as a notified change has: each failure (the count alone left no way to them) and each change
      // left to the notification after the gap, with why.
      const changeRow = (c: AppliedChange, outcome: 'failed' | 'covered'): FeedRow => ({
        key: nextKey(),
        kind: 'change',
        at: e.at,
        change: CATCH_UP,
        uri: c.uri,
        datetime: c.datetime,
        outcome,
        reason: c.reason,
        origin: originOf(c.uri) ?? originOf(e.topic),
        subscriptionId: e.subscriptionId,
        runId: e.runId,
      });
      const failures = e.failures.map((c) => changeRow(c, 'failed'));
      const covered = e.coveredChanges.map((c) => changeRow(c, 'covered'));
      const more = e.failed - e.failures.length;
      const retry = e.failed > 0 ? ` Run #${e.runId} records ${e.failed === 1 ? 'the failure' : 'every failure'}${more > 0 ? ` (${more.toLocaleString('en')} more than listed here)` : ''}; Retry all failed in the mirror's view fetches ${e.failed === 1 ? 'it' : 'them'} again.` : '';
      const row: FeedRow = { key: nextKey(), kind: 'sync', at: e.at, origin: originOf(e.topic), subscriptionId: e.subscriptionId, text: `Caught up ${e.from} to ${e.until}: ${e.created} created, ${e.updated} updated, ${e.deleted} deleted, ${e.failed} failed${coveredText(e.covered)}.${retry}` };
      // Oldest first: the summary shows above its failures.
      return [...covered, ...failures, row];
    }
    case 'rejected': {
      // The engine says refusals for a full inbox or a low disk together ("1,200 notifications were not stored").
      const many = e.what === 'delivery' && /^[\d,]+ notifications were not stored/.test(e.reason);
      const what = many ? 'Refused deliveries' : e.what === 'delivery' ? 'Refused a delivery' : e.what === 'verification' ? 'Refused a verification request' : e.what === 'ping' ? 'Refused a ping' : 'Refused a notification';
      return [{ key: nextKey(), kind: 'rejected', at: e.at, origin: originOf(e.topic), subscriptionId: e.subscriptionId, text: `${what}: ${e.reason}` }];
    }
    case 'error':
      return [{ key: nextKey(), kind: 'error', at: e.at, origin: null, subscriptionId: e.subscriptionId, text: `Error: ${e.message}` }];
    case 'note':
      return [{ key: nextKey(), kind: 'note', at: e.at, origin: null, subscriptionId: e.subscriptionId, text: e.message }];
    case 'duplicate':
      return [{ key: nextKey(), kind: 'subscription', at: e.at, origin: originOf(e.topic), subscriptionId: e.subscriptionId, text: `Dropped a notification: ${e.reason}` }];
    case 'subscribed':
      return [{ key: nextKey(), kind: 'subscription', at: e.at, origin: originOf(e.topic), subscriptionId: e.subscriptionId, text: `Subscribed to ${e.topic}${leaseText(e.leaseSeconds)}.` }];
    case 'renewed':
      // A renewal that changes nothing is shown in the subscription's row (when the hub last confirmed it); in the
      // feed a hub granting leases of seconds made one row every 10 s. A failed renewal is an error row, and the
      // renewal after it is listed.
      if (e.routine) return [];
      return [{ key: nextKey(), kind: 'subscription', at: e.at, origin: originOf(e.topic), subscriptionId: e.subscriptionId, text: `Renewed the subscription to ${e.topic}${leaseText(e.leaseSeconds)}.` }];
    case 'unsubscribed':
      return [{ key: nextKey(), kind: 'subscription', at: e.at, origin: originOf(e.topic), subscriptionId: e.subscriptionId, text: `Unsubscribed from ${e.topic}.` }];
    case 'denied':
      return [{ key: nextKey(), kind: 'error', at: e.at, origin: originOf(e.topic), subscriptionId: e.subscriptionId, text: `The hub denied the subscription to ${e.topic}${e.reason ? `: ${e.reason}` : '.'}` }];
    case 'expired':
      // A hub that grants leases of a few seconds has each end before its renewal (said once, in a note): a row for
      // each, every 10 s for days, pushed the failures out of the feed and filled the Failed filter.
      if (e.foreseen) return [];
      return [{ key: nextKey(), kind: 'error', at: e.at, origin: originOf(e.topic), subscriptionId: e.subscriptionId, text: `The lease of the subscription to ${e.topic} ended before a renewal was confirmed: the hub sends nothing until it is.` }];
    case 'sync':
      return [{ key: nextKey(), kind: 'sync', at: e.at, origin: null, text: `Synced ${e.dest} (${e.reason}): ${e.created} created, ${e.updated} updated, ${e.deleted} deleted, ${e.failed} failed.` }];
    default:
      return [];
  }
}

/** The row under the changes a notification listed, when it held more than the feed was given. */
/**
 * How long the hub keeps a subscription, as a person says it: "(lease 3600 s)" was a number to work out, in a unit
 * and a word of WebSub's.
 */
export function leaseText(seconds: number | null): string {
  if (seconds === null) return '';
  const say = (n: number, unit: string) => {
    const r = Math.round(n * 10) / 10;
    return `${r.toLocaleString('en')} ${unit}${r === 1 ? '' : 's'}`;
  };
  const span =
    seconds < 120 ? say(seconds, 'second') : seconds < 3_600 ? say(seconds / 60, 'minute') : seconds < 172_800 ? say(seconds / 3_600, 'hour') : say(seconds / 86_400, 'day');
  return ` for ${span} (the hub's lease); the app renews it before it ends`;
}

export function moreText(more: number, listed: number, topic: string): string {
  const n = more.toLocaleString('en');
  return `…and ${n} more change${more === 1 ? '' : 's'} in this notification from ${topic} (${(listed + more).toLocaleString('en')} in all; the feed lists the first ${listed.toLocaleString('en')}). They are applied all the same; the mirror's run history says what became of each.`;
}

/** A catch-up's changes left to the notification after its gap, when there were any. */
function coveredText(covered: number): string {
  return covered > 0 ? `, ${covered.toLocaleString('en')} left to the notification after the gap (changed again there)` : '';
}

function pingName(kind: string): string {
  return kind === 'rss-ping-1.0' ? 'RSS Ping 1.0' : kind === 'rss-ping-2.0' ? 'RSS Ping 2.0' : kind;
}

/** What applying did, in words a person reads. */
export function outcomeText(outcome: string | null | undefined): string {
  switch (outcome) {
    case null:
    case undefined:
      return 'waiting';
    case 'created':
    case 'updated':
    case 'deleted':
      return `applied (${outcome})`;
    case 'unchanged':
      return 'applied (already up to date)';
    case 'kept':
      return 'kept (deletion policy)';
    case 'skipped':
      return 'skipped';
    case 'covered':
      return 'not applied (covered already)';
    case 'failed':
      return 'failed';
    case 'journal':
      return 'done';
    default:
      return outcome;
  }
}

/** Changes per minute over the last `minutes` minutes, oldest first, from change rows (`now` in ms). */
export function perMinute(rows: readonly FeedRow[], now: number, minutes = 30): { start: number; count: number }[] {
  const end = Math.floor(now / 60_000) * 60_000 + 60_000;
  const start = end - minutes * 60_000;
  const buckets = Array.from({ length: minutes }, (_, i) => ({ start: start + i * 60_000, count: 0 }));
  for (const r of rows) {
    if ((r.kind !== 'change' || r.change === CATCH_UP) && r.more === undefined) continue;
    const t = Date.parse(r.at);
    if (t < start || t >= end) continue;
    buckets[Math.floor((t - start) / 60_000)].count += r.more ?? 1;
  }
  return buckets;
}
