// Notifications that come faster than they can be applied: the inbox holds a bounded number waiting; past it a
// delivery is answered 503 with Retry-After (the hub sends it again later), the live feed says how many were not
// stored and why, and a hub that sends them again gets every one applied, in order, none lost.
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_EVENT_CHANGES } from './feed.ts';
import { signBody } from './signature.ts';
import { startRig, waitFor, type Rig } from './test-support.ts';

let rig: Rig;
afterEach(async () => {
  await rig?.close();
});

const SECRET = 'flood secret';

describe('a flood of notifications', () => {
  it('keeps at most the bound waiting, asks the hub to send the rest later, says so, and loses none the hub sends again', async () => {
    rig = await startRig({ engine: { maxPending: { notifications: 5, bytes: 1024 * 1024 } } });
    const sub = await rig.engine.subscribe({ dest: rig.dest, topic: rig.topic, hub: rig.hubUrl, secret: SECRET });
    await waitFor(rig, 'subscribed');
    await rig.fixture.hub.settled();
    // Each notification names a resource without its hash: applying it fetches it, slowly.
    rig.fixture.setResourceDelay(200);
    const feed = rig.engine.feed(rig.dest)!;
    const cursor = Date.parse(feed.store.subscription(sub.id)!.cursor!);
    const callback = rig.engine.subscriptions()[0].callbackUrl;
    const payloads = Array.from({ length: 20 }, (_, i) => {
      const from = new Date(cursor + i * 1000).toISOString();
      const until = new Date(cursor + (i + 1) * 1000).toISOString();
      return (
        `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">` +
        `<rs:md capability="change-notification" from="${from}" until="${until}"/>` +
        `<url><loc>${rig.fixture.state.locOf((i % 10) + 1)}</loc><rs:md change="updated" datetime="${until}"/></url></urlset>`
      );
    });
    const post = async (body: string) => {
      const res = await request(callback, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/xml', link: `<${rig.topic}>; rel="self", <${rig.hubUrl}>; rel="hub"`, 'x-hub-signature': signBody('sha256', SECRET, Buffer.from(body)) },
      });
      await res.body.dump();
      return { status: res.statusCode, retryAfter: res.headers['retry-after'] };
    };

    const answers = await Promise.all(payloads.map(post));
    expect(answers.filter((a) => a.status === 202)).toHaveLength(5);
    expect(answers.filter((a) => a.status === 503)).toEqual(Array.from({ length: 15 }, () => ({ status: 503, retryAfter: '30' })));
    expect(feed.store.pending().count).toBeLessThanOrEqual(5);
    const said = await waitFor(rig, 'rejected', (e) => e.what === 'delivery' && e.subscriptionId === sub.id);
    expect(said.reason).toMatch(/^1 notification was not stored: the inbox of .* keeps at most 5 notifications .* The hub was asked to send them again later/);

    // As a hub does: each refused one is sent again, in order, until it is taken.
    for (const [i, body] of payloads.entries()) {
      if (answers[i].status !== 503) continue;
      for (let tries = 0; (await post(body)).status === 503; tries++) {
        expect(tries).toBeLessThan(200);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    await rig.engine.idle();
    const applied = rig.events.filter((e) => e.type === 'applied').flatMap((e) => (e.type === 'applied' ? e.changes.map((c) => c.datetime) : []));
    expect(applied).toHaveLength(20);
    expect(rig.events.filter((e) => e.type === 'gap')).toEqual([]);
    expect(feed.store.subscription(sub.id)!.cursor).toBe(new Date(cursor + 20_000).toISOString());
  });

  it('lists at most MAX_EVENT_CHANGES changes of a large notification in its events, the failed ones first', async () => {
    rig = await startRig();
    const sub = await rig.engine.subscribe({ dest: rig.dest, topic: rig.topic, hub: rig.hubUrl, secret: SECRET });
    await waitFor(rig, 'subscribed');
    await rig.fixture.hub.settled();
    const from = rig.engine.subscriptions()[0].cursor!;
    const until = new Date(Date.parse(from) + 1000).toISOString();
    // Many deletions of resources the mirror does not hold (nothing to fetch), then one whose fetch fails.
    const entries = Array.from({ length: 2 * MAX_EVENT_CHANGES }, (_, i) => `<url><loc>${rig.fixture.url}/dataset1/gone/${i}</loc><rs:md change="deleted" datetime="${until}"/></url>`);
    rig.fixture.setBroken('/dataset1/missing', { status: 404 });
    const body =
      `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">` +
      `<rs:md capability="change-notification" from="${from}" until="${until}"/>${entries.join('')}` +
      `<url><loc>${rig.fixture.url}/dataset1/missing</loc><rs:md change="created" datetime="${until}"/></url></urlset>`;
    const res = await request(rig.engine.subscriptions()[0].callbackUrl, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/xml', 'x-hub-signature': signBody('sha256', SECRET, Buffer.from(body)) },
    });
    await res.body.dump();
    const notification = await waitFor(rig, 'notification', (e) => e.subscriptionId === sub.id);
    expect(notification.count).toBe(2 * MAX_EVENT_CHANGES + 1);
    expect(notification.changes).toHaveLength(MAX_EVENT_CHANGES);
    const applied = await waitFor(rig, 'applied', (e) => e.subscriptionId === sub.id, 30_000);
    expect(applied.changes).toHaveLength(MAX_EVENT_CHANGES);
    expect(applied.changes.filter((c) => c.outcome === 'failed').map((c) => c.uri)).toContain(`${rig.fixture.url}/dataset1/missing`);
    expect(applied.failed).toBeGreaterThanOrEqual(1);
  });
});
