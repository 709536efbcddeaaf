// Order of notifications against the fixture hub's faults: out-of-order deliveries are put back in order, exact
// duplicates dropped, gaps filled from the Change List (or the mirror marked as needing a sync when it has none).
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { MirrorState, stateDirOf } from '../mirror/state.ts';
import { mirrored, sourceBytes, startRig, waitFor, type Rig } from './test-support.ts';

let rig: Rig;
afterEach(async () => {
  await rig?.close();
});

async function subscribe(r: Rig): Promise<number> {
  const sub = await r.engine.subscribe({ dest: r.dest, topic: r.topic, hub: r.hubUrl });
  await waitFor(r, 'subscribed');
  await r.fixture.hub.settled();
  return sub.id;
}

function expectMirrored(r: Rig, ids: number[]): void {
  for (const id of ids) expect(mirrored(r, id)?.equals(sourceBytes(r, id)), `resource ${id}`).toBe(true);
}

async function settle(r: Rig): Promise<void> {
  await r.fixture.hub.settled();
  await r.engine.idle();
}

describe('order', () => {
  it('puts a notification that arrives early back after the one before it', async () => {
    rig = await startRig();
    await subscribe(rig);
    rig.fixture.hub.faults.holdNext = 1;
    const [first] = rig.fixture.change('update');
    const [second] = rig.fixture.change('create');
    await settle(rig);
    const notes = rig.events.filter((e) => e.type === 'notification');
    // Delivered second first…
    expect(notes.map((n) => n.changes[0].uri)).toEqual([second.loc, first.loc]);
    // …applied in order, as one batch, with no gap.
    const applied = rig.events.filter((e) => e.type === 'applied');
    expect(applied).toHaveLength(1);
    expect(applied[0].inboxIds).toEqual([notes[1].inboxId, notes[0].inboxId]);
    expect(rig.events.some((e) => e.type === 'gap')).toBe(false);
    expectMirrored(rig, [first.id, second.id]);
  });

  it('drops an exact duplicate', async () => {
    rig = await startRig();
    const id = await subscribe(rig);
    rig.fixture.hub.faults.duplicate = 1;
    const [record] = rig.fixture.change('update');
    await settle(rig);
    expect(rig.events.filter((e) => e.type === 'notification')).toHaveLength(1);
    expect(rig.events.filter((e) => e.type === 'duplicate')).toHaveLength(1);
    expect(rig.events.filter((e) => e.type === 'applied')).toHaveLength(1);
    expect(rig.engine.feed(rig.dest)!.store.counts(id)).toEqual({ applied: 1, duplicate: 1 });
    expectMirrored(rig, [record.id]);
  });

  it('fills a gap from the Change List, then goes on with the notifications', async () => {
    rig = await startRig();
    await subscribe(rig);
    rig.fixture.hub.faults.drop = 2;
    const lost = [...rig.fixture.change('update'), ...rig.fixture.change('delete')];
    const [after] = rig.fixture.change('create');
    await settle(rig);
    const gap = await waitFor(rig, 'gap');
    expect(gap.action).toBe('catch-up');
    const caught = await waitFor(rig, 'caught-up');
    expect(caught.updated + caught.deleted).toBeGreaterThanOrEqual(1);
    await waitFor(rig, 'applied', (e) => e.changes.some((c) => c.uri === after.loc));
    expectMirrored(rig, [lost[0].id, after.id]);
    expect(mirrored(rig, lost[1].id)).not.toBeNull(); // deletion policy "keep"
    // The Change List was read for it.
    expect(rig.fixture.requests.some((r) => r.path.startsWith('/dataset1/changelists/'))).toBe(true);
    // Order before the gap, the catch-up, then the notification after it.
    const kinds = rig.events.filter((e) => ['gap', 'caught-up', 'applied'].includes(e.type)).map((e) => e.type);
    expect(kinds).toEqual(['gap', 'caught-up', 'applied']);
  });

  it('a gap whose Change List answers a server error is not taken for filled: it is said, and the mirror marked as needing a sync', async () => {
    // Before, the 503 was taken for "no change listed": the catch-up ended "caught-up" with nothing applied, the
    // cursor moved past the gap, no sync was asked for, and its changes were lost without a word.
    rig = await startRig();
    await subscribe(rig);
    rig.fixture.setRefusing({ prefix: '/dataset1/changelist', status: 503 });
    rig.fixture.hub.faults.drop = 1;
    const [lost] = rig.fixture.change('update');
    const [after] = rig.fixture.change('update');
    await settle(rig);
    const gap = await waitFor(rig, 'gap');
    expect(gap.action).toBe('catch-up');
    const error = await waitFor(rig, 'error');
    expect(error.message).toMatch(/^Could not catch up from the Change List for .*: HTTP 503/);
    await waitFor(rig, 'applied', (e) => e.changes.some((c) => c.uri === after.loc));
    expect(rig.events.some((e) => e.type === 'caught-up')).toBe(false);
    expect(mirrored(rig, lost.id)?.equals(sourceBytes(rig, lost.id))).not.toBe(true);
    const needs = rig.engine.feed(rig.dest)!.state.db.prepare("SELECT value FROM meta WHERE key = 'needs-sync'").get() as { value: string } | undefined;
    expect(JSON.parse(needs!.value)).toMatchObject({ from: gap.from, until: gap.until });
  });

  it('names each resource a catch-up could not fetch, with why and the run to retry it from', async () => {
    rig = await startRig();
    await subscribe(rig);
    rig.fixture.hub.faults.drop = 1;
    const [lost] = rig.fixture.change('update');
    rig.fixture.setBroken(rig.fixture.state.pathOf(lost.id), { status: 404 });
    rig.fixture.change('create');
    await settle(rig);
    const caught = await waitFor(rig, 'caught-up');
    expect(caught.failed).toBe(1);
    // Before, the count alone: "failed 1", and nothing said which, why, or where to retry it.
    expect(caught.failures).toEqual([expect.objectContaining({ uri: lost.loc, outcome: 'failed', reason: expect.stringContaining('404') })]);
    const run = rig.engine.feed(rig.dest)!.state.db.prepare('SELECT mode FROM runs WHERE id = ?').get(caught.runId) as { mode: string };
    expect(run.mode).toBe('live-catch-up');
  });

  it('says which changes of a notification that overlaps the one before it were taken as covered, and applies the rest', async () => {
    rig = await startRig();
    await rig.engine.subscribe({ dest: rig.dest, topic: rig.topic, hub: rig.hubUrl, secret: null });
    await waitFor(rig, 'subscribed');
    await rig.fixture.hub.settled();
    const sub = rig.engine.subscriptions()[0];
    const at = (s: number) => new Date(Date.parse(sub.cursor!) + s * 1000).toISOString();
    const loc = (id: number) => rig.fixture.url + rig.fixture.state.pathOf(id);
    const entry = (id: number, s: number) => `<url><loc>${loc(id)}</loc><rs:md change="updated" datetime="${at(s)}"/></url>`;
    const doc = (from: number, until: number, body: string) =>
      '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">' +
      `<rs:md capability="change-notification" from="${at(from)}" until="${at(until)}"/>${body}</urlset>`;
    const post = async (body: string) => {
      const res = await request(sub.callbackUrl, { method: 'POST', body, headers: { 'content-type': 'application/xml' } });
      await res.body.dump();
      expect(res.statusCode).toBe(202);
    };
    await post(doc(0, 10, entry(1, 5)));
    await waitFor(rig, 'applied');
    const after = rig.events.length;
    // [5, 20] overlaps [0, 10]: its change at 7 s lies in what the first covered.
    await post(doc(5, 20, entry(2, 7) + entry(3, 15)));
    const applied = await waitFor(rig, 'applied', () => true, 5_000, after);
    expect(applied.changes.map((c) => [c.uri, c.outcome])).toEqual([
      [loc(3), 'updated'],
      [loc(2), 'covered'],
    ]);
    // Before: the change at 7 s was left out unsaid, and the feed showed it as done by a run that never had it.
    expect(applied.changes[1].reason).toBe(
      `not applied: it lies before ${at(10)}, up to which the notifications before this one (or a catch-up) covered every change; this notification overlaps them, which consecutive notifications must not`,
    );
  });

  it('marks the mirror as needing a sync when the Source has no Change List', async () => {
    rig = await startRig();
    const state = new MirrorState(stateDirOf(rig.dest));
    state.setBinding({ ...state.binding()!, changeListUrl: null });
    state.close();
    await subscribe(rig);
    rig.fixture.hub.faults.drop = 1;
    rig.fixture.change('update');
    const [after] = rig.fixture.change('update');
    await settle(rig);
    const gap = await waitFor(rig, 'gap');
    expect(gap.action).toBe('needs-sync');
    await waitFor(rig, 'applied', (e) => e.changes.some((c) => c.uri === after.loc));
    const needs = rig.engine.feed(rig.dest)!.state.db.prepare("SELECT value FROM meta WHERE key = 'needs-sync'").get() as { value: string };
    expect(JSON.parse(needs.value)).toMatchObject({ from: gap.from, until: gap.until });
  });

  it('moves the checkpoint along only while nothing can be missing', async () => {
    rig = await startRig();
    await subscribe(rig);
    const before = rig.engine.feed(rig.dest)!.state.checkpoint()!.at;
    rig.fixture.change('update');
    const [record] = rig.fixture.change('update');
    await settle(rig);
    expect(rig.engine.feed(rig.dest)!.state.checkpoint()).toEqual({ at: record.datetime, from: rig.topic });
    expect(record.datetime > before).toBe(true);
  });
});
