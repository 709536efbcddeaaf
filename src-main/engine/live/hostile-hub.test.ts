// The callback server attacked as an untrusted hub or publisher would: a verification echo of megabytes, a denial
// for a topic never asked for, signatures with an unknown algorithm or a weaker one than the hub used before, a
// notification of 0 bytes, a flood of pings. Each is refused or taken as harmless, says why, and loses nothing.
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { signBody } from './signature.ts';
import { startRig, throughRecordingProxy, waitFor, type Rig } from './test-support.ts';

let rig: Rig;
afterEach(async () => {
  await rig?.close();
});

const SECRET = 'the hub and we know this';

async function subscribed(r: Rig, secret: string | null = SECRET) {
  const sub = await r.engine.subscribe({ dest: r.dest, topic: r.topic, hub: r.hubUrl, secret });
  await waitFor(r, 'subscribed', (e) => e.subscriptionId === sub.id);
  await r.fixture.hub.settled();
  return r.engine.subscriptions().find((s) => s.id === sub.id)!;
}

async function post(url: string, body: string | Buffer, headers: Record<string, string>) {
  const res = await request(url, { method: 'POST', body, headers });
  return { status: res.statusCode, text: await res.body.text() };
}

async function get(url: string) {
  const res = await request(url, { method: 'GET' });
  return { status: res.statusCode, text: await res.body.text() };
}

/**
 * 200 requests, in ten rounds of twenty at once: ten times the noise limit the flood tests set (20 a 1 s window), more
 * than the 100 events they keep. `send(n)` makes the nth; the answers' statuses, in order.
 */
async function flood(send: (n: number) => Promise<{ status: number }>): Promise<number[]> {
  const answers: number[] = [];
  for (let round = 0; round < 10; round++) {
    const batch = await Promise.all(Array.from({ length: 20 }, (_, i) => send(round * 20 + i)));
    answers.push(...batch.map((a) => a.status));
  }
  return answers;
}

describe('a hostile hub', () => {
  it('cannot have a verification echo megabytes: the request is refused before it is read, and said so', async () => {
    rig = await startRig();
    const sub = await subscribed(rig);
    const url = `${sub.callbackUrl}?${new URLSearchParams({ 'hub.mode': 'subscribe', 'hub.topic': rig.topic, 'hub.challenge': 'c'.repeat(10 * 1024 * 1024) })}`;
    const answer = await get(url).catch((err: Error) => ({ status: null, text: err.message }));
    expect(answer.status).toBe(431);
    expect(answer.text.length).toBeLessThan(1_000);
    const said = await waitFor(rig, 'rejected', (e) => /request line and headers/.test(e.reason));
    expect(said.reason).toContain('16 KiB');
    // The subscription is as it was, and the server goes on.
    expect(rig.engine.subscriptions()[0]).toMatchObject({ status: 'active' });
    expect((await get(`${sub.callbackUrl}?${new URLSearchParams({ 'hub.mode': 'subscribe', 'hub.topic': rig.topic, 'hub.challenge': 'x' })}`)).status).toBe(404);
  });

  it('cannot end a subscription with a denial for a topic it was never asked for', async () => {
    rig = await startRig();
    const sub = await subscribed(rig);
    const denied = await rig.fixture.hub.forgeVerification(sub.callbackUrl, { 'hub.mode': 'denied', 'hub.topic': 'http://127.0.0.1:1/another-topic', 'hub.reason': 'go away' });
    expect(denied.status).toBe(404);
    const unknown = await rig.fixture.hub.forgeVerification(`${new URL(sub.callbackUrl).origin}/websub/${'B'.repeat(32)}`, { 'hub.mode': 'denied', 'hub.topic': rig.topic });
    expect(unknown.status).toBe(404);
    expect(rig.engine.subscriptions()[0]).toMatchObject({ status: 'active', lastError: null });
    expect(rig.events.some((e) => e.type === 'denied')).toBe(false);
  });

  it('discards a notification signed with an algorithm WebSub does not name, or with a weaker one than the hub has used', async () => {
    rig = await startRig();
    const sub = await subscribed(rig);
    const feed = rig.engine.feed(rig.dest)!;
    const body = rig.fixture.notifications.at(-1) ?? '<urlset/>';
    const link = `<${rig.topic}>; rel="self", <${rig.hubUrl}>; rel="hub"`;
    for (const header of ['md5=' + '0'.repeat(32), 'sha-256=' + signBody('sha256', SECRET, Buffer.from(body)).slice(7), 'SHA256 ' + signBody('sha256', SECRET, Buffer.from(body)).slice(7)]) {
      const answer = await post(sub.callbackUrl, body, { 'content-type': 'application/xml', link, 'x-hub-signature': header });
      expect(answer.status).toBe(202);
      expect(answer.text).toBe('Discarded\n');
    }
    expect(feed.store.counts(sub.id)).toEqual({});
    // The hub signs with sha256; a delivery signed with sha1 afterwards is a downgrade an attacker who broke
    // HMAC-SHA1 would try: discarded, and said so.
    rig.fixture.change('update');
    await waitFor(rig, 'applied');
    rig.fixture.hub.faults.method = 'sha1';
    rig.fixture.change('update');
    const downgrade = await waitFor(rig, 'rejected', (e) => e.what === 'delivery' && /sha1/.test(e.reason), 10_000, rig.events.length);
    expect(downgrade.reason).toContain('sha256 before');
    await rig.fixture.hub.settled();
    await rig.engine.idle();
    expect(rig.events.filter((e) => e.type === 'notification')).toHaveLength(1);
    // A stronger one is taken, and becomes the least from then on.
    rig.fixture.hub.faults.method = 'sha512';
    rig.fixture.change('update');
    await rig.fixture.hub.settled();
    await rig.engine.idle();
    expect(rig.events.filter((e) => e.type === 'notification').length).toBeGreaterThanOrEqual(2);
  });

  it('takes a notification of 0 bytes as a refused payload, answered and stored, never applied', async () => {
    rig = await startRig();
    const sub = await subscribed(rig);
    const link = `<${rig.topic}>; rel="self", <${rig.hubUrl}>; rel="hub"`;
    const answer = await post(sub.callbackUrl, Buffer.alloc(0), { 'content-type': 'application/xml', link, 'x-hub-signature': signBody('sha256', SECRET, Buffer.alloc(0)) });
    expect(answer.status).toBe(202);
    const refused = await waitFor(rig, 'rejected', (e) => e.what === 'notification');
    expect(refused.reason.length).toBeGreaterThan(0);
    await rig.engine.idle();
    expect(rig.engine.feed(rig.dest)!.store.counts(sub.id)).toEqual({ rejected: 1 });
    expect(rig.events.some((e) => e.type === 'applied')).toBe(false);
  });

  it('is not asked when the Source names one further inside the network than itself (a cloud server\'s metadata service)', async () => {
    rig = await startRig();
    await throughRecordingProxy(async (asked) => {
      const metadata = 'http://169.254.169.254/latest/hub';
      await expect(rig.engine.subscribe({ dest: rig.dest, topic: rig.topic, hub: metadata })).rejects.toThrow(
        /^Not subscribed: the hub http:\/\/169\.254\.169\.254\/latest\/hub is not asked, since 169\.254\.169\.254 is a link-local address \(such as a cloud server’s metadata service\), which a Source at 127\.0\.0\.1:\d+ may not send requests to$/,
      );
      await new Promise((r) => setTimeout(r, 300));
      expect(asked).toEqual([]);
      expect(rig.engine.subscriptions()).toEqual([]);
    });
    // A hub as far inside as the Source is asked as ever.
    expect(await subscribed(rig)).toMatchObject({ status: 'active' });
  });

  it('cannot push the feed out with forged deliveries: a few are listed, the rest counted in one note', async () => {
    rig = await startRig({ engine: { keepEvents: 100, noise: { perWindow: 20, windowMs: 1_000 } } });
    const sub = await subscribed(rig);
    const answers = await flood((n) =>
      post(sub.callbackUrl, `<forged n="${n}"/>`, { 'content-type': 'application/xml', 'x-hub-signature': `sha256=${'0'.repeat(64)}` }),
    );
    // Each is answered as WebSub asks (2xx, discarded), as before.
    expect(answers.every((s) => s === 202)).toBe(true);
    const note = await waitFor(rig, 'note', (e) => /more refused requests? came within 1 s/.test(e.message), 5_000);
    expect(note.message).toContain('each was answered');
    // Before, each of the 200 was an event of its own: the 100 kept for a view opening late were all of them.
    const listed = rig.events.filter((e) => e.type === 'rejected' && e.what === 'delivery').length;
    expect(listed).toBeLessThan(100);
    expect(rig.engine.events.recent().some((e) => e.type === 'subscribed')).toBe(true);
    expect(rig.engine.subscriptions()[0]).toMatchObject({ status: 'active' });
  });

  it('cannot push the feed out with verifications it was never asked for at a subscription\'s callback URL either', async () => {
    rig = await startRig({ engine: { keepEvents: 100, noise: { perWindow: 20, windowMs: 1_000 } } });
    const sub = await subscribed(rig);
    const answers = await flood((n) =>
      get(`${sub.callbackUrl}?${new URLSearchParams({ 'hub.mode': 'subscribe', 'hub.topic': `http://127.0.0.1:1/other/${n}`, 'hub.challenge': 'x' })}`),
    );
    expect(answers.every((s) => s === 404)).toBe(true);
    await waitFor(rig, 'note', (e) => /more refused requests? came within 1 s/.test(e.message), 5_000);
    expect(rig.events.filter((e) => e.type === 'rejected' && e.what === 'verification').length).toBeLessThan(100);
    expect(rig.engine.events.recent().some((e) => e.type === 'subscribed')).toBe(true);
    expect(rig.engine.subscriptions()[0]).toMatchObject({ status: 'active' });
  });
});
