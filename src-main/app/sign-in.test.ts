// Signing in to a protected Source from "Add Source" and from its refused documents, and a mirror's own token and
// extra headers: against the fixture Source asking for an Authorization header (the whole Source, or only its
// /dataset1/ area), through the service as the UI calls it, the secrets sealed by a fake keychain.
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
const TOKEN = 'tok-3f9a.b_c~d';
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

async function start(options: Parameters<typeof startFixtureSource>[0]): Promise<void> {
  fixture = await startFixtureSource({ resources: 6, openHub: true, ...options });
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rsdesk-sign-in-'));
  events = [];
  live = [];
  service = createService({
    store: openStore(join(dir, 'rsdesk.sqlite')),
    adapter: 'electron',
    version: '1',
    log: () => undefined,
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
  await fixture?.close();
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

const secrets = () => {
  try {
    return readFileSync(join(dir, 'mirror-secrets.json'), 'utf8');
  } catch {
    return '';
  }
};

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

describe('Add Source on a protected Source', () => {
  it('says it asks for a sign-in, refuses a wrong password in plain words, and adds the Source once signed in', async () => {
    await start({ auth: basic(USER, PASSWORD) });
    let error = await refused('sources.add', { url: fixture.url, runId: 'r1' });
    expect(error).toMatchObject({ code: 'sign-in', origin: fixture.url, refusedSignIn: false });
    expect(error.message).toMatch(new RegExp(`^${fixture.url} asks for a sign-in to read ${fixture.url}/.* \\(HTTP 401 Unauthorized\\)\\.$`));
    expect(await call('sources.list', {})).toEqual([]);

    // A wrong password: refused at once, in words, and not kept.
    error = await refused('sources.signIn', { url: fixture.url, user: USER, password: 'wrong' });
    expect(error).toEqual({
      code: 'sign-in',
      origin: fixture.url,
      refusedSignIn: true,
      message: `${fixture.url} refused the user name "${USER}" and its password (HTTP 401 Unauthorized). Check them and try again; they were not kept.`,
    });
    expect(secrets()).not.toContain('source:');

    const signedIn = await call('sources.signIn', { url: fixture.url, user: USER, password: PASSWORD });
    expect(signedIn).toEqual({ signIn: { origin: fixture.url, scheme: 'basic', user: USER }, checked: { url: `${fixture.url}/`, status: 200 } });
    expect(JSON.stringify(signedIn)).not.toContain(PASSWORD);
    // Kept sealed, beside the mirrors' secrets; never in clear.
    expect(secrets()).toContain(`"source:${fixture.url}"`);
    expect(secrets()).not.toContain(PASSWORD);

    const added = await call('sources.add', { url: fixture.url, runId: 'r2' });
    expect(added.created).toBe(true);
    const view = await call('documents.summary', { url: fixture.url + PATHS.dataset1.capabilityList });
    expect(view.capability).toBe('capabilitylist');
    const asked = fixture.requests.filter((r) => r.path === PATHS.dataset1.capabilityList).at(-1);
    expect(asked?.headers.authorization).toBe(basic(USER, PASSWORD));

    // A new mirror of that origin takes the sign-in as its own, and its run signs in with it.
    const path = join(dir, 'mirror');
    await call('mirrors.create', { url: fixture.url + PATHS.dataset1.capabilityList, path });
    expect((await call('mirrors.get', { path })).access).toEqual({ scheme: 'basic', origin: fixture.url, user: USER, kept: true });
    const since = events.length;
    await call('runs.start', { path });
    expect(await ended(since)).toMatchObject({ status: 'completed', created: 6, failed: 0 });

    // Listed (never the password), then signed out: the browser is refused again (the mirror keeps its own).
    expect(await call('sources.signIns', {})).toEqual([{ origin: fixture.url, scheme: 'basic', user: USER }]);
    expect(await call('sources.signOut', { url: fixture.url })).toEqual({ origin: fixture.url, forgotten: { origin: fixture.url, scheme: 'basic', user: USER } });
    expect(await call('sources.signIns', {})).toEqual([]);
    expect(secrets()).not.toContain(`source:${fixture.url}`);
    await call('mirrors.setCredentials', { path, user: null, password: null });
    error = await refused('documents.summary', { url: fixture.url + PATHS.dataset1.resourceList, refresh: true });
    expect(error).toMatchObject({ code: 'sign-in', origin: fixture.url, refusedSignIn: false });
  });

  it('takes a token up front, and refuses a wrong one before anything is saved', async () => {
    await start({ auth: `Bearer ${TOKEN}` });
    const error = await refused('sources.add', { url: fixture.url, runId: 'r1', signIn: { token: 'not-it' } });
    expect(error).toMatchObject({ code: 'sign-in', refusedSignIn: true, message: `${fixture.url} refused the token (HTTP 401 Unauthorized). Check them and try again; they were not kept.` });
    expect(await call('sources.list', {})).toEqual([]);
    expect(secrets()).not.toContain('source:');

    const added = await call('sources.add', { url: fixture.url, runId: 'r2', signIn: { token: TOKEN } });
    expect(added.created).toBe(true);
    expect(added.discovery.sourceDescription).toBe(fixture.sourceDescriptionUrl);
    expect(secrets()).not.toContain(TOKEN);
    expect((await call('documents.summary', { url: fixture.url + PATHS.dataset1.resourceList })).entries).toBe(6);
  });

  it('checks the sign-in fields in main, in plain words that never repeat a secret', async () => {
    await start({});
    const url = fixture.url;
    expect(await refused('sources.signIn', { url })).toMatchObject({ code: 'invalid-arguments', field: 'user', message: 'Enter a user name and password, or a token.' });
    expect(await refused('sources.signIn', { url, user: USER })).toMatchObject({ field: 'password', message: 'Enter the password.' });
    const both = await refused('sources.signIn', { url, user: USER, password: 'p', token: 'secret-token' });
    expect(both).toMatchObject({ field: 'token', message: 'Give either a user name and password or a token, not both.' });
    expect(both.message).not.toContain('secret-token');
    expect(await refused('sources.signIn', { url, token: 'a b' })).toMatchObject({ field: 'token', message: 'The token contains a space, a line break or another control character.' });
    // Pasted with its quotes: it cannot be sent, and every request would fail with it.
    const quoted = await refused('sources.signIn', { url, token: '“tok-1”' });
    expect(quoted).toMatchObject({ field: 'token', message: 'The token contains a character other than plain ASCII letters, digits and signs (a curly quote, an accented letter…).' });
    expect(quoted.message).not.toContain('tok-1');
    // The Settings token goes to every Source: the same rules, before it is kept.
    expect(await refused('settings.set', { bearerToken: 'line1\nline2' })).toMatchObject({ field: 'bearerToken', message: 'The token contains a space, a line break or another control character.' });
    expect(await refused('settings.set', { bearerToken: 'tøken' })).toMatchObject({ field: 'bearerToken', message: /plain ASCII/ });
    expect((await call('settings.get', {})).bearerToken).toBe(null);
    expect((await call('settings.set', { bearerToken: '' })).bearerToken).toBe(null);
    expect(await refused('sources.add', { url, runId: 'r', signIn: { user: 'a:b', password: 'p' } })).toMatchObject({
      message: 'A user name cannot contain a colon (HTTP basic authentication does not allow one).',
    });
  });
});

describe('documents in a protected area of a Source', () => {
  it('are refused until signed in, then read with the sign-in; a sign-in the Source no longer takes is said to be refused', async () => {
    await start({ auth: basic(USER, PASSWORD), authOnly: ['/dataset1/'] });
    // The Source Description is open: the Source is added, its dataset1 documents are refused.
    const added = await call('sources.add', { url: fixture.url, runId: 'r1' });
    expect(added.created).toBe(true);
    const url = fixture.url + PATHS.dataset1.capabilityList;
    let error = await refused('documents.summary', { url });
    expect(error).toEqual({ code: 'sign-in', origin: fixture.url, refusedSignIn: false, message: `${fixture.url} asks for a sign-in to read ${url} (HTTP 401 Unauthorized).` });
    expect((await call('documents.summary', { url: fixture.url + PATHS.dataset2.capabilityList })).capability).toBe('capabilitylist');

    await call('sources.signIn', { url, user: USER, password: PASSWORD });
    expect((await call('documents.summary', { url })).capability).toBe('capabilitylist');
    expect((await call('documents.entries', { url: fixture.url + PATHS.dataset1.resourceList, offset: 0, limit: 10 })).total).toBe(6);
    // Sent with the requests for that origin.
    expect(fixture.requests.filter((r) => r.path.startsWith('/dataset1/')).at(-1)?.headers.authorization).toBe(basic(USER, PASSWORD));

    // The Source's password changes: the kept sign-in is refused, and the message says so.
    fixture.setAuth(basic(USER, 'changed'));
    error = await refused('documents.summary', { url, refresh: true });
    expect(error).toEqual({
      code: 'sign-in',
      origin: fixture.url,
      refusedSignIn: true,
      message: `${fixture.url} refused the sign-in kept for it (HTTP 401 Unauthorized for ${url}): the password or token may have changed. Sign in again.`,
    });
    // 403: credentials that are right but not allowed there.
    fixture.setBroken(PATHS.dataset1.resourceList, { status: 403 });
    await call('sources.signIn', { url, user: USER, password: 'changed' });
    error = await refused('documents.summary', { url: fixture.url + PATHS.dataset1.resourceList, refresh: true });
    expect(error.message).toBe(`${fixture.url} does not let the sign-in kept for it read ${fixture.url + PATHS.dataset1.resourceList} (HTTP 403 Forbidden): this account may not have access to it.`);
  });
});

describe("a mirror's own token and extra headers", () => {
  async function mirror(): Promise<string> {
    const path = join(dir, 'mirror');
    await call('mirrors.create', { url: fixture.url + PATHS.dataset1.capabilityList, path });
    const since = events.length;
    await call('runs.start', { path });
    expect(await ended(since)).toMatchObject({ status: 'completed', created: 6 });
    return path;
  }

  it('a token of its own is sealed, wins over the Settings token, and can be taken away', async () => {
    await start({});
    const path = await mirror();
    fixture.setAuth(`Bearer ${TOKEN}`);
    const detail = await call('mirrors.setToken', { path, token: TOKEN });
    expect(detail.access).toEqual({ scheme: 'bearer', origin: fixture.url, kept: true });
    expect(JSON.stringify(detail)).not.toContain(TOKEN);
    expect(secrets()).not.toContain(TOKEN);
    await call('settings.set', { bearerToken: 'for-other-sources', tokenOrigin: fixture.url });
    fixture.change('update', 2);
    const mark = fixture.requests.length;
    let since = events.length;
    await call('runs.start', { path });
    expect(await ended(since)).toMatchObject({ status: 'completed', updated: 2, failed: 0 });
    expect(new Set(fixture.requests.slice(mark).map((r) => r.headers.authorization))).toEqual(new Set([`Bearer ${TOKEN}`]));
    // The browser signs in with it too.
    expect((await call('documents.summary', { url: fixture.url + PATHS.dataset1.resourceList, refresh: true })).entries).toBe(6);

    expect((await call('mirrors.setToken', { path, token: null })).access).toEqual({ scheme: 'settings', origin: fixture.url });
    since = events.length;
    await call('runs.start', { path });
    expect((await ended(since)).message).toMatch(/401/);
    expect(await refused('mirrors.setToken', { path, token: 'two words' })).toMatchObject({ field: 'token', message: 'The token contains a space, a line break or another control character.' });
  });

  it('extra headers are checked in main and sent to the Source only', async () => {
    await start({});
    const path = await mirror();
    const bad = async (headers: { name: string; value: string }[]) => (await refused('mirrors.setHeaders', { path, headers })).message;
    expect(await bad([{ name: 'Host', value: 'elsewhere' }])).toBe('The host header cannot be set: the connection itself decides it.');
    expect(await bad([{ name: 'Connection', value: 'close' }])).toBe('The connection header cannot be set: the connection itself decides it.');
    expect(await bad([{ name: 'Content-Length', value: '1' }])).toBe('The content-length header cannot be set: the connection itself decides it.');
    expect(await bad([{ name: 'Transfer-Encoding', value: 'chunked' }])).toMatch(/transfer-encoding header cannot be set/);
    expect(await bad([{ name: 'Authorization', value: 'Basic x' }])).toMatch(/give a user name and password or a token instead/);
    expect(await bad([{ name: 'If-Modified-Since', value: 'Sat, 01 Jan 2100 00:00:00 GMT' }])).toBe('The if-modified-since header cannot be set: the mirror sets it itself, request by request.');
    expect(await bad([{ name: 'X Api', value: 'v' }])).toMatch(/^A header name is letters, digits/);
    expect(await bad([{ name: 'X-Api:', value: 'v' }])).toMatch(/^A header name is letters, digits/);
    expect(await bad([{ name: 'X-Api', value: 'a\r\nInjected: yes' }])).toBe('A header value contains a line break or another control character.');
    expect(await bad([{ name: 'X-Api', value: '東京' }])).toBe(
      'A header value contains a character that cannot be sent in a header (only Latin-1 letters and signs can: not a curly quote or another script).',
    );
    expect(await bad([{ name: 'X-Api', value: 'a' }, { name: 'x-api', value: 'b' }])).toBe('Each header name may be given once.');
    expect((await call('mirrors.get', { path })).headers).toEqual([]);

    const detail = await call('mirrors.setHeaders', { path, headers: [{ name: 'X-Api-Key', value: 'k1 v1' }, { name: 'From', value: 'archive@example.org' }] });
    expect(detail.headers).toEqual([{ name: 'x-api-key', value: 'k1 v1' }, { name: 'from', value: 'archive@example.org' }]);
    fixture.change('update', 1);
    const mark = fixture.requests.length;
    const since = events.length;
    await call('runs.start', { path });
    expect(await ended(since)).toMatchObject({ status: 'completed', updated: 1 });
    const sent = fixture.requests.slice(mark);
    expect(sent.length).toBeGreaterThan(0);
    for (const r of sent) expect([r.headers['x-api-key'], r.headers.from]).toEqual(['k1 v1', 'archive@example.org']);
    expect((await call('mirrors.setHeaders', { path, headers: [] })).headers).toEqual([]);
  });

  it('a token and a header changed while subscribed reach the next live batch, without a restart', async () => {
    await start({});
    const path = await mirror();
    await call('live.subscribe', { topic: fixture.url + PATHS.dataset1.notifications, hub: fixture.url + PATHS.hub, folder: path });
    await waitFor(() => live.find((e) => e.type === 'subscribed'), 'subscribed');
    await fixture.hub.settled();
    const appliedAfter = (since: number) => waitFor(() => live.slice(since).find((e) => e.type === 'applied'), 'applied');

    fixture.setAuth(`Bearer ${TOKEN}`);
    let since = live.length;
    fixture.change('update', 1);
    expect(await appliedAfter(since)).toMatchObject({ updated: 0, failed: 1 });

    await call('mirrors.setToken', { path, token: TOKEN });
    await call('mirrors.setHeaders', { path, headers: [{ name: 'X-Archive', value: 'live' }] });
    since = live.length;
    const [changed] = fixture.change('update', 1);
    expect(await appliedAfter(since)).toMatchObject({ updated: 1, failed: 0 });
    const asked = fixture.requests.filter((r) => r.path === fixture.state.pathOf(changed!.id)).at(-1);
    expect(asked?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(asked?.headers['x-archive']).toBe('live');
  });
});
