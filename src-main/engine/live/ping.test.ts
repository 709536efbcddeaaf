// RSS Ping 1.0 (GET /ping), 2.0 (POST /ping) and XML-RPC weblogUpdates pings (POST /RPC2) on the callback server:
// each one an event, malformed ones a 400 with the reason and an event, XML safety as everywhere; a ping naming a
// watched Source makes it sync when that Source asks for it.
import { connect, type Socket } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { mirrored, sourceBytes, startRig, waitFor, type Rig } from './test-support.ts';

let rig: Rig;
afterEach(async () => {
  await rig?.close();
});

async function call(path: string, init: { method?: string; body?: string; contentType?: string } = {}) {
  const res = await request(rig.engine.address + path, {
    method: (init.method ?? 'GET') as 'GET',
    body: init.body,
    headers: init.contentType ? { 'content-type': init.contentType } : {},
  });
  return { status: res.statusCode, text: await res.body.text() };
}

const RSS_PING_2 = (site: string) => `<rss_ping version=2>
  <site_name>hail2u.net - Weblog</site_name>
  <site_uri>${site}</site_uri>
  <feed_uri type="RSS 2.0">${site}feed</feed_uri>
  <payload type="RSS 1.0 fragment" encoding="UTF-8" xmlns="http://purl.org/rss/1.0/"
    xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:dc="http://purl.org/dc/elements/1.1/">
    <item rdf:about="${site}sports/good-bye_sam_cassell.html">
      <title>Sam Cassellサヨウナラ</title>
      <link>${site}sports/good-bye_sam_cassell.html</link>
      <dc:subject>Sports</dc:subject>
    </item>
  </payload>
</rss_ping>`;

const XMLRPC = (method: string, params: string[]) =>
  `<?xml version="1.0"?><methodCall><methodName>${method}</methodName><params>${params.map((p) => `<param><value><string>${p}</string></value></param>`).join('')}</params></methodCall>`;

describe('RSS Ping', () => {
  it('1.0: GET /ping with the five parameters', async () => {
    rig = await startRig({ baseline: false });
    const q = new URLSearchParams({ site_name: 'A site', site_uri: 'http://example.org/', feed_uri: 'http://example.org/feed', item_title: 'News', item_link: 'http://example.org/news' });
    expect(await call(`/ping?${q}`)).toEqual({ status: 200, text: 'Thanks for the ping.\n' });
    const e = await waitFor(rig, 'ping');
    expect(e.ping).toEqual({ kind: 'rss-ping-1.0', siteName: 'A site', siteUri: 'http://example.org/', feedUri: 'http://example.org/feed', items: [{ title: 'News', link: 'http://example.org/news' }] });
  });

  it('2.0: POST /ping with an <rss_ping> carrying RSS 1.0, RSS 2.0 or Atom', async () => {
    rig = await startRig({ baseline: false });
    expect((await call('/ping', { method: 'POST', body: RSS_PING_2('http://hail2u.net/blog/'), contentType: 'text/xml' })).status).toBe(200);
    const e1 = await waitFor(rig, 'ping');
    expect(e1.ping).toMatchObject({
      kind: 'rss-ping-2.0',
      siteName: 'hail2u.net - Weblog',
      feedUri: 'http://hail2u.net/blog/feed',
      payloadFormat: 'RSS 1.0 fragment',
      items: [{ title: 'Sam Cassellサヨウナラ', link: 'http://hail2u.net/blog/sports/good-bye_sam_cassell.html' }],
    });
    const rss2 = `<rss_ping version="2"><site_uri>http://b.example/</site_uri><payload><rss version="2.0"><channel><item><title>T2</title><link>http://b.example/2</link></item></channel></rss></payload></rss_ping>`;
    await call('/ping', { method: 'POST', body: rss2, contentType: 'application/xml' });
    const e2 = await waitFor(rig, 'ping', (e) => e !== e1);
    expect(e2.ping).toMatchObject({ payloadFormat: 'RSS 2.0', items: [{ title: 'T2', link: 'http://b.example/2' }] });
    const atom = `<rss_ping version="2"><feed_uri>http://c.example/atom</feed_uri><payload><entry xmlns="http://www.w3.org/2005/Atom"><title>T3</title><link href="http://c.example/3"/></entry></payload></rss_ping>`;
    await call('/ping', { method: 'POST', body: atom });
    const e3 = await waitFor(rig, 'ping', (e) => e !== e1 && e !== e2);
    expect(e3.ping).toMatchObject({ payloadFormat: 'Atom', siteUri: null, items: [{ title: 'T3', link: 'http://c.example/3' }] });
  });

  it('XML-RPC: weblogUpdates.ping and extendedPing answer the customary struct', async () => {
    rig = await startRig({ baseline: false });
    const a = await call('/RPC2', { method: 'POST', body: XMLRPC('weblogUpdates.ping', ['My blog', 'http://d.example/']), contentType: 'text/xml' });
    expect(a.status).toBe(200);
    expect(a.text).toContain('<member><name>flerror</name><value><boolean>0</boolean></value></member>');
    expect(a.text).toContain('<name>message</name><value><string>Thanks for the ping.</string>');
    expect((await waitFor(rig, 'ping')).ping).toMatchObject({ kind: 'weblogUpdates.ping', siteName: 'My blog', siteUri: 'http://d.example/' });
    await call('/RPC2', { method: 'POST', body: XMLRPC('weblogUpdates.extendedPing', ['My blog', 'http://d.example/', 'http://d.example/changed', 'http://d.example/rss.xml']) });
    expect((await waitFor(rig, 'ping', (e) => e.ping.kind === 'weblogUpdates.extendedPing')).ping.feedUri).toBe('http://d.example/rss.xml');
  });

  it('malformed pings get a 400 with the reason and an event; DOCTYPEs are refused', async () => {
    rig = await startRig({ baseline: false, engine: { maxBodyBytes: 2048 } });
    const cases: [string, Parameters<typeof call>[1], string][] = [
      ['/ping?site_name=x', {}, 'neither site_uri nor feed_uri'],
      ['/ping?site_uri=javascript:alert(1)', {}, 'not an http(s) URL'],
      ['/ping', { method: 'POST', body: '<rss_ping><site_uri>http://x/</site_uri>' }, 'not well-formed'],
      ['/ping', { method: 'POST', body: '<!DOCTYPE rss_ping [<!ENTITY e SYSTEM "file:///etc/passwd">]><rss_ping><site_uri>&e;</site_uri></rss_ping>' }, 'DOCTYPE'],
      ['/ping', { method: 'POST', body: '<rss><channel/></rss>' }, 'not <rss_ping>'],
      ['/RPC2', { method: 'POST', body: XMLRPC('weblogUpdates.nonsense', ['a', 'http://x/']) }, 'unknown method'],
      ['/RPC2', { method: 'POST', body: XMLRPC('weblogUpdates.ping', ['only a name']) }, 'at least two parameters'],
      ['/RPC2', { method: 'POST', body: 'not xml at all' }, 'not well-formed'],
    ];
    for (const [path, init, reason] of cases) {
      const before = rig.events.length;
      const res = await call(path, init);
      expect(res.status, path).toBe(400);
      expect(res.text).toContain(reason);
      if (path === '/RPC2') expect(res.text).toContain('<boolean>1</boolean>');
      const e = await waitFor(rig, 'rejected', (x) => x.what === 'ping', 5_000, before);
      expect(e.reason).toContain(reason);
    }
    const big = await call('/ping', { method: 'POST', body: `<rss_ping>${'x'.repeat(3000)}</rss_ping>` });
    expect(big.status).toBe(413);
    expect(rig.events.some((e) => e.type === 'ping')).toBe(false);
  });

  it('a ping naming a watched Source starts an incremental sync of its mirror', async () => {
    rig = await startRig();
    rig.engine.openMirror(rig.dest, { pingSync: true });
    const [record] = rig.fixture.change('update');
    const q = new URLSearchParams({ site_name: 'Fixture', site_uri: rig.fixture.url + '/' });
    await call(`/ping?${q}`);
    const ping = await waitFor(rig, 'ping');
    expect(ping.triggered).toEqual([rig.engine.feed(rig.dest)!.dest]);
    const synced = await waitFor(rig, 'sync');
    expect(synced.updated).toBe(1);
    expect(mirrored(rig, record.id)!.equals(sourceBytes(rig, record.id))).toBe(true);
    // Another Source's ping changes nothing here.
    await call(`/ping?site_uri=${encodeURIComponent('http://elsewhere.example/')}`);
    expect((await waitFor(rig, 'ping', (e) => e !== ping)).triggered).toEqual([]);
  });
  it('a ping whose Change List answers a server error says so and marks the mirror as needing a sync', async () => {
    // Before, the 503 was taken for "no change listed": a "sync" event with nothing applied, no word of the
    // Change List, and what the ping announced never fetched.
    rig = await startRig();
    rig.engine.openMirror(rig.dest, { pingSync: true });
    const checkpoint = rig.engine.feed(rig.dest)!.state.checkpoint()!.at;
    const [record] = rig.fixture.change('update');
    rig.fixture.setRefusing({ prefix: '/dataset1/changelist', status: 503 });
    const pinged = Date.now();
    await call(`/ping?${new URLSearchParams({ site_name: 'Fixture', site_uri: rig.fixture.url + '/' })}`);
    const error = await waitFor(rig, 'error');
    expect(error.message).toMatch(/^The sync a ping asked for could not read the Change List: HTTP 503 .*changelist-index\.xml\. The mirror needs a sync \(rsdesk sync --dest /);
    expect(rig.events.some((e) => e.type === 'sync')).toBe(false);
    expect(mirrored(rig, record.id)?.equals(sourceBytes(rig, record.id))).not.toBe(true);
    const needs = rig.engine.feed(rig.dest)!.state.needsSync();
    expect(needs).toMatchObject({ from: checkpoint });
    expect(Date.parse(needs!.until)).toBeGreaterThanOrEqual(pinged);
  });

  it('a flood of pings does not read the Change List back to back: one sync per interval, and one after the last ping', async () => {
    rig = await startRig();
    rig.engine.openMirror(rig.dest, { pingSync: true, pingSyncIntervalMs: 700 });
    const q = new URLSearchParams({ site_name: 'Fixture', site_uri: rig.fixture.url + '/' });
    const started = Date.now();
    let record;
    for (let i = 0; i < 40; i++) {
      // The Source changes as the pings come; the last change must still arrive.
      if (i === 39) [record] = rig.fixture.change('update');
      await call(`/ping?${q}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    const flood = Date.now() - started;
    // The sync after the last ping, held back until the interval was over.
    await waitFor(rig, 'sync', (e) => e.updated === 1, 10_000);
    await new Promise((r) => setTimeout(r, 800));
    const syncs = rig.events.filter((e) => e.type === 'sync');
    // Without the interval, a sync ran again at once after each one for as long as the pings came.
    expect(syncs.length).toBeLessThanOrEqual(Math.ceil(flood / 700) + 2);
    expect(mirrored(rig, record!.id)!.equals(sourceBytes(rig, record!.id))).toBe(true);
  });

  it('a flood of pings and refused requests lists a few and says how many more came, so the rest of the feed stays', async () => {
    rig = await startRig({ engine: { keepEvents: 100, noise: { perWindow: 20, windowMs: 1_000 } } });
    const sub = await rig.engine.subscribe({ dest: rig.dest, topic: rig.topic, hub: rig.hubUrl });
    await waitFor(rig, 'subscribed', (e) => e.subscriptionId === sub.id);
    const q = new URLSearchParams({ site_name: 'Flood', site_uri: 'http://127.0.0.1:9/' });
    const answers: number[] = [];
    for (let round = 0; round < 15; round++) {
      const batch = await Promise.all([
        ...Array.from({ length: 18 }, () => call(`/ping?${q}`)),
        call('/ping?site_name=nothing-else'),
        call(`/websub/${'C'.repeat(32)}?hub.mode=subscribe`),
      ]);
      answers.push(...batch.map((a) => a.status));
    }
    // Each was answered as before.
    expect(answers.filter((s) => s === 200)).toHaveLength(270);
    expect(answers.filter((s) => s === 400 || s === 404)).toHaveLength(30);
    const note = await waitFor(rig, 'note', (e) => /more pings? and .* more refused requests? came within 1 s/.test(e.message), 5_000);
    expect(note.message).toContain('each was answered');
    const listed = rig.events.filter((e) => e.type === 'ping' || e.type === 'rejected').length;
    expect(listed).toBeLessThan(300);
    // What a view opening now is shown still has the subscription in it.
    expect(rig.engine.events.recent().some((e) => e.type === 'subscribed')).toBe(true);
  });

  it('connections past the callback server\'s limit are closed unanswered and said in one note, not one event each', async () => {
    rig = await startRig({ baseline: false, engine: { maxConnections: 4, noise: { perWindow: 20, windowMs: 500 } } });
    const held: Socket[] = [];
    try {
      for (let i = 0; i < 4; i++) {
        const s = connect(Number(new URL(rig.engine.address!).port), '127.0.0.1');
        s.on('error', () => undefined);
        await new Promise<void>((resolve) => s.once('connect', resolve));
        held.push(s);
      }
      const closed: Promise<void>[] = [];
      for (let i = 0; i < 6; i++) {
        const s = connect(Number(new URL(rig.engine.address!).port), '127.0.0.1');
        s.on('error', () => undefined);
        s.resume();
        held.push(s);
        closed.push(new Promise((resolve) => s.once('close', () => resolve())));
      }
      await Promise.all(closed);
      const note = await waitFor(rig, 'note', (e) => /closed \d+ connections? unanswered/.test(e.message), 5_000);
      expect(note.message).toMatch(/^The callback server closed 6 connections unanswered within 1 s: 4 were open already, the most it holds at once/);
      expect(rig.events.filter((e) => e.type === 'note' && /unanswered/.test(e.message))).toHaveLength(1);
      // Once the held ones go, a ping is heard again.
      for (const s of held) s.destroy();
      await new Promise((r) => setTimeout(r, 100));
      expect((await call('/ping?site_name=After&site_uri=http://127.0.0.1:9/')).status).toBe(200);
    } finally {
      for (const s of held) s.destroy();
    }
  });

  it('a ping body larger than any ping is refused before it is parsed, saying so (10 MiB of attributes blocked the thread for seconds)', async () => {
    rig = await startRig({ baseline: false });
    const attributes: string[] = [];
    for (let i = 0, length = 0; length < 9 * 1024 * 1024; i++) {
      attributes.push(`a${i}="x"`);
      length += attributes[i]!.length + 1;
    }
    const started = performance.now();
    const answer = await call('/RPC2', { method: 'POST', body: `<methodCall ${attributes.join(' ')}/>`, contentType: 'text/xml' });
    expect(answer.status).toBe(413);
    expect(answer.text).toBe('Refused: a ping over the limit of 262,144 bytes\n');
    expect(performance.now() - started).toBeLessThan(3_000);
    const said = await waitFor(rig, 'rejected', (e) => e.what === 'ping' && /over the limit/.test(e.reason));
    expect(said.reason).toBe('POST /RPC2: a ping over the limit of 262,144 bytes (answered 413)');
    // A ping of the usual size is heard as ever.
    expect((await call('/ping?site_name=After&site_uri=http://127.0.0.1:9/')).status).toBe(200);
  });
});
