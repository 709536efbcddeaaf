// A resource that fails while a notification is applied (a 404, a broken entry) fails alone: the rest of the
// notification and the notifications after it are applied, the failure is in the run's journal where a retry takes
// it, a restart applies nothing again, and the mirror's checkpoint never passes the failed change, yet moves on once
// it is mended.
import { createHash } from 'node:crypto';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { parseW3cDatetime } from '../documents/datetime.ts';
import { retryResources } from '../mirror/retry.ts';
import { MirrorState, stateDirOf } from '../mirror/state.ts';
import { sync } from '../mirror/sync.ts';
import { liveHold } from './checkpoint.ts';
import { signBody } from './signature.ts';
import { mirrored, sourceBytes, startRig, waitFor, type Rig } from './test-support.ts';

let rig: Rig;
afterEach(async () => {
  await rig?.close();
});

const SECRET = 'a secret of the test';

async function subscribed(r: Rig) {
  const sub = await r.engine.subscribe({ dest: r.dest, topic: r.topic, hub: r.hubUrl, secret: SECRET });
  await waitFor(r, 'subscribed', (e) => e.subscriptionId === sub.id);
  await r.fixture.hub.settled();
  return sub;
}

function withState<T>(r: Rig, fn: (state: MirrorState) => T): T {
  const state = new MirrorState(stateDirOf(r.dest));
  try {
    return fn(state);
  } finally {
    state.close();
  }
}

const checkpointMs = (r: Rig) => parseW3cDatetime(withState(r, (s) => s.checkpoint()!.at))!;
const ms = (datetime: string) => parseW3cDatetime(datetime)!;

/** Applies one fixture change through the hub; resolves with its `applied` event. */
async function change(r: Rig, kind: 'update' | 'create', id?: number) {
  const [record] = r.fixture.change(kind, 1, id);
  const applied = await waitFor(r, 'applied', (e) => e.changes.some((c) => c.uri === record.loc && c.datetime === record.datetime));
  return { record, applied };
}

const resourceGets = (r: Rig, from: number) => r.fixture.requests.slice(from).filter((q) => /\/dataset1\/res\//.test(q.path)).length;

describe('a notification naming resources outside the Source', () => {
  it('skips them alone, says why, counts them as skipped and not as failed, and fails a hash mismatch beside them alone', async () => {
    rig = await startRig();
    const sub = await subscribed(rig);
    const row = rig.engine.subscriptions().find((s) => s.id === sub.id)!;
    const from = row.cursor!;
    const at = (s: number) => new Date(Date.parse(from) + s * 1000).toISOString();
    const entry = (loc: string, s: number, extra = '') => `<url><loc>${loc}</loc><rs:md change="updated" datetime="${at(s)}"${extra}/></url>`;
    const own = rig.fixture.url + rig.fixture.state.pathOf(2);
    const good = rig.fixture.url + rig.fixture.state.pathOf(4);
    const body =
      '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">' +
      `<rs:md capability="change-notification" from="${from}" until="${at(60)}"/>` +
      entry('http://127.0.0.1:9/elsewhere/x.json', 1) +
      entry(own, 2, ' hash="md5:00000000000000000000000000000000"') +
      entry(good, 3) +
      '</urlset>';
    const res = await request(row.callbackUrl, { method: 'POST', body, headers: { 'content-type': 'application/xml', 'x-hub-signature': signBody('sha256', SECRET, Buffer.from(body)) } });
    expect(res.statusCode).toBe(202);
    await res.body.dump();
    const applied = await waitFor(rig, 'applied');
    // Before: "failed 1" above two rows marked failed, the URI on another host among them.
    expect(applied).toMatchObject({ skipped: 1, failed: 1 });
    expect(applied.changes.map((c) => [c.uri, c.outcome])).toEqual([
      ['http://127.0.0.1:9/elsewhere/x.json', 'skipped'],
      [own, 'failed'],
      [good, 'updated'],
    ]);
    expect(applied.changes[0].reason).toMatch(/^not mirrored: on another host \(127\.0\.0\.1:9\)/);
    expect(applied.changes[1].reason).toMatch(/^fixity mismatch: md5 is [0-9a-f]{32}, the list says 0{32}$/);
    // Nothing was asked of the other host.
    expect(rig.fixture.requests.some((q) => q.path.includes('elsewhere'))).toBe(false);
  });
});

describe('a resource that fails while notifications are applied', () => {
  it('fails alone, is recorded for a retry, is not applied again on a restart, and holds the checkpoint only until it is mended', async () => {
    rig = await startRig();
    await subscribed(rig);
    const a = await change(rig, 'update', 1);
    expect(a.applied.failed).toBe(0);
    expect(checkpointMs(rig)).toBe(ms(a.record.datetime));

    const bad = 3;
    const before = mirrored(rig, bad)!;
    rig.fixture.setBroken(rig.fixture.state.pathOf(bad), { status: 404 });
    const b = await change(rig, 'update', bad);
    expect(b.applied.failed).toBe(1);
    expect(b.applied.changes).toEqual([expect.objectContaining({ uri: b.record.loc, outcome: 'failed', reason: expect.stringContaining('404') })]);
    const c = await change(rig, 'update', 5);
    expect(c.applied).toMatchObject({ updated: 1, failed: 0 });

    // The mirror is consistent: the failed resource keeps its earlier copy, as its inventory row says.
    expect(mirrored(rig, 5)!.equals(sourceBytes(rig, 5))).toBe(true);
    expect(mirrored(rig, bad)!.equals(before)).toBe(true);
    withState(rig, (s) => {
      expect(s.get(b.record.loc)!.digests.md5).toBe(createHash('md5').update(before).digest('hex'));
      const run = s.run(b.applied.runId)!;
      expect(run).toMatchObject({ mode: 'live', status: 'failed', failed: 1 });
      expect(run.message).toContain(`rsdesk retry --run ${b.applied.runId}`);
      expect(s.failures(b.applied.runId)).toEqual([{ uri: b.record.loc, reason: expect.stringContaining('404') }]);
    });
    // The checkpoint does not pass the failed change (a sync from it would fetch it again); the live side keeps
    // what it applied after it.
    expect(checkpointMs(rig)).toBe(ms(b.record.datetime));
    expect(withState(rig, liveHold)).toMatchObject({ through: ms(c.record.datetime), failed: [{ uri: b.record.loc, runId: b.applied.runId }] });

    // A restart applies nothing again: every notification is settled.
    await rig.engine.closeMirror(rig.dest);
    const mark = rig.fixture.requests.length;
    const events = rig.events.length;
    rig.engine.openMirror(rig.dest);
    await rig.engine.idle();
    expect(resourceGets(rig, mark)).toBe(0);
    expect(rig.events.slice(events).filter((e) => e.type === 'applied')).toEqual([]);
    expect(withState(rig, (s) => s.db.prepare('SELECT DISTINCT status FROM live_inbox').all())).toEqual([{ status: 'applied' }]);

    // Retried (the Source answers again), while the live side goes on: mirrored, and the next notification moves
    // the checkpoint past everything applied.
    rig.fixture.setBroken(rig.fixture.state.pathOf(bad), null);
    const retried = await retryResources({ dest: rig.dest, runId: b.applied.runId });
    expect(retried).toMatchObject({ updated: 1, failed: 0 });
    expect(mirrored(rig, bad)!.equals(sourceBytes(rig, bad))).toBe(true);
    // The checkpoint moves at once to what the live side applied, not at the next notification (which a quiet
    // Source may send days later).
    expect(checkpointMs(rig)).toBe(ms(c.record.datetime));
    expect(retried.liveCheckpoint).not.toBeNull();
    expect(withState(rig, liveHold)).toBeNull();
    expect(withState(rig, (s) => s.run(retried.runId)!.message)).toContain('in sync up to');
    const d = await change(rig, 'update', 6);
    expect(d.applied.failed).toBe(0);
    expect(checkpointMs(rig)).toBe(ms(d.record.datetime));
    expect(withState(rig, liveHold)).toBeNull();
  });

  it('mended by a later notification of the same resource, the checkpoint moves on', async () => {
    rig = await startRig();
    await subscribed(rig);
    await change(rig, 'update', 1);
    rig.fixture.setBroken(rig.fixture.state.pathOf(3), { status: 404 });
    const b = await change(rig, 'update', 3);
    expect(b.applied.failed).toBe(1);
    await change(rig, 'update', 4);
    expect(checkpointMs(rig)).toBe(ms(b.record.datetime));
    rig.fixture.setBroken(rig.fixture.state.pathOf(3), null);
    const again = await change(rig, 'update', 3);
    expect(again.applied).toMatchObject({ updated: 1, failed: 0 });
    expect(checkpointMs(rig)).toBe(ms(again.record.datetime));
    expect(mirrored(rig, 3)!.equals(sourceBytes(rig, 3))).toBe(true);
  });

  it('never moves the checkpoint past a failed change at its own instant, so a sync from it mends the resource', async () => {
    rig = await startRig();
    await subscribed(rig);
    const at = checkpointMs(rig);
    // The first change after the baseline, dated the baseline's own `at` (the fixture's clock), fails.
    rig.fixture.setBroken(rig.fixture.state.pathOf(3), { status: 404 });
    const b = await change(rig, 'update', 3);
    expect(ms(b.record.datetime)).toBe(at);
    expect(b.applied.failed).toBe(1);
    await change(rig, 'update', 5);
    expect(checkpointMs(rig)).toBeLessThanOrEqual(ms(b.record.datetime));

    await rig.engine.closeMirror(rig.dest);
    rig.fixture.setBroken(rig.fixture.state.pathOf(3), null);
    const result = await sync({ url: rig.capabilityList, dest: rig.dest, timeoutMs: 5_000 });
    expect(result.mode).toBe('incremental');
    expect(mirrored(rig, 3)!.equals(sourceBytes(rig, 3))).toBe(true);
  });

  it('a broken entry fails alone and for good: it neither hides a valid change of its URI nor holds the checkpoint', async () => {
    rig = await startRig();
    const sub = await subscribed(rig);
    await change(rig, 'update', 1);
    // The hub loses the fixture's own notification of the next change; a notification of ours takes its place,
    // with the valid change and, after it, two broken entries: one of the same URI, one without a loc.
    rig.fixture.hub.faults.drop = 1;
    const [record] = rig.fixture.change('update', 1, 7);
    const later = new Date(ms(record.datetime)).toISOString();
    const payload = rig.fixture.notifications.at(-1)!.replace(
      '</urlset>',
      `<url><loc>${record.loc}</loc><rs:md change="renamed" datetime="${later}"/></url>` + `<url><rs:md change="updated" datetime="${later}"/></url></urlset>`,
    );
    const res = await request(rig.engine.subscriptions().find((s) => s.id === sub.id)!.callbackUrl, {
      method: 'POST',
      body: payload,
      headers: { 'content-type': 'application/xml', 'x-hub-signature': signBody('sha256', SECRET, Buffer.from(payload)), link: `<${rig.topic}>; rel="self", <${rig.hubUrl}>; rel="hub"` },
    });
    await res.body.dump();
    expect(res.statusCode).toBe(202);
    const applied = await waitFor(rig, 'applied', (e) => e.changes.some((c) => c.uri === record.loc && c.outcome === 'updated'));
    expect(applied).toMatchObject({ updated: 1, failed: 2 });
    expect(applied.changes.filter((c) => c.outcome === 'failed').map((c) => c.reason)).toEqual([
      expect.stringContaining('change="renamed"'),
      expect.stringContaining('no <loc>'),
    ]);
    expect(mirrored(rig, 7)!.equals(sourceBytes(rig, 7))).toBe(true);
    // Retrying cannot mend the Source's document: the checkpoint moves on.
    expect(checkpointMs(rig)).toBe(ms(record.datetime));
    expect(withState(rig, liveHold)).toBeNull();
  });

  it('on a mirror not bound to a Source yet, records no run and keeps the notification in the inbox', async () => {
    rig = await startRig({ baseline: false });
    await subscribed(rig);
    const [record] = rig.fixture.change('update', 1, 2);
    const error = await waitFor(rig, 'error', (e) => /not bound to a Source/.test(e.message));
    expect(error.message).toMatch(/^Notifications cannot be applied to .* yet: it is not bound to a Source \(its first sync has not run\)\. They are kept in the inbox\.$/);
    await rig.engine.idle();
    withState(rig, (s) => {
      expect(s.runs()).toEqual([]);
      expect(s.db.prepare('SELECT status, run_id FROM live_inbox').all()).toEqual([{ status: 'received', run_id: null }]);
    });
    // Once bound (its first sync), the live side started again takes the notification up.
    await rig.engine.closeMirror(rig.dest);
    await sync({ url: rig.capabilityList, dest: rig.dest, timeoutMs: 5_000 });
    rig.engine.openMirror(rig.dest);
    await rig.engine.idle();
    expect(withState(rig, (s) => s.db.prepare('SELECT status FROM live_inbox').all())).toEqual([{ status: 'applied' }]);
    expect(mirrored(rig, 2)!.equals(sourceBytes(rig, 2))).toBe(true);
    expect(record.id).toBe(2);
  });
  it('a deletion under the keep policy is applied as kept: the copy stays and the feed says so', async () => {
    rig = await startRig();
    await subscribed(rig);
    const before = mirrored(rig, 4)!;
    const [record] = rig.fixture.change('delete', 1, 4);
    const applied = await waitFor(rig, 'applied', (e) => e.changes.some((c) => c.uri === record.loc));
    expect(applied.changes).toEqual([expect.objectContaining({ uri: record.loc, change: 'deleted', outcome: 'kept' })]);
    expect(mirrored(rig, 4)!.equals(before)).toBe(true);
  });
});
