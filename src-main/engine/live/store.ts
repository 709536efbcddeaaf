// The live tables of one mirror's state.sqlite: subscriptions and the inbox of deliveries. A delivery's row is
// committed (synchronous=FULL, so on disk) before the hub gets its 2xx; several deliveries arriving together share
// one commit (group commit), so a burst does not pay one fsync per notification. Those commits are made by a worker
// thread (inbox-writer.ts) when the store knows its database file, so that waiting for the disk does not stop the
// callback server; otherwise here.
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { Statements } from '../../store/statements.ts';
import { transaction } from '../../store/tx.ts';
import { InboxWriter, type NewDelivery } from './inbox-writer.ts';
import type { Subscription, SubscriptionStatus } from './model.ts';

export interface SubscriptionRow extends Subscription {
  callbackToken: string;
  secret: string | null;
  pendingMode: 'subscribe' | 'unsubscribe' | null;
}

/** `seen`: taken in order by a watcher that does not apply (no --apply). */
export type InboxStatus = 'received' | 'applying' | 'applied' | 'seen' | 'duplicate' | 'covered' | 'rejected';

export interface InboxRow {
  id: number;
  subscriptionId: number;
  receivedAt: string;
  sha256: string;
  contentType: string | null;
  link: string | null;
  body: Uint8Array | null;
  status: InboxStatus;
  fromAt: string | null;
  untilAt: string | null;
  runId: number | null;
  reason: string | null;
}

export type { NewDelivery };

/**
 * How long the body of a settled delivery (applied, seen, duplicate, covered, rejected) is kept, and how many bytes
 * of such bodies a mirror's inbox holds at most. Each delivery may be 10 MiB and a hub may send thousands a day, so
 * bodies kept for ever would grow the mirror's state without bound. The row itself is kept for ever: when it came,
 * on which subscription, the payload's SHA-256, its from/until, what became of it (status, run, reason); what the
 * notified changes did is in that run's journal. What goes is the payload's bytes, oldest first, once it is older
 * than this or past the cap. A body not yet applied (received, applying) is never dropped, whatever its age or size.
 */
export const INBOX_BODY_KEEP_DAYS = 30;
export const INBOX_BODY_KEEP_BYTES = 64 * 1024 * 1024;
const SETTLED = `status NOT IN ('received', 'applying')`;
/** Bodies dropped per statement by pruneBodies: each a short commit (a few ms), with the event loop free between. */
export const PRUNE_CHUNK = 256;

function toSubscription(raw: Record<string, unknown>, dest: string): SubscriptionRow {
  const n = (k: string) => (raw[k] === null || raw[k] === undefined ? null : Number(raw[k]));
  const s = (k: string) => (raw[k] === null || raw[k] === undefined ? null : String(raw[k]));
  return {
    id: Number(raw.id),
    dest,
    topic: String(raw.topic),
    hub: String(raw.hub),
    callbackUrl: String(raw.callback_url),
    callbackToken: String(raw.callback_token),
    secret: s('secret'),
    hasSecret: raw.secret !== null,
    status: raw.status as SubscriptionStatus,
    pendingMode: s('pending_mode') as SubscriptionRow['pendingMode'],
    leaseRequested: n('lease_requested'),
    leaseSeconds: n('lease_seconds'),
    verifiedAt: s('verified_at'),
    expiresAt: s('expires_at'),
    attempts: Number(raw.attempts ?? 0),
    nextAttemptAt: s('next_attempt_at'),
    lastError: s('last_error'),
    cursor: s('cursor'),
    lastNotificationAt: s('last_notification_at'),
    createdAt: String(raw.created_at),
  };
}

function toInbox(raw: Record<string, unknown>): InboxRow {
  return {
    id: Number(raw.id),
    subscriptionId: Number(raw.subscription_id),
    receivedAt: String(raw.received_at),
    sha256: String(raw.sha256),
    contentType: (raw.content_type as string | null) ?? null,
    link: (raw.link as string | null) ?? null,
    body: (raw.body as Uint8Array | null) ?? null,
    status: raw.status as InboxStatus,
    fromAt: (raw.from_at as string | null) ?? null,
    untilAt: (raw.until_at as string | null) ?? null,
    runId: raw.run_id === null || raw.run_id === undefined ? null : Number(raw.run_id),
    reason: (raw.reason as string | null) ?? null,
  };
}

const SUB_FIELDS: Record<string, string> = {
  status: 'status',
  pendingMode: 'pending_mode',
  leaseRequested: 'lease_requested',
  leaseSeconds: 'lease_seconds',
  verifiedAt: 'verified_at',
  expiresAt: 'expires_at',
  attempts: 'attempts',
  nextAttemptAt: 'next_attempt_at',
  lastError: 'last_error',
  cursor: 'cursor',
  lastNotificationAt: 'last_notification_at',
  secret: 'secret',
  callbackUrl: 'callback_url',
};

export class LiveStore {
  readonly db: DatabaseSync;
  readonly dest: string;
  #insert: StatementSync;
  /** Statements prepared once: a burst runs several of these per delivery, and preparing costs more than running. */
  readonly #stmts: Statements;
  #queue: { delivery: NewDelivery; resolve: (id: number) => void; reject: (err: unknown) => void }[] = [];
  #scheduled = false;
  readonly #path: string | null;
  #writer: InboxWriter | null = null;
  #ended = false;

  /** `path`: the database's file, for the storing thread (null: deliveries are committed on this thread). */
  constructor(db: DatabaseSync, dest: string, path: string | null = null) {
    this.db = db;
    this.#stmts = new Statements(db);
    this.dest = dest;
    this.#path = path;
    this.#insert = db.prepare(
      `INSERT INTO live_inbox (subscription_id, received_at, sha256, content_type, link, body, status) VALUES (?, ?, ?, ?, ?, ?, 'received')`,
    );
  }

  #stmt(sql: string): StatementSync {
    return this.#stmts.get(sql);
  }

  // ---- subscriptions ----

  subscriptions(): SubscriptionRow[] {
    return (this.#stmt('SELECT * FROM live_subscriptions ORDER BY id').all() as Record<string, unknown>[]).map((r) => toSubscription(r, this.dest));
  }

  subscription(id: number): SubscriptionRow | null {
    const raw = this.#stmt('SELECT * FROM live_subscriptions WHERE id = ?').get(id) as Record<string, unknown> | undefined;
    return raw ? toSubscription(raw, this.dest) : null;
  }

  byToken(token: string): SubscriptionRow | null {
    const raw = this.#stmt('SELECT * FROM live_subscriptions WHERE callback_token = ?').get(token) as Record<string, unknown> | undefined;
    return raw ? toSubscription(raw, this.dest) : null;
  }

  byTopic(topic: string, hub: string): SubscriptionRow | null {
    const raw = this.#stmt('SELECT * FROM live_subscriptions WHERE topic = ? AND hub = ?').get(topic, hub) as Record<string, unknown> | undefined;
    return raw ? toSubscription(raw, this.dest) : null;
  }

  addSubscription(s: { topic: string; hub: string; callbackToken: string; callbackUrl: string; secret: string | null; leaseRequested: number | null; cursor: string | null }): SubscriptionRow {
    const result = this.#stmt(
        `INSERT INTO live_subscriptions (topic, hub, callback_token, callback_url, secret, status, lease_requested, cursor, created_at)
         VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
      )
      .run(s.topic, s.hub, s.callbackToken, s.callbackUrl, s.secret, s.leaseRequested, s.cursor, new Date().toISOString());
    return this.subscription(Number(result.lastInsertRowid))!;
  }

  /**
   * The strongest X-Hub-Signature method a subscription's hub has signed a delivery with (receiver.ts refuses weaker
   * ones after it), kept in the mirror's meta: no column of its own, so no migration for a few bytes per subscription.
   */
  signatureFloor(id: number): string | null {
    const row = this.#stmt('SELECT value FROM meta WHERE key = ?').get(`live-signature-floor:${id}`) as { value: string } | undefined;
    return row?.value ?? null;
  }

  setSignatureFloor(id: number, method: string): void {
    this.#stmt('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(`live-signature-floor:${id}`, method);
  }

  updateSubscription(id: number, fields: Partial<Omit<SubscriptionRow, 'id' | 'dest' | 'topic' | 'hub' | 'callbackToken' | 'hasSecret' | 'createdAt'>>): SubscriptionRow {
    const sets: string[] = [];
    const values: (string | number | null)[] = [];
    for (const [key, value] of Object.entries(fields)) {
      const column = SUB_FIELDS[key];
      if (!column) continue;
      sets.push(`${column} = ?`);
      values.push((value ?? null) as string | number | null);
    }
    if (sets.length) this.#stmt(`UPDATE live_subscriptions SET ${sets.join(', ')} WHERE id = ?`).run(...values, id);
    return this.subscription(id)!;
  }

  // ---- inbox ----

  /** Persists a delivery; resolves once it is committed (shared with whatever else arrived meanwhile). */
  receive(delivery: NewDelivery): Promise<number> {
    if (this.#ended) return Promise.reject(new Error('The delivery could not be stored: the mirror is being closed'));
    if (this.#path !== null) {
      // Started on the first delivery: a mirror that receives nothing costs no thread.
      this.#writer ??= new InboxWriter(this.#path);
      return this.#writer.receive(delivery);
    }
    return new Promise((resolve, reject) => {
      this.#queue.push({ delivery, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    this.#scheduled = false;
    const batch = this.#queue.splice(0);
    if (batch.length === 0) return;
    const now = new Date().toISOString();
    let ids: number[];
    try {
      ids = transaction(this.db, () =>
        batch.map(({ delivery: d }) => Number(this.#insert.run(d.subscriptionId, now, d.sha256, d.contentType, d.link, d.body).lastInsertRowid)),
      );
    } catch (err) {
      for (const b of batch) b.reject(err);
      return;
    }
    batch.forEach((b, i) => b.resolve(ids[i]));
  }

  inbox(id: number): InboxRow | null {
    const raw = this.#stmt('SELECT * FROM live_inbox WHERE id = ?').get(id) as Record<string, unknown> | undefined;
    return raw ? toInbox(raw) : null;
  }

  /** Deliveries not yet settled (received, or being applied), oldest first. */
  open(subscriptionId: number): InboxRow[] {
    return (
      this.#stmt(`SELECT * FROM live_inbox WHERE subscription_id = ? AND status IN ('received', 'applying') ORDER BY id`)
        .all(subscriptionId) as Record<string, unknown>[]
    ).map(toInbox);
  }

  /** Deliveries received after `afterId` and not read yet, oldest first. */
  received(subscriptionId: number, afterId: number): InboxRow[] {
    return (
      this.#stmt(`SELECT * FROM live_inbox WHERE subscription_id = ? AND id > ? AND status = 'received' ORDER BY id LIMIT 1000`)
        .all(subscriptionId, afterId) as Record<string, unknown>[]
    ).map(toInbox);
  }

  /** Another delivery of the same subscription with the same bytes, already taken (not this one). */
  seenBefore(subscriptionId: number, sha256: string, id: number): boolean {
    return (
      this.#stmt(`SELECT 1 FROM live_inbox WHERE subscription_id = ? AND sha256 = ? AND id < ? AND status NOT IN ('rejected') LIMIT 1`)
        .get(subscriptionId, sha256, id) !== undefined
    );
  }

  setInbox(ids: number[], fields: { status: InboxStatus; fromAt?: string | null; untilAt?: string | null; runId?: number | null; reason?: string | null }): void {
    const stmt = this.#stmt(
      `UPDATE live_inbox SET status = ?, from_at = COALESCE(?, from_at), until_at = COALESCE(?, until_at), run_id = COALESCE(?, run_id), reason = COALESCE(?, reason) WHERE id = ?`,
    );
    for (const id of ids) stmt.run(fields.status, fields.fromAt ?? null, fields.untilAt ?? null, fields.runId ?? null, fields.reason ?? null, id);
  }

  /**
   * Drops the bodies of settled deliveries past the retention (INBOX_BODY_KEEP_DAYS, INBOX_BODY_KEEP_BYTES), oldest
   * first; their rows stay, with a null body. Returns how many bodies were dropped.
   *
   * A chunk of rows at a time (PRUNE_CHUNK), walked by id, with the event loop free between chunks: the first prune of
   * a large old inbox, one UPDATE, held the thread for a second per 200 MB of bodies, and the callback server with it.
   * Each chunk's UPDATE checks again that its rows are settled, so a body not yet applied is never dropped, whatever
   * happened between chunks. `stopped`: no chunk is begun once it says true (the mirror is being closed).
   */
  async pruneBodies(o: { now?: number; keepDays?: number; keepBytes?: number; chunk?: number; stopped?: () => boolean } = {}): Promise<number> {
    const before = new Date((o.now ?? Date.now()) - (o.keepDays ?? INBOX_BODY_KEEP_DAYS) * 86_400_000).toISOString();
    const keepBytes = o.keepBytes ?? INBOX_BODY_KEEP_BYTES;
    const chunk = o.chunk ?? PRUNE_CHUNK;
    // False when the prune must stop; waits first while a transaction of someone else's is open on the connection.
    const go = async (): Promise<boolean> => {
      for (;;) {
        if (this.#ended || !this.db.isOpen || o.stopped?.()) return false;
        if (!this.db.isTransaction) return true;
        await breathe();
      }
    };
    let dropped = 0;
    const aged = this.#stmt(`SELECT id FROM live_inbox WHERE id > ? AND body IS NOT NULL AND ${SETTLED} AND received_at < ? ORDER BY id LIMIT ?`);
    const dropAged = this.#stmt(`UPDATE live_inbox SET body = NULL WHERE id >= ? AND id <= ? AND body IS NOT NULL AND ${SETTLED} AND received_at < ?`);
    for (let after = 0; ; ) {
      if (!(await go())) return dropped;
      const ids = aged.all(after, before, chunk) as { id: number }[];
      if (ids.length === 0) break;
      dropped += Number(dropAged.run(ids[0]!.id, ids.at(-1)!.id, before).changes);
      after = Number(ids.at(-1)!.id);
      await breathe();
    }
    // The bytes kept, summed a page of rows at a time (length() reads no body), then the oldest dropped past the cap.
    const sizes = this.#stmt(`SELECT id, length(body) AS n FROM live_inbox WHERE id > ? AND body IS NOT NULL AND ${SETTLED} ORDER BY id LIMIT ?`);
    const page = chunk * 16;
    let over = -keepBytes;
    for (let after = 0; ; ) {
      if (!(await go())) return dropped;
      const rows = sizes.all(after, page) as { id: number; n: number }[];
      for (const r of rows) over += Number(r.n);
      if (rows.length < page) break;
      after = Number(rows.at(-1)!.id);
      await breathe();
    }
    const dropUpTo = this.#stmt(`UPDATE live_inbox SET body = NULL WHERE id >= ? AND id <= ? AND body IS NOT NULL AND ${SETTLED}`);
    for (let after = 0; over > 0; ) {
      if (!(await go())) return dropped;
      const rows = sizes.all(after, chunk) as { id: number; n: number }[];
      if (rows.length === 0) break;
      let last = 0;
      for (const r of rows) {
        last = Number(r.id);
        over -= Number(r.n);
        if (over <= 0) break;
      }
      dropped += Number(dropUpTo.run(rows[0]!.id, last).changes);
      after = last;
      await breathe();
    }
    return dropped;
  }

  /**
   * Bytes of the bodies not yet applied (received, or being applied), of every subscription of the mirror. Asked for
   * each delivery while the disk is low: read through the index by subscription and status, so that it costs what
   * is waiting, not the whole inbox (a scan of every row and its body's pages, ~300 ms at 100,000 settled rows).
   * Every inbox row names a subscription that exists (a foreign key, enforced on the mirror's state).
   */
  pendingBodyBytes(): number {
    const { total } = this.#stmt(
      `SELECT COALESCE(SUM(length(body)), 0) AS total FROM live_inbox
       WHERE subscription_id IN (SELECT id FROM live_subscriptions) AND status IN ('received', 'applying') AND body IS NOT NULL`,
    ).get() as { total: number };
    return Number(total);
  }

  /** Deliveries of every subscription stored and not yet applied (or dropped), and the bytes of their bodies. */
  pending(): { count: number; bytes: number } {
    const row = this.#stmt(
      `SELECT COUNT(*) AS count, COALESCE(SUM(length(body)), 0) AS bytes FROM live_inbox
       WHERE subscription_id IN (SELECT id FROM live_subscriptions) AND status IN ('received', 'applying')`,
    ).get() as { count: number; bytes: number };
    return { count: Number(row.count), bytes: Number(row.bytes) };
  }

  counts(subscriptionId: number): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of this.#stmt('SELECT status, COUNT(*) AS n FROM live_inbox WHERE subscription_id = ? GROUP BY status').all(subscriptionId) as {
      status: string;
      n: number;
    }[])
      out[r.status] = Number(r.n);
    return out;
  }

  transaction<T>(fn: () => T): T {
    return transaction(this.db, fn);
  }

  /** Waits for deliveries handed over to be stored, and stops the storing thread. */
  async close(): Promise<void> {
    this.#ended = true;
    await this.#writer?.close();
    this.#writer = null;
  }
}

/** Lets every pending callback and I/O run before the next step. */
function breathe(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
