// The subscriptions of one mirror through their life (WebSub §5): ask the hub, wait for its intent verification,
// renew at ~80 % of the granted lease, back off when the hub fails or never verifies, unsubscribe. Each change is
// written to the mirror's state.sqlite first, so a restart takes every subscription up where it was.
import { randomBytes } from 'node:crypto';
import { clip } from '../clip.ts';
import { backoffMs, MAX_TIMER_MS } from './backoff.ts';
import type { LiveEvents } from './events.ts';
import { askHub, MAX_SECRET_BYTES } from './hub-client.ts';
import type { LiveEventInput, Subscription } from './model.ts';
import type { LiveStore, SubscriptionRow } from './store.ts';
import type { HubGate } from './hub-gate.ts';

export interface SubscriberOptions {
  /** The callback URL for a token (the public URL setting, else the server's own address). */
  callbackUrl: (token: string) => string;
  hubTimeoutMs: number;
  /** How long a hub may take to verify after its 202. */
  verifyTimeoutMs: number;
  retryBaseMs: number;
  /** Renew when this fraction of the lease has passed. */
  renewAt: number;
  /** Least time between a verification and the renewal after it (default MIN_RENEW_MS). */
  minRenewMs?: number;
  /** Most time between a verification and the renewal after it (default MAX_RENEW_MS). */
  maxRenewMs?: number;
  /** Most time a failed renewal waits past the lease's end before it is tried again (default LAPSED_RETRY_MAX_MS). */
  lapsedRetryMaxMs?: number;
  /**
   * Says a verification refused (another topic, a mode not asked for): whoever has the callback URL can send those,
   * so the engine lets only a few a window through (noise.ts). Default: every one is an event.
   */
  discarded?: (input: LiveEventInput) => void;
  /**
   * Why a subscription's hub may not be asked anything (it reaches further inside the network than the mirror's
   * Source: channels.ts), as a phrase, or null. Looked at before every request, so that a subscription stored before
   * this check existed is not renewed (nor asked to end) there either.
   */
  hubRefusal?: (hub: string, topic: string) => string | null;
  /** Bounds the requests in flight to one hub, whichever mirror they are for (the engine's one gate). */
  hubGate?: HubGate;
}

/**
 * A hub may grant any lease, 0 seconds included; renewing at 80 % of that asked it again at once, and the hub
 * verified again at once: a loop of requests as fast as both could go (observed: 18 a second on 127.0.0.1). A
 * renewal waits at least this long after the verification before it.
 */
export const MIN_RENEW_MS = 10_000;

/** WebSub §5.3's recommended longest lease (a month): "non-cancelled subscriptions expire within a foreseeable period". */
export const LONGEST_RECOMMENDED_LEASE_S = 2_678_400;

/**
 * A hub may grant a lease of years (10 digits of hub.lease_seconds are taken: up to 317 years), and renewing at 80 % of
 * it meant never: a hub that restarts or drops its state in the meantime forgets the subscription, and nothing asks it
 * again. A renewal comes at most this long after the verification: 80 % of WebSub's recommended longest lease, about
 * 24.8 days, which also keeps the timer below setTimeout's limit of 2^31-1 ms (past it Node fires after 1 ms).
 */
export const MAX_RENEW_MS = Math.round(LONGEST_RECOMMENDED_LEASE_S * 1000 * 0.8);

/**
 * While a lease has run out the hub sends nothing, and every change it drops is a gap: a renewal that keeps failing
 * (a hub down for hours) is tried again at most this long after the lease's end, however long the backoff has grown.
 * With the backoff's hour, a hub back up waited up to an hour more for the renewal.
 */
export const LAPSED_RETRY_MAX_MS = 300_000;

/** The longest a hub's Retry-After is honoured (as for any request to a hub: backoff.ts). */
const RETRY_AFTER_MAX_MS = 3_600_000;

export interface SubscribeRequest {
  topic: string;
  hub: string;
  leaseSeconds?: number | null;
  /** Default: a fresh random secret. `null`: none (deliveries are then not authenticated). */
  secret?: string | null;
  /** The mirror's position to start from (its checkpoint), for a new subscription. */
  cursor?: string | null;
}

export type VerificationAnswer = { status: number; body: string; reason?: string };

export function publicView(row: SubscriptionRow): Subscription {
  const { callbackToken: _t, secret: _s, pendingMode: _p, ...rest } = row;
  return rest;
}

export class Subscriber {
  readonly #store: LiveStore;
  readonly #events: LiveEvents;
  readonly #o: SubscriberOptions;
  readonly #timers = new Map<number, NodeJS.Timeout>();
  /** Per subscription: the moment its granted lease ends, unless a renewal is verified first. */
  readonly #leaseEnds = new Map<number, NodeJS.Timeout>();
  /** Per token: the callback URL given up when the server moved, whose unsubscription the hub is still to verify. */
  readonly #retiring = new Map<string, { callback: string; topic: string }>();
  /** Subscriptions asked for again at a new callback URL and not yet verified there: that renewal is news. */
  readonly #moved = new Set<number>();
  /** Aborted on close: requests to hubs still unanswered end then, not at their deadline (30 s by default). */
  readonly #stop = new AbortController();
  #closed = false;

  constructor(store: LiveStore, events: LiveEvents, options: SubscriberOptions) {
    this.#store = store;
    this.#events = events;
    this.#o = options;
  }

  #base(row: SubscriptionRow) {
    return { subscriptionId: row.id, topic: row.topic, dest: row.dest };
  }

  async subscribe(r: SubscribeRequest): Promise<Subscription> {
    const secret = r.secret === undefined ? randomBytes(24).toString('base64url') : r.secret;
    if (secret !== null && Buffer.byteLength(secret) > MAX_SECRET_BYTES) throw new Error(`The secret must be shorter than 200 bytes (WebSub §5.1)`);
    new URL(r.topic);
    new URL(r.hub);
    let row = this.#store.byTopic(r.topic, r.hub);
    if (row === null) {
      const token = randomBytes(24).toString('base64url');
      row = this.#store.addSubscription({
        topic: r.topic,
        hub: r.hub,
        callbackToken: token,
        callbackUrl: this.#o.callbackUrl(token),
        secret,
        leaseRequested: r.leaseSeconds ?? null,
        cursor: r.cursor ?? null,
      });
    } else {
      row = this.#store.updateSubscription(row.id, {
        secret: r.secret === undefined ? (row.secret ?? secret) : secret,
        leaseRequested: r.leaseSeconds ?? row.leaseRequested,
        status: row.status === 'active' ? 'active' : 'pending',
        attempts: 0,
        callbackUrl: this.#o.callbackUrl(row.callbackToken),
      });
    }
    await this.#ask(row.id, 'subscribe');
    this.#throwIfClosed(row.hub);
    return publicView(this.#store.subscription(row.id)!);
  }

  /** `timeoutMs`: the request's deadline, when shorter than the usual one is wanted (a program that is stopping). */
  async unsubscribe(id: number, timeoutMs?: number): Promise<Subscription> {
    const row = this.#store.subscription(id);
    if (!row) throw new Error(`No subscription ${id}`);
    if (row.status === 'unsubscribed') return publicView(row);
    this.#store.updateSubscription(id, { status: 'unsubscribing', attempts: 0 });
    await this.#ask(id, 'unsubscribe', timeoutMs);
    this.#throwIfClosed(row.hub);
    return publicView(this.#store.subscription(id)!);
  }

  /** Old callback URLs whose unsubscription the hub has not verified yet. */
  get retiring(): number {
    return this.#retiring.size;
  }

  /** The engine stops serving the old callback URLs: a verification for them can no longer arrive. */
  forgetRetiring(): void {
    this.#retiring.clear();
  }

  /**
   * The callback server moved (another port, another public URL) while running: each subscription is asked for
   * again at once at its new callback URL — the hub would otherwise go on sending to the old one until the next
   * renewal — and the hub is asked to unsubscribe the old one, which it verifies at the old URL (the engine keeps
   * serving it for a while). A subscription being ended keeps its old URL: that is the one to unsubscribe.
   */
  moveCallbacks(): void {
    for (const row of this.#store.subscriptions()) {
      if (row.status === 'unsubscribed' || row.status === 'denied' || row.status === 'unsubscribing') continue;
      // Its hub is asked nothing, the end of the old URL included (restore said why).
      if (this.#o.hubRefusal?.(row.hub, row.topic)) continue;
      const callbackUrl = this.#o.callbackUrl(row.callbackToken);
      if (callbackUrl === row.callbackUrl) continue;
      this.#store.updateSubscription(row.id, { callbackUrl, attempts: 0, nextAttemptAt: null });
      this.#moved.add(row.id);
      void this.#ask(row.id, 'subscribe');
      void this.#retire(row);
    }
  }

  async #retire(row: SubscriptionRow): Promise<void> {
    if (this.#closed) return;
    // Recorded before asking: the hub may verify before its answer to the request reaches us.
    this.#retiring.set(row.callbackToken, { callback: row.callbackUrl, topic: row.topic });
    const answer = await askHub({ hub: row.hub, mode: 'unsubscribe', topic: row.topic, callback: row.callbackUrl, timeoutMs: this.#o.hubTimeoutMs, signal: this.#stop.signal, gate: this.#o.hubGate });
    if (answer.ok || this.#closed) return;
    if (this.#retiring.get(row.callbackToken)?.callback === row.callbackUrl) this.#retiring.delete(row.callbackToken);
    this.#events.emit({
      type: 'error',
      subscriptionId: row.id,
      dest: row.dest,
      message: `The hub could not be asked to stop sending to the old callback URL ${clip(row.callbackUrl)} (${answer.reason}); it stops when that lease ends.`,
    });
  }

  /** Takes every subscription up after a start: renewals scheduled, requests retried, new callback URLs told. */
  restore(): void {
    const now = Date.now();
    for (const row of this.#store.subscriptions()) {
      if (row.status === 'unsubscribed' || row.status === 'denied') continue;
      const refusal = this.#o.hubRefusal?.(row.hub, row.topic) ?? null;
      if (refusal !== null) {
        if (row.status === 'active') this.#watchLeaseEnd(row);
        this.#refused(row, row.status === 'unsubscribing' ? 'unsubscribe' : 'subscribe', refusal);
        continue;
      }
      const callbackUrl = this.#o.callbackUrl(row.callbackToken);
      const moved = callbackUrl !== row.callbackUrl;
      if (moved) this.#store.updateSubscription(row.id, { callbackUrl });
      // A lease that ran out while nothing ran is shown as ended at once, not as live until the hub answers.
      if (row.status === 'active') this.#watchLeaseEnd(row);
      if (row.status === 'unsubscribing') this.#later(row.id, 0, 'unsubscribe');
      else if (row.status === 'active' && !moved && row.expiresAt !== null) this.#scheduleRenewal(this.#store.subscription(row.id)!);
      else {
        const at = row.nextAttemptAt ? Date.parse(row.nextAttemptAt) - now : 0;
        this.#later(row.id, Math.max(0, at), 'subscribe');
      }
    }
  }

  async #ask(id: number, mode: 'subscribe' | 'unsubscribe', timeoutMs = this.#o.hubTimeoutMs): Promise<void> {
    if (this.#closed) return;
    this.#clear(id);
    const stored = this.#store.subscription(id)!;
    const refusal = this.#o.hubRefusal?.(stored.hub, stored.topic) ?? null;
    if (refusal !== null) return this.#refused(stored, mode, refusal);
    let row = this.#store.updateSubscription(id, { pendingMode: mode });
    const attempt = row.attempts + 1;
    this.#events.emit({ type: 'subscribing', ...this.#base(row), hub: row.hub, mode, attempt });
    const answer = await askHub({
      hub: row.hub,
      mode,
      topic: row.topic,
      callback: row.callbackUrl,
      leaseSeconds: row.leaseRequested,
      secret: row.secret,
      timeoutMs,
      signal: this.#stop.signal,
      gate: this.#o.hubGate,
    });
    // Stopped while the hub answered: the mirror's state is closed by now, and reading it threw, unhandled (a renewal
    // runs from a timer), seen when an engine stopped with a renewal in flight.
    if (this.#closed) return;
    row = this.#store.subscription(id)!;
    if (row.pendingMode !== mode) return; // verified (or changed) while we waited for the answer
    if (answer.ok) {
      // Accepted: the hub verifies our intent next. If it never does, ask again later.
      this.#later(id, this.#o.verifyTimeoutMs, mode, 'the hub accepted the request but did not verify it in time');
      return;
    }
    this.#failed(row, mode, answer.reason, answer.retryAfterMs);
  }

  #failed(row: SubscriptionRow, mode: 'subscribe' | 'unsubscribe', reason: string, retryAfterMs: number | null = null): void {
    const attempts = row.attempts + 1;
    const lapsed = row.status === 'active' && row.expiresAt !== null && Date.parse(row.expiresAt) <= Date.now();
    const status = mode === 'unsubscribe' ? 'unsubscribing' : lapsed ? 'expired' : row.status === 'active' ? 'active' : row.status === 'expired' ? 'expired' : 'retrying';
    // A renewal is not tried later than a few minutes past the lease's end, unless the hub asks for that itself.
    const renewing = mode === 'subscribe' && row.verifiedAt !== null && (row.status === 'active' || row.status === 'expired');
    const leaseLeft = renewing && row.expiresAt !== null ? Math.max(0, Date.parse(row.expiresAt) - Date.now()) : null;
    const wait =
      leaseLeft === null
        ? backoffMs(attempts, this.#o.retryBaseMs, retryAfterMs)
        : Math.max(Math.min(backoffMs(attempts, this.#o.retryBaseMs), leaseLeft + (this.#o.lapsedRetryMaxMs ?? LAPSED_RETRY_MAX_MS)), Math.min(retryAfterMs ?? 0, RETRY_AFTER_MAX_MS));
    if (lapsed) this.#events.emit({ type: 'expired', ...this.#base(row), hub: row.hub, foreseen: false });
    this.#store.updateSubscription(row.id, {
      attempts,
      lastError: reason,
      status,
      nextAttemptAt: new Date(Date.now() + wait).toISOString(),
    });
    // A renewal that fails is said as one, with what it puts at stake: before, it read as a first subscription.
    const what = mode === 'unsubscribe' ? 'Unsubscribing from' : renewing ? 'Renewing the subscription to' : 'Subscribing to';
    const stake = !renewing || row.expiresAt === null ? '' : status === 'expired' ? '; its lease has ended, and the hub sends nothing until it is renewed' : `; its lease ends at ${row.expiresAt}`;
    this.#events.emit({ type: 'error', subscriptionId: row.id, dest: row.dest, message: `${what} ${clip(row.topic)} failed (${reason}); trying again in ${wait < 1000 ? 'a moment' : `${Math.round(wait / 1000)} s`}${stake}` });
    this.#later(row.id, wait, mode);
  }

  /**
   * A subscription whose hub may not be asked (stored before the check, or its Source moved): nothing is sent to the
   * hub. It is not dropped unsaid: a renewal stops, the subscription stays listed with why until its lease ends, and
   * unsubscribing ends it here alone.
   */
  #refused(row: SubscriptionRow, mode: 'subscribe' | 'unsubscribe', why: string): void {
    if (mode === 'unsubscribe') {
      this.#store.updateSubscription(row.id, { status: 'unsubscribed', pendingMode: null, expiresAt: null, attempts: 0, nextAttemptAt: null, lastError: null });
      this.#events.emit({
        type: 'note',
        subscriptionId: row.id,
        dest: row.dest,
        message: `Ended the subscription to ${clip(row.topic)} here without asking its hub: ${why}. Whatever the hub sends until its lease ends is refused.`,
      });
      this.#events.emit({ type: 'unsubscribed', ...this.#base(row), hub: row.hub });
      return;
    }
    const message = `Not renewed: ${why}. The subscription was made before this was checked; it stays listed until it is unsubscribed (here alone: the hub is not asked)${row.status === 'active' && row.expiresAt !== null ? `, and its lease ends at ${row.expiresAt}` : ''}.`;
    this.#store.updateSubscription(row.id, { pendingMode: null, nextAttemptAt: null, lastError: message });
    this.#events.emit({ type: 'error', subscriptionId: row.id, dest: row.dest, message });
  }

  #later(id: number, ms: number, mode: 'subscribe' | 'unsubscribe', timeoutReason?: string): void {
    this.#clear(id);
    if (this.#closed) return;
    const timer = setTimeout(() => {
      this.#timers.delete(id);
      const row = this.#store.subscription(id);
      if (!row) return;
      if (timeoutReason !== undefined) {
        if (row.pendingMode !== mode) return;
        return this.#failed(row, mode, timeoutReason);
      }
      void this.#ask(id, mode);
    }, Math.min(ms, MAX_TIMER_MS));
    timer.unref?.();
    this.#timers.set(id, timer);
  }

  /**
   * A lease ends when it ends, whether or not its renewal came through: a lease shorter than the least renewal
   * interval, or a renewal the hub refuses or never verifies, left the subscription shown as active (observed: a
   * 3 s lease read "active" for the 7 s until its renewal), while the hub had stopped sending. At the lease's end
   * the subscription becomes `expired`, and says so, until a verification grants a new lease.
   */
  #watchLeaseEnd(row: SubscriptionRow): void {
    const before = this.#leaseEnds.get(row.id);
    if (before) clearTimeout(before);
    this.#leaseEnds.delete(row.id);
    if (this.#closed || row.status !== 'active' || row.expiresAt === null) return;
    const expiresAt = row.expiresAt;
    const check = () => {
      this.#leaseEnds.delete(row.id);
      if (this.#closed) return;
      const now = this.#store.subscription(row.id);
      if (!now || now.status !== 'active' || now.expiresAt !== expiresAt) return;
      const left = Date.parse(expiresAt) - Date.now();
      if (left > 0) return this.#watchLeaseEnd(now); // a timer capped at MAX_TIMER_MS, or one that fired early
      this.#store.updateSubscription(row.id, { status: 'expired' });
      const foreseen = now.leaseSeconds !== null && now.leaseSeconds * 1000 * this.#o.renewAt < (this.#o.minRenewMs ?? MIN_RENEW_MS);
      this.#events.emit({ type: 'expired', ...this.#base(now), hub: now.hub, foreseen });
    };
    const timer = setTimeout(check, Math.min(Math.max(0, Date.parse(expiresAt) - Date.now()), MAX_TIMER_MS));
    timer.unref?.();
    this.#leaseEnds.set(row.id, timer);
  }

  #scheduleRenewal(row: SubscriptionRow): void {
    if (row.expiresAt === null || row.leaseSeconds === null) return;
    this.#watchLeaseEnd(row);
    const expires = Date.parse(row.expiresAt);
    const renewAt = expires - row.leaseSeconds * 1000 * (1 - this.#o.renewAt);
    const verifiedAt = row.verifiedAt === null ? Date.now() : Date.parse(row.verifiedAt);
    const latest = Math.min(renewAt, verifiedAt + (this.#o.maxRenewMs ?? MAX_RENEW_MS));
    const wait = Math.max(latest, verifiedAt + (this.#o.minRenewMs ?? MIN_RENEW_MS)) - Date.now();
    if (wait > MAX_TIMER_MS) {
      this.#clear(row.id);
      const timer = setTimeout(() => this.#scheduleRenewal(this.#store.subscription(row.id)!), MAX_TIMER_MS);
      timer.unref?.();
      this.#timers.set(row.id, timer);
      return;
    }
    this.#later(row.id, Math.max(0, wait), 'subscribe');
  }

  /** The hub's intent verification (WebSub §5.3) or denial (§5.2) for the subscription with this token. */
  verify(row: SubscriptionRow, query: URLSearchParams): VerificationAnswer {
    const mode = query.get('hub.mode');
    const topic = query.get('hub.topic');
    const refuse = (reason: string): VerificationAnswer => {
      const said = { type: 'rejected', what: 'verification', reason, subscriptionId: row.id, topic: row.topic } as const;
      if (this.#o.discarded) this.#o.discarded(said);
      else this.#events.emit(said);
      return { status: 404, body: 'No such subscription request\n', reason };
    };
    if (topic !== row.topic) return refuse(`a verification for topic ${clip(topic ?? '(none)')}, which is not this subscription's topic ${clip(row.topic)}`);
    if (mode === 'denied') {
      if (row.status === 'unsubscribed') return refuse('a denial for a subscription that has ended');
      const reason = query.get('hub.reason');
      this.#clear(row.id);
      this.#store.updateSubscription(row.id, { status: 'denied', pendingMode: null, lastError: reason ? clip(reason, 500) : 'denied by the hub' });
      this.#events.emit({ type: 'denied', ...this.#base(row), hub: row.hub, reason: reason ? clip(reason, 500) : null });
      return { status: 200, body: 'ok\n' };
    }
    if (mode !== 'subscribe' && mode !== 'unsubscribe') return refuse(`a verification with hub.mode=${clip(mode ?? '(none)', 40)}`);
    const retired = this.#retiring.get(row.callbackToken);
    if (mode === 'unsubscribe' && row.pendingMode !== 'unsubscribe' && retired !== undefined) {
      // The hub confirms it stops using the callback URL given up when the server moved; the subscription itself
      // goes on at its new URL.
      const challenge = query.get('hub.challenge');
      if (challenge === null || challenge === '') return refuse('a verification without hub.challenge');
      this.#retiring.delete(row.callbackToken);
      return { status: 200, body: challenge };
    }
    if (row.pendingMode !== mode) {
      return refuse(`a verification to ${mode} ${clip(row.topic)}, which we did not ask for${row.pendingMode ? ` (we asked to ${row.pendingMode})` : ''}`);
    }
    const challenge = query.get('hub.challenge');
    if (challenge === null || challenge === '') return refuse('a verification without hub.challenge');
    this.#clear(row.id);
    if (mode === 'unsubscribe') {
      this.#store.updateSubscription(row.id, { status: 'unsubscribed', pendingMode: null, expiresAt: null, attempts: 0, nextAttemptAt: null });
      this.#events.emit({ type: 'unsubscribed', ...this.#base(row), hub: row.hub });
      return { status: 200, body: challenge };
    }
    const leaseText = query.get('hub.lease_seconds');
    const lease = leaseText !== null && /^\d{1,10}$/.test(leaseText) ? Number(leaseText) : (row.leaseRequested ?? null);
    const now = Date.now();
    // A lease that ran out before this verification is renewed all the same: same subscription, same callback.
    const renewal = row.verifiedAt !== null && (row.status === 'active' || row.status === 'expired');
    const updated = this.#store.updateSubscription(row.id, {
      status: 'active',
      pendingMode: null,
      leaseSeconds: lease,
      verifiedAt: new Date(now).toISOString(),
      expiresAt: lease === null ? null : new Date(now + lease * 1000).toISOString(),
      attempts: 0,
      nextAttemptAt: null,
      lastError: null,
    });
    const granted = { ...this.#base(updated), hub: updated.hub, leaseSeconds: lease, expiresAt: updated.expiresAt };
    const least = this.#o.minRenewMs ?? MIN_RENEW_MS;
    const moved = this.#moved.delete(row.id);
    // Nothing new: the same lease as before, no failure since, the lease still running (or, for a hub whose leases
    // end before their renewal, ended as foreseen), at the same callback URL.
    const foreseenEnd = row.leaseSeconds !== null && row.leaseSeconds * 1000 * this.#o.renewAt < least;
    const routine = renewal && !moved && row.attempts === 0 && row.leaseSeconds === lease && (row.status === 'active' || foreseenEnd);
    this.#events.emit(renewal ? { type: 'renewed', ...granted, routine } : { type: 'subscribed', ...granted });
    // Said once per lease granted, not at every renewal.
    if (lease !== null && lease * 1000 * this.#o.renewAt < least && (!renewal || row.leaseSeconds !== lease)) {
      this.#events.emit({
        type: 'note',
        subscriptionId: row.id,
        dest: row.dest,
        message:
          `The hub ${clip(row.hub)} granted a lease of ${lease} second${lease === 1 ? '' : 's'} (WebSub recommends at least 300): the subscription is renewed every ${Math.round(least / 1000)} s instead, ` +
          'and notifications the hub drops while the lease has run out leave a gap, filled from the Change List.',
      });
    }
    const most = this.#o.maxRenewMs ?? MAX_RENEW_MS;
    if (lease !== null && lease * 1000 * this.#o.renewAt > most && (!renewal || row.leaseSeconds !== lease)) {
      this.#events.emit({
        type: 'note',
        subscriptionId: row.id,
        dest: row.dest,
        message:
          `The hub ${clip(row.hub)} granted a lease of ${lease.toLocaleString('en')} seconds (${spellDuration(lease * 1000)}; WebSub recommends at most ${LONGEST_RECOMMENDED_LEASE_S.toLocaleString('en')}, a month): ` +
          `the subscription is renewed every ${spellDuration(most)} all the same, so that a hub that forgets it (a restart, lost state) is asked again in time.`,
      });
    }
    // Renewal is scheduled once this answer is out (a hub may deliver right after it).
    setImmediate(() => {
      if (!this.#closed) this.#scheduleRenewal(this.#store.subscription(row.id)!);
    });
    return { status: 200, body: challenge };
  }

  #clear(id: number): void {
    const timer = this.#timers.get(id);
    if (timer) clearTimeout(timer);
    this.#timers.delete(id);
  }

  /** Stopped while the hub was asked: the mirror's state is closed (reading it threw "statement has been finalized"). */
  #throwIfClosed(hub: string): void {
    if (this.#closed) throw new Error(`The live engine stopped before the hub ${clip(hub)} answered`);
  }

  close(): void {
    this.#closed = true;
    this.#stop.abort();
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    for (const timer of this.#leaseEnds.values()) clearTimeout(timer);
    this.#leaseEnds.clear();
  }
}

/** A duration as a person says it: seconds, hours or days, one decimal at most. */
function spellDuration(ms: number): string {
  const say = (n: number, unit: string) => {
    const r = Math.round(n * 10) / 10;
    return `${r.toLocaleString('en')} ${unit}${r === 1 ? '' : 's'}`;
  };
  if (ms < 120_000) return say(ms / 1000, 'second');
  if (ms < 2 * 86_400_000) return say(ms / 3_600_000, 'hour');
  if (ms < 2 * 365 * 86_400_000) return say(ms / 86_400_000, 'day');
  return say(ms / (365.25 * 86_400_000), 'year');
}
