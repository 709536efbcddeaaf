import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../e2e/fixture-source/index.ts';
import { lastmodOf, representation } from '../../e2e/fixture-source/dataset2.ts';
import type { CommandArgs, CommandResult } from '../contract/commands.ts';
import type { CommandName, EventName } from '../contract/names.ts';
import type { CommandError, DocumentView, EntryPage, Events } from '../contract/types.ts';
import { HEAD_BYTES } from '../engine/load.ts';
import { openStore } from '../store/store.ts';
import { createService, type Service } from './service.ts';

const PARTS = 3;
const PER_PART = 20_000;

let fixture: FixtureSource;
let dir: string;
let service: Service;
let events: { name: EventName; payload: unknown }[];
let logged: unknown[];

function open(path = join(dir, 'rsdesk.sqlite'), extra: Partial<Parameters<typeof createService>[0]> = {}): Service {
  const s = createService({ store: openStore(path), adapter: 'electron', version: '1.2.3', log: (_m, e) => logged.push(e), ...extra });
  s.events.subscribe((name, payload) => events.push({ name, payload }));
  return s;
}

async function call<C extends CommandName>(command: C, args: CommandArgs<C>): Promise<CommandResult<C>> {
  const envelope = await service.dispatch(command, args);
  if (!envelope.ok) throw new Error(`${command} failed: ${envelope.error.code}: ${envelope.error.message}`);
  return envelope.result as CommandResult<C>;
}

async function fail(command: unknown, args: unknown): Promise<CommandError> {
  const envelope = await service.dispatch(command, args);
  if (envelope.ok) throw new Error(`${command} unexpectedly succeeded`);
  return envelope.error;
}

function eventsNamed<E extends EventName>(name: E): Events[E][] {
  return events.filter((e) => e.name === name).map((e) => e.payload as Events[E]);
}

function requestsFor(path: string): number {
  return fixture.requests.filter((r) => r.path === path).length;
}

beforeAll(async () => {
  fixture = await startFixtureSource({ bigListParts: PARTS, bigListEntries: PER_PART });
});
afterAll(async () => {
  await fixture.close();
});

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rsdesk-service-'));
  events = [];
  logged = [];
  service = open();
});
afterEach(async () => {
  await service.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('sources', () => {
  it('adds a Source: discovery steps are emitted as they happen, the Source is saved and survives a restart', async () => {
    const { source, discovery } = await call('sources.add', { url: fixture.url + '/', runId: 'run-1' });
    expect(discovery.sourceDescription).toBe(fixture.sourceDescriptionUrl);
    expect(source).toMatchObject({
      id: 1,
      name: new URL(fixture.url).host,
      startUrl: fixture.url + '/',
      sourceDescriptionUrl: fixture.sourceDescriptionUrl,
      capabilityListUrls: discovery.capabilityLists.map((l) => l.url),
    });
    expect(source.capabilityListUrls).toEqual(
      expect.arrayContaining([fixture.url + fixture.paths.dataset1.capabilityList, fixture.url + fixture.paths.dataset2.capabilityList]),
    );
    // Every step arrived as an event, in order, before the command answered.
    const steps = eventsNamed('discovery.step');
    expect(steps.length).toBeGreaterThan(0);
    expect(steps.every((s) => s.runId === 'run-1')).toBe(true);
    expect(steps.map((s) => s.step)).toEqual(discovery.routes);
    const changed = eventsNamed('sources.changed');
    expect(changed).toEqual([{ sources: [source] }]);
    expect(events.findIndex((e) => e.name === 'sources.changed')).toBeGreaterThan(events.findLastIndex((e) => e.name === 'discovery.step'));

    // The same Source again: the saved one comes back, nothing changes.
    const again = await call('sources.add', { url: fixture.url + '/', runId: 'run-2' });
    expect(again.source).toEqual(source);
    expect(eventsNamed('sources.changed')).toHaveLength(1);

    await service.close();
    service = open();
    expect(await call('sources.list', {})).toEqual([source]);
    expect(await call('sources.remove', { id: source.id })).toEqual([]);
    expect(eventsNamed('sources.changed').at(-1)).toEqual({ sources: [] });
    expect(await fail('sources.remove', { id: source.id })).toMatchObject({ code: 'not-found' });
  });

  it('saves a Source known only by a Capability List', async () => {
    const quiet = await startFixtureSource({ routes: { wellKnown: false, htmlLink: false, linkHeader: false, robots: false }, bigListEntries: 10 });
    try {
      const url = quiet.url + quiet.paths.broken.capabilityListWithoutUp;
      const { source, discovery } = await call('sources.add', { url, runId: 'cl' });
      expect(discovery.sourceDescription).toBeNull();
      expect(discovery.capabilityLists.map((l) => l.url)).toEqual([url]);
      expect(source).toMatchObject({ startUrl: url, sourceDescriptionUrl: null, capabilityListUrls: [url] });
      expect(eventsNamed('sources.changed')).toEqual([{ sources: [source] }]);
    } finally {
      await quiet.close();
    }
  });

  it('rejects with not-found when there is no Source, after emitting the steps; nothing is saved', async () => {
    const quiet = await startFixtureSource({ routes: { wellKnown: false, htmlLink: false, linkHeader: false, robots: false }, bigListEntries: 10 });
    try {
      const error = await fail('sources.add', { url: quiet.url + '/about.html', runId: 'none' });
      expect(error.code).toBe('not-found');
      expect(error.message).toContain('No ResourceSync Source found');
      expect(eventsNamed('discovery.step').length).toBeGreaterThan(0);
      expect(await call('sources.list', {})).toEqual([]);
      expect(eventsNamed('sources.changed')).toEqual([]);
    } finally {
      await quiet.close();
    }
  });

  it('discovery.run discovers without saving', async () => {
    const result = await call('discovery.run', { url: fixture.url + '/', runId: 'r' });
    expect(result.sourceDescription).toBe(fixture.sourceDescriptionUrl);
    expect(eventsNamed('discovery.step').map((s) => s.step)).toEqual(result.routes);
    expect(await call('sources.list', {})).toEqual([]);
  });
});

describe('documents', () => {
  const indexPath = () => fixture.url + fixture.paths.dataset2.resourceListIndex;
  const partUrl = (n: number) => fixture.url + fixture.paths.dataset2.resourceListPart(n);

  it('summarises a Resource List Index with its parts as children', async () => {
    const view: DocumentView = await call('documents.summary', { url: indexPath() });
    expect(view).toMatchObject({ url: indexPath(), root: 'sitemapindex', capability: 'resourcelist', isIndex: true, entries: PARTS, open: null });
    expect(view.bytes).toBeGreaterThan(0);
    expect(Date.parse(view.fetchedAt)).not.toBeNaN();
    expect(view.children.map((c) => c.url)).toEqual([1, 2, 3].map(partUrl));
    // The parts carry no capability of their own: they are of the index's kind.
    expect(view.children.every((c) => c.capability === 'resourcelist')).toBe(true);
    expect(view.children[0]!.md.at).toBe(view.md.at);
  });

  it('loads a 20,000-entry part once (streamed, with progress) and then answers from the cache', async () => {
    const url = partUrl(1);
    const path = fixture.paths.dataset2.resourceListPart(1);
    const before = requestsFor(path);
    // Concurrent calls for one URL share one load.
    const views = await Promise.all([1, 2, 3].map(() => call('documents.summary', { url })));
    expect(requestsFor(path)).toBe(before + 1);
    for (const view of views) expect(view).toMatchObject({ entries: PER_PART, capability: 'resourcelist', isIndex: false, children: [] });
    const progress = eventsNamed('document.progress').filter((p) => p.url === url);
    expect(progress.at(-1)).toEqual({ url, entries: PER_PART, bytes: views[0]!.bytes });
    expect(progress.length).toBeLessThan(50); // throttled

    const cached = await call('documents.summary', { url });
    expect(requestsFor(path)).toBe(before + 1);
    expect(cached.fetchedAt).toBe(views[0]!.fetchedAt);
    const refreshed = await call('documents.summary', { url, refresh: true });
    expect(requestsFor(path)).toBe(before + 2);
    expect(refreshed.entries).toBe(PER_PART);
    // The cache survives a restart.
    await service.close();
    service = open();
    expect((await call('documents.summary', { url })).fetchedAt).toBe(refreshed.fetchedAt);
    expect(requestsFor(path)).toBe(before + 2);
  });

  describe('entries of a 20,000-entry part', () => {
    const first = (part: number) => (part - 1) * PER_PART + 1;
    const ids = (page: EntryPage) => page.rows.map((r) => Number(r.loc.split('/').pop()));

    it('pages in document order and loads the document first when needed', async () => {
      const url = partUrl(2);
      const page = await call('documents.entries', { url, offset: 19_990, limit: 50 });
      expect(page).toMatchObject({ total: PER_PART, matched: PER_PART, offset: 19_990 });
      expect(ids(page)).toEqual(Array.from({ length: 10 }, (_, i) => first(2) + 19_990 + i));
      expect(page.rows[0]).toMatchObject({ index: 19_990, lastmod: lastmodOf(first(2) + 19_990) });
      const id = first(2) + 19_990;
      const rep = representation({ base: fixture.url, seed: 1, parts: PARTS, entriesPerPart: PER_PART, sourceDescriptionUrl: '' }, id)!;
      expect(page.rows[0]!.md).toMatchObject({ length: String(rep.body.length), hash: rep.hash, type: 'text/plain' });
    });

    it('filters by a case-insensitive URI substring, with LIKE wildcards taken literally', async () => {
      const url = partUrl(1);
      const page = await call('documents.entries', { url, offset: 0, limit: 100, uri: 'RES/1234' });
      const expected = [1234, ...Array.from({ length: 10 }, (_, i) => 12340 + i)];
      expect(page.matched).toBe(expected.length);
      expect(page.total).toBe(PER_PART);
      expect(ids(page)).toEqual(expected);
      expect((await call('documents.entries', { url, offset: 0, limit: 10, uri: 'res/1_3' })).matched).toBe(0);
      expect((await call('documents.entries', { url, offset: 0, limit: 10, uri: '%' })).matched).toBe(0);
    });

    it('sorts by loc, lastmod and length in both directions, paging through the sorted order', async () => {
      const url = partUrl(1);
      const all = Array.from({ length: PER_PART }, (_, i) => first(1) + i);
      const locs = all.map((id) => `${fixture.url}/dataset2/res/${id}`);
      const byLoc = [...locs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const page = await call('documents.entries', { url, offset: 5_000, limit: 300, sort: 'loc' });
      expect(page.rows.map((r) => r.loc)).toEqual(byLoc.slice(5_000, 5_300));
      const pageDesc = await call('documents.entries', { url, offset: 0, limit: 5, sort: 'loc', descending: true });
      expect(pageDesc.rows.map((r) => r.loc)).toEqual([...byLoc].reverse().slice(0, 5));

      const lastmodDesc = await call('documents.entries', { url, offset: 100, limit: 20, sort: 'lastmod', descending: true });
      expect(ids(lastmodDesc)).toEqual(Array.from({ length: 20 }, (_, i) => PER_PART - 100 - i));

      const ctx = { base: fixture.url, seed: 1, parts: PARTS, entriesPerPart: PER_PART, sourceDescriptionUrl: '' };
      const lengths = new Map(all.map((id) => [id, representation(ctx, id)!.body.length]));
      const byLength = [...all].sort((a, b) => lengths.get(a)! - lengths.get(b)! || a - b);
      const lengthPage = await call('documents.entries', { url, offset: 9_990, limit: 40, sort: 'length' });
      expect(ids(lengthPage)).toEqual(byLength.slice(9_990, 10_030));
      // No entry has md:datetime: all tie, so document order.
      const datetimePage = await call('documents.entries', { url, offset: 7, limit: 3, sort: 'datetime' });
      expect(ids(datetimePage)).toEqual([8, 9, 10]);
    });

    it('gets one entry by position, and not-found past the end', async () => {
      const url = partUrl(3);
      const entry = await call('documents.entry', { url, index: 123 });
      expect(entry).toMatchObject({ index: 123, loc: `${fixture.url}/dataset2/res/${first(3) + 123}` });
      expect(await fail('documents.entry', { url, index: PER_PART })).toMatchObject({ code: 'not-found' });
    });

    it('gives the raw head, truncated for a document over 256 KiB', async () => {
      const url = partUrl(1);
      const raw = await call('documents.raw', { url });
      expect(raw.bytes).toBeGreaterThan(HEAD_BYTES);
      expect(raw.truncated).toBe(true);
      expect(raw.text.startsWith('<?xml')).toBe(true);
      expect(raw.text.length).toBeLessThanOrEqual(HEAD_BYTES);
      const small = await call('documents.raw', { url: indexPath() });
      expect(small.truncated).toBe(false);
      expect(Buffer.byteLength(small.text)).toBe(small.bytes);
      const cut = await call('documents.raw', { url: indexPath(), limit: 10 });
      expect(cut).toEqual({ text: small.text.slice(0, 10), truncated: true, bytes: small.bytes });
    });
  });

  it('filters a Change List by change type, and says whether a change document is still open', async () => {
    const slices = fixture.state.changeLists();
    fixture.change('update', 3);
    fixture.change('delete', 2);
    const openSlice = fixture.state.changeLists().at(-1)!;
    const openUrl = fixture.url + fixture.paths.dataset1.changeList(openSlice.number);
    const view = await call('documents.summary', { url: openUrl });
    expect(view.open).toBe(true);
    const deleted = openSlice.records.filter((r) => r.change === 'deleted');
    const page = await call('documents.entries', { url: openUrl, offset: 0, limit: 100, change: 'deleted' });
    expect(page.matched).toBe(deleted.length);
    expect(page.rows.map((r) => r.loc)).toEqual(deleted.map((r) => r.loc));
    const closedUrl = fixture.url + fixture.paths.dataset1.changeList(slices[0]!.number);
    expect((await call('documents.summary', { url: closedUrl })).open).toBe(false);
    // A Change List Index names its Change Lists as children.
    const index = await call('documents.summary', { url: fixture.url + fixture.paths.dataset1.changeListIndex });
    expect(index.isIndex).toBe(true);
    expect(index.children.every((c) => c.capability === 'changelist')).toBe(true);
    expect(index.children.map((c) => c.url)).toContain(openUrl);
  });

  it('names the Capability Lists of a Source Description, and the capabilities of a Capability List', async () => {
    const sd = await call('documents.summary', { url: fixture.sourceDescriptionUrl });
    expect(sd.children.map((c) => [c.url, c.capability])).toEqual([
      [fixture.url + fixture.paths.dataset1.capabilityList, 'capabilitylist'],
      [fixture.url + fixture.paths.dataset2.capabilityList, 'capabilitylist'],
    ]);
    const cl = await call('documents.summary', { url: fixture.url + fixture.paths.dataset1.capabilityList });
    expect(cl.children.map((c) => c.capability)).toEqual(['resourcelist', 'resourcedump', 'changelist', 'changedump', 'change-notification']);
    const notification = cl.children.find((c) => c.capability === 'change-notification');
    expect(notification?.hub).toBe(fixture.url + fixture.paths.hub);
    expect(cl.children.filter((c) => c.hub !== undefined)).toHaveLength(1);
  });

  it("gives each document its entries' shape: the common loc prefix and the fields present", async () => {
    const part = await call('documents.summary', { url: partUrl(1) });
    expect(part.shape).toEqual({ prefix: `${fixture.url}/dataset2/res/`, fields: ['lastmod', 'length', 'type', 'hash'] });
    const cl = await call('documents.summary', { url: fixture.url + fixture.paths.dataset1.capabilityList });
    expect(cl.shape.prefix).toBe(`${fixture.url}/dataset1/`);
    expect(cl.shape.fields).toContain('capability');
    expect(cl.shape.fields).not.toContain('change');
    // Kept with the cached copy: the same after a restart, without a new fetch.
    await service.close();
    service = open();
    expect((await call('documents.summary', { url: partUrl(1) })).shape).toEqual(part.shape);
  });

  it("names a dump's Manifests (the contents links of its packages) as its children, with their paths", async () => {
    const dump = await call('documents.summary', { url: fixture.url + fixture.paths.dataset1.resourceDump });
    expect(dump.children.map((c) => [c.url, c.capability, c.package])).toEqual([1, 2].map((n) => [
      fixture.url + fixture.paths.dataset1.resourceDumpManifest(n),
      'resourcedump-manifest',
      fixture.url + fixture.paths.dataset1.resourceDumpPackage(n),
    ]));
    const manifest = await call('documents.summary', { url: dump.children[0]!.url });
    expect(manifest.capability).toBe('resourcedump-manifest');
    expect(manifest.shape.fields).toContain('path');
    const changeDump = await call('documents.summary', { url: fixture.url + fixture.paths.dataset1.changeDump });
    expect(changeDump.children.length).toBeGreaterThan(0);
    expect(changeDump.children.every((c) => c.capability === 'changedump-manifest')).toBe(true);
    const changeManifest = await call('documents.summary', { url: changeDump.children[0]!.url });
    expect(changeManifest.shape.fields).toEqual(expect.arrayContaining(['change', 'datetime', 'path']));
  });

  it('checks a document reached through an index against that index, whichever was fetched first', async () => {
    const index = fixture.url + fixture.paths.broken.mixedIndex;
    const part = fixture.url + fixture.paths.broken.changeListOutOfOrder;
    const before = await call('documents.summary', { url: part });
    expect(before.findings.map((f) => f.code)).not.toContain('index-child-capability');
    await call('documents.summary', { url: index });
    const after = await call('documents.summary', { url: part });
    expect(after.findings).toContainEqual(expect.objectContaining({ severity: 'error', code: 'index-child-capability' }));
    // A part of a consistent index gets no cross-document finding.
    await call('documents.summary', { url: indexPath() });
    const good = await call('documents.summary', { url: fixture.url + fixture.paths.dataset2.resourceListPart(1) });
    expect(good.findings.filter((f) => f.code.startsWith('index-') || f.code === 'up-link-mismatch')).toEqual([]);
  });

  it('an index of 12,000 parts: its view carries the first 10,000 and counts the rest; every part is still checked against it', async () => {
    const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
    const PARTS_LISTED = 12_000;
    let base = '';
    const server = createServer((req, res) => {
      res.setHeader('content-type', 'application/xml');
      if (req.url === '/index.xml') {
        const parts = Array.from({ length: PARTS_LISTED }, (_, i) => `<sitemap><loc>${base}/part-${i}.xml</loc></sitemap>`).join('');
        res.end(`<sitemapindex ${ns}><rs:md capability="resourcelist" at="2020-01-01T00:00:00Z"/>${parts}</sitemapindex>`);
      } else {
        // The last part says it is a Change List: a finding only the index can give it.
        res.end(`<urlset ${ns}><rs:md capability="changelist" from="2020-01-01T00:00:00Z"/></urlset>`);
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const view = await call('documents.summary', { url: `${base}/index.xml` });
      expect(view.entries).toBe(PARTS_LISTED);
      expect(view.children).toHaveLength(10_000);
      expect(view.children.at(-1)?.url).toBe(`${base}/part-9999.xml`);
      expect(view.childrenLeftOut).toBe(2_000);
      const last = await call('documents.summary', { url: `${base}/part-${PARTS_LISTED - 1}.xml` });
      expect(last.findings).toContainEqual(expect.objectContaining({ code: 'index-child-capability' }));
      // A document with few children says nothing left out.
      expect(await call('documents.summary', { url: indexPath() })).not.toHaveProperty('childrenLeftOut');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('maps a refused document to "document" and an HTTP failure to "network"; nothing is cached, the refusal is remembered', async () => {
    const notXml = fixture.url + fixture.paths.broken.notXml;
    expect(await fail('documents.summary', { url: notXml })).toMatchObject({ code: 'document' });
    expect(await fail('documents.summary', { url: fixture.url + '/no/such/document.xml' })).toMatchObject({ code: 'network' });
    const before = requestsFor(fixture.paths.broken.notXml);
    // A retry within ten minutes answers the remembered refusal without fetching the document again.
    const again = await fail('documents.summary', { url: notXml });
    expect(again).toMatchObject({ code: 'document' });
    expect(again.message).toMatch(/\(refused less than a minute ago and not fetched again; it can be retried in 10 min\)$/);
    expect(requestsFor(fixture.paths.broken.notXml)).toBe(before);
    // An HTTP failure is not a refusal of the document: it is fetched again.
    const missing = requestsFor('/no/such/document.xml');
    await fail('documents.summary', { url: fixture.url + '/no/such/document.xml' });
    expect(requestsFor('/no/such/document.xml')).toBe(missing + 1);
    expect(logged).toEqual([]);
  });
});

describe('dispatch', () => {
  it('rejects invalid arguments before any handler runs (no request reaches the Source)', async () => {
    const count = fixture.requests.length;
    // [command, args, the argument named in `field`, what the message says]
    const cases: [string, unknown, string | undefined, RegExp][] = [
      ['documents.summary', { url: 'ftp://127.0.0.1/x.xml' }, 'url', /^Only http and https URLs can be opened\.$/],
      ['documents.summary', { url: fixture.url + '/a.xml', extra: 1 }, undefined, /^unknown argument "extra"\.$/],
      ['documents.entries', { url: fixture.url + '/a.xml', offset: 0, limit: 0 }, 'limit', /^limit must be at least 1\.$/],
      ['documents.entries', { url: fixture.url + '/a.xml', offset: -1, limit: 10, sort: 'size' }, 'offset', /offset must be at least 0/i],
      ['sources.add', { url: fixture.url + '/' }, 'runId', /^runId is missing\.$/],
      ['discovery.run', { url: '  ', runId: 'x' }, 'url', /^Enter a URL or a host name\.$/],
      ['sources.add', { url: 'x'.repeat(9000), runId: 'x' }, 'url', /^The URL is too long \(at most 8,192 characters\)\.$/],
      ['sources.remove', { id: 'one' }, 'id', /^id must be a number\.$/],
      ['settings.set', { timeoutMs: 10 }, 'timeoutMs', /^Timeout must be a whole number of seconds from 1 to 600\.$/],
      ['settings.set', { timeoutMs: 'soon' }, 'timeoutMs', /^Timeout must be a whole number of seconds from 1 to 600\.$/],
      ['settings.set', { timeoutMs: 1500 }, 'timeoutMs', /^Timeout must be a whole number of seconds from 1 to 600\.$/],
      ['settings.set', { timeoutMs: 601_000 }, 'timeoutMs', /^Timeout must be a whole number of seconds from 1 to 600\.$/],
      ['settings.set', { bearerToken: 'x'.repeat(5000) }, 'bearerToken', /^The bearer token is too long/],
      ['check.run', { url: 'example.org', runId: 'r', maxDocuments: 0 }, 'maxDocuments', /^The most documents to check must be a whole number from 1 to 100,000\.$/],
      ['documents.summary', null, undefined, /^the request must be an object\.$/],
    ];
    for (const [command, args, field, message] of cases) {
      const error = await fail(command, args);
      expect(error.code, command).toBe('invalid-arguments');
      expect(error.field, command).toBe(field);
      expect(error.message, command).toMatch(message);
      // No schema language, no command names.
      expect(error.message, command).not.toMatch(/Invalid arguments|Too small|Too big|expected \w+ to be|\w+\.\w+:/);
    }
    const multi = await fail('documents.entries', { url: 'nope', offset: -1, limit: 10, sort: 'size' });
    expect(multi.message).toMatch(/Only http and https URLs can be opened; offset must be at least 0; sort must be one of "index"/);
    expect(fixture.requests.length).toBe(count);
    expect(await fail('documents.nope', {})).toMatchObject({ code: 'unknown-command' });
    expect(await fail(42, {})).toMatchObject({ code: 'unknown-command' });
    expect(await call('sources.list', {})).toEqual([]);
  });

  it('refuses a start URL that is no URL at all, before any request', async () => {
    const count = fixture.requests.length;
    expect(await fail('sources.add', { url: 'mailto:someone@example.org', runId: 'x' })).toMatchObject({ code: 'invalid-arguments' });
    expect(fixture.requests.length).toBe(count);
  });

  it('reports unexpected failures as "internal" without details, and logs them', async () => {
    const broken = open(join(dir, 'other.sqlite'));
    await broken.close(); // its store is closed: every store call throws
    const error = (await broken.dispatch('sources.list', {})) as { ok: false; error: CommandError };
    expect(error.ok).toBe(false);
    expect(error.error.code).toBe('internal');
    expect(error.error.message).not.toMatch(/at .*\.ts|\n/);
    // Plain words, no command name.
    expect(error.error.message).toBe('Something went wrong inside the app; the details are in its log.');
    expect(logged.length).toBe(1);
  });
});

describe('settings and shell', () => {
  it('stores settings and rebuilds the HTTP client: the bearer token reaches the Source', async () => {
    expect(await call('settings.get', {})).toEqual({ bearerToken: null, tokenOrigin: null, timeoutMs: 30_000 });
    expect(await call('settings.set', { bearerToken: 'tok-123', tokenOrigin: fixture.url, timeoutMs: 5_000 })).toEqual({ bearerToken: 'tok-123', tokenOrigin: fixture.url, timeoutMs: 5_000 });
    await call('documents.summary', { url: fixture.url + fixture.paths.dataset2.capabilityList, refresh: true });
    const last = fixture.requests.filter((r) => r.path === fixture.paths.dataset2.capabilityList).at(-1)!;
    expect(last.headers.authorization).toBe('Bearer tok-123');
    await call('settings.set', { bearerToken: null });
    await call('documents.summary', { url: fixture.url + fixture.paths.dataset2.capabilityList, refresh: true });
    expect(fixture.requests.filter((r) => r.path === fixture.paths.dataset2.capabilityList).at(-1)!.headers.authorization).toBeUndefined();
    await service.close();
    service = open();
    expect(await call('settings.get', {})).toEqual({ bearerToken: null, tokenOrigin: null, timeoutMs: 5_000 });
  });

  it('opens http(s) links through the platform in Electron, and leaves them to the browser over HTTP', async () => {
    const opened: string[] = [];
    await service.close();
    service = open(undefined, { openExternal: (url) => void opened.push(url) });
    expect(await call('shell.openExternal', { url: 'https://127.0.0.1:1/page' })).toEqual({ opened: true });
    expect(opened).toEqual(['https://127.0.0.1:1/page']);
    expect(await fail('shell.openExternal', { url: 'file:///etc/passwd' })).toMatchObject({ code: 'invalid-arguments' });
    expect(await fail('shell.openExternal', { url: 'javascript:alert(1)' })).toMatchObject({ code: 'invalid-arguments' });
    expect(opened).toHaveLength(1);
    await service.close();
    service = open(undefined, { adapter: 'http', openExternal: (url) => void opened.push(url) });
    expect(await call('shell.openExternal', { url: 'https://127.0.0.1:1/page' })).toEqual({ opened: false });
    expect(opened).toHaveLength(1);
    expect(await call('app.info', {})).toEqual({ name: 'ResourceSync Desktop', version: '1.2.3', adapter: 'http', platform: process.platform, secrets: null });
  });
});
