// The WebSub subscriber against the fixture Source's hub, all on 127.0.0.1: subscribe and intent verification,
// signed deliveries applied to the mirror, renewal, unsubscription; forged verifications, bad and missing
// signatures, denial, a failing hub, refused payloads and bodies over the limit.
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_TIMER_MS } from './backoff.ts';
import { signBody } from './signature.ts';
import { MAX_RENEW_MS } from './subscriber.ts';
import { mirrored, sourceBytes, startRig, waitFor, type Rig } from './test-support.ts';

let rig: Rig;
afterEach(async () => {
  await rig?.close();
});

async function subscribed(r: Rig, o: { leaseSeconds?: number; secret?: string | null } = {}) {
  const sub = await r.engine.subscribe({ dest: r.dest, topic: r.topic, hub: r.hubUrl, ...o });
  await waitFor(r, 'subscribed', (e) => e.subscriptionId === sub.id);
  // The hub records the subscription once our answer to its verification is in.
  await r.fixture.hub.settled();
  return r.engine.subscriptions().find((s) => s.id === sub.id)!;
}

async function post(url: string, body: string, headers: Record<string, string>) {
  const res = await request(url, { method: 'POST', body, headers });
  return { status: res.statusCode, text: await res.body.text() };
}

describe('subscribing', () => {
  it('subscribes, answers the verification, receives signed notifications and applies them to the mirror', async () => {
    rig = await startRig();
    const sub = await subscribed(rig, { leaseSeconds: 3600 });
    expect(sub.status).toBe('active');
    expect(sub.leaseSeconds).toBe(3600);
    expect(sub.callbackUrl).toMatch(/\/websub\/[A-Za-z0-9_-]{32}$/);
    // The form the hub got: every parameter of WebSub §5.1, a fresh secret of our own.
    const form = new URLSearchParams(rig.fixture.hub.requests.at(-1)!.body);
    expect(form.get('hub.mode')).toBe('subscribe');
    expect(form.get('hub.topic')).toBe(rig.topic);
    expect(form.get('hub.callback')).toBe(sub.callbackUrl);
    expect(form.get('hub.lease_seconds')).toBe('3600');
    expect(form.get('hub.secret')).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(rig.fixture.hub.verifications.at(-1)).toMatchObject({ mode: 'subscribe', confirmed: true });

    const [record] = rig.fixture.change('update');
    const n = await waitFor(rig, 'notification');
    expect(n.changes).toEqual([{ uri: record.loc, change: 'updated', datetime: record.datetime }]);
    expect(n.warnings).toEqual([]);
    const applied = await waitFor(rig, 'applied');
    expect(applied.updated).toBe(1);
    expect(applied.changes[0]).toMatchObject({ uri: record.loc, outcome: 'updated' });
    expect(mirrored(rig, record.id)!.equals(sourceBytes(rig, record.id))).toBe(true);
    expect(rig.fixture.hub.deliveries.at(-1)).toMatchObject({ status: 202, attempt: 1 });
    expect(rig.fixture.hub.deliveries.at(-1)!.signature).toMatch(/^sha256=[0-9a-f]{64}$/);
  });

  it('renews the lease at about 80 % and unsubscribes', async () => {
    rig = await startRig();
    const sub = await subscribed(rig, { leaseSeconds: 2 });
    const renewed = await waitFor(rig, 'renewed', (e) => e.subscriptionId === sub.id, 5_000);
    expect(renewed.leaseSeconds).toBe(2);
    // The same lease as before, nothing failed: news to no one (the feed lists no row for it).
    expect(renewed.routine).toBe(true);
    await rig.fixture.hub.settled();
    const verifications = rig.fixture.hub.verifications.filter((v) => v.mode === 'subscribe' && v.confirmed);
    expect(verifications.length).toBeGreaterThanOrEqual(2);
    await rig.engine.unsubscribe(rig.dest, sub.id);
    await waitFor(rig, 'unsubscribed', (e) => e.subscriptionId === sub.id);
    await rig.fixture.hub.settled();
    expect(rig.fixture.hub.live(rig.topic)).toHaveLength(0);
    expect(rig.engine.subscriptions()[0].status).toBe('unsubscribed');
    // A delivery after the end is told 410 Gone.
    const res = await post(sub.callbackUrl, '<x/>', { 'content-type': 'application/xml' });
    expect(res.status).toBe(410);
  });

  it('renews no more often than its least interval when the hub grants a lease of 0 seconds, and says so once', async () => {
    rig = await startRig({ fixture: { hub: { maxLeaseSeconds: 0 } }, engine: { minRenewMs: 1_000 } });
    const sub = await subscribed(rig, { leaseSeconds: 3600 });
    expect(sub.leaseSeconds).toBe(0);
    await new Promise((r) => setTimeout(r, 2_500));
    await rig.fixture.hub.settled();
    // The first verification and two renewals, a second apart; not a loop of requests as fast as they go.
    const verified = rig.fixture.hub.verifications.filter((v) => v.mode === 'subscribe' && v.confirmed);
    expect(verified.length).toBeGreaterThanOrEqual(2);
    expect(verified.length).toBeLessThanOrEqual(4);
    // Said once, as a note: nothing failed.
    const said = rig.events.filter((e) => (e.type === 'note' || e.type === 'error') && /granted a lease of 0 seconds/.test(e.message));
    expect(said).toHaveLength(1);
    expect(said[0].type).toBe('note');
    // A lease of 0 seconds has ended as soon as it is granted.
    expect(rig.engine.subscriptions()[0].status).toBe('expired');
  });

  it('shows a lease that ended before its renewal as ended, then as renewed once the hub verifies again', async () => {
    // A lease of 1 s, renewed no sooner than 2 s after its verification: for a second it has lapsed at the hub.
    rig = await startRig({ fixture: { hub: { maxLeaseSeconds: 1 } }, engine: { minRenewMs: 2_000 } });
    const sub = await subscribed(rig, { leaseSeconds: 3600 });
    expect(sub.leaseSeconds).toBe(1);
    const expired = await waitFor(rig, 'expired', (e) => e.subscriptionId === sub.id, 3_000);
    // Foreseen: the hub grants less than the least renewal interval, as the note says.
    expect(expired.foreseen).toBe(true);
    // Said when the lease ended, not at the renewal a second later.
    expect(Date.parse(expired.at) - Date.parse(sub.expiresAt!)).toBeLessThan(500);
    expect(rig.engine.subscriptions()[0].status).toBe('expired');
    const renewed = await waitFor(rig, 'renewed', (e) => e.subscriptionId === sub.id, 5_000);
    expect(Date.parse(renewed.at)).toBeGreaterThan(Date.parse(expired.at));
    expect(rig.engine.subscriptions()[0].status).toBe('active');
    // Its lease ended as foreseen: a renewal like every other, every 2 s here (10 s by default), not listed in the feed.
    expect(renewed.routine).toBe(true);
    // The short lease is explained once, not at every renewal.
    expect(rig.events.filter((e) => e.type === 'note' && /granted a lease of 1 second/.test(e.message))).toHaveLength(1);
  });

  it('stops cleanly while a retried request to the hub is still unanswered', async () => {
    rig = await startRig();
    // A hub that fails the first request (so the next is asked from a timer) and answers the second late.
    let asked = 0;
    let secondAsked!: () => void;
    const second = new Promise<void>((r) => (secondAsked = r));
    const hub = createServer((req, res) => {
      req.resume();
      asked++;
      if (asked === 1) return void res.writeHead(503, { 'retry-after': '0' }).end('busy');
      secondAsked();
      setTimeout(() => res.writeHead(202).end(), 300);
    });
    await new Promise<void>((r) => hub.listen(0, '127.0.0.1', r));
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    try {
      await rig.engine.subscribe({ dest: rig.dest, topic: rig.topic, hub: `http://127.0.0.1:${(hub.address() as AddressInfo).port}/` });
      await second;
      await rig.engine.stop();
      const fixture = rig.fixture;
      rig = { ...rig, close: () => fixture.close() };
      await new Promise((r) => setTimeout(r, 500));
      // Reading the closed mirror state after the late answer threw, and nothing caught it.
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      hub.closeAllConnections();
      hub.close();
    }
  });

  it('stopping ends a request to a hub that never answers at once, not at its deadline', async () => {
    // Before: the request stayed open until its deadline (30 s by default), and with it `rsdesk watch` and the app's quit.
    rig = await startRig({ engine: { hubTimeoutMs: 20_000 } });
    let reached!: () => void;
    const asked = new Promise<void>((r) => (reached = r));
    let closed!: () => void;
    const gone = new Promise<void>((r) => (closed = r));
    const hub = createServer((req) => {
      req.resume();
      req.socket.on('close', closed);
      reached();
    });
    await new Promise<void>((r) => hub.listen(0, '127.0.0.1', r));
    try {
      const hubUrl = `http://127.0.0.1:${(hub.address() as AddressInfo).port}/`;
      const subscribing = rig.engine.subscribe({ dest: rig.dest, topic: rig.topic, hub: hubUrl }).then(
        () => 'subscribed',
        (err: Error) => err.message,
      );
      await asked;
      const started = Date.now();
      await rig.engine.stop();
      const fixture = rig.fixture;
      rig = { ...rig, close: () => fixture.close() };
      await Promise.race([gone, new Promise((_, reject) => setTimeout(() => reject(new Error('the request to the hub was still open 2 s after the engine stopped')), 2_000))]);
      expect(await subscribing).toBe(`The live engine stopped before the hub ${hubUrl} answered`);
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      hub.closeAllConnections();
      hub.close();
    }
  });

  it('renews a lease of years within a month all the same (here its cap set to 1 s), and says so once', async () => {
    const years = 10 * 365 * 86_400;
    rig = await startRig({ fixture: { hub: { maxLeaseSeconds: years } }, engine: { minRenewMs: 500, maxRenewMs: 1_000 } });
    const sub = await subscribed(rig, { leaseSeconds: years });
    expect(sub.leaseSeconds).toBe(years);
    // At 80 % of the lease, the renewal came in 8 years: a hub that forgot the subscription meanwhile was never asked.
    const renewed = await waitFor(rig, 'renewed', (e) => e.subscriptionId === sub.id, 5_000);
    expect(renewed.leaseSeconds).toBe(years);
    await rig.fixture.hub.settled();
    const said = rig.events.filter((e) => e.type === 'note' && /granted a lease of 315,360,000 seconds \(10 years; WebSub recommends at most 2,678,400, a month\)/.test(e.message));
    expect(said).toHaveLength(1);
    expect(said[0].type === 'note' && said[0].message).toContain('renewed every 1 second all the same');
    // The default cap's timer fits setTimeout, which fires a longer one after 1 ms.
    expect(MAX_RENEW_MS).toBeLessThanOrEqual(MAX_TIMER_MS);
  });

  it('says a renewal the hub refuses as a renewal, with when the lease ends, then that it has ended, and renews once the hub takes it', async () => {
    rig = await startRig({ engine: { minRenewMs: 500, retryBaseMs: 200 } });
    const sub = await subscribed(rig, { leaseSeconds: 2 });
    rig.fixture.hub.faults.failRequests = 1_000;
    const first = await waitFor(rig, 'error', (e) => e.subscriptionId === sub.id, 5_000);
    // Before: "Subscribing to … failed (…); trying again in 0 s", as if it were the first subscription.
    expect(first.message).toBe(
      `Renewing the subscription to ${rig.topic} failed (the hub ${new URL(rig.hubUrl).host} answered HTTP 503: The hub is busy; try again later); trying again in a moment; its lease ends at ${sub.expiresAt}`,
    );
    const expired = await waitFor(rig, 'expired', (e) => e.subscriptionId === sub.id, 5_000);
    expect(expired.foreseen).toBe(false);
    const after = rig.events.length;
    const lapsed = await waitFor(rig, 'error', (e) => e.subscriptionId === sub.id, 5_000, after);
    expect(lapsed.message).toMatch(/^Renewing the subscription to .* failed \(.*\); trying again in .*; its lease has ended, and the hub sends nothing until it is renewed$/);
    rig.fixture.hub.faults.failRequests = 0;
    const renewed = await waitFor(rig, 'renewed', (e) => e.subscriptionId === sub.id, 10_000, after);
    expect(rig.engine.subscriptions()[0]).toMatchObject({ status: 'active', lastError: null });
    // After failures, the renewal is news: the feed lists it.
    expect(renewed.routine).toBe(false);
  });

  it('a renewal that keeps failing is tried again soon after its lease has ended, however long the backoff has grown', async () => {
    // Before, the backoff went on doubling (up to an hour) once the lease had ended: a hub down for a while, then
    // back, waited that long more for the renewal while it sent nothing. Scaled down: backoff from 200 ms, the cap
    // past the lease's end 400 ms (5 min by default).
    rig = await startRig({ engine: { minRenewMs: 500, retryBaseMs: 200, lapsedRetryMaxMs: 400 } });
    const sub = await subscribed(rig, { leaseSeconds: 2 });
    rig.fixture.hub.faults.failRequests = 1_000;
    const expired = await waitFor(rig, 'expired', (e) => e.subscriptionId === sub.id, 5_000);
    const from = rig.events.indexOf(expired);
    await new Promise((r) => setTimeout(r, 3_000));
    const lapsed = rig.events.slice(from).filter((e) => e.type === 'error' && e.subscriptionId === sub.id).map((e) => (e as { message: string }).message);
    // Each tried again within 400 ms; before, 2 s, 3 s, 6 s … apart.
    for (const message of lapsed) expect(message).toMatch(/; trying again in a moment; its lease has ended/);
    expect(lapsed.length).toBeGreaterThanOrEqual(3);
    rig.fixture.hub.faults.failRequests = 0;
    await waitFor(rig, 'renewed', (e) => e.subscriptionId === sub.id, 2_000, from);
  });

  it('retries with backoff when the hub fails, and records a denial', async () => {
    rig = await startRig();
    rig.fixture.hub.faults.failRequests = 2;
    const sub = await subscribed(rig);
    expect(rig.events.filter((e) => e.type === 'error' && e.subscriptionId === sub.id)).toHaveLength(2);
    expect(rig.events.filter((e) => e.type === 'subscribing').map((e) => (e as { attempt: number }).attempt)).toEqual([1, 2, 3]);

    await rig.engine.unsubscribe(rig.dest, sub.id);
    await waitFor(rig, 'unsubscribed');
    rig.fixture.hub.faults.deny = 'Not for you';
    await rig.engine.subscribe({ dest: rig.dest, topic: rig.topic, hub: rig.hubUrl });
    const denied = await waitFor(rig, 'denied');
    expect(denied.reason).toBe('Not for you');
    expect(rig.engine.subscriptions()[0]).toMatchObject({ status: 'denied', lastError: 'Not for you' });
  });

  it('restores subscriptions when the engine starts again', async () => {
    rig = await startRig();
    const sub = await subscribed(rig, { leaseSeconds: 3600 });
    await rig.engine.closeMirror(rig.dest);
    rig.engine.openMirror(rig.dest);
    expect(rig.engine.subscriptions()).toMatchObject([{ id: sub.id, status: 'active' }]);
    const [record] = rig.fixture.change('create');
    await waitFor(rig, 'applied', (e) => e.changes.some((c) => c.uri === record.loc));
    expect(mirrored(rig, record.id)!.equals(sourceBytes(rig, record.id))).toBe(true);
  });
});

describe('moving the callback server', () => {
  it('asks the hub at once to send to the new public URL and to unsubscribe the old one', async () => {
    rig = await startRig();
    const sub = await subscribed(rig, { leaseSeconds: 3600 });
    const address = rig.engine.address!;
    const port = Number(new URL(address).port);
    // A reverse proxy's prefix: the same server answers under it (tokens are matched at the end of the path).
    await rig.engine.reconfigure({ host: '127.0.0.1', port, publicUrl: `${address}/proxy/` });
    const moved = rig.engine.subscriptions()[0].callbackUrl;
    expect(moved).toBe(sub.callbackUrl.replace(address, `${address}/proxy`));
    await waitFor(rig, 'renewed', (e) => e.subscriptionId === sub.id);
    const deadline = Date.now() + 5_000;
    while (rig.fixture.hub.live(rig.topic).length > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await rig.fixture.hub.settled();
    expect(rig.fixture.hub.live(rig.topic).map((s) => s.callback)).toEqual([moved]);
    expect(rig.fixture.hub.verifications.filter((v) => v.callback === sub.callbackUrl && v.mode === 'unsubscribe')).toMatchObject([{ confirmed: true }]);
    // The subscription itself goes on: active, and applying what arrives at the new URL.
    expect(rig.engine.subscriptions()[0]).toMatchObject({ status: 'active' });
    const [record] = rig.fixture.change('update');
    await waitFor(rig, 'applied', (e) => e.changes.some((c) => c.uri === record.loc));
    expect(rig.fixture.hub.deliveries.at(-1)).toMatchObject({ callback: moved, status: 202 });
    // Nothing changes when nothing moved; an unsubscription the hub was not asked for is still refused.
    await rig.engine.reconfigure({ host: '127.0.0.1', port, publicUrl: `${address}/proxy` });
    expect(rig.engine.subscriptions()[0].callbackUrl).toBe(moved);
    const forged = await rig.fixture.hub.forgeVerification(moved, { 'hub.mode': 'unsubscribe', 'hub.topic': rig.topic, 'hub.challenge': 'x' });
    expect(forged.status).toBe(404);
  });
});

describe('forgeries', () => {
  it('answers 404 to verifications for an unknown callback, another topic or a mode it did not ask for', async () => {
    rig = await startRig();
    const sub = await subscribed(rig);
    const base = new URL(sub.callbackUrl);
    const unknown = await rig.fixture.hub.forgeVerification(`${base.origin}/websub/${'A'.repeat(32)}`, { 'hub.mode': 'subscribe', 'hub.topic': rig.topic, 'hub.challenge': 'c1' });
    expect(unknown).toEqual({ status: 404, body: 'No such subscription\n' });
    const otherTopic = await rig.fixture.hub.forgeVerification(sub.callbackUrl, { 'hub.mode': 'subscribe', 'hub.topic': rig.topic + '/other', 'hub.challenge': 'c2' });
    expect(otherTopic.status).toBe(404);
    const wrongMode = await rig.fixture.hub.forgeVerification(sub.callbackUrl, { 'hub.mode': 'unsubscribe', 'hub.topic': rig.topic, 'hub.challenge': 'c3' });
    expect(wrongMode.status).toBe(404);
    // Already verified: a second subscribe verification nobody asked for is not answered either.
    const replay = await rig.fixture.hub.forgeVerification(sub.callbackUrl, { 'hub.mode': 'subscribe', 'hub.topic': rig.topic, 'hub.challenge': 'c4', 'hub.lease_seconds': '1' });
    expect(replay.status).toBe(404);
    const rejected = rig.events.filter((e) => e.type === 'rejected' && e.what === 'verification');
    expect(rejected).toHaveLength(4);
    expect(rig.engine.subscriptions()[0]).toMatchObject({ status: 'active' });
    expect(rig.engine.subscriptions()[0].leaseSeconds).not.toBe(1);
  });

  it('acknowledges and discards deliveries with a bad or missing signature, and accepts sha1/sha384/sha512 ones', async () => {
    rig = await startRig();
    const sub = await subscribed(rig);
    rig.fixture.hub.faults.signature = 'bad';
    rig.fixture.change('update');
    const bad = await waitFor(rig, 'rejected', (e) => e.what === 'delivery');
    expect(bad.reason).toContain('does not match');
    rig.fixture.hub.faults.signature = 'missing';
    rig.fixture.change('update');
    const missing = await waitFor(rig, 'rejected', (e) => e.what === 'delivery' && e !== bad);
    expect(missing.reason).toContain('no X-Hub-Signature');
    await rig.fixture.hub.settled();
    // Acknowledged (2xx, so the hub does not retry), never stored.
    expect(rig.fixture.hub.deliveries.map((d) => d.status)).toEqual([202, 202]);
    expect(rig.engine.feed(rig.dest)!.store.counts(sub.id)).toEqual({});
    expect(rig.events.some((e) => e.type === 'notification')).toBe(false);

    rig.fixture.hub.faults.signature = null;
    for (const method of ['sha1', 'sha384', 'sha512'] as const) {
      rig.fixture.hub.faults.method = method;
      rig.fixture.change('update');
    }
    await rig.fixture.hub.settled();
    await rig.engine.idle();
    expect(rig.events.filter((e) => e.type === 'notification')).toHaveLength(3);
  });

  it('refuses payloads that are not change notifications, and bodies over the limit', async () => {
    rig = await startRig({ engine: { maxBodyBytes: 4096 } });
    const sub = await subscribed(rig, { secret: 'sekrit' });
    const signed = (body: string) => ({ 'content-type': 'application/xml; charset=utf-8', 'x-hub-signature': signBody('sha256', 'sekrit', Buffer.from(body)) });
    const resourceList = (await (await request(rig.fixture.url + rig.fixture.paths.dataset1.changeListIndex)).body.text()).slice(0, 4000);
    expect((await post(sub.callbackUrl, resourceList, signed(resourceList))).status).toBe(202);
    const r1 = await waitFor(rig, 'rejected', (e) => e.what === 'notification');
    expect(r1.reason).toContain('a <sitemapindex>; change notifications are <urlset> documents');
    const doctype = '<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY x "y">]><urlset/>';
    await post(sub.callbackUrl, doctype, signed(doctype));
    const r2 = await waitFor(rig, 'rejected', (e) => e.what === 'notification' && e !== r1);
    expect(r2.reason).toContain('DOCTYPE');
    const html = '<html><body>hello</body></html>';
    await post(sub.callbackUrl, html, { ...signed(html), 'content-type': 'text/html' });
    const r3 = await waitFor(rig, 'rejected', (e) => e.what === 'notification' && e !== r1 && e !== r2);
    expect(r3.reason).toBeTruthy();
    const big = 'x'.repeat(5000);
    const tooBig = await post(sub.callbackUrl, big, signed(big));
    expect(tooBig.status).toBe(413);
    const hmac = createHmac('sha256', 'sekrit').update('x').digest('hex');
    expect(hmac).toHaveLength(64);
    expect(rig.engine.feed(rig.dest)!.store.counts(sub.id)).toEqual({ rejected: 3 });
  });

  it('refuses a notification whose until is far in the future, which would make every later one look covered', async () => {
    rig = await startRig();
    const sub = await subscribed(rig, { secret: null });
    const from = sub.cursor!;
    const body =
      '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">' +
      `<rs:md capability="change-notification" from="${from}" until="9999-12-31T00:00:00Z"/>` +
      `<url><loc>${rig.fixture.state.locOf(1)}</loc><rs:md change="deleted" datetime="${from}"/></url></urlset>`;
    expect((await post(sub.callbackUrl, body, { 'content-type': 'application/xml' })).status).toBe(202);
    const refused = await waitFor(rig, 'rejected', (e) => e.what === 'notification');
    expect(refused.reason).toContain('until="9999-12-31T00:00:00Z" is more than an hour after the notification was received');
    // The Source's own next notification is applied, in order; the cursor and the checkpoint stay in this world.
    const [record] = rig.fixture.change('update', 1, 2);
    await waitFor(rig, 'applied', (e) => e.changes.some((c) => c.uri === record.loc && c.outcome === 'updated'));
    expect(mirrored(rig, 2)!.equals(sourceBytes(rig, 2))).toBe(true);
    expect(mirrored(rig, 1)).not.toBeNull();
    expect(rig.engine.subscriptions()[0].cursor).toBe(record.datetime);
    expect(rig.engine.feed(rig.dest)!.state.checkpoint()!.at).toBe(record.datetime);
  });

  it('counts a notification whose changes were covered already as the last notification, though nothing was applied', async () => {
    rig = await startRig();
    const sub = await subscribed(rig, { secret: null });
    expect(sub.lastNotificationAt).toBeNull();
    const cursor = Date.parse(sub.cursor!);
    const at = (s: number) => new Date(cursor + s * 1000).toISOString();
    // An interval before the cursor: everything it says the mirror has already.
    const body =
      '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">' +
      `<rs:md capability="change-notification" from="${at(-60)}" until="${at(-30)}"/>` +
      `<url><loc>${rig.fixture.state.locOf(1)}</loc><rs:md change="updated" datetime="${at(-45)}"/></url></urlset>`;
    const before = Date.now();
    expect((await post(sub.callbackUrl, body, { 'content-type': 'application/xml' })).status).toBe(202);
    await waitFor(rig, 'duplicate', (e) => e.subscriptionId === sub.id);
    // Before, the app's "Last notification" said "none yet" for as long as every notification was covered (or filled
    // in by a catch-up): only a notification applied by itself set it.
    const last = rig.engine.subscriptions().find((s) => s.id === sub.id)!.lastNotificationAt;
    expect(last).not.toBeNull();
    expect(Date.parse(last!)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('fails an entry without a loc, or with a relative one, alone and counted as failed, as sync does', async () => {
    rig = await startRig();
    const sub = await subscribed(rig, { secret: null });
    const from = sub.cursor!;
    const at = (s: number) => new Date(Date.parse(from) + s * 1000).toISOString();
    const record = { loc: rig.fixture.url + rig.fixture.state.pathOf(1) };
    const url = (loc: string, s: number) => `<url><loc>${loc}</loc><rs:md change="updated" datetime="${at(s)}"/></url>`;
    const body =
      '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">' +
      `<rs:md capability="change-notification" from="${from}" until="${at(60)}"/>` +
      `${url('', 1)}${url('', 2)}${url('relative/a', 3)}${url(record.loc, 4)}</urlset>`;
    const before = rig.events.length;
    expect((await post(sub.callbackUrl, body, { 'content-type': 'application/xml' })).status).toBe(202);
    const applied = await waitFor(rig, 'applied', (e) => e.changes.some((c) => c.outcome === 'failed'), 10_000, before);
    // The counts say what the changes say: three failed, each with the reason; the good one applied.
    expect(applied.failed).toBe(3);
    expect(applied.changes.filter((c) => c.outcome === 'failed').map((c) => [c.uri, c.reason])).toEqual([
      [expect.stringMatching(/^notification \d+ \(entry at line \d+\)$/), 'not applied: the entry has no <loc> (mandatory, core spec §7)'],
      [expect.stringMatching(/^notification \d+ \(entry at line \d+\)$/), 'not applied: the entry has no <loc> (mandatory, core spec §7)'],
      ['relative/a', 'not applied: <loc> "relative/a" is not an absolute http(s) URI'],
    ]);
    expect(applied.changes.find((c) => c.uri === record.loc)?.outcome).not.toBe('failed');
  });
});
