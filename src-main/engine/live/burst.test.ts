// A burst of deliveries: each is stored durably before its answer, by the storing thread, in the order handed
// over; notifications taken while a batch is being applied join the next batch (one run for many), in order, none
// lost and none applied twice.
import { mkdtempSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireLock } from '../mirror/lock.ts';
import { MirrorState, stateDirOf } from '../mirror/state.ts';
import { InboxWriter } from './inbox-writer.ts';
import { mirrored, sourceBytes, startRig, waitFor, type Rig } from './test-support.ts';

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

describe('the storing thread', () => {
  it('commits every delivery before resolving, with ids in the order they were handed over', async () => {
    const dest = mkdtempSync(join(tmpdir(), 'inbox-'));
    const state = new MirrorState(stateDirOf(dest));
    state.db
      .prepare(`INSERT INTO live_subscriptions (topic, hub, callback_token, callback_url, status, created_at) VALUES ('http://t/', 'http://h/', 'tok', 'http://c/', 'active', '2026-01-01')`)
      .run();
    const writer = new InboxWriter(state.path);
    const other = new DatabaseSync(state.path);
    try {
      const ids = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          writer.receive({ subscriptionId: 1, sha256: `h${i}`, contentType: 'application/xml', link: null, body: Buffer.from(`body ${i}`) }).then((id) => {
            // Resolved: the row is committed, so another connection sees it at once.
            const row = other.prepare('SELECT sha256, body FROM live_inbox WHERE id = ?').get(id) as { sha256: string; body: Uint8Array } | undefined;
            expect(row?.sha256).toBe(`h${i}`);
            expect(Buffer.from(row!.body).toString()).toBe(`body ${i}`);
            return id;
          }),
        ),
      );
      for (let i = 1; i < ids.length; i++) expect(ids[i]).toBeGreaterThan(ids[i - 1]);
      await writer.close();
      await expect(writer.receive({ subscriptionId: 1, sha256: 'x', contentType: null, link: null, body: Buffer.from('x') })).rejects.toThrow(/could not be stored/);
      // A delivery for no subscription breaks a constraint: refused (the hub is answered 5xx), nothing kept.
      const second = new InboxWriter(state.path);
      await expect(second.receive({ subscriptionId: 99, sha256: 'y', contentType: null, link: null, body: Buffer.from('y') })).rejects.toThrow(/could not be stored/);
      await second.close();
      expect(Number((other.prepare('SELECT COUNT(*) AS n FROM live_inbox').get() as { n: number }).n)).toBe(200);
    } finally {
      other.close();
      state.close();
    }
  });
});

describe('a burst', () => {
  it('applies notifications taken while a batch waits as one batch after it, in order, each once', async () => {
    rig = await startRig({ fixture: { resources: 40 } });
    const sub = await rig.engine.subscribe({ dest: rig.dest, topic: rig.topic, hub: rig.hubUrl });
    await waitFor(rig, 'subscribed');
    await rig.fixture.hub.settled();
    // Another writer holds the mirror: everything taken meanwhile waits, stored, and piles up in the open batch.
    const lock = acquireLock(stateDirOf(rig.dest), 'a test holding the mirror');
    const records = [];
    try {
      for (let i = 0; i < 30; i++) records.push(...rig.fixture.change('update', 1, i + 1));
      await rig.fixture.hub.settled();
      await waitFor(rig, 'notification', () => rig!.events.filter((e) => e.type === 'notification').length === 30);
      await waitFor(rig, 'note', (e) => /Notifications wait, stored/.test(e.message));
    } finally {
      lock.release();
    }
    await rig.engine.idle();
    const applied = rig.events.filter((e) => e.type === 'applied');
    const notes = rig.events.filter((e) => e.type === 'notification');
    // The batch that was about to start when the lock was found, then one for everything else.
    expect(applied.length).toBeLessThanOrEqual(2);
    expect(applied.flatMap((a) => a.inboxIds)).toEqual(notes.map((n) => n.inboxId));
    expect(applied.reduce((n, a) => n + a.updated, 0)).toBe(30);
    expect(rig.events.some((e) => e.type === 'gap')).toBe(false);
    const store = rig.engine.feed(rig.dest)!.store;
    expect(store.counts(sub.id)).toEqual({ applied: 30 });
    expect(store.subscription(sub.id)!.cursor).toBe(notes.at(-1)!.until);
    for (const r of records) expect(mirrored(rig, r.id)?.equals(sourceBytes(rig, r.id)), `resource ${r.id}`).toBe(true);
  });
});
