// The bearer token of Settings goes to the origin named for it and to no other, whatever the app reaches from there:
// two servers on 127.0.0.1 (two ports, two origins), through the service as the UI calls it.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CommandArgs, CommandResult } from '../contract/commands.ts';
import type { CommandName } from '../contract/names.ts';
import type { CommandError, Events } from '../contract/types.ts';
import { FileSecretStore } from '../engine/mirror/secrets.ts';
import { openStore } from '../store/store.ts';
import { createService, type Service } from './service.ts';

const TOKEN = 'tok-for-a-only';
const NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';

interface Origin {
  url: string;
  seen: { path: string; headers: IncomingHttpHeaders }[];
  server: Server;
}

/** `routes`: path → [status, body, extra headers]; bodies are read after both servers listen (they name each other). */
async function origin(routes: (self: string) => Record<string, [number, string, Record<string, string>?]>): Promise<Origin> {
  const seen: Origin['seen'] = [];
  let table: Record<string, [number, string, Record<string, string>?]> = {};
  const server = createServer((req, res) => {
    seen.push({ path: req.url ?? '', headers: req.headers });
    const route = table[req.url ?? ''];
    if (!route) return res.writeHead(404).end();
    res.writeHead(route[0], { 'content-type': 'application/xml', ...route[2] }).end(route[1]);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const o: Origin = { url, seen, server };
  // Filled in once the other origin is known.
  (o as Origin & { fill: () => void }).fill = () => void (table = routes(url));
  return o;
}

let a: Origin;
let b: Origin;
let dir: string;
let service: Service;
let events: { name: string; payload: unknown }[];

function fill(o: Origin): void {
  (o as Origin & { fill: () => void }).fill();
}

const resourceList = (self: string) =>
  `<?xml version="1.0"?><urlset ${NS}><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>` +
  `<url><loc>${self}/res/1.txt</loc><rs:md length="2"/></url></urlset>`;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rsdesk-settings-token-'));
  let bUrl = '';
  let aUrl = '';
  a = await origin((self) => ({
    // A Capability List whose up link leads to another origin's Source Description.
    '/caplist.xml': [200, `<?xml version="1.0"?><urlset ${NS}><rs:ln rel="up" href="${bUrl}/description.xml"/><rs:md capability="capabilitylist"/><url><loc>${self}/list.xml</loc><rs:md capability="resourcelist"/></url></urlset>`],
    '/list.xml': [200, resourceList(self)],
    '/res/1.txt': [200, 'a1', { 'content-type': 'text/plain' }],
    '/to-b': [302, '', { location: `${bUrl}/list.xml` }],
    '/closed.xml': [401, ''],
  }));
  b = await origin((self) => ({
    '/description.xml': [200, `<?xml version="1.0"?><urlset ${NS}><rs:md capability="description"/><url><loc>${aUrl}/caplist.xml</loc><rs:md capability="capabilitylist"/></url></urlset>`],
    '/list.xml': [200, resourceList(self)],
    '/res/1.txt': [200, 'b1', { 'content-type': 'text/plain' }],
  }));
  aUrl = a.url;
  bUrl = b.url;
  fill(a);
  fill(b);
  events = [];
});

afterEach(async () => {
  await service?.close();
  await Promise.all([a, b].map((o) => new Promise((r) => o.server.close(r))));
  rmSync(dir, { recursive: true, force: true });
});

function start(): void {
  service = createService({
    store: openStore(join(dir, 'rsdesk.sqlite')),
    adapter: 'electron',
    version: '1',
    log: () => undefined,
    mirrorSecrets: new FileSecretStore(join(dir, 'mirror-secrets.json')),
  });
  service.events.subscribe((name, payload) => void events.push({ name, payload }));
}

async function call<C extends CommandName>(command: C, args: CommandArgs<C>): Promise<CommandResult<C>> {
  const reply = await service.dispatch(command, args);
  if (!reply.ok) throw new Error(`${command}: ${reply.error.message}`);
  return reply.result as CommandResult<C>;
}

async function refused(command: CommandName, args: unknown): Promise<CommandError> {
  const reply = await service.dispatch(command, args);
  if (reply.ok) throw new Error(`${command} was not refused`);
  return reply.error;
}

async function ended(since: number): Promise<Events['mirror.ended']> {
  for (let i = 0; i < 500; i++) {
    const found = events.slice(since).find((e) => e.name === 'mirror.ended');
    if (found) return found.payload as Events['mirror.ended'];
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the run did not end');
}

const authOf = (o: Origin, path: string) => o.seen.filter((r) => r.path === path).map((r) => r.headers.authorization ?? 'none');
const sentTo = (o: Origin) => o.seen.filter((r) => r.headers.authorization !== undefined).map((r) => r.path);

describe('the bearer token of Settings', () => {
  it('reaches the origin named for it, and not another one reached by an up link, a redirect or the browser', async () => {
    start();
    expect(await call('settings.set', { bearerToken: TOKEN, tokenOrigin: `${a.url}/anything?x=1` })).toMatchObject({ bearerToken: TOKEN, tokenOrigin: a.url });

    await call('discovery.run', { url: `${a.url}/caplist.xml`, runId: 'r1' });
    expect(authOf(a, '/caplist.xml')).toEqual([`Bearer ${TOKEN}`]);
    expect(authOf(b, '/description.xml')).toEqual(['none']);

    const redirected = await call('documents.summary', { url: `${a.url}/to-b` });
    expect(redirected.capability).toBe('resourcelist');
    expect(authOf(a, '/to-b')).toEqual([`Bearer ${TOKEN}`]);
    expect(authOf(b, '/list.xml')).toEqual(['none']);

    await call('documents.summary', { url: `${b.url}/list.xml`, refresh: true });
    await call('documents.summary', { url: `${a.url}/list.xml` });
    expect(authOf(a, '/list.xml').at(-1)).toBe(`Bearer ${TOKEN}`);

    await call('check.run', { url: `${b.url}/list.xml`, runId: 'c1' });

    // A mirror of the other origin is not given it; one of the token's origin is.
    for (const [o, name] of [[b, 'mirror-b'], [a, 'mirror-a']] as const) {
      const path = join(dir, name);
      await call('mirrors.create', { url: `${o.url}/list.xml`, path });
      const since = events.length;
      await call('runs.start', { path });
      expect(await ended(since)).toMatchObject({ status: 'completed', failed: 0 });
    }
    expect(authOf(a, '/res/1.txt')).toEqual([`Bearer ${TOKEN}`]);
    expect(sentTo(b)).toEqual([]);
    expect(b.seen.length).toBeGreaterThan(5);
  });

  it('is not taken without the Source it is for', async () => {
    start();
    expect(await refused('settings.set', { bearerToken: TOKEN })).toMatchObject({ code: 'invalid-arguments', field: 'tokenOrigin', message: /Say which Source the token is for/ });
    expect(await refused('settings.set', { bearerToken: TOKEN, tokenOrigin: 'ftp://example.org' })).toMatchObject({ code: 'invalid-arguments' });
    expect((await call('settings.get', {})).bearerToken).toBeNull();
    // Cleared, it takes its origin with it.
    await call('settings.set', { bearerToken: TOKEN, tokenOrigin: a.url });
    expect(await call('settings.set', { bearerToken: null })).toMatchObject({ bearerToken: null, tokenOrigin: null });
  });

  it('kept by an earlier version (for every request) is kept, and sent nowhere until its Source is named', async () => {
    // What an earlier version wrote: the token alone.
    const path = join(dir, 'rsdesk.sqlite');
    openStore(path);
    const db = new DatabaseSync(path);
    db.prepare('INSERT INTO settings (key, value) VALUES (?, ?)').run('bearerToken', JSON.stringify(TOKEN));
    db.close();
    start();
    expect(await call('settings.get', {})).toMatchObject({ bearerToken: TOKEN, tokenOrigin: null });
    await call('documents.summary', { url: `${a.url}/list.xml` });
    await call('discovery.run', { url: `${a.url}/caplist.xml`, runId: 'r1' });
    expect(sentTo(a)).toEqual([]);
    expect(sentTo(b)).toEqual([]);
    // A Source that now refuses says why, in plain words.
    expect(await refused('documents.summary', { url: `${a.url}/closed.xml` })).toMatchObject({
      code: 'sign-in',
      message: `${a.url} asks for a sign-in to read ${a.url}/closed.xml (HTTP 401 Unauthorized). The bearer token kept in Settings is sent to no Source until you name there the Source it is for.`,
    });
    // Its Source named (the token as it was kept), it goes there.
    await call('settings.set', { bearerToken: TOKEN, tokenOrigin: a.url });
    await call('documents.summary', { url: `${a.url}/list.xml`, refresh: true });
    expect(authOf(a, '/list.xml').at(-1)).toBe(`Bearer ${TOKEN}`);
  });
});
