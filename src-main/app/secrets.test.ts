// The app's mirror credentials at rest: the service is handed a SecretStore (the desktop app's is a file whose values
// are sealed by safeStorage; here a fake box under Node does the sealing), and syncs, audits and applied notifications
// all take the mirror's token from it. Against the fixture Source requiring a bearer token (its hub answers without).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../e2e/fixture-source/index.ts';
import { PATHS } from '../../e2e/fixture-source/paths.ts';
import type { CommandArgs, CommandResult } from '../contract/commands.ts';
import type { CommandName } from '../contract/names.ts';
import type { Events, LiveBatch, LiveEvent } from '../contract/types.ts';
import { FileSecretStore } from '../engine/mirror/secrets.ts';
import type { SecretBox } from '../store/secrets.ts';
import { openStore } from '../store/store.ts';
import { createService, type Service } from './service.ts';

const TOKEN = 'app-s3cret';
/** Stands in for safeStorage: reversible, and the sealed text does not contain the plain one. */
const fakeKeychain: SecretBox = {
  seal: (plain) => `sealed:${Buffer.from(plain).reverse().toString('base64')}`,
  open: (sealed) => {
    if (!sealed.startsWith('sealed:')) throw new Error('not sealed here');
    return Buffer.from(sealed.slice(7), 'base64').reverse().toString();
  },
};

let dir: string;
let fixture: FixtureSource;
const services: Service[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rsdesk-secrets-app-'));
  fixture = await startFixtureSource({ resources: 10, auth: `Bearer ${TOKEN}`, openHub: true });
});

afterEach(async () => {
  for (const s of services.splice(0)) await s.close();
  await fixture.close();
  rmSync(dir, { recursive: true, force: true });
});

const secretsFile = () => join(dir, 'mirror-secrets.json');

function open(box: SecretBox | undefined): { service: Service; events: { name: string; payload: unknown }[]; live: LiveEvent[] } {
  const events: { name: string; payload: unknown }[] = [];
  const live: LiveEvent[] = [];
  const service = createService({
    store: openStore(join(dir, 'rsdesk.sqlite')),
    adapter: 'electron',
    version: '1',
    log: () => undefined,
    live: { dataDir: dir, port: 0 },
    mirrorSecrets: new FileSecretStore(secretsFile(), box),
  });
  services.push(service);
  service.events.subscribe((name, payload) => {
    events.push({ name, payload });
    if (name === 'live.events') live.push(...(payload as LiveBatch).events);
  });
  return { service, events, live };
}

async function call<C extends CommandName>(s: Service, command: C, args: CommandArgs<C>): Promise<CommandResult<C>> {
  const reply = await s.dispatch(command, args);
  if (!reply.ok) throw new Error(`${command}: ${reply.error.message}`);
  return reply.result as CommandResult<C>;
}

async function waitFor<T>(find: () => T | undefined, what: string): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const found = find();
    if (found !== undefined) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${what} not seen`);
}

const ended = (events: { name: string; payload: unknown }[], since: number) =>
  waitFor(() => events.slice(since).find((e) => e.name === 'mirror.ended')?.payload as Events['mirror.ended'] | undefined, 'the end of the run');

describe('mirror credentials in the app', () => {
  it('keeps the token sealed outside the mirror; later syncs, audits and live notifications take it from there', async () => {
    const { service, events, live } = open(fakeKeychain);
    expect((await call(service, 'app.info', {})).secrets).toEqual({ sealed: true, description: `sealed with the OS keychain in ${secretsFile()}` });
    await call(service, 'settings.set', { bearerToken: TOKEN, tokenOrigin: fixture.url });
    const path = join(dir, 'mirror');
    await call(service, 'mirrors.create', { url: fixture.url + PATHS.dataset1.capabilityList, path });
    let since = events.length;
    await call(service, 'runs.start', { path });
    expect(await ended(events, since)).toMatchObject({ status: 'completed', created: 10, failed: 0 });
    // Sealed: the file holds the token only through the box; the mirror folder not at all.
    expect(existsSync(secretsFile())).toBe(true);
    expect(readFileSync(secretsFile(), 'utf8')).not.toContain(TOKEN);
    expect(readFileSync(secretsFile(), 'utf8')).toContain('"sealed": true');
    expect(readFileSync(join(path, '.resourcesync', 'state.sqlite')).includes(TOKEN)).toBe(false);

    // The Settings token is cleared: the mirror still has its own, kept sealed.
    await call(service, 'settings.set', { bearerToken: null });
    fixture.change('update', 2);
    since = events.length;
    await call(service, 'runs.start', { path });
    expect(await ended(events, since)).toMatchObject({ status: 'completed', mode: 'incremental', updated: 2, failed: 0 });
    expect((await call(service, 'audit.start', { path })).report).toMatchObject({ inSync: true });

    // Live: the hub's notification is applied with the mirror's token (the Source refuses anything without it).
    await call(service, 'live.subscribe', { topic: fixture.url + PATHS.dataset1.notifications, hub: fixture.url + PATHS.hub, folder: path });
    await waitFor(() => live.find((e) => e.type === 'subscribed'), 'subscribed');
    await fixture.hub.settled();
    const [changed] = fixture.change('update');
    const applied = await waitFor(() => live.find((e) => e.type === 'applied'), 'applied');
    expect(applied).toMatchObject({ updated: 1, failed: 0 });
    const last = fixture.requests.filter((r) => r.path === fixture.state.pathOf(changed.id)).at(-1);
    expect(last?.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('without the keychain that sealed it, says in plain words where to give the token again', async () => {
    const first = open(fakeKeychain);
    await call(first.service, 'settings.set', { bearerToken: TOKEN, tokenOrigin: fixture.url });
    const path = join(dir, 'mirror');
    await call(first.service, 'mirrors.create', { url: fixture.url + PATHS.dataset1.capabilityList, path });
    await call(first.service, 'runs.start', { path });
    expect(await ended(first.events, 0)).toMatchObject({ status: 'completed' });
    await call(first.service, 'settings.set', { bearerToken: null });
    await first.service.close();
    services.splice(0);

    // The same data folder where no keychain is available: the sealed value cannot be opened; nothing is fetched.
    const second = open(undefined);
    expect((await call(second.service, 'app.info', {})).secrets).toEqual({ sealed: false, description: `unsealed (in clear, readable only by your user account) in ${secretsFile()}` });
    const before = fixture.requests.length;
    await call(second.service, 'runs.start', { path });
    const end = await ended(second.events, 0);
    expect(end.status).toBe('error');
    expect(end.message).toMatch(
      /^This mirror sends a bearer token to http:\/\/127\.0\.0\.1:\d+, and none is kept on this computer; enter it as the bearer token in Settings, with this Source's address, then run the mirror again$/,
    );
    expect(fixture.requests.length).toBe(before);
  });
});
