// Adding a Source as the UI does it, against the fixture Source on 127.0.0.1: created or already saved, what the
// pasted URL turned out to be (a document, a refused one), the URL being fetched, Cancel, and remove with Undo.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PATHS, startFixtureSource, type FixtureSource } from '../../e2e/fixture-source/index.ts';
import type { CommandArgs, CommandResult } from '../contract/commands.ts';
import type { CommandName, EventName } from '../contract/names.ts';
import type { CommandError, Events } from '../contract/types.ts';
import { openStore } from '../store/store.ts';
import { DiscoveryRuns } from './discovery-runs.ts';
import { CancelledError } from './errors.ts';
import { createService, type Service } from './service.ts';

let fixture: FixtureSource;
let dir: string;
let service: Service;
let events: { name: EventName; payload: unknown }[];

function open(): Service {
  const s = createService({ store: openStore(join(dir, 'rsdesk.sqlite')), adapter: 'http', version: '0.0.0', log: () => undefined });
  s.events.subscribe((name, payload) => events.push({ name, payload }));
  return s;
}

async function call<C extends CommandName>(command: C, args: CommandArgs<C>): Promise<CommandResult<C>> {
  const envelope = await service.dispatch(command, args);
  if (!envelope.ok) throw new Error(`${command} failed: ${envelope.error.code}: ${envelope.error.message}`);
  return envelope.result as CommandResult<C>;
}

async function fail(command: CommandName, args: unknown): Promise<CommandError> {
  const envelope = await service.dispatch(command, args);
  if (envelope.ok) throw new Error(`${command} unexpectedly succeeded`);
  return envelope.error;
}

function eventsNamed<E extends EventName>(name: E): Events[E][] {
  return events.filter((e) => e.name === name).map((e) => e.payload as Events[E]);
}

beforeAll(async () => {
  fixture = await startFixtureSource({ bigListEntries: 50 });
});
afterAll(async () => {
  await fixture.close();
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rsdesk-add-'));
  events = [];
  service = open();
});
afterEach(async () => {
  await service.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('sources.add', () => {
  it('says created, then "already saved" for the same Source pasted as a bare host, without or with a trailing slash', async () => {
    const host = new URL(fixture.url).host;
    const first = await call('sources.add', { url: `${fixture.url}/dataset1`, runId: 'a' });
    expect(first.created).toBe(true);
    expect(first.pasted).toEqual({ url: `${fixture.url}/dataset1`, capability: null, refused: null });
    for (const [i, url] of [`${fixture.url}/dataset1/`, host, `${fixture.url}`, `  ${fixture.url}/  `].entries()) {
      const again = await call('sources.add', { url, runId: `b${i}` });
      expect(again.created, url).toBe(false);
      expect(again.source, url).toEqual(first.source);
    }
    expect(await call('sources.list', {})).toEqual([first.source]);
    expect(eventsNamed('sources.changed')).toHaveLength(1);
  });

  it('names the pasted URL a document when it is one (a Resource List found the Source through its up links)', async () => {
    const url = fixture.url + PATHS.dataset1.resourceList;
    const result = await call('sources.add', { url, runId: 'doc' });
    expect(result.created).toBe(true);
    expect(result.pasted).toEqual({ url, capability: 'resourcelist', refused: null });
    expect(result.source.sourceDescriptionUrl).toBe(fixture.url + PATHS.wellKnown);
  });

  it('says why the pasted URL was refused (a DOCTYPE, a foreign namespace), even when another route found the Source', async () => {
    for (const path of [PATHS.broken.doctype, PATHS.broken.junkNamespace]) {
      const url = fixture.url + path;
      const result = await call('sources.add', { url, runId: path });
      expect(result.source.sourceDescriptionUrl, path).toBe(fixture.url + PATHS.wellKnown);
      expect(result.pasted.capability, path).toBeNull();
      expect(result.pasted.refused, path).toContain(url);
    }
    const doctype = await call('sources.add', { url: fixture.url + PATHS.broken.doctype, runId: 'again' });
    expect(doctype.pasted.refused).toMatch(/DOCTYPE/);
    // An HTML page is where links are looked for, not a refusal.
    expect((await call('sources.add', { url: fixture.url + PATHS.about, runId: 'html' })).pasted.refused).toBeNull();
  });

  it('announces each URL as discovery starts fetching it, in the order of the steps', async () => {
    const result = await call('sources.add', { url: `${fixture.url}/`, runId: 'f' });
    const fetching = eventsNamed('discovery.fetching');
    expect(fetching.every((e) => e.runId === 'f')).toBe(true);
    const urls = fetching.map((e) => e.url);
    expect(urls[0]).toBe(`${fixture.url}/`);
    expect(urls).toContain(fixture.url + PATHS.wellKnown);
    // Each fetch is announced once, before its step.
    expect(new Set(urls).size).toBe(urls.length);
    for (const step of result.discovery.routes) expect(urls, step.url).toContain(step.url);
    const firstWellKnownEvent = events.findIndex((e) => e.name === 'discovery.fetching' && (e.payload as { url: string }).url.endsWith(PATHS.wellKnown));
    const wellKnownStep = events.findIndex((e) => e.name === 'discovery.step' && (e.payload as Events['discovery.step']).step.route === 'well-known');
    expect(firstWellKnownEvent).toBeLessThan(wellKnownStep);
  });

  it('cancels a running discovery: the fetch under way is dropped at once, nothing is saved, the error says "cancelled"', async () => {
    fixture.setBroken(PATHS.wellKnown, 'hang');
    try {
      const running = fail('sources.add', { url: `${fixture.url}/`, runId: 'slow' });
      const deadline = Date.now() + 10_000;
      while (!eventsNamed('discovery.fetching').some((e) => e.url.endsWith(PATHS.wellKnown))) {
        if (Date.now() > deadline) throw new Error('discovery never reached the well-known URI');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const asked = Date.now();
      expect(await call('discovery.cancel', { runId: 'slow' })).toEqual({ cancelled: true });
      const error = await running;
      expect(Date.now() - asked).toBeLessThan(2_000);
      expect(error).toEqual({ code: 'cancelled', message: 'Discovery cancelled. Nothing was saved.' });
      expect(await call('sources.list', {})).toEqual([]);
      expect(eventsNamed('sources.changed')).toEqual([]);
      // Nothing of it is left running: the next cancel finds no run.
      expect(await call('discovery.cancel', { runId: 'slow' })).toEqual({ cancelled: false });
    } finally {
      fixture.setBroken(PATHS.wellKnown, null);
    }
  });

  it('cancels discovery.run the same way', async () => {
    fixture.setBroken(PATHS.home, 'hang');
    try {
      const running = fail('discovery.run', { url: `${fixture.url}/`, runId: 'd' });
      while (eventsNamed('discovery.fetching').length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await call('discovery.cancel', { runId: 'd' })).toEqual({ cancelled: true });
      expect(await running).toMatchObject({ code: 'cancelled' });
    } finally {
      fixture.setBroken(PATHS.home, null);
    }
  });
});

describe('sources.remove and sources.restore', () => {
  it('restores a removed Source with its id, once; a Source added again replaces the removed one', async () => {
    const { source } = await call('sources.add', { url: `${fixture.url}/`, runId: 'a' });
    expect(await call('sources.remove', { id: source.id })).toEqual([]);
    const restored = await call('sources.restore', { id: source.id });
    expect(restored).toEqual({ source, sources: [source] });
    expect(eventsNamed('sources.changed').at(-1)).toEqual({ sources: [source] });
    expect(await fail('sources.restore', { id: source.id })).toMatchObject({ code: 'not-found' });

    // Removed, then added again: the new one stands and the old one cannot come back beside it.
    await call('sources.remove', { id: source.id });
    const again = await call('sources.add', { url: `${fixture.url}/`, runId: 'b' });
    expect(again.created).toBe(true);
    expect(await fail('sources.restore', { id: source.id })).toMatchObject({ code: 'not-found' });
    expect(await call('sources.list', {})).toEqual([again.source]);
  });

  it('an undo lasts one session: removed Sources are gone for good when the store opens again', async () => {
    const { source } = await call('sources.add', { url: `${fixture.url}/`, runId: 'a' });
    await call('sources.remove', { id: source.id });
    await service.close();
    service = open();
    expect(await fail('sources.restore', { id: source.id })).toMatchObject({ code: 'not-found' });
    expect(await call('sources.list', {})).toEqual([]);
  });
});

describe('DiscoveryRuns', () => {
  it('keeps what finished before a cancel arrived, and refuses a run id already running', async () => {
    const runs = new DiscoveryRuns(new AbortController().signal);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const running = runs.run('x', async () => {
      await gate;
      return 'saved';
    });
    await expect(runs.run('x', async () => 'twice')).rejects.toThrow(/already running/);
    release();
    expect(await running).toBe('saved');
    expect(runs.cancel('x')).toEqual({ cancelled: false });
    expect(runs.size).toBe(0);
  });

  it('turns whatever a cancelled run throws into CancelledError, and stops every run when closing', async () => {
    const closing = new AbortController();
    const runs = new DiscoveryRuns(closing.signal);
    const waitForAbort = (signal: AbortSignal) =>
      new Promise<never>((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('socket closed'))));
    const cancelled = runs.run('a', waitForAbort);
    expect(runs.cancel('a')).toEqual({ cancelled: true });
    await expect(cancelled).rejects.toBeInstanceOf(CancelledError);
    const closed = runs.run('b', waitForAbort);
    closing.abort();
    await expect(closed).rejects.toThrow('socket closed');
  });
});
