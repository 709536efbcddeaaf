// HTTP basic credentials in the app (a mirror's own, beside the Settings token) and credentials changed while live
// notifications are subscribed: against the fixture Source requiring an Authorization header (its hub answers
// without), through the service as the UI calls it, with the secret store sealed by a fake keychain.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../e2e/fixture-source/index.ts';
import { PATHS } from '../../e2e/fixture-source/paths.ts';
import type { CommandArgs, CommandResult } from '../contract/commands.ts';
import type { CommandName } from '../contract/names.ts';
import type { CommandError, Events, LiveBatch, LiveEvent } from '../contract/types.ts';
import { FileSecretStore } from '../engine/mirror/secrets.ts';
import type { SecretBox } from '../store/secrets.ts';
import { openStore } from '../store/store.ts';
import { createService, type Service } from './service.ts';

const USER = 'archivist';
const PASSWORD = 'pa:ss wörd';
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const fakeKeychain: SecretBox = {
  seal: (plain) => `sealed:${Buffer.from(plain).reverse().toString('base64')}`,
  open: (sealed) => {
    if (!sealed.startsWith('sealed:')) throw new Error('not sealed here');
    return Buffer.from(sealed.slice(7), 'base64').reverse().toString();
  },
};

let dir: string;
let fixture: FixtureSource;
let service: Service;
let events: { name: string; payload: unknown }[];
let live: LiveEvent[];
let logged: string[];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rsdesk-credentials-app-'));
  fixture = await startFixtureSource({ resources: 10, auth: basic(USER, PASSWORD), openHub: true });
  events = [];
  live = [];
  logged = [];
  service = createService({
    store: openStore(join(dir, 'rsdesk.sqlite')),
    adapter: 'electron',
    version: '1',
    log: (...parts: unknown[]) => void logged.push(parts.map(String).join(' ')),
    live: { dataDir: dir, port: 0 },
    mirrorSecrets: new FileSecretStore(join(dir, 'mirror-secrets.json'), fakeKeychain),
  });
  service.events.subscribe((name, payload) => {
    events.push({ name, payload });
    if (name === 'live.events') live.push(...(payload as LiveBatch).events);
  });
});

afterEach(async () => {
  await service.close();
  await fixture.close();
  rmSync(dir, { recursive: true, force: true });
});

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

async function waitFor<T>(find: () => T | undefined, what: string): Promise<T> {
  for (let i = 0; i < 750; i++) {
    const found = find();
    if (found !== undefined) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${what} not seen`);
}

const ended = (since: number) =>
  waitFor(() => events.slice(since).find((e) => e.name === 'mirror.ended')?.payload as Events['mirror.ended'] | undefined, 'the end of the run');

async function mirrorWithBasic(): Promise<string> {
  const path = join(dir, 'mirror');
  await call('mirrors.create', { url: fixture.url + PATHS.dataset1.capabilityList, path, user: USER, password: PASSWORD });
  const since = events.length;
  await call('runs.start', { path });
  expect(await ended(since)).toMatchObject({ status: 'completed', created: 10, failed: 0 });
  return path;
}

describe('HTTP basic credentials of a mirror in the app', () => {
  it('are sent from discovery on, kept sealed outside the mirror, and win over the Settings token', async () => {
    const path = await mirrorWithBasic();
    const secrets = readFileSync(join(dir, 'mirror-secrets.json'), 'utf8');
    expect(secrets).not.toContain(PASSWORD);
    expect(secrets).toContain('"sealed": true');
    expect(readFileSync(join(path, '.resourcesync', 'state.sqlite')).includes(PASSWORD)).toBe(false);
    const detail = await call('mirrors.get', { path });
    expect(detail.access).toEqual({ scheme: 'basic', origin: fixture.url, user: USER, kept: true });
    expect(JSON.stringify(detail)).not.toContain(PASSWORD);
    expect(JSON.stringify(await call('mirrors.list', {}))).not.toContain(PASSWORD);

    // A bearer token in Settings, even for this Source: this mirror goes on with its own credentials.
    await call('settings.set', { bearerToken: 'for-other-sources', tokenOrigin: fixture.url });
    fixture.change('update', 2);
    const since = events.length;
    await call('runs.start', { path });
    expect(await ended(since)).toMatchObject({ status: 'completed', mode: 'incremental', updated: 2, failed: 0 });
    expect((await call('audit.start', { path })).report).toMatchObject({ inSync: true });
    const toSource = fixture.requests.filter((r) => r.path.includes('/res/')).map((r) => r.headers.authorization);
    expect(new Set(toSource)).toEqual(new Set([basic(USER, PASSWORD)]));
    expect(readFileSync(join(dir, 'mirror-secrets.json'), 'utf8')).toBe(secrets);
    expect(logged.join('\n')).not.toContain(PASSWORD);
  });

  it('let the browser read that Source\'s documents too, and only that Source\'s', async () => {
    const url = fixture.url + PATHS.dataset1.resourceList;
    // Before any mirror has them: the Source refuses the browser.
    expect((await service.dispatch('documents.summary', { url })).ok).toBe(false);
    const path = await mirrorWithBasic();
    const view = await call('documents.summary', { url, refresh: true });
    expect(view.capability).toBe('resourcelist');
    const asked = fixture.requests.filter((r) => r.path === PATHS.dataset1.resourceList).at(-1);
    expect(asked?.headers.authorization).toBe(basic(USER, PASSWORD));
    // Taken away from the mirror: the browser no longer has them either.
    await call('mirrors.setCredentials', { path, user: null, password: null });
    expect((await service.dispatch('documents.summary', { url, refresh: true })).ok).toBe(false);
  });

  it('are validated in main, in plain words that never repeat the password', async () => {
    const path = await mirrorWithBasic();
    const secret = 'never-shown\nsecret';
    let error = await refused('mirrors.setCredentials', { path, user: 'a:b', password: 'x' });
    expect(error).toMatchObject({ code: 'invalid-arguments', field: 'user' });
    expect(error.message).toBe('A user name cannot contain a colon (HTTP basic authentication does not allow one).');
    error = await refused('mirrors.setCredentials', { path, user: USER, password: secret });
    expect(error).toMatchObject({ code: 'invalid-arguments', field: 'password', message: 'The password contains a line break or another control character.' });
    error = await refused('mirrors.setCredentials', { path, user: USER, password: '' });
    expect(error).toMatchObject({ field: 'password', message: 'Enter the password.' });
    error = await refused('mirrors.setCredentials', { path, user: null, password: 'only-a-password' });
    expect(error).toMatchObject({ field: 'user', message: 'Enter the user name.' });
    expect(error.message).not.toContain('only-a-password');
    error = await refused('mirrors.create', { url: fixture.url + PATHS.dataset1.capabilityList, path: join(dir, 'other'), user: USER });
    expect(error).toMatchObject({ field: 'password', message: 'Enter the password.' });
    // Nothing changed by the refusals.
    expect((await call('mirrors.get', { path })).access).toMatchObject({ scheme: 'basic', user: USER, kept: true });

    // Taken away: the mirror has none of its own; the Source refuses the next run, which says so plainly.
    expect((await call('mirrors.setCredentials', { path, user: null, password: null })).access).toEqual({ scheme: 'settings', origin: fixture.url });
    expect(readFileSync(join(dir, 'mirror-secrets.json'), 'utf8')).not.toContain('mirror:');
    const since = events.length;
    await call('runs.start', { path });
    const end = await ended(since);
    expect(end.status).toBe('error');
    expect(end.message).toMatch(/401/);
  });

  it('a password the keychain cannot open is asked for in the Access tab', async () => {
    const path = await mirrorWithBasic();
    await service.close();
    // The same data folder where the keychain that sealed it is not available.
    service = createService({
      store: openStore(join(dir, 'rsdesk.sqlite')),
      adapter: 'electron',
      version: '1',
      log: () => undefined,
      live: { dataDir: dir, port: 0 },
      mirrorSecrets: new FileSecretStore(join(dir, 'mirror-secrets.json')),
    });
    events = [];
    service.events.subscribe((name, payload) => void events.push({ name, payload }));
    expect((await call('mirrors.get', { path })).access).toMatchObject({ scheme: 'basic', user: USER, kept: false });
    const before = fixture.requests.length;
    await call('runs.start', { path });
    const end = await ended(0);
    expect(end.message).toBe(
      `This mirror sends HTTP basic credentials (user ${USER}) to ${fixture.url}, and none is kept on this computer; enter the password in the mirror's Access tab, then run the mirror again`,
    );
    expect(fixture.requests.length).toBe(before);
  });
});

describe('credentials changed while subscribed to live notifications', () => {
  async function subscribed(path: string): Promise<void> {
    await call('live.subscribe', { topic: fixture.url + PATHS.dataset1.notifications, hub: fixture.url + PATHS.hub, folder: path });
    await waitFor(() => live.find((e) => e.type === 'subscribed'), 'subscribed');
    await fixture.hub.settled();
  }
  const appliedAfter = (since: number) => waitFor(() => live.slice(since).find((e) => e.type === 'applied'), 'applied');
  const lastRequestFor = (id: number) => fixture.requests.filter((r) => r.path === fixture.state.pathOf(id)).at(-1);

  it('a new password reaches the next batch, without a restart', async () => {
    const path = await mirrorWithBasic();
    await subscribed(path);
    // The Source's password changes: the next notification cannot be fetched with the old one.
    fixture.setAuth(basic(USER, 'new-password'));
    let since = live.length;
    fixture.change('update', 1);
    expect(await appliedAfter(since)).toMatchObject({ updated: 0, failed: 1 });

    await call('mirrors.setCredentials', { path, user: USER, password: 'new-password' });
    since = live.length;
    const [changed] = fixture.change('update', 1);
    expect(await appliedAfter(since)).toMatchObject({ updated: 1, failed: 0 });
    expect(lastRequestFor(changed!.id)?.headers.authorization).toBe(basic(USER, 'new-password'));
  });

  it('a bearer token set in Settings after subscribing reaches the next batch, without a restart', async () => {
    // A mirror without credentials of its own, of a Source that asks for none yet.
    fixture.setAuth(null);
    const path = join(dir, 'mirror');
    await call('mirrors.create', { url: fixture.url + PATHS.dataset1.capabilityList, path });
    let since = events.length;
    await call('runs.start', { path });
    expect(await ended(since)).toMatchObject({ status: 'completed', created: 10 });
    await subscribed(path);

    fixture.setAuth('Bearer now-needed');
    since = live.length;
    fixture.change('update', 1);
    expect(await appliedAfter(since)).toMatchObject({ updated: 0, failed: 1 });

    await call('settings.set', { bearerToken: 'now-needed', tokenOrigin: fixture.url });
    since = live.length;
    const [changed] = fixture.change('update', 1);
    expect(await appliedAfter(since)).toMatchObject({ updated: 1, failed: 0 });
    expect(lastRequestFor(changed!.id)?.headers.authorization).toBe('Bearer now-needed');
  });
});
