// The inbox's retention: the record of every delivery is kept for ever; the body of a settled one goes once it is
// older than the retention or past the size cap, oldest first; a body not yet applied is never dropped.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MirrorState, stateDirOf } from '../mirror/state.ts';
import { INBOX_BODY_KEEP_DAYS, LiveStore, type InboxStatus } from './store.ts';

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
  it('drops the bodies of settled deliveries older than the retention, keeps every row and every unapplied body', () => {
    const { state, store, add, body } = inbox();
    const now = Date.parse('2026-06-01T00:00:00Z');
    const old = now - (INBOX_BODY_KEEP_DAYS + 1) * DAY;
    const settled = (['applied', 'seen', 'duplicate', 'covered', 'rejected'] as const).map((s) => add(old, s, 100));
    const waiting = [add(old, 'received', 100), add(old, 'applying', 100)];
    const recent = add(now - DAY, 'applied', 100);
    expect(store.pruneBodies({ now })).toBe(5);
    for (const id of settled) {
      const row = store.inbox(id)!;
      expect(row.body).toBeNull();
      // The record stays whole.
      expect(row).toMatchObject({ fromAt: '2026-01-01T00:00:00Z', untilAt: '2026-01-01T00:00:01Z', runId: 7, reason: 'why', receivedAt: new Date(old).toISOString() });
      expect(row.sha256).toMatch(/^h/);
    }
    for (const id of [...waiting, recent]) expect(body(id)?.length).toBe(100);
    expect(store.pruneBodies({ now })).toBe(0);
    state.close();
  });

  it('keeps the settled bodies under the size cap, dropping the oldest first, never an unapplied one', () => {
    const { state, store, add, body } = inbox();
    const now = Date.now();
    const a = add(now - 5000, 'applied', 400);
    const pending = add(now - 4000, 'received', 5000);
    const b = add(now - 3000, 'applied', 400);
    const c = add(now - 2000, 'rejected', 400);
    const d = add(now - 1000, 'applied', 400);
    // 1,600 bytes settled, 1,000 kept: the two oldest go.
    expect(store.pruneBodies({ now, keepBytes: 1000 })).toBe(2);
    expect(body(a)).toBeNull();
    expect(body(b)).toBeNull();
    expect(body(c)?.length).toBe(400);
    expect(body(d)?.length).toBe(400);
    expect(body(pending)?.length).toBe(5000);
    expect(store.pruneBodies({ now, keepBytes: 1000 })).toBe(0);
    state.close();
  });
});
