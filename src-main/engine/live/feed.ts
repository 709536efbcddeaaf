// One mirror's live side: its subscriptions (Subscriber), the deliveries they receive (receiver.ts → inbox), and
// the path from a stored delivery to the mirror: read the payload, drop exact duplicates, put it in order
// (Sequencer), fill gaps from the Change List, apply (apply-live.ts). Notifications of one subscription are
// processed one at a time; everything that writes the mirror goes through one queue.
import { createHash } from 'node:crypto';
import { clip } from '../clip.ts';
import { formatBytes, HttpStatusError } from '../http/errors.ts';
import { parseW3cDatetime } from '../documents/datetime.ts';
import { CLOCK_SLACK_MS } from '../mirror/change-timeline.ts';
import { Http } from '../http/client.ts';
import type { DeletePolicy } from '../mirror/apply.ts';
import { Fetcher } from '../mirror/fetcher.ts';
import { MirrorLockedError } from '../mirror/lock.ts';
import type { SecretStore } from '../mirror/secrets.ts';
import { accessOf, secretKey, sourceHeadersOf, type Credentials, type SourceSettings } from '../mirror/settings.ts';
import { MirrorState, stateDirOf, type RunCounts } from '../mirror/state.ts';
import { reclaimSpace } from '../mirror/reclaim.ts';
import { applyBatch, catchUp, DiskHeldError, SourceHeldError, syncFromCheckpoint, type MirrorContext, type Taken } from './apply-live.ts';
import { clock } from '../mirror/refusal-watch.ts';
import { DiskRoom, type DiskLowError, type DiskRoomOptions } from './disk-room.ts';
import type { LiveEvents } from './events.ts';
import type { AppliedChange, LiveEventInput, Subscription } from './model.ts';
import { readNotification } from './payload.ts';
import { linkWarnings, receiveDelivery, type Delivery, type DeliveryAnswer } from './receiver.ts';
import { hubFurtherInside, hubNotAsked } from './channels.ts';
import { Sequencer, type Step } from './sequencer.ts';
import { LiveStore, type SubscriptionRow } from './store.ts';
import { publicView, Subscriber, type SubscribeRequest, type SubscriberOptions, type VerificationAnswer } from './subscriber.ts';

export interface FeedOptions {
  /** Apply notifications to the mirror (else they are only read, ordered and reported). */
  apply: boolean;
  deletePolicy: DeletePolicy;
  /** An RSS Ping naming this mirror's Source starts an incremental sync. */
  pingSync: boolean;
  /**
   * Least time between the starts of two syncs that pings ask for; pings in between are answered by one sync at its
   * end. Anyone may ping: a flood of pings must not have the Source's Change List read back to back. Default 60 s.
   */
  pingSyncIntervalMs?: number;
  /** How long a notification waits for the ones before it before the hole counts as a gap. */
  reorderWaitMs: number;
  concurrency: number;
  /** Wait before trying again when another process holds the mirror's lock. */
  lockRetryMs: number;
  batchSize?: number;
  /** Where the mirror's credentials are kept (the same store its syncs use); without one none are sent. */
  secretStore?: SecretStore;
  /** Credentials a caller gives the mirror now (the app: its Settings token), asked again before each batch. */
  givenCredentials?: GivenCredentials;
  /** How the free space of the mirror's disk is read (disk-room.ts; tests give their own), and how often it is read
   * again while notifications wait for room (default 30 s). */
  diskSpace?: DiskRoomOptions & { recheckMs?: number; inboxBytes?: number };
  /** The most the inbox holds waiting to be applied (default MAX_PENDING). */
  maxPending?: { notifications: number; bytes: number };
  /**
   * The longest Retry-After a batch waits out and asks again (default 120 s, as a sync's fetcher): a longer one holds
   * the mirror's notifications in the inbox until it ends (SourceHeldError).
   */
  maxRetryAfterMs?: number;
  /**
   * Says a delivery discarded before it was kept (a wrong or missing signature, a downgrade, another topic, an ended
   * subscription): whoever has the callback URL can send those, so the engine lets only a few a window through
   * (noise.ts). Default: every one is an event.
   */
  discarded?: (input: LiveEventInput) => void;
}

/**
 * The most notifications (and bytes of them) the inbox holds waiting to be applied, for one mirror. Past it a
 * delivery is answered 503 with Retry-After, which a hub takes as "send it again later"; what it gives up on is
 * a gap, read from the Change List. Without a bound a hub (or anyone, for a subscription without a secret) sending
 * faster than the Source's resources can be fetched filled the disk and, read ahead into memory, the memory.
 */
export const MAX_PENDING = { notifications: 10_000, bytes: 32 * 1024 * 1024 };
/** What a hub is asked to wait before sending again when the inbox is full. */
const FULL_RETRY_AFTER_S = 30;

/**
 * While the disk is below its reserve, deliveries are still stored until the bodies waiting in the inbox hold this
 * much; past it they are answered 503 (send again later). Notifications are a few kilobytes: a short spell of low
 * space loses none of them. A flood of large bodies, which could fill the disk the reserve keeps free, is refused.
 */
export const LOW_DISK_INBOX_BYTES = 16 * 1024 * 1024;
/** How long live applying waits for a Source that refused for the mirror's limit without saying how long to wait. */
const SOURCE_HOLD_MS = 5 * 60_000;
/**
 * The longest a Source's Retry-After holds live applying: past it one batch asks again (and is held again if still
 * refused). As for the schedule (SOURCE_WAIT_MAX_MS, app/schedule.ts): "a year" does not stop a mirror for good.
 */
const SOURCE_HOLD_MAX_MS = 7 * 24 * 3_600_000;
/** How long the disk's state, once read, answers for the deliveries that follow (they can come by the thousand). */
const DISK_SEEN_MS = 1_000;
/** The live feed says that deliveries are being refused at most this often. */
const REFUSAL_EVENT_MS = 60_000;

/** Credentials given for a mirror with these settings; undefined: those it keeps. */
export type GivenCredentials = (settings: SourceSettings | undefined) => Credentials | undefined;

interface SubState {
  seq: Sequencer<Taken>;
  /** Inbox rows already read into the sequencer (or being resumed). */
  known: Set<number>;
  /** The highest inbox id read so far. */
  lastId: number;
  chain: Promise<void>;
  /** A read is chained and has not started: another request to read is already answered by it. */
  readQueued: boolean;
  timer: NodeJS.Timeout | null;
}

/** Notifications taken in order and queued to be applied as one run, not started yet (more may join it). */
interface OpenBatch {
  items: Taken[];
  coveredBeforeMs: number | null;
  /** When it was opened (performance.now()). */
  openedAt: number;
}

/**
 * The most notifications one batch takes in: while a batch is being applied, what is taken meanwhile joins the next
 * one (one run, one lock, a few commits for all of them), so a burst is applied in a few large batches instead of
 * one run per notification; this bounds how much one run holds.
 */
export const MAX_BATCH_NOTIFICATIONS = 500;

/**
 * While deliveries keep arriving (one within QUIET_MS), a batch about to start waits for more to join it, up to
 * LINGER_MS after it was opened. Applying a batch costs a few durable commits, which hold up the callback server's
 * thread; applying a burst in a few batches instead of one per delivery is what lets it keep up. A lone notification
 * waits QUIET_MS at most.
 */
export const QUIET_MS = 2;

/**
 * The most changes one `notification` or `applied` event lists. A notification of 10 MB holds some 150,000; listed
 * whole, each such event held about 20 MB in the events kept for views that open late (1,000 of them), and went so
 * to every view: a hub sending a few dozen filled the memory.
 */
export const MAX_EVENT_CHANGES = 500;
export const LINGER_MS = 50;

export class MirrorFeed {
  readonly dest: string;
  readonly state: MirrorState;
  readonly store: LiveStore;
  readonly subscriber: Subscriber;
  readonly options: FeedOptions;
  readonly #events: LiveEvents;
  #ctx: MirrorContext;
  /** What the clients in #ctx were made for (binding settings, kept secret, given credentials), as a digest. */
  #accessKey = '';
  readonly #sharedHttp: Http;
  readonly #subs = new Map<number, SubState>();
  /** Per subscription: the batch queued last, while it has not started. */
  readonly #open = new Map<number, OpenBatch>();
  #writes: Promise<void> = Promise.resolve();
  #pendingWrites = 0;
  /** When the last delivery was stored (performance.now()). */
  #lastDelivery = 0;
  /** Reads scheduled but not yet chained (idle() must wait for them too). */
  #scheduled = 0;
  #closed = false;
  #ownHttp: Http | null;
  #syncing = false;
  #syncAgain = false;
  /** When the last sync a ping asked for started (Date.now()), and the timer of the next one, held back. */
  #lastPingSyncAt = Number.NEGATIVE_INFINITY;
  #pingTimer: NodeJS.Timeout | null = null;
  readonly #disk: DiskRoom;
  /** Subscriptions whose notifications wait in the inbox for room on the disk, with the timer that looks again. */
  readonly #held = new Map<number, NodeJS.Timeout | null>();
  /**
   * Subscriptions whose notifications wait in the inbox for the end of the Source's Retry-After (SourceHeldError),
   * with the timer that takes them up then. Deliveries are still received and stored meanwhile.
   */
  readonly #sourceHeld = new Map<number, NodeJS.Timeout | null>();
  #rechecking = false;
  /** The disk's state when last read for a delivery (performance.now()). */
  #diskSeen: { at: number; low: DiskLowError | null } | null = null;
  /** When the feed last said deliveries are refused (performance.now()), and how many were since. */
  #refusalSaidAt = Number.NEGATIVE_INFINITY;
  #refusedSince = 0;
  /** Bytes of the deliveries let in and not yet stored (see deliver), and how many they are. */
  #storing = 0;
  #storingCount = 0;
  /** What the inbox held waiting when last read (with what was being stored then), and what was let in since. */
  #pendingSeen: { at: number; count: number; bytes: number } | null = null;
  #admitted = { count: 0, bytes: 0 };
  /** When the feed last said deliveries are refused for a full inbox (performance.now()), and how many were since. */
  #fullSaidAt = Number.NEGATIVE_INFINITY;
  #fullSince = 0;
  /** When the inbox's old bodies were last dropped (Date.now()). */
  #prunedAt = Number.NEGATIVE_INFINITY;
  /** The prune under way, if any (closing waits for it to stop at its next step). */
  #pruning: Promise<void> | null = null;

  constructor(dest: string, events: LiveEvents, http: Http, options: FeedOptions, subscriberOptions: SubscriberOptions) {
    this.dest = dest;
    this.options = options;
    this.#events = events;
    const stateDir = stateDirOf(dest);
    this.state = new MirrorState(stateDir);
    this.store = new LiveStore(this.state.db, dest, this.state.path);
    // The mirror's Source judges its hubs at every request, as at subscribing (see subscribe below).
    const hubRefusal = (hub: string, topic: string) => hubNotAsked(hub, this.#sourceOf(topic));
    this.subscriber = new Subscriber(this.store, events, { ...subscriberOptions, hubRefusal });
    // Notified resources (and a gap's catch-up) are fetched as a sync of this mirror fetches them: with its own
    // settings, and its credentials for its Source's origin only.
    this.#sharedHttp = http;
    const access = this.#access(options.secretStore);
    const fetcher = new Fetcher({ concurrency: options.concurrency, maxRetryAfterMs: options.maxRetryAfterMs, ...access?.fetcher });
    this.#ownHttp = access ? new Http(access.http) : null;
    this.#disk = new DiskRoom(dest, options.diskSpace);
    this.#ctx = { dest, stateDir, state: this.state, store: this.store, fetcher, http: this.#ownHttp ?? http, deletePolicy: options.deletePolicy, concurrency: options.concurrency, batchSize: options.batchSize, disk: this.#disk,
      // The only way a ping's sync (or a catch-up) can speak: said as a note, not as a failure.
      onNote: (message) => void this.#events.emit({ type: 'note', dest, message }) };
    this.#accessKey = this.#currentAccessKey();
  }

  /** A digest of what the mirror's requests are sent with now: its binding's settings, its kept secret, what is given. */
  #currentAccessKey(): string {
    const binding = this.state.binding();
    const given = this.options.givenCredentials?.(binding?.settings);
    const secret = binding?.id && this.options.secretStore ? this.options.secretStore.get(secretKey(binding.id)) : null;
    return createHash('sha256').update(JSON.stringify([binding?.settings ?? null, binding?.id ?? null, given ?? null, secret])).digest('hex');
  }

  /**
   * Before each batch (and catch-up, and ping sync): when the credentials or settings changed since the clients were
   * made (a token or password added or changed while subscribed), new clients are made with them. Jobs run one at a
   * time (#write), so the old clients are idle and closed here.
   */
  async #freshContext(): Promise<MirrorContext> {
    const key = this.#currentAccessKey();
    if (key === this.#accessKey) return this.#ctx;
    const old = { fetcher: this.#ctx.fetcher, http: this.#ownHttp };
    const access = this.#access(this.options.secretStore);
    this.#ownHttp = access ? new Http(access.http) : null;
    this.#ctx = { ...this.#ctx, fetcher: new Fetcher({ concurrency: this.options.concurrency, maxRetryAfterMs: this.options.maxRetryAfterMs, ...access?.fetcher }), http: this.#ownHttp ?? this.#sharedHttp };
    // After #access, which may have kept a given secret: the digest of what the clients now hold.
    this.#accessKey = this.#currentAccessKey();
    await old.fetcher.close();
    await old.http?.close();
    return this.#ctx;
  }

  /** Restores subscriptions and takes up every delivery that was stored but not yet settled. */
  start(): void {
    this.subscriber.restore();
    this.#prune();
    for (const row of this.store.subscriptions()) {
      // Batches interrupted while being applied: resumed as the same runs, before anything newer.
      const applying = this.store.open(row.id).filter((r) => r.status === 'applying');
      const byRun = new Map<number, number[]>();
      for (const r of applying) byRun.set(r.runId ?? -1, [...(byRun.get(r.runId ?? -1) ?? []), r.id]);
      const sub = this.#sub(row);
      for (const [runId, ids] of byRun) {
        for (const id of ids) sub.known.add(id);
        sub.chain = sub.chain.then(() => this.#resume(row.id, runId, ids));
      }
      // Held for the Source when the live side stopped: held until the same time, not asked again at once.
      const until = Date.parse(this.state.liveSourceWaits()[String(row.id)] ?? '');
      if (until > Date.now()) this.#waitForSource(row.id, until);
      else this.process(row.id);
    }
  }

  subscriptions(): Subscription[] {
    return this.store.subscriptions().map(publicView);
  }

  subscribe(r: SubscribeRequest): Promise<Subscription> {
    const refusal = hubFurtherInside(r.hub, this.#sourceOf(r.topic));
    if (refusal !== null) return Promise.reject(new Error(refusal));
    return this.subscriber.subscribe({ ...r, cursor: r.cursor ?? startCursor(this.state.checkpoint()?.at ?? null) });
  }

  /** Where the mirror's Source is, for judging its hubs: its Capability List, else its URL, else the topic. */
  #sourceOf(topic: string): string {
    const binding = this.state.binding();
    return binding?.capabilityListUrl ?? binding?.url ?? topic;
  }

  unsubscribe(id: number, timeoutMs?: number): Promise<Subscription> {
    return this.subscriber.unsubscribe(id, timeoutMs);
  }

  byToken(token: string): SubscriptionRow | null {
    return this.store.byToken(token);
  }

  verify(row: SubscriptionRow, query: URLSearchParams): VerificationAnswer {
    return this.subscriber.verify(row, query);
  }

  async deliver(row: SubscriptionRow, delivery: Delivery): Promise<DeliveryAnswer> {
    const refused = await this.#noRoomFor(row, delivery.body.length);
    if (refused !== null) return refused;
    let answer: DeliveryAnswer;
    try {
      answer = await receiveDelivery(this.store, this.options.discarded ?? ((e) => void this.#events.emit(e)), row, delivery);
    } finally {
      this.#storing -= delivery.body.length;
      this.#storingCount--;
    }
    // Processing starts once the answer is on its way.
    if (answer.inboxId !== undefined) {
      this.#lastDelivery = performance.now();
      this.#scheduled++;
      setImmediate(() => {
        this.#scheduled--;
        this.process(row.id);
      });
    }
    return answer;
  }

  /**
   * A 503 when the disk is below its reserve and the inbox already holds its share of waiting bodies; else null, and
   * the delivery's bytes count as being stored until deliver takes them off.
   */
  async #noRoomFor(row: SubscriptionRow, bytes: number): Promise<DeliveryAnswer | null> {
    const now = performance.now();
    if (this.#diskSeen === null || now - this.#diskSeen.at >= DISK_SEEN_MS) this.#diskSeen = { at: now, low: await this.#disk.check() };
    const low = this.#diskSeen.low;
    // Let in, it counts as waiting from now (deliver takes it off once stored): the inbox counts it only once it is
    // committed, and deliveries that come together would otherwise each find the inbox as it was before any of them.
    const admit = (): null => {
      this.#storing += bytes;
      this.#storingCount++;
      this.#admitted.count++;
      this.#admitted.bytes += bytes;
      return null;
    };
    if (this.#inboxFull(now, bytes)) return this.#refuseFull(row, now);
    // Refusals not yet said (the events are at least a minute apart) are said at the next delivery after that.
    if (this.#fullSince > 0 && now - this.#fullSaidAt >= REFUSAL_EVENT_MS) this.#sayFull(row, now);
    if (low === null) return admit();
    const share = this.options.diskSpace?.inboxBytes ?? LOW_DISK_INBOX_BYTES;
    if (this.store.pendingBodyBytes() + this.#storing + bytes <= share) return admit();
    this.#refusedSince++;
    if (now - this.#refusalSaidAt >= REFUSAL_EVENT_MS) {
      this.#events.emit({
        type: 'rejected',
        what: 'delivery',
        reason:
          `${this.#refusedSince.toLocaleString('en')} notification${this.#refusedSince === 1 ? ' was' : 's were'} not stored: the disk holding ${this.dest} has only ${formatBytes(Math.max(0, low.free))} free ` +
          `(less than the ${formatBytes(low.reserve)} kept for the rest of the computer), and while it is this low the inbox keeps at most ${formatBytes(share)} of notifications waiting to be applied. ` +
          'The hub was asked to send again later; what it gives up on is read from the Change List once there is room.',
        subscriptionId: row.id,
        topic: row.topic,
      });
      this.#refusalSaidAt = now;
      this.#refusedSince = 0;
    }
    return { status: 503, body: 'Not enough free disk space to store this notification now; please send it again later.\n', headers: { 'retry-after': '300' } };
  }

  /**
   * Whether one more delivery of `bytes` would take the inbox past its bound. What was read last, plus what was let
   * in since, is an upper bound (rows applied since are not taken off); read again when over it, or once a second.
   */
  #inboxFull(now: number, bytes: number): boolean {
    const max = this.options.maxPending ?? MAX_PENDING;
    const over = (seen: { count: number; bytes: number }) =>
      seen.count + this.#admitted.count + 1 > max.notifications || seen.bytes + this.#admitted.bytes + bytes > max.bytes;
    if (this.#pendingSeen !== null && now - this.#pendingSeen.at < DISK_SEEN_MS && !over(this.#pendingSeen)) return false;
    const pending = this.store.pending();
    this.#pendingSeen = { at: now, count: pending.count + this.#storingCount, bytes: pending.bytes + this.#storing };
    this.#admitted = { count: 0, bytes: 0 };
    return over(this.#pendingSeen);
  }

  #refuseFull(row: SubscriptionRow, now: number): DeliveryAnswer {
    this.#fullSince++;
    if (now - this.#fullSaidAt >= REFUSAL_EVENT_MS) this.#sayFull(row, now);
    return { status: 503, body: 'Too many notifications wait to be applied; please send this one again later.\n', headers: { 'retry-after': String(FULL_RETRY_AFTER_S) } };
  }

  #sayFull(row: SubscriptionRow, now: number): void {
    const max = this.options.maxPending ?? MAX_PENDING;
    const seen = this.#pendingSeen!;
    const n = this.#fullSince;
    this.#events.emit({
      type: 'rejected',
      what: 'delivery',
      reason:
        `${n.toLocaleString('en')} notification${n === 1 ? ' was' : 's were'} not stored: the inbox of ${this.dest} keeps at most ${max.notifications.toLocaleString('en')} notifications ` +
        `(${formatBytes(max.bytes)}) waiting to be applied, and ${seen.count.toLocaleString('en')} (${formatBytes(seen.bytes)}) were waiting. They come faster than they can be applied. ` +
        'The hub was asked to send them again later; any it gives up on leave a gap, filled from the Change List (or by the next sync).',
      subscriptionId: row.id,
      topic: row.topic,
    });
    this.#fullSaidAt = now;
    this.#fullSince = 0;
  }

  #sub(row: SubscriptionRow): SubState {
    let sub = this.#subs.get(row.id);
    if (!sub) {
      sub = { seq: new Sequencer<Taken>(row.cursor ? parseW3cDatetime(row.cursor) : null), known: new Set(), lastId: 0, chain: Promise.resolve(), readQueued: false, timer: null };
      this.#subs.set(row.id, sub);
    }
    return sub;
  }

  /** Reads whatever this subscription has received and not read yet. */
  process(subscriptionId: number): void {
    if (this.#closed) return;
    // Waiting for room: what arrives stays in the inbox; a delivery is a moment to look at the disk again.
    if (this.#held.has(subscriptionId)) return void this.#recheck();
    // Waiting for the Source: what arrives stays in the inbox, and is read in order when the wait is over.
    if (this.#sourceHeld.has(subscriptionId)) return;
    let sub = this.#subs.get(subscriptionId);
    if (sub?.readQueued) return;
    const row = this.store.subscription(subscriptionId);
    if (!row) return;
    sub ??= this.#sub(row);
    const queued = sub;
    queued.readQueued = true;
    // The read takes everything stored when it starts (and what is stored while it runs): one read per burst.
    sub.chain = sub.chain
      .then(() => {
        queued.readQueued = false;
        return this.#read(subscriptionId);
      })
      .catch((err: unknown) => this.#error(err, row));
  }

  async #read(subscriptionId: number): Promise<void> {
    if (this.#closed) return;
    const row = this.store.subscription(subscriptionId)!;
    const sub = this.#sub(row);
    const capabilityListUrl = this.state.binding()?.capabilityListUrl ?? null;
    for (let batch = this.store.received(subscriptionId, sub.lastId); batch.length > 0; batch = this.store.received(subscriptionId, sub.lastId)) {
     for (const inbox of batch) {
      // Set aside (#hold): the inbox is read again from the cursor once there is room.
      if (this.#closed || this.#subs.get(subscriptionId) !== sub) return;
      sub.lastId = Math.max(sub.lastId, inbox.id);
      if (sub.known.has(inbox.id)) continue;
      sub.known.add(inbox.id);
      const base = { subscriptionId, topic: row.topic, dest: this.dest, inboxId: inbox.id };
      if (this.store.seenBefore(subscriptionId, inbox.sha256, inbox.id)) {
        this.store.setInbox([inbox.id], { status: 'duplicate', reason: 'the same payload was received before' });
        this.#events.emit({ type: 'duplicate', ...base, from: null, until: null, reason: 'the same payload was received before; dropped' });
        continue;
      }
      const parsed = await readNotification(inbox.body ?? new Uint8Array(), `${row.topic} (delivery ${inbox.id})`);
      if (!parsed.ok) {
        this.store.setInbox([inbox.id], { status: 'rejected', reason: parsed.reason });
        this.#events.emit({ type: 'rejected', what: 'notification', reason: parsed.reason, subscriptionId, topic: row.topic });
        continue;
      }
      const n = parsed.notification;
      const late = futureReason(n.until, n.untilMs, inbox.receivedAt);
      if (late !== null) {
        this.store.setInbox([inbox.id], { status: 'rejected', reason: late });
        this.#events.emit({ type: 'rejected', what: 'notification', reason: late, subscriptionId, topic: row.topic });
        continue;
      }
      // Nothing is written here: a row stays `received` until it is applied (or dropped), so the event is not
      // held up by another commit; a restart reads it again.
      this.#events.emit({
        type: 'notification',
        ...base,
        from: n.from,
        until: n.until,
        count: n.changes.length,
        changes: n.changes.slice(0, MAX_EVENT_CHANGES).map((c) => ({ uri: c.uri, change: c.change, datetime: c.datetime })),
        warnings: [...linkWarnings(inbox.link, row, capabilityListUrl), ...n.findings.map((f) => f.message)],
      });
      this.#steps(row, sub, sub.seq.add({ fromMs: n.fromMs, untilMs: n.untilMs, item: { inboxId: inbox.id, notification: n } }));
     }
    }
    this.#arm(row, sub);
  }

  /** Keeps a timer running while notifications wait for their predecessors. */
  #arm(row: SubscriptionRow, sub: SubState): void {
    if (sub.timer) clearTimeout(sub.timer);
    sub.timer = null;
    const since = sub.seq.waitingSince;
    if (since === null || this.#closed) return;
    sub.timer = setTimeout(() => {
      sub.timer = null;
      if (this.#closed) return;
      sub.chain = sub.chain
        .then(() => {
          this.#steps(row, sub, sub.seq.expire());
          this.#arm(row, sub);
        })
        .catch((err: unknown) => this.#error(err, row));
    }, Math.max(0, since + this.options.reorderWaitMs - Date.now()));
  }

  #steps(row: SubscriptionRow, sub: SubState, steps: Step<Taken>[]): void {
    if (this.#subs.get(row.id) !== sub) return;
    // Jobs queued from a reading that was set aside while they waited (#hold) do nothing: their rows are read again.
    const current = () => this.#subs.get(row.id) === sub && !this.#held.has(row.id) && !this.#sourceHeld.has(row.id);
    const base = { subscriptionId: row.id, topic: row.topic, dest: this.dest };
    for (const step of steps) {
      if (step.kind === 'covered') {
        const n = step.item.item.notification;
        // It came all the same: the subscription's last notification is this one ("none yet" stayed in the app
        // while every notification a mirror got was covered by a sync or a catch-up before it arrived).
        this.store.transaction(() => {
          this.store.setInbox([step.item.item.inboxId], { status: 'covered', fromAt: n.from, untilAt: n.until, reason: 'everything it says was covered already' });
          this.store.updateSubscription(row.id, { lastNotificationAt: new Date().toISOString() });
        });
        this.#events.emit({ type: 'duplicate', ...base, inboxId: step.item.item.inboxId, from: n.from, until: n.until, reason: 'its interval was covered already (by an earlier notification or a catch-up); dropped' });
      } else if (step.kind === 'gap') {
        const from = new Date(step.fromMs).toISOString();
        const until = new Date(step.untilMs).toISOString();
        const changeListUrl = this.state.binding()?.changeListUrl ?? null;
        const action = !this.options.apply ? 'none' : changeListUrl ? 'catch-up' : 'needs-sync';
        this.#events.emit({ type: 'gap', ...base, from, until, action });
        // The catch-up runs after what is queued before it; nothing taken later may join a batch ahead of it.
        this.#open.delete(row.id);
        // The notifications after it, applied next: the catch-up leaves the resources they change again to them.
        const later = steps.slice(steps.indexOf(step) + 1).flatMap((s) => (s.kind === 'take' ? s.items.map((i) => i.item) : []));
        if (action === 'catch-up') this.#write(row, async () => (current() ? this.#catchUp(row, changeListUrl!, from, until, later) : undefined));
        else if (action === 'needs-sync') this.#write(row, async () => void (current() && this.#markNeedsSync(from, until)));
      } else if (!this.options.apply) {
        const last = step.items[step.items.length - 1].item.notification;
        this.store.transaction(() => {
          for (const { item } of step.items) this.store.setInbox([item.inboxId], { status: 'seen', fromAt: item.notification.from, untilAt: item.notification.until });
          this.store.updateSubscription(row.id, { cursor: last.until, lastNotificationAt: new Date().toISOString() });
        });
        this.#prune();
      } else {
        this.#enqueueApply(row, step.items.map((i) => i.item), step.coveredBeforeMs, current);
      }
    }
  }

  /** Queues taken notifications to be applied: they join the batch queued last if it has not started and has room. */
  #enqueueApply(row: SubscriptionRow, items: Taken[], coveredBeforeMs: number | null, current: () => boolean): void {
    const open = this.#open.get(row.id);
    if (open !== undefined && open.items.length + items.length <= MAX_BATCH_NOTIFICATIONS) {
      for (const item of items) open.items.push(coveredBeforeMs === open.coveredBeforeMs ? item : { ...item, coveredBeforeMs });
      return;
    }
    const batch: OpenBatch = { items: [...items], coveredBeforeMs, openedAt: performance.now() };
    this.#open.set(row.id, batch);
    this.#write(row, async () => {
      await this.#linger(row.id, batch);
      // Started: it takes no more (a retry after a lock wait applies the same items).
      if (this.#open.get(row.id) === batch) this.#open.delete(row.id);
      if (!current()) return;
      return this.#apply(row, batch.items, batch.coveredBeforeMs, null);
    });
  }

  /** Waits while deliveries keep arriving and the batch may still grow (see LINGER_MS). */
  async #linger(subscriptionId: number, batch: OpenBatch): Promise<void> {
    for (;;) {
      const now = performance.now();
      const open = this.#open.get(subscriptionId) === batch;
      if (!open || this.#closed || batch.items.length >= MAX_BATCH_NOTIFICATIONS) return;
      if (now - this.#lastDelivery >= QUIET_MS && this.#scheduled === 0) return;
      if (now - batch.openedAt >= LINGER_MS) return;
      await new Promise((r) => setTimeout(r, 1));
    }
  }

  async #apply(row: SubscriptionRow, items: Taken[], coveredBeforeMs: number | null, resumeRunId: number | null): Promise<void> {
    let result;
    try {
      result = await applyBatch(await this.#freshContext(), this.store.subscription(row.id)!, items, coveredBeforeMs, resumeRunId);
    } catch (err) {
      if (err instanceof SourceHeldError) {
        if (err.applied !== null) this.#emitApplied(row, err.applied.inboxIds, err.applied);
        this.#holdForSource(row, err);
        return;
      }
      if (!(err instanceof DiskHeldError)) throw err;
      if (err.applied !== null) this.#emitApplied(row, err.applied.inboxIds, err.applied);
      this.#hold(row, err);
      return;
    }
    this.#emitApplied(row, items.map((i) => i.inboxId), result);
  }

  /**
   * Drops the bodies of settled deliveries past the inbox's retention (store.ts), at most once a minute and one prune
   * at a time, in the background; the space they held then goes back to the disk a step at a time (reclaim.ts).
   */
  #prune(): void {
    const now = Date.now();
    if (now - this.#prunedAt < 60_000 || this.#pruning !== null) return;
    this.#prunedAt = now;
    const stopped = () => this.#closed;
    this.#pruning = (async () => {
      const dropped = await this.store.pruneBodies({ now, stopped });
      if (dropped > 0) await reclaimSpace(this.state.db, { stopped });
    })()
      .catch((err: unknown) => {
        if (this.#closed) return;
        this.#events.emit({ type: 'error', dest: this.dest, message: `The inbox's old notification bodies could not be dropped: ${(err as Error).message}` });
      })
      .finally(() => {
        this.#pruning = null;
      });
  }

  #emitApplied(row: SubscriptionRow, inboxIds: number[], result: { runId: number; counts: RunCounts; changes: AppliedChange[] }): void {
    this.#prune();
    const c = result.counts;
    this.#events.emit({
      type: 'applied',
      subscriptionId: row.id,
      topic: row.topic,
      dest: this.dest,
      inboxIds,
      runId: result.runId,
      created: c.created,
      updated: c.updated,
      deleted: c.deleted,
      unchanged: c.unchanged,
      skipped: c.skipped,
      failed: c.failed,
      changes: forEvent(result.changes),
    });
  }

  /**
   * The disk is nearly full: this subscription's notifications wait in the inbox (nothing in it is lost, and only
   * what was applied says so). What was read of it is set aside, and read again in order from its cursor once the
   * disk has room, as after a restart.
   */
  #hold(row: SubscriptionRow, err: DiskHeldError): void {
    const waiting = this.store.counts(row.id).received ?? err.pending;
    if (!this.#held.has(row.id)) {
      this.#events.emit({
        type: 'error',
        subscriptionId: row.id,
        dest: this.dest,
        message: `${err.low.message} What was verified stays; ${waiting.toLocaleString('en')} notification${waiting === 1 ? '' : 's'} not yet applied wait in the inbox and are applied once space is free again.`,
      });
    }
    this.#setAside(row);
    const before = this.#held.get(row.id);
    if (before) clearTimeout(before);
    this.#held.set(row.id, this.#closed ? null : setTimeout(() => void this.#recheck(), this.options.diskSpace?.recheckMs ?? 30_000));
  }

  /** What was read of this subscription is set aside: its inbox is read again, in order from its cursor, when it goes on. */
  #setAside(row: SubscriptionRow): void {
    this.#open.delete(row.id);
    const old = this.#subs.get(row.id);
    if (old !== undefined) {
      if (old.timer) clearTimeout(old.timer);
      this.#subs.delete(row.id);
      // The fresh reading starts only after whatever the old one is doing.
      this.#sub(this.store.subscription(row.id)!).chain = old.chain.catch(() => undefined);
    }
  }

  /**
   * The Source asked to wait (a Retry-After longer than a run waits, or refusals for the mirror's limit): this
   * subscription's notifications wait in the inbox, in order, until the wait is over (SOURCE_HOLD_MS when the Source
   * said no time), as a sync pauses; the feed says why and until when.
   */
  #holdForSource(row: SubscriptionRow, err: SourceHeldError): void {
    const waiting = this.store.counts(row.id).received ?? err.pending;
    const now = Date.now();
    const until = err.refusal.retryAt !== null && err.refusal.retryAt > now ? Math.min(err.refusal.retryAt, now + SOURCE_HOLD_MAX_MS) : now + SOURCE_HOLD_MS;
    this.#events.emit({
      type: 'note',
      subscriptionId: row.id,
      dest: this.dest,
      message:
        `Live applying is held until ${clock(Math.ceil(until / 60_000) * 60_000)}: ${err.refusal.said}. What was verified stays; ` +
        `${waiting.toLocaleString('en')} notification${waiting === 1 ? ' not yet applied waits in the inbox (new ones are still received) and is' : 's not yet applied wait in the inbox (new ones are still received) and are'} applied in order then.`,
    });
    this.#setAside(row);
    // Kept with the mirror, so that a restart keeps the wait; ends already past are dropped here.
    const waits = Object.fromEntries(Object.entries(this.state.liveSourceWaits()).filter(([, at]) => Date.parse(at) > now));
    this.state.setLiveSourceWaits({ ...waits, [String(row.id)]: new Date(until).toISOString() });
    this.#waitForSource(row.id, until);
  }

  /** Reads this subscription's inbox again at `until` (ms since the epoch), and not before. */
  #waitForSource(subscriptionId: number, until: number): void {
    const before = this.#sourceHeld.get(subscriptionId);
    if (before) clearTimeout(before);
    this.#sourceHeld.set(
      subscriptionId,
      this.#closed
        ? null
        : setTimeout(() => {
            this.#sourceHeld.delete(subscriptionId);
            this.process(subscriptionId);
          }, Math.max(0, until - Date.now())),
    );
  }

  /** Looks at the disk again; with room, the held subscriptions' inboxes are read and applied again. */
  async #recheck(): Promise<void> {
    if (this.#rechecking || this.#closed) return;
    this.#rechecking = true;
    try {
      const low = await this.#disk.check();
      if (this.#closed) return;
      for (const [id, timer] of [...this.#held]) {
        if (timer) clearTimeout(timer);
        if (low !== null) this.#held.set(id, setTimeout(() => void this.#recheck(), this.options.diskSpace?.recheckMs ?? 30_000));
        else {
          this.#held.delete(id);
          this.process(id);
        }
      }
    } finally {
      this.#rechecking = false;
    }
  }

  async #resume(subscriptionId: number, runId: number, ids: number[]): Promise<void> {
    const row = this.store.subscription(subscriptionId)!;
    const items: Taken[] = [];
    for (const id of ids) {
      const inbox = this.store.inbox(id)!;
      const parsed = await readNotification(inbox.body ?? new Uint8Array(), `${row.topic} (delivery ${id})`);
      if (parsed.ok) items.push({ inboxId: id, notification: parsed.notification });
      else this.store.setInbox([id], { status: 'rejected', reason: parsed.reason });
    }
    if (items.length === 0) return;
    const sub = this.#sub(row);
    const last = items[items.length - 1].notification;
    // The sequencer continues after the resumed batch.
    sub.seq.advance(last.untilMs);
    this.#open.delete(subscriptionId);
    const cursorMs = row.cursor ? parseW3cDatetime(row.cursor) : null;
    await new Promise<void>((resolve) => this.#write(row, () => this.#apply(row, items, cursorMs, runId), resolve));
  }

  async #catchUp(row: SubscriptionRow, changeListUrl: string, from: string, until: string, later: Taken[]): Promise<void> {
    const base = { subscriptionId: row.id, topic: row.topic, dest: this.dest };
    try {
      const result = await catchUp(await this.#freshContext(), this.store.subscription(row.id)!, changeListUrl, from, until, later, MAX_EVENT_CHANGES);
      const c = result.counts;
      // Which resources failed, and why: before, only their number was said, and the feed gave no way to them.
      const failures = result.changes.filter((f) => f.outcome === 'failed').slice(0, MAX_EVENT_CHANGES);
      this.#events.emit({
        type: 'caught-up',
        ...base,
        from,
        until,
        runId: result.runId,
        created: c.created,
        updated: c.updated,
        deleted: c.deleted,
        failed: c.failed,
        failures,
        covered: result.coveredCount,
        coveredChanges: result.covered,
      });
    } catch (err) {
      if (err instanceof MirrorLockedError) throw err;
      this.#events.emit({ type: 'error', ...base, message: `Could not catch up from the Change List for ${from} – ${until}: ${(err as Error).message}` });
      this.#markNeedsSync(from, until);
    }
  }

  #markNeedsSync(from: string, until: string, reason = 'a gap in the change notifications'): void {
    // A period missed already (not yet synced) widens to hold both: the mirror misses everything between them.
    const prior = this.state.needsSync();
    const earlier = prior && Date.parse(prior.from) < Date.parse(from) ? prior.from : from;
    const later = prior && Date.parse(prior.until) > Date.parse(until) ? prior.until : until;
    this.state.setNeedsSync({ from: earlier, until: later, since: prior?.since ?? new Date().toISOString(), reason });
  }

  /** Runs writes to the mirror one at a time; a lock held by another process makes it wait and try again. */
  #write(row: SubscriptionRow, job: () => Promise<void>, done?: () => void): void {
    this.#pendingWrites++;
    const attempt = async (): Promise<void> => {
      for (let warned = false; !this.#closed; ) {
        try {
          return await job();
        } catch (err) {
          if (!(err instanceof MirrorLockedError)) throw err;
          // Nothing fails: the notifications wait, stored, and are applied once the lock is free.
          if (!warned) this.#events.emit({ type: 'note', subscriptionId: row.id, dest: this.dest, message: `${err.message} Notifications wait, stored, until it is free.` });
          warned = true;
          await new Promise((r) => setTimeout(r, this.options.lockRetryMs));
        }
      }
    };
    this.#writes = this.#writes
      .then(attempt)
      .catch((err: unknown) => this.#error(err, row))
      .finally(() => {
        this.#pendingWrites--;
        done?.();
      });
  }

  /** Resolves when nothing is being read or written (tests, benchmarks, a clean stop). */
  async idle(): Promise<void> {
    for (;;) {
      while (this.#scheduled > 0) await new Promise((r) => setImmediate(r));
      await Promise.all([...this.#subs.values()].map((s) => s.chain));
      await this.#writes;
      if (this.#scheduled === 0 && this.#pendingWrites === 0 && [...this.#subs.values()].every((s) => s.timer === null || s.seq.waiting === 0)) return;
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** An RSS Ping named this mirror's Source: an incremental sync, unless one is running (then one more after it). */
  pingSync(reason: string): boolean {
    const changeListUrl = this.state.binding()?.changeListUrl ?? null;
    if (!this.options.pingSync || !this.options.apply || changeListUrl === null) return false;
    if (this.#syncing || this.#pingTimer !== null) {
      this.#syncAgain = true;
      return true;
    }
    const wait = this.#lastPingSyncAt + (this.options.pingSyncIntervalMs ?? 60_000) - Date.now();
    if (wait > 0) {
      this.#pingTimer = setTimeout(() => {
        this.#pingTimer = null;
        this.#syncAgain = false;
        if (!this.#closed) this.pingSync(reason);
      }, wait);
      return true;
    }
    this.#syncing = true;
    this.#syncAgain = false;
    const row = { id: -1 } as SubscriptionRow;
    // Notifications taken after this ping are applied after its sync.
    this.#open.clear();
    this.#write(
      row,
      async () => {
        this.#lastPingSyncAt = Date.now();
        try {
          const c = await syncFromCheckpoint(await this.#freshContext(), changeListUrl);
          this.#events.emit({ type: 'sync', dest: this.dest, reason, created: c.created, updated: c.updated, deleted: c.deleted, failed: c.failed });
        } catch (err) {
          if (err instanceof MirrorLockedError) throw err;
          // What the ping announced is not in the mirror, and notifications may move the checkpoint past it.
          const from = this.state.checkpoint()?.at;
          if (from !== undefined) this.#markNeedsSync(from, new Date(this.#lastPingSyncAt).toISOString(), 'a ping whose sync failed');
          // Only the lists are fetched with errors thrown; a resource that fails is a failure of the run instead.
          const what = err instanceof HttpStatusError ? 'could not read the Change List' : 'failed';
          const then = from !== undefined ? ` The mirror needs a sync (rsdesk sync --dest ${this.dest}) for the changes since ${from}.` : '';
          this.#events.emit({ type: 'error', dest: this.dest, message: `The sync a ping asked for ${what}: ${(err as Error).message.replace(/\.$/, '')}.${then}` });
        }
      },
      () => {
        this.#syncing = false;
        // Pings that came during the sync: one more, once the interval since this one's start is over.
        if (this.#syncAgain && !this.#closed) this.pingSync(reason);
      },
    );
    return true;
  }

  /** The client settings of the mirror's binding, with the credentials kept for it; null when it is not bound yet. */
  #access(secrets: SecretStore | undefined) {
    const binding = this.state.binding();
    if (binding === null) return null;
    let origin: string;
    try {
      origin = binding.settings?.origin ?? new URL(binding.capabilityListUrl ?? binding.url).origin;
    } catch {
      return null;
    }
    let access;
    try {
      access = accessOf(binding.settings, origin, binding.id, this.options.givenCredentials?.(binding.settings), secrets);
    } catch (err) {
      // Credentials this computer does not have: notifications are still read and ordered; fetches will say 401.
      this.#events.emit({ type: 'error', dest: this.dest, message: `${(err as Error).message.replace(/; give it again with .*$/, '')}. Changes are fetched without them.` });
      access = accessOf(binding.settings, origin, binding.id, null, undefined);
    }
    const { settings, credentials } = access;
    const source = sourceHeadersOf(settings, credentials);
    const timeoutMs = settings.timeoutMs ?? undefined;
    return { fetcher: { source, timeoutMs, proxy: settings.proxy }, http: { sourceHeaders: source, timeoutMs, proxy: settings.proxy } };
  }

  #error(err: unknown, row: SubscriptionRow): void {
    this.#events.emit({ type: 'error', ...(row.id > 0 ? { subscriptionId: row.id } : {}), dest: this.dest, message: clip(err instanceof Error ? err.message : String(err), 1000) });
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#pingTimer !== null) clearTimeout(this.#pingTimer);
    for (const timer of this.#held.values()) if (timer) clearTimeout(timer);
    for (const timer of this.#sourceHeld.values()) if (timer) clearTimeout(timer);
    this.subscriber.close();
    for (const s of this.#subs.values()) if (s.timer) clearTimeout(s.timer);
    await this.#writes.catch(() => undefined);
    await Promise.all([...this.#subs.values()].map((s) => s.chain.catch(() => undefined)));
    await this.#ctx.fetcher.close();
    await this.#ownHttp?.close();
    await this.#pruning;
    await this.store.close();
    this.state.close();
  }
}

/**
 * The changes an `applied` event lists: the failed ones first in number, then the others, in their order, at most
 * MAX_EVENT_CHANGES (the counts say how many there were; the journal keeps every failure).
 */
function forEvent(changes: AppliedChange[]): AppliedChange[] {
  if (changes.length <= MAX_EVENT_CHANGES) return changes;
  // Those with a reason (failed, skipped) first: they are what a person looks for.
  const failed = new Set(changes.filter((c) => c.reason !== undefined).slice(0, MAX_EVENT_CHANGES));
  let room = MAX_EVENT_CHANGES - failed.size;
  return changes.filter((c) => failed.has(c) || (c.reason === undefined && room-- > 0));
}

/**
 * Why a notification's `until` cannot be taken: more than CLOCK_SLACK_MS after it was received. Taken in order, an
 * `until` in the year 9999 moved the cursor there: every later notification was then dropped as covered, and the
 * mirror's checkpoint said it held every change until then.
 */
function futureReason(until: string, untilMs: number, receivedAt: string): string | null {
  const received = Date.parse(receivedAt);
  if (!Number.isFinite(received) || untilMs <= received + CLOCK_SLACK_MS) return null;
  return `until="${clip(until, 60)}" is more than an hour after the notification was received (${receivedAt}); taken in order, it would make every later notification look as covered already`;
}

/**
 * Where a new subscription's order starts: just before the mirror's checkpoint. Incremental sync leaves changes at
 * the checkpoint's own instant to be applied (it skips only earlier ones), while a notification's `until` includes
 * its instant; starting 1 ms earlier keeps a change at exactly the checkpoint from being taken as covered.
 */
function startCursor(at: string | null): string | null {
  const ms = at === null ? null : parseW3cDatetime(at);
  return ms === null ? null : new Date(ms - 1).toISOString();
}
