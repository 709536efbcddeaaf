// The app's live commands against the fixture Source's WebSub hub, through dispatch as the adapters call them:
// status and settings, subscribe from a channel (a new mirror folder bound to its Capability List), batched
// events, unsubscribe, the self-test, and subscriptions taken up again after a restart.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../e2e/fixture-source/index.ts';
import { PATHS } from '../../e2e/fixture-source/paths.ts';
import type { CommandArgs, CommandResult } from '../contract/commands.ts';
import type { CommandName } from '../contract/names.ts';
import type { CommandError, LiveBatch, LiveEvent } from '../contract/types.ts';
import { openStore } from '../store/store.ts';
import { LiveBatcher } from './live-batch.ts';
import { createService, type Service } from './service.ts';

let dir: string;
let fixture: FixtureSource;
const services: Service[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rsdesk-live-app-'));
  fixture = await startFixtureSource({ resources: 10, bigListEntries: 10 });
});

afterEach(async () => {
  for (const s of services.splice(0)) await s.close();
  await fixture.close();
  rmSync(dir, { recursive: true, force: true });
});

function open(live: { port?: number; listenRetryMs?: number } = {}): { service: Service; batches: LiveBatch[] } {
  const service = createService({ store: openStore(join(dir, 'rsdesk.sqlite')), adapter: 'http', version: '1', live: { dataDir: dir, port: 0, ...live } });
  services.push(service);
  const batches: LiveBatch[] = [];
  service.events.subscribe((name, payload) => {
    if (name === 'live.events') batches.push(payload as LiveBatch);
  });
  return { service, batches };
}

async function call<C extends CommandName>(s: Service, command: C, args: CommandArgs<C>): Promise<CommandResult<C>> {
  const reply = await s.dispatch(command, args);
  if (!reply.ok) throw new Error(`${command}: ${reply.error.message}`);
  return reply.result as CommandResult<C>;
}

async function failure(s: Service, command: CommandName, args: unknown): Promise<CommandError> {
  const reply = await s.dispatch(command, args);
  if (reply.ok) throw new Error(`${command} succeeded`);
  return reply.error;
}

async function until(batches: LiveBatch[], test: (e: LiveEvent) => boolean, ms = 10_000): Promise<LiveEvent> {
  const end = Date.now() + ms;
  for (;;) {
    const found = batches.flatMap((b) => b.events).find(test);
    if (found) return found;
    if (Date.now() > end) throw new Error(`not seen; events: ${batches.flatMap((b) => b.events).map((e) => e.type).join(', ')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('live commands', () => {
  it('refuse a folder that is relative or holds a NUL, saying so, and make no folder', async () => {
    const { service } = open();
    const topic = fixture.url + PATHS.dataset1.notifications;
    const hub = fixture.url + PATHS.hub;
    // Relative: it was made under the app's working folder (here, the project's).
    const name = `rsdesk-live-relative-${process.pid}`;
    try {
      const relative = await failure(service, 'live.subscribe', { topic, hub, folder: name });
      expect(relative).toMatchObject({ code: 'invalid-arguments', message: `Give the folder's full path ("${name}" is relative).` });
      expect(existsSync(join(process.cwd(), name))).toBe(false);
    } finally {
      rmSync(join(process.cwd(), name), { recursive: true, force: true });
    }
    expect(await failure(service, 'live.unsubscribe', { folder: name, id: 1 })).toMatchObject({ code: 'invalid-arguments' });
    // A NUL reached the file system, which answered with an internal error.
    for (const [command, args] of [
      ['live.subscribe', { topic, hub, folder: join(dir, 'a\0b') }],
      ['live.unsubscribe', { folder: join(dir, 'a\0b'), id: 1 }],
    ] as const) {
      expect(await failure(service, command, args)).toMatchObject({ code: 'invalid-arguments', message: 'The folder path contains a NUL character.' });
    }
  });

  it('subscribes a new mirror folder from a channel, receives notifications in batches, applies them, unsubscribes', async () => {
    const { service, batches } = open();
    await call(service, 'sources.add', { url: `${fixture.url}/`, runId: 'a' });
    const status = await call(service, 'live.status', {});
    expect(status.address).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(status.error).toBeNull();

    const topic = fixture.url + PATHS.dataset1.notifications;
    const folder = join(dir, 'mirror');
    const sub = await call(service, 'live.subscribe', { topic, hub: fixture.url + PATHS.hub, folder });
    expect(sub).toMatchObject({ topic, dest: folder });
    await until(batches, (e) => e.type === 'subscribed');
    await fixture.hub.settled();
    expect((await call(service, 'live.subscriptions', {}))[0]).toMatchObject({ status: 'active', topic });

    const [record] = fixture.change('create');
    const applied = await until(batches, (e) => e.type === 'applied');
    expect(applied).toMatchObject({ created: 1 });
    const host = new URL(fixture.url).host.replace(':', '_');
    const file = join(folder, host, ...fixture.state.pathOf(record.id).split('/').filter(Boolean));
    expect(readFileSync(file).equals(fixture.state.representation(record.id, 1).body)).toBe(true);
    // Batches, not one message per event: the notification and its outcome came in few of them.
    expect(batches.length).toBeLessThan(batches.flatMap((b) => b.events).length);
    expect((await call(service, 'live.recent', {})).some((e) => e.type === 'notification')).toBe(true);

    await call(service, 'live.unsubscribe', { folder, id: sub.id });
    await until(batches, (e) => e.type === 'unsubscribed');
    expect((await failure(service, 'live.unsubscribe', { folder, id: 999 })).message).toBe('This subscription is no longer there');
  });

  it('takes subscriptions up again when the app starts again', async () => {
    const first = open();
    await call(first.service, 'sources.add', { url: `${fixture.url}/`, runId: 'a' });
    const folder = join(dir, 'mirror');
    await call(first.service, 'live.subscribe', { topic: fixture.url + PATHS.dataset1.notifications, hub: fixture.url + PATHS.hub, folder });
    await until(first.batches, (e) => e.type === 'subscribed');
    await first.service.close();
    services.splice(0);
    expect(existsSync(join(dir, 'live.json'))).toBe(true);

    const second = open();
    await second.service.startLive();
    const subs = await call(second.service, 'live.subscriptions', {});
    expect(subs).toHaveLength(1);
    expect(subs[0]).toMatchObject({ dest: folder, status: 'active' });
  });

  it('a callback port held by another program at start is tried again until it is free, then every subscription is taken up', async () => {
    const first = open();
    await call(first.service, 'sources.add', { url: `${fixture.url}/`, runId: 'a' });
    const folder = join(dir, 'mirror');
    const topic = fixture.url + PATHS.dataset1.notifications;
    await call(first.service, 'live.subscribe', { topic, hub: fixture.url + PATHS.hub, folder });
    await until(first.batches, (e) => e.type === 'subscribed');
    await first.service.close();
    services.splice(0);

    const holder = createServer();
    const port = await new Promise<number>((r) => holder.listen(0, '127.0.0.1', () => r((holder.address() as AddressInfo).port)));
    const second = open({ port, listenRetryMs: 1_000 });
    await second.service.startLive();
    const busy = await call(second.service, 'live.status', {});
    expect(busy.address).toBeNull();
    // In words, with what happens next; not "listen EADDRINUSE".
    expect(busy.error).toBe(
      `The callback server could not start: 127.0.0.1:${port} is already in use by another program (another rsdesk watch, or ResourceSync Desktop, perhaps). ` +
        'It tries again every 1 s; Settings → Callback server can choose another port.',
    );
    await new Promise<void>((r) => holder.close(() => r()));
    const deadline = Date.now() + 5_000;
    let status = busy;
    while (status.address === null && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      status = await call(second.service, 'live.status', {});
    }
    expect(status).toMatchObject({ address: `http://127.0.0.1:${port}`, error: null });
    await until(second.batches, (e) => e.type === 'renewed');
    await fixture.hub.settled();
    expect((await call(second.service, 'live.subscriptions', {}))[0]).toMatchObject({ dest: folder, status: 'active', callbackUrl: expect.stringContaining(`:${port}/`) });
    fixture.change('create');
    await until(second.batches, (e) => e.type === 'applied');
  });

  it('after a port change, asks the hub at once to send to the new callback URL and to unsubscribe the old one', async () => {
    const { service, batches } = open();
    await call(service, 'sources.add', { url: `${fixture.url}/`, runId: 'a' });
    const topic = fixture.url + PATHS.dataset1.notifications;
    const folder = join(dir, 'mirror');
    const sub = await call(service, 'live.subscribe', { topic, hub: fixture.url + PATHS.hub, folder });
    await until(batches, (e) => e.type === 'subscribed');
    await fixture.hub.settled();
    const oldCallback = sub.callbackUrl;
    expect(fixture.hub.live(topic).map((s) => s.callback)).toEqual([oldCallback]);

    const port = await freePort();
    const status = await call(service, 'live.settings.set', { host: '127.0.0.1', port, publicUrl: null });
    expect(status).toMatchObject({ address: `http://127.0.0.1:${port}`, error: null });
    const newCallback = oldCallback.replace(/:\d+\//, `:${port}/`);
    // Renewed at the new URL (not at the next renewal), the old one unsubscribed: the hub verified that at the old
    // address, which was served until it had.
    await until(batches, (e) => e.type === 'renewed');
    const deadline = Date.now() + 10_000;
    while (fixture.hub.live(topic).some((s) => s.callback === oldCallback) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await fixture.hub.settled();
    expect(fixture.hub.live(topic).map((s) => s.callback)).toEqual([newCallback]);
    expect(fixture.hub.verifications.filter((v) => v.callback === oldCallback && v.mode === 'unsubscribe')).toEqual([
      { callback: oldCallback, mode: 'unsubscribe', topic, status: 200, confirmed: true },
    ]);
    expect((await call(service, 'live.subscriptions', {}))[0]).toMatchObject({ status: 'active', callbackUrl: newCallback });

    // Notifications now come to the new port, once each.
    const [record] = fixture.change('create');
    await until(batches, (e) => e.type === 'applied');
    await fixture.hub.settled();
    const deliveries = fixture.hub.deliveries.filter((d) => d.publication === fixture.hub.deliveries.at(-1)!.publication);
    expect(deliveries.map((d) => [d.callback, d.status])).toEqual([[newCallback, 202]]);
    const host = new URL(fixture.url).host.replace(':', '_');
    expect(readFileSync(join(folder, host, ...fixture.state.pathOf(record.id).split('/').filter(Boolean))).equals(fixture.state.representation(record.id, 1).body)).toBe(true);
  });

  it('keeps the callback server settings, answers the self-test, refuses bad settings in words', async () => {
    const { service } = open();
    const test = await call(service, 'live.selftest', {});
    expect(test.reachable).toBe(true);
    const bad = await failure(service, 'live.settings.set', { host: '127.0.0.1', port: 0, publicUrl: null });
    expect(bad.message).toBe('The port must be from 1 to 65535.');
    const notUrl = await failure(service, 'live.settings.set', { host: '127.0.0.1', port: 8000, publicUrl: 'ftp://x' });
    expect(notUrl.message).toBe('The public callback URL must be an http or https URL.');
    for (const host of ['127.0.0.1\0', '127.0.0.1 ; x', 'a\nb']) {
      const odd = await failure(service, 'live.settings.set', { host, port: 8000, publicUrl: null });
      expect(odd).toMatchObject({ code: 'invalid-arguments', message: 'The address must be a host name or an IP address, without spaces or control characters.' });
    }
    expect((await call(service, 'live.status', {})).settings.host).not.toMatch(/\s|\0/);
    // A public URL nothing answers at: the server runs, and the self-test says hubs would not reach it.
    const port = await freePort();
    const status = await call(service, 'live.settings.set', { host: '127.0.0.1', port, publicUrl: 'http://127.0.0.1:9/nowhere' });
    expect(status).toMatchObject({ address: `http://127.0.0.1:${port}`, callbackBase: 'http://127.0.0.1:9/nowhere', error: null });
    const unreachable = await call(service, 'live.selftest', {});
    expect(unreachable.reachable).toBe(false);
    expect(unreachable.message).toMatch(/^http:\/\/127\.0\.0\.1:9\/nowhere could not be reached/);
    expect(JSON.parse(readFileSync(join(dir, 'live.json'), 'utf8'))).toMatchObject({ port, publicUrl: 'http://127.0.0.1:9/nowhere' });
  });

  it('the self-test reads only the start of an answer that never ends', async () => {
    const { service } = open();
    // Something else answers at the public URL, sending without end.
    const endless = createHttpServer((_req, res) => {
      res.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const more = () => {
        while (res.write(chunk));
        res.once('drain', more);
      };
      more();
    });
    await new Promise<void>((resolve) => endless.listen(0, '127.0.0.1', resolve));
    try {
      const publicUrl = `http://127.0.0.1:${(endless.address() as AddressInfo).port}`;
      await call(service, 'live.settings.set', { host: '127.0.0.1', port: await freePort(), publicUrl });
      const started = Date.now();
      const test = await call(service, 'live.selftest', {});
      expect(test.reachable).toBe(false);
      expect(test.message).toBe(`${publicUrl} answered HTTP 200, but not as this callback server: hubs would not reach it there.`);
      // It used to read until the self-test's 10 s were up, holding all of it in memory.
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      endless.closeAllConnections();
      await new Promise((resolve) => endless.close(resolve));
    }
  });
});

describe('LiveBatcher', () => {
  it('sends at most one batch per interval and says how many it dropped past its cap', async () => {
    const sent: LiveBatch[] = [];
    const b = new LiveBatcher((x) => sent.push(x), { intervalMs: 50, maxPending: 100 });
    for (let i = 0; i < 250; i++) b.push({ type: 'error', message: `e${i}`, at: new Date().toISOString() });
    expect(sent).toHaveLength(0);
    await new Promise((r) => setTimeout(r, 120));
    expect(sent).toHaveLength(1);
    expect(sent[0].events).toHaveLength(100);
    expect(sent[0].dropped).toBe(150);
    expect(sent[0].events[0]).toMatchObject({ message: 'e150' });
    b.close();
  });

  it('sends nothing once closed, even what the engine says while it stops', async () => {
    const sent: LiveBatch[] = [];
    const b = new LiveBatcher((x) => sent.push(x), { intervalMs: 10 });
    b.push({ type: 'error', message: 'before', at: new Date().toISOString() });
    b.close();
    b.push({ type: 'error', message: 'while stopping', at: new Date().toISOString() });
    await new Promise((r) => setTimeout(r, 40));
    b.flush();
    expect(sent).toEqual([]);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
