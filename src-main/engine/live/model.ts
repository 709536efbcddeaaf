// The live engine's records and events. Events are plain JSON objects with a `type`: the CLI prints them one per
// line, the app forwards them to the live feed.

export type SubscriptionStatus =
  /** Asked the hub; waiting for its intent verification. */
  | 'pending'
  | 'active'
  /** The hub failed (or never verified); asked again after `nextAttemptAt`. */
  | 'retrying'
  | 'unsubscribing'
  | 'unsubscribed'
  | 'denied'
  /** The lease ran out (not renewed in time). */
  | 'expired';

export interface Subscription {
  id: number;
  /** The mirror folder it feeds. */
  dest: string;
  topic: string;
  hub: string;
  callbackUrl: string;
  status: SubscriptionStatus;
  leaseRequested: number | null;
  leaseSeconds: number | null;
  verifiedAt: string | null;
  expiresAt: string | null;
  attempts: number;
  nextAttemptAt: string | null;
  lastError: string | null;
  /** `until` of the last notification taken in order (W3C datetime). */
  cursor: string | null;
  lastNotificationAt: string | null;
  createdAt: string;
  hasSecret: boolean;
}

export interface ChangeSummary {
  uri: string;
  change: string;
  datetime: string | null;
}

export interface AppliedChange extends ChangeSummary {
  /** created | updated | deleted | unchanged | kept | skipped | failed | covered (an overlap's, before the cursor) */
  outcome: string;
  reason?: string;
}

export type PingKind = 'rss-ping-1.0' | 'rss-ping-2.0' | 'weblogUpdates.ping' | 'weblogUpdates.extendedPing';

export interface PingItem {
  title: string | null;
  link: string | null;
}

export interface Ping {
  kind: PingKind;
  siteName: string | null;
  siteUri: string | null;
  feedUri: string | null;
  items: PingItem[];
  /** RSS 1.0, RSS 2.0, Atom: what the payload of an RSS Ping 2.0 carried. */
  payloadFormat?: string;
}

interface Base {
  /** ISO time of the event. */
  at: string;
}
interface OfSubscription extends Base {
  subscriptionId: number;
  topic: string;
  dest: string;
}

export type LiveEvent =
  | (Base & { type: 'listening'; address: string; callbackBase: string })
  | (OfSubscription & { type: 'subscribing'; hub: string; mode: 'subscribe' | 'unsubscribe'; attempt: number })
  | (OfSubscription & { type: 'subscribed'; hub: string; leaseSeconds: number | null; expiresAt: string | null })
  /**
   * `routine`: nothing changed (the lease granted as before, no failure since, the same callback URL): a feed need
   * not list it (a hub granting leases of seconds is renewed every 10 s); the subscription's row shows when.
   */
  | (OfSubscription & { type: 'renewed'; hub: string; leaseSeconds: number | null; expiresAt: string | null; routine: boolean })
  | (OfSubscription & { type: 'unsubscribed'; hub: string })
  | (OfSubscription & { type: 'denied'; hub: string; reason: string | null })
  /**
   * `foreseen`: the hub grants leases shorter than the least renewal interval (a note said so once), so each lease
   * ends before its renewal; not a failure, and a feed need not list each one.
   */
  | (OfSubscription & { type: 'expired'; hub: string; foreseen: boolean })
  /** `changes`: the first MAX_EVENT_CHANGES (feed.ts) of the `count`. */
  | (OfSubscription & { type: 'notification'; inboxId: number; from: string; until: string; count: number; changes: ChangeSummary[]; warnings: string[] })
  | (OfSubscription & { type: 'duplicate'; inboxId: number; from: string | null; until: string | null; reason: string })
  | (OfSubscription & { type: 'gap'; from: string; until: string; action: 'catch-up' | 'needs-sync' | 'none' })
  | (OfSubscription & {
      type: 'caught-up';
      from: string;
      until: string;
      /** The run whose journal has every change of the catch-up (`rsdesk retry --run`). */
      runId: number;
      created: number;
      updated: number;
      deleted: number;
      failed: number;
      /** The first MAX_EVENT_CHANGES (feed.ts) of its failures, with their reasons; `failed` counts them all. */
      failures: AppliedChange[];
      /** Changes of the gap not fetched because a notification after it changes their resource again (applied next). */
      covered: number;
      /** The first MAX_EVENT_CHANGES of those, each with why. */
      coveredChanges: AppliedChange[];
    })
  | (OfSubscription & {
      type: 'applied';
      inboxIds: number[];
      runId: number;
      created: number;
      updated: number;
      deleted: number;
      unchanged: number;
      /** Not mirrored (a URI on another host than the Source's, or one that maps to no local path), with why. */
      skipped: number;
      failed: number;
      /** At most MAX_EVENT_CHANGES (feed.ts), the failed and skipped ones first; the counts say how many there were. */
      changes: AppliedChange[];
    })
  | (Base & { type: 'ping'; ping: Ping; triggered: string[] })
  | (Base & {
      type: 'rejected';
      what: 'verification' | 'delivery' | 'ping' | 'notification';
      reason: string;
      subscriptionId?: number;
      topic?: string;
      path?: string;
    })
  | (Base & { type: 'sync'; dest: string; reason: string; created: number; updated: number; deleted: number; failed: number })
  | (Base & { type: 'error'; message: string; subscriptionId?: number; dest?: string })
  /**
   * Something a person should know that is no failure: nothing was lost and nothing needs mending (a lease shorter
   * or longer than the engine keeps to, a sync's remark, notifications waiting for another process's lock).
   */
  | (Base & { type: 'note'; message: string; subscriptionId?: number; dest?: string });

export type LiveEventType = LiveEvent['type'];

/** Distributes a union over its members so `Omit` keeps each member's own fields. */
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type LiveEventInput = DistributiveOmit<LiveEvent, 'at'>;
