// A Source that asks live applying to wait (429 or 503 with a Retry-After longer than a batch waits out), against the
// fixture Source on 127.0.0.1: the mirror's notifications are held in the inbox (still received and stored meanwhile),
// the feed says why and until when, and they are applied in order when the wait ends.
// Before, each notified resource so refused failed at once and was kept for a retry, and the notifications after it
// were fetched from the refusing Source all the same.
import { afterEach, describe, expect, it } from 'vitest';
import { MirrorState, stateDirOf } from '../mirror/state.ts';
import { mirrored, sourceBytes, startRig, waitFor, type Rig } from './test-support.ts';

let rig: Rig;
afterEach(async () => {
  await rig?.close();
});

async function subscribed(r: Rig) {
  const sub = await r.engine.subscribe({ dest: r.dest, topic: r.topic, hub: r.hubUrl, secret: 'a secret of the test' });
  await waitFor(r, 'subscribed', (e) => e.subscriptionId === sub.id);
  await r.fixture.hub.settled();
  return sub;
}

const resourceGets = (r: Rig, from: number) => r.fixture.requests.slice(from).filter((q) => /\/dataset1\/res\//.test(q.path)).length;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('live applying and a Source that asks to wait', () => {
  it('holds the notifications on a longer Retry-After, across a restart, keeps receiving them, says why and until when, then applies them in order', async () => {
    // A batch waits 300 ms at most here (120 s in use), so that a Retry-After of 6 s is "long" and the test short.
    rig = await startRig({ engine: { maxRetryAfterMs: 300 } });
    const sub = await subscribed(rig);
    rig.fixture.setRefusing({ prefix: '/dataset1/res/', status: 429, headers: { 'retry-after': '6' } });
    const refusedAt = Date.now();
    const [first] = rig.fixture.change('update', 1, 2);
    const held = await waitFor(rig, 'note', (e) => e.message.startsWith('Live applying is held'));
    expect(held.subscriptionId).toBe(sub.id);
    expect(held.message).toMatch(
      /^Live applying is held until \d\d:\d\d UTC: the Source answered HTTP 429 \(Too Many Requests\) to http:\/\/127\.0\.0\.1:\d+\/dataset1\/res\/\S+, asking to wait 6 s \(Retry-After\)\. What was verified stays; 1 notification not yet applied waits in the inbox \(new ones are still received\) and is applied in order then\.$/,
    );
    // Nothing applied and nothing failed: the refused change is not taken for a failure to retry.
    expect(rig.events.some((e) => e.type === 'applied')).toBe(false);

    // While held: two more notifications (the second changes resource 2 again) are received and stored, and nothing
    // is asked of the Source.
    const asked = rig.fixture.requests.length;
    const [second] = rig.fixture.change('update', 1, 3);
    const [third] = rig.fixture.change('update', 1, 2);
    // Stored as they come (the hub's delivery answered), though not read until the wait is over.
    const state = new MirrorState(stateDirOf(rig.dest));
    try {
      const waiting = () => (state.db.prepare("SELECT COUNT(*) AS n FROM live_inbox WHERE subscription_id = ? AND status = 'received'").get(sub.id) as { n: number }).n;
      for (let i = 0; i < 200 && waiting() < 3; i++) await sleep(10);
      expect(waiting()).toBe(3);
    } finally {
      state.close();
    }
    // A restart of the live side keeps the wait (kept with the mirror): it does not ask the Source at once.
    await rig.engine.closeMirror(rig.dest);
    rig.engine.openMirror(rig.dest);
    await sleep(500);
    expect(resourceGets(rig, asked)).toBe(0);
    expect(Date.now() - refusedAt).toBeLessThan(6_000);
    expect(rig.events.some((e) => e.type === 'applied')).toBe(false);

    // The Source serves again; the wait ends 6 s after the refusal: all three are applied then, in order.
    rig.fixture.setRefusing(null);
    await waitFor(rig, 'applied', (e) => e.changes.some((c) => c.uri === third.loc && c.datetime === third.datetime), 10_000);
    expect(Date.now() - refusedAt).toBeGreaterThanOrEqual(5_900);
    const all = rig.events.filter((e) => e.type === 'applied');
    // Applied in order, each as it was notified: resource 2's first change, superseded at the Source by the third
    // while it waited, may fail on its listed length (it is kept for a retry; the third brings the current bytes).
    const failures = all.flatMap((e) => e.changes.filter((c) => c.outcome === 'failed'));
    expect(failures.every((c) => c.uri === first.loc && c.datetime === first.datetime && /the list says/.test(c.reason ?? ''))).toBe(true);
    const order = all.flatMap((e) => e.changes.map((c) => c.datetime!));
    expect(order).toEqual([...order].sort());
    const uris = all.flatMap((e) => e.changes.map((c) => `${c.uri} ${c.datetime}`));
    // Resource 2's first change is collapsed into its last when they share a batch; either way, the last one wins.
    expect(uris).toContain(`${second.loc} ${second.datetime}`);
    expect(uris).toContain(`${third.loc} ${third.datetime}`);
    expect(first.loc).toBe(third.loc);
    expect(mirrored(rig, 2)!.equals(sourceBytes(rig, 2))).toBe(true);
    expect(mirrored(rig, 3)!.equals(sourceBytes(rig, 3))).toBe(true);
    const row = rig.engine.subscriptions().find((s) => s.id === sub.id)!;
    expect(Date.parse(row.cursor!)).toBeGreaterThanOrEqual(Date.parse(third.datetime));
  });
});
