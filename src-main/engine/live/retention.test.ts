// The inbox's retention: the record of every delivery is kept for ever; the body of a settled one goes once it is
// older than the retention or past the size cap, oldest first; a body not yet applied is never dropped.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MirrorState, stateDirOf } from '../mirror/state.ts';
import { INBOX_BODY_KEEP_DAYS, LiveStore, type InboxStatus } from './store.ts';
import { reclaimSpace, stateSpace } from '../mirror/reclaim.ts';

const DAY = 86_400_000;

function inbox() {
  const dest = mkdtempSync(join(tmpdir(), 'inbox-retention-'));
  const state = new MirrorState(stateDirOf(dest));
  state.db
    .prepare(`INSERT INTO live_subscriptions (topic, hub, callback_token, callback_url, status, created_at) VALUES ('http://t/', 'http://h/', 'tok', 'http://c/', 'active', '2026-01-01')`)
    .run();
  const store = new LiveStore(state.db, dest);
  const add = (at: number, status: InboxStatus, bytes: number) =>
    Number(
      state.db
        .prepare(`INSERT INTO live_inbox (subscription_id, received_at, sha256, body, status, from_at, until_at, run_id, reason) VALUES (1, ?, ?, ?, ?, '2026-01-01T00:00:00Z', '2026-01-01T00:00:01Z', 7, 'why')`)
        .run(new Date(at).toISOString(), `h${at}-${status}`, Buffer.alloc(bytes, 1), status).lastInsertRowid,
    );
  const body = (id: number) => store.inbox(id)!.body;
  return { state, store, add, body };
}

describe('the inbox retention', () => {
  it('drops the bodies of settled deliveries older than the retention, keeps every row and every unapplied body', async () => {
    const { state, store, add, body } = inbox();
    const now = Date.parse('2026-06-01T00:00:00Z');
    const old = now - (INBOX_BODY_KEEP_DAYS + 1) * DAY;
    const settled = (['applied', 'seen', 'duplicate', 'covered', 'rejected'] as const).map((s) => add(old, s, 100));
    const waiting = [add(old, 'received', 100), add(old, 'applying', 100)];
    const recent = add(now - DAY, 'applied', 100);
    expect(await store.pruneBodies({ now })).toBe(5);
    for (const id of settled) {
      const row = store.inbox(id)!;
      expect(row.body).toBeNull();
      // The record stays whole.
      expect(row).toMatchObject({ fromAt: '2026-01-01T00:00:00Z', untilAt: '2026-01-01T00:00:01Z', runId: 7, reason: 'why', receivedAt: new Date(old).toISOString() });
      expect(row.sha256).toMatch(/^h/);
    }
    for (const id of [...waiting, recent]) expect(body(id)?.length).toBe(100);
    expect(await store.pruneBodies({ now })).toBe(0);
    state.close();
  });

  it('keeps the settled bodies under the size cap, dropping the oldest first, never an unapplied one', async () => {
    const { state, store, add, body } = inbox();
    const now = Date.now();
    const a = add(now - 5000, 'applied', 400);
    const pending = add(now - 4000, 'received', 5000);
    const b = add(now - 3000, 'applied', 400);
    const c = add(now - 2000, 'rejected', 400);
    const d = add(now - 1000, 'applied', 400);
    // 1,600 bytes settled, 1,000 kept: the two oldest go.
    expect(await store.pruneBodies({ now, keepBytes: 1000 })).toBe(2);
    expect(body(a)).toBeNull();
    expect(body(b)).toBeNull();
    expect(body(c)?.length).toBe(400);
    expect(body(d)?.length).toBe(400);
    expect(body(pending)?.length).toBe(5000);
    expect(await store.pruneBodies({ now, keepBytes: 1000 })).toBe(0);
    state.close();
  });

  it('prunes a large inbox in chunks, letting the event loop run between them, and drops exactly what it should', async () => {
    const { state, store, add, body } = inbox();
    const now = Date.parse('2026-06-01T00:00:00Z');
    const old = now - (INBOX_BODY_KEEP_DAYS + 1) * DAY;
    const statuses: InboxStatus[] = ['applied', 'received', 'seen', 'applying', 'duplicate', 'covered', 'rejected'];
    const aged = new Set<number>();
    const kept = new Set<number>();
    const ids: number[] = [];
    state.transaction(() => {
      for (let i = 0; i < 2_000; i++) {
        const status = statuses[i % statuses.length]!;
        const recent = i % 5 === 0;
        const id = add(recent ? now - DAY : old + i, status, 10);
        ids.push(id);
        (!recent && status !== 'received' && status !== 'applying' ? aged : kept).add(id);
      }
    });
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    // A row being applied while the prune goes on: it is settled only after, so its body stays.
    const settling = ids.find((id) => store.inbox(id)!.status === 'applying')!;
    const pruned = store.pruneBodies({ now, chunk: 50 });
    const lateTurns = turns;
    const result = await pruned;
    clearInterval(ticker);
    expect(result).toBe(aged.size);
    // Each chunk let the loop run: the timer ticked while the prune was going on, not only once it was done.
    expect(turns - lateTurns).toBeGreaterThan(5);
    for (const id of aged) expect(body(id)).toBeNull();
    for (const id of kept) expect(body(id)?.length).toBe(10);
    expect(body(settling)?.length).toBe(10);
    state.close();
  });

  it('stops at its next chunk when told to, leaving the rest for the next prune', async () => {
    const { state, store, add } = inbox();
    const now = Date.parse('2026-06-01T00:00:00Z');
    const old = now - (INBOX_BODY_KEEP_DAYS + 1) * DAY;
    state.transaction(() => {
      for (let i = 0; i < 500; i++) add(old + i, 'applied', 10);
    });
    let stop = false;
    const pruning = store.pruneBodies({ now, chunk: 100, stopped: () => stop });
    stop = true;
    expect(await pruning).toBe(100);
    expect(await store.pruneBodies({ now, chunk: 100 })).toBe(400);
    state.close();
  });

  it('applies the size cap across chunks as in one pass', async () => {
    const { state, store, add, body } = inbox();
    const now = Date.now();
    const ids: number[] = [];
    state.transaction(() => {
      for (let i = 0; i < 1_000; i++) ids.push(add(now - 10_000 + i, i % 10 === 3 ? 'received' : 'applied', 100));
    });
    // 900 settled bodies of 100 bytes, 25,050 kept: the 650 oldest settled go (the 651st would leave 24,900).
    expect(await store.pruneBodies({ now, keepBytes: 25_050, chunk: 64 })).toBe(650);
    const settled = ids.filter((_, i) => i % 10 !== 3);
    for (const id of settled.slice(0, 650)) expect(body(id)).toBeNull();
    for (const id of settled.slice(650)) expect(body(id)?.length).toBe(100);
    for (const id of ids.filter((_, i) => i % 10 === 3)) expect(body(id)?.length).toBe(100);
    state.close();
  });

  it('a new mirror state gives the pages of dropped bodies back to the disk', async () => {
    const { state, store, add } = inbox();
    expect(stateSpace(state.db).autoVacuum).toBe(2);
    const now = Date.parse('2026-06-01T00:00:00Z');
    state.transaction(() => {
      for (let i = 0; i < 200; i++) add(now - 40 * DAY + i, 'applied', 20_000);
    });
    expect(await store.pruneBodies({ now })).toBe(200);
    expect(stateSpace(state.db).freePages).toBeGreaterThan(700);
    expect(await reclaimSpace(state.db)).toBeGreaterThan(700 * 4096);
    expect(stateSpace(state.db).freePages).toBe(0);
    state.close();
  });
});

describe('the bytes waiting in the inbox', () => {
  it('counts exactly the bodies not yet applied, of every subscription, at a cost that does not grow with the settled rows', () => {
    const { state, store, add } = inbox();
    state.db
      .prepare(`INSERT INTO live_subscriptions (topic, hub, callback_token, callback_url, status, created_at) VALUES ('http://t2/', 'http://h/', 'tok2', 'http://c/', 'active', '2026-01-01')`)
      .run();
    const now = Date.now();
    // 30,000 settled deliveries of 1 KB (what a busy hub leaves in a few days): the old count read all of them, ~100 ms a delivery.
    const settled = state.db.prepare(`INSERT INTO live_inbox (subscription_id, received_at, sha256, body, status) VALUES (?, '2026-01-01', ?, ?, ?)`);
    const kb = Buffer.alloc(1024, 1);
    const kinds: InboxStatus[] = ['applied', 'seen', 'duplicate', 'covered', 'rejected'];
    state.transaction(() => {
      for (let i = 0; i < 30_000; i++) settled.run(1 + (i % 2), `s${i}`, kb, kinds[i % kinds.length]!);
    });
    add(now, 'received', 300);
    add(now, 'applying', 500);
    const other = add(now, 'received', 7);
    state.db.prepare('UPDATE live_inbox SET subscription_id = 2 WHERE id = ?').run(other);
    const dropped = add(now, 'received', 0);
    state.db.prepare('UPDATE live_inbox SET body = NULL WHERE id = ?').run(dropped);
    expect(store.pendingBodyBytes()).toBe(807);
    const t0 = performance.now();
    for (let i = 0; i < 100; i++) store.pendingBodyBytes();
    // ~5 ms for the 100 through the index; the scan took seconds.
    expect(performance.now() - t0).toBeLessThan(1_000);
    state.close();
  });
});
