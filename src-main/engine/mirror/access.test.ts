// Per-Source settings of a mirror against real servers: credentials (bearer, basic) reach the Source's origin and no
// other host (mirror locations, cross-origin redirects), they are kept in a SecretStore and never in the mirror
// folder, a reopened mirror keeps its settings, extra headers, and proxies (a tiny loopback proxy) from the
// environment or the settings, NO_PROXY honoured.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { audit } from './audit.ts';
import { prepareMirror } from './folder.ts';
import { FileSecretStore, MemorySecretStore } from './secrets.ts';
import { keptSettingsProblems, type SourceSettings } from './settings.ts';
import { MirrorState, stateDirOf } from './state.ts';
import { sync, type SyncOptions } from './sync.ts';

const TOKEN = 's3cret-token';
const BASIC = `Basic ${Buffer.from('archivist:pa:ss').toString('base64')}`;
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0)) await fn();
});

async function fixtureWith(options: Parameters<typeof startFixtureSource>[0]): Promise<FixtureSource> {
  const f = await startFixtureSource({ resources: 12, ...options });
  cleanup.push(() => f.close());
  return f;
}

const tmp = (name: string) => mkdtempSync(join(tmpdir(), name));
const NO_PROXY_ENV = {};

function allFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name));
}

/** Every file of the mirror folder, state database included, holds no trace of the secret. */
function expectNoSecretIn(dest: string, secret: string): void {
  for (const file of allFiles(dest)) expect(readFileSync(file).includes(secret), file).toBe(false);
}

describe('credentials', () => {
  it('sends a bearer token to the Source only: not to a mirror location or a redirect on another host', async () => {
    const other = await fixtureWith({ resources: 12 });
    const source = await fixtureWith({ auth: `Bearer ${TOKEN}`, duplicateBase: `${other.url}/mirror` });
    // Resource 3 moves to the other host.
    source.setBroken(source.state.pathOf(3), { status: 302, headers: { location: other.url + source.state.pathOf(3) } });
    const dest = tmp('auth-');
    const store = new MemorySecretStore();
    const notes: string[] = [];
    const base: SyncOptions = { url: source.url + source.paths.dataset1.capabilityList, dest, secretStore: store, proxyEnv: NO_PROXY_ENV, onNote: (n) => notes.push(n) };
    const result = await sync({ ...base, credentials: { scheme: 'bearer', token: TOKEN } });
    expect(result).toMatchObject({ mode: 'baseline', created: 12, failed: 0 });
    expect(source.requests.length).toBeGreaterThan(12);
    expect(source.requests.every((r) => r.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
    // The other host got the duplicates (ids 5, 10) and the redirected resource, never the token.
    expect(other.requests.map((r) => r.path).sort()).toEqual(
      [`/mirror${source.state.pathOf(10)}`, `/mirror${source.state.pathOf(5)}`, source.state.pathOf(3)].sort(),
    );
    expect(other.requests.every((r) => r.headers.authorization === undefined)).toBe(true);
    expect(notes.join('\n')).toContain('kept in memory only');
    expectNoSecretIn(dest, TOKEN);

    // Reopened by its path alone: the token comes from the store, the binding knows the scheme.
    source.change('update', 2);
    const again = await sync({ dest, secretStore: store, proxyEnv: NO_PROXY_ENV });
    expect(again).toMatchObject({ mode: 'incremental', updated: 2, failed: 0 });
    expect(source.requests.every((r) => r.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
    // An audit uses the same settings.
    expect(await audit({ dest, secretStore: store, proxyEnv: NO_PROXY_ENV })).toMatchObject({ inSync: true });

    // On a computer that does not have the token: a clear error, nothing fetched.
    const before = source.requests.length;
    await expect(sync({ dest, secretStore: new MemorySecretStore(), proxyEnv: NO_PROXY_ENV })).rejects.toThrow(
      /sends a bearer token to http:\/\/127\.0\.0\.1:\d+, and none is kept on this computer; give it again with --token/,
    );
    expect(source.requests.length).toBe(before);
  });

  it('binding a new mirror sends the token to its Source only, not to the host a redirect leads discovery to', async () => {
    const other = await fixtureWith({ resources: 2 });
    const source = await fixtureWith({ resources: 2 });
    // Another port is another origin: discovery goes on there, reading the Capability Lists its Source Description lists.
    source.setBroken(source.paths.wellKnown, { status: 302, headers: { location: other.url + other.paths.wellKnown } });
    await prepareMirror({ url: source.url + source.paths.dataset1.capabilityList, dest: tmp('prepare-'), token: TOKEN });
    expect(source.requests.every((r) => r.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
    expect(other.requests.length).toBeGreaterThan(1);
    expect(other.requests.filter((r) => r.headers.authorization !== undefined)).toEqual([]);
  });

  it('sends HTTP basic credentials, keeps the password in a file store outside the mirror, sealed when a box is given', async () => {
    const source = await fixtureWith({ auth: BASIC });
    const dest = tmp('basic-');
    const storeFile = join(tmp('secrets-'), 'mirror-secrets.json');
    const box = { seal: (p: string) => Buffer.from(p).reverse().toString('hex'), open: (s: string) => Buffer.from(s, 'hex').reverse().toString() };
    const store = new FileSecretStore(storeFile, box);
    const notes: string[] = [];
    const url = source.url + source.paths.dataset1.resourceList;
    const result = await sync({ url, dest, secretStore: store, credentials: { scheme: 'basic', user: 'archivist', password: 'pa:ss' }, proxyEnv: NO_PROXY_ENV, onNote: (n) => notes.push(n) });
    expect(result).toMatchObject({ created: 12, failed: 0 });
    expect(notes.join('\n')).toContain(`sealed with the OS keychain in ${storeFile}`);
    expect(readFileSync(storeFile, 'utf8')).not.toContain('pa:ss');
    expectNoSecretIn(dest, 'pa:ss');
    const state = new MirrorState(stateDirOf(dest));
    expect(state.binding()!.settings!.auth).toEqual({ scheme: 'basic', user: 'archivist' });
    state.close();
    // Without the box the same file cannot be opened; an unsealed store says it keeps the value in clear.
    await expect(sync({ dest, secretStore: new FileSecretStore(storeFile), proxyEnv: NO_PROXY_ENV })).rejects.toThrow(/HTTP basic credentials \(user archivist\)/);
    const plain = new FileSecretStore(join(tmp('secrets-'), 's.json'));
    expect(plain.description).toMatch(/^unsealed \(in clear/);
    const reopened = await sync({ dest, secretStore: store, proxyEnv: NO_PROXY_ENV, mode: 'baseline' });
    expect(reopened).toMatchObject({ unchanged: 12, failed: 0 });
    // Wrong credentials: the Source answers 401 and the run says so.
    await expect(
      sync({ dest, secretStore: store, credentials: { scheme: 'basic', user: 'archivist', password: 'wrong' }, proxyEnv: NO_PROXY_ENV, mode: 'baseline' }),
    ).rejects.toThrow(/401/);
    // Forgetting them: no Authorization any more.
    const n = source.requests.length;
    await expect(sync({ dest, secretStore: store, credentials: null, proxyEnv: NO_PROXY_ENV, mode: 'baseline' })).rejects.toThrow(/401/);
    expect(source.requests.slice(n).every((r) => r.headers.authorization === undefined)).toBe(true);
    expect(store.get(`mirror:${new MirrorState(stateDirOf(dest)).binding()!.id}`)).toBeNull();
  });
});

describe('settings kept with the mirror', () => {
  it('a folder pointed at another origin sends it neither the kept token nor the extra headers, and says so', async () => {
    const source = await fixtureWith({ auth: `Bearer ${TOKEN}` });
    const other = await fixtureWith({});
    const dest = tmp('rebind-');
    const store = new MemorySecretStore();
    const base = { dest, secretStore: store, proxyEnv: NO_PROXY_ENV };
    await sync({ ...base, url: source.url + source.paths.dataset1.capabilityList, credentials: { scheme: 'bearer', token: TOKEN }, headers: { 'x-api-key': 'k1' } });
    const notes: string[] = [];
    // Another port: another origin, and another Source, which the folder refuses once it knows.
    for (const dryRun of [true, false]) {
      await expect(sync({ ...base, url: other.url + other.paths.dataset1.capabilityList, dryRun, onNote: (n) => notes.push(n) })).rejects.toThrow(/is a mirror of/);
    }
    expect(other.requests.length).toBeGreaterThan(0);
    expect(other.requests.filter((r) => r.headers.authorization !== undefined || r.headers['x-api-key'] !== undefined)).toEqual([]);
    expect(notes[0]).toBe(`The token and extra headers kept for ${source.url} are not sent to ${other.url}, another origin: give them again for it if it needs them.`);
    // The folder still mirrors the first, with its credentials.
    const again = await sync({ ...base, url: source.url + source.paths.dataset1.capabilityList });
    expect(again.failed).toBe(0);
    expect(source.requests.at(-1)!.headers).toMatchObject({ authorization: `Bearer ${TOKEN}`, 'x-api-key': 'k1' });
  });

  it('extra headers go to the Source only; concurrency, delay, timeout and headers survive a reopen', async () => {
    const other = await fixtureWith({});
    const source = await fixtureWith({ duplicateBase: `${other.url}/mirror` });
    const dest = tmp('headers-');
    await sync({
      // A bare host name, as people type it.
      url: source.url.replace('http://', '') + source.paths.dataset1.capabilityList,
      dest,
      headers: { 'x-api-key': 'k1', from: 'archivist@example.org' },
      concurrency: 3,
      delayMs: 5,
      timeoutMs: 4_000,
      proxyEnv: NO_PROXY_ENV,
    });
    expect(source.requests.every((r) => r.headers['x-api-key'] === 'k1' && r.headers.from === 'archivist@example.org')).toBe(true);
    expect(other.requests.length).toBe(2);
    expect(other.requests.every((r) => r.headers['x-api-key'] === undefined)).toBe(true);
    const state = new MirrorState(stateDirOf(dest));
    expect(state.binding()!.settings).toMatchObject({
      origin: source.url,
      headers: { 'x-api-key': 'k1', from: 'archivist@example.org' },
      concurrency: 3,
      delayMs: 5,
      timeoutMs: 4_000,
      proxy: 'env',
      auth: null,
    });
    state.close();
    source.change('create', 1);
    const n = source.requests.length;
    await sync({ dest, proxyEnv: NO_PROXY_ENV });
    expect(source.requests.length).toBeGreaterThan(n);
    expect(source.requests.slice(n).every((r) => r.headers['x-api-key'] === 'k1')).toBe(true);
  });

  it('settings a hand-edited or damaged folder keeps out of range are taken as the default, and said to be', async () => {
    const source = await fixtureWith({ resources: 4 });
    const dest = tmp('damaged-');
    await sync({ url: source.url + source.paths.dataset1.capabilityList, dest, headers: { 'x-api-key': 'k1' }, proxyEnv: NO_PROXY_ENV });
    const state = new MirrorState(stateDirOf(dest));
    const binding = state.binding()!;
    // Connections "eight" once stalled every run for good; a timeout of 0, a proxy that is no URL, a header with a
    // line break failed every request.
    const damaged = { ...binding.settings!, concurrency: 'eight', delayMs: -5, timeoutMs: 0, proxy: 'garbage', headers: { 'x-api-key': 'k1', 'x-bad': 'a\r\nx: y', range: 'bytes=0-1' } };
    state.setBinding({ ...binding, settings: damaged as unknown as SourceSettings });
    state.close();
    source.change('update', 2);
    const notes: string[] = [];
    const result = await Promise.race([
      sync({ dest, proxyEnv: NO_PROXY_ENV, onNote: (n) => notes.push(n) }),
      new Promise((_, reject) => setTimeout(() => reject(new Error('the run did not end')), 15_000)),
    ]);
    expect(result).toMatchObject({ mode: 'incremental', failed: 0 });
    expect((result as { updated: number }).updated).toBeGreaterThan(0);
    // The header that can be sent still is: it may be the key the Source wants.
    expect(source.requests.at(-1)!.headers).toMatchObject({ 'x-api-key': 'k1' });
    expect(source.requests.at(-1)!.headers).not.toHaveProperty('x-bad');
    expect(notes).toContain(
      "The connections, pause between requests, timeout, proxy and extra headers kept in this mirror's folder are not valid (was the folder edited by hand?): this run uses the default instead (of the extra headers, those that can be sent).",
    );
    expect(keptSettingsProblems({ ...binding.settings!, concurrency: 8, delayMs: 250, timeoutMs: 30_000, proxy: 'none' })).toEqual([]);
  });
});

/** A forward proxy on 127.0.0.1 that counts what passes through it (absolute-form requests and CONNECT tunnels). */
async function loopbackProxy(): Promise<{ url: string; seen: string[]; close: () => Promise<void> }> {
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(req.url ?? '');
    const target = new URL(req.url ?? '');
    const upstream = request(target, { method: req.method, headers: { ...req.headers, host: target.host } }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('proxies', () => {
  it('go through HTTP_PROXY by default, straight past it for NO_PROXY hosts, and through a proxy named in the settings', async () => {
    const proxy = await loopbackProxy();
    cleanup.push(proxy.close);
    const source = await fixtureWith({});
    const url = source.url + source.paths.dataset1.resourceList;

    const viaEnv = await sync({ url, dest: tmp('proxy-'), proxyEnv: { HTTP_PROXY: proxy.url } });
    expect(viaEnv).toMatchObject({ created: 12, failed: 0 });
    // Discovery, the list and every resource (two of them from their mirror location) went through the proxy.
    expect(proxy.seen.filter((u) => u.includes('/res/')).length).toBe(12);
    expect(proxy.seen).toContain(url);

    proxy.seen.length = 0;
    const bypass = await sync({ url, dest: tmp('proxy-'), proxyEnv: { HTTP_PROXY: proxy.url, NO_PROXY: 'localhost,127.0.0.1' } });
    expect(bypass).toMatchObject({ created: 12, failed: 0 });
    expect(proxy.seen).toEqual([]);

    const named = await sync({ url, dest: tmp('proxy-'), proxy: proxy.url, proxyEnv: {} });
    expect(named).toMatchObject({ created: 12, failed: 0 });
    expect(proxy.seen.filter((u) => u.includes('/res/')).length).toBe(12);

    proxy.seen.length = 0;
    const none = await sync({ url, dest: tmp('proxy-'), proxy: 'none', proxyEnv: { HTTP_PROXY: proxy.url } });
    expect(none).toMatchObject({ created: 12, failed: 0 });
    expect(proxy.seen).toEqual([]);
  });
});
