// Incremental syncs against hostile or sloppy Sources, each test a small Source of static documents of its own: what
// must still come out right (the files, the checkpoint, the run's result) when the Source, or the mirror's own past,
// does something unusual.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MirrorState, stateDirOf } from './state.ts';
import { MAX_LISTED_ENTRY_FAILURES } from './apply.ts';
import { sync, type SyncOptions } from './sync.ts';

const NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
const md5 = (s: string | Buffer) => createHash('md5').update(s).digest('hex');

let server: Server;
let base = '';
let dest = '';
let notes: string[] = [];
/** Path → body. */
const files = new Map<string, string | Buffer>();
/** Paths requested, in order. */
const requests: string[] = [];
/** Called with each request's path before it is answered. */
let onRequest: (path: string) => void = () => undefined;
const urlset = (md: string, urls: string) => `<?xml version="1.0"?>\n<urlset ${NS}><rs:md ${md}/>${urls}</urlset>`;
const url = (path: string, md: string, links = '') => `<url><loc>${base}${path}</loc><rs:md ${md}/>${links}</url>`;
const fixity = (body: string | Buffer, md = '') => `hash="md5:${md5(body)}" length="${Buffer.byteLength(body)}"${md ? ` ${md}` : ''}`;

beforeEach(async () => {
  files.clear();
  requests.length = 0;
  notes = [];
  onRequest = () => undefined;
  server = createServer((req, res) => {
    const path = req.url ?? '';
    requests.push(path);
    onRequest(path);
    const body = files.get(path);
    if (body === undefined) res.writeHead(404).end();
    else res.writeHead(200, path.endsWith('.xml') ? { 'content-type': 'application/xml' } : {}).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dest = mkdtempSync(join(tmpdir(), 'incremental-hostile-'));
});
afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const run = (options: Partial<SyncOptions> = {}) =>
  sync({ url: `${base}/cap.xml`, dest, timeoutMs: 2_000, proxyEnv: {}, onNote: (n) => void notes.push(n), ...options });
const checkpoint = () => {
  const state = new MirrorState(stateDirOf(dest));
  try {
    return state.checkpoint()?.at ?? null;
  } finally {
    state.close();
  }
};
const hostDir = () => new URL(base).host.replace(':', '_');
const file = (path: string) => join(dest, hostDir(), path);

/** A Capability List with a Resource List (its resources at `at`) and a Change List. */
function source(resources: Record<string, string>, at = '2020-01-01T00:00:00Z'): void {
  files.set('/cap.xml', urlset('capability="capabilitylist"', url('/rl.xml', 'capability="resourcelist"') + url('/cl.xml', 'capability="changelist"')));
  for (const [path, body] of Object.entries(resources)) files.set(path, body);
  files.set('/rl.xml', urlset(`capability="resourcelist" at="${at}"`, Object.entries(resources).map(([path, body]) => url(path, fixity(body))).join('')));
  changeList('');
}
const changeList = (urls: string) => files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', urls));

describe('quarantine', () => {
  it('a path whose folder name a quarantined file took earlier goes beside it (a%dir), not refused run after run', async () => {
    source({ '/a': 'A' });
    expect(await run({ deletePolicy: 'quarantine' })).toMatchObject({ mode: 'baseline', created: 1 });
    files.set('/a/b', 'B');
    // /a deleted (quarantined as a file), then /a/b created: in the mirror a is a folder now.
    changeList(url('/a', 'change="deleted" datetime="2020-01-02T00:00:00Z"') + url('/a/b', fixity('B', 'change="created" datetime="2020-01-03T00:00:00Z"')));
    expect(await run({ deletePolicy: 'quarantine' })).toMatchObject({ mode: 'incremental', created: 1, deleted: 1, failed: 0 });
    changeList(
      url('/a', 'change="deleted" datetime="2020-01-02T00:00:00Z"') +
        url('/a/b', fixity('B', 'change="created" datetime="2020-01-03T00:00:00Z"')) +
        url('/a/b', 'change="deleted" datetime="2020-01-04T00:00:00Z"'),
    );
    const result = await run({ deletePolicy: 'quarantine' });
    expect(result.failures).toEqual([]);
    expect(result).toMatchObject({ mode: 'incremental', deleted: 1, failed: 0 });
    expect(checkpoint()).toBe('2020-01-04T00:00:00.000Z');
    const quarantine = join(dest, '.resourcesync', 'quarantine', hostDir());
    expect(readdirSync(quarantine).sort()).toEqual(['a', 'a%dir']);
    expect(readFileSync(join(quarantine, 'a'), 'utf8')).toBe('A');
    expect(readFileSync(join(quarantine, 'a%dir', 'b'), 'utf8')).toBe('B');
  });
});

describe('a resumed run', () => {
  it('applies a newer change of a resource its interrupted part applied, instead of skipping it while the checkpoint moves past', async () => {
    const names = ['a', 'b', 'c', 'd', 'e', 'f'];
    source(Object.fromEntries(names.map((n) => [`/${n}`, `${n}1`])));
    expect(await run()).toMatchObject({ mode: 'baseline', created: 6 });
    for (const n of names) files.set(`/${n}`, `${n}2`);
    const updates = names.map((n, i) => url(`/${n}`, fixity(`${n}2`, `change="updated" datetime="2020-01-02T00:00:0${i}Z"`))).join('');
    changeList(updates);
    const mark = requests.length;
    // Paused once a is asked for: a is applied, most of the others are left for the resumed run.
    const pause = new AbortController();
    onRequest = (path) => {
      if (path === '/a') pause.abort();
    };
    expect(await run({ pauseSignal: pause.signal, concurrency: 1 })).toMatchObject({ paused: true });
    expect(readFileSync(file('a'), 'utf8')).toBe('a2');
    // Meanwhile the Source changes a again.
    onRequest = () => undefined;
    files.set('/a', 'a3');
    changeList(updates + url('/a', fixity('a3', 'change="updated" datetime="2020-01-03T00:00:00Z"')));
    const resumed = await run();
    expect(resumed).toMatchObject({ mode: 'incremental', resumed: true, failed: 0 });
    expect(readFileSync(file('a'), 'utf8')).toBe('a3');
    for (const n of names.slice(1)) expect(readFileSync(file(n), 'utf8')).toBe(`${n}2`);
    expect(checkpoint()).toBe('2020-01-03T00:00:00.000Z');
    // What the interrupted part applied and the Source did not change again is not fetched twice.
    const fetched = requests.slice(mark).filter((p) => !p.endsWith('.xml'));
    expect(fetched.filter((p) => p === '/a')).toHaveLength(2);
    expect(fetched.filter((p) => p !== '/a').sort()).toEqual(names.slice(1).map((n) => `/${n}`));
  });
});

describe('a Change List Index', () => {
  it('that names one list many times, and itself, has each list read once and the changes applied', async () => {
    source({ '/a': 'A' });
    const index = (entries: string) => `<?xml version="1.0"?>\n<sitemapindex ${NS}><rs:md capability="changelist"/>${entries.replaceAll('<url>', '<sitemap>').replaceAll('</url>', '</sitemap>')}</sitemapindex>`;
    files.set('/cap.xml', urlset('capability="capabilitylist"', url('/rl.xml', 'capability="resourcelist"') + url('/cli.xml', 'capability="changelist"')));
    expect(await run()).toMatchObject({ mode: 'baseline', created: 1 });
    files.set('/a', 'A2');
    files.set('/cl1.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', url('/a', fixity('A2', 'change="updated" datetime="2020-01-02T00:00:00Z"'))));
    const part = url('/cl1.xml', 'capability="changelist" from="2020-01-01T00:00:00Z"');
    files.set('/cli.xml', index(part + url('/cli.xml', 'capability="changelist" from="2020-01-01T00:00:00Z"') + part.repeat(300)));
    const mark = requests.length;
    const result = await run();
    expect(result).toMatchObject({ mode: 'incremental', updated: 1, failed: 0 });
    expect(readFileSync(file('a'), 'utf8')).toBe('A2');
    expect(checkpoint()).toBe('2020-01-02T00:00:00.000Z');
    expect(requests.slice(mark).filter((p) => p === '/cl1.xml')).toHaveLength(1);
    expect(notes.join('\n')).toMatch(/The Change List Index names a list it names before, or itself, 301 times; each list is read once/);
  });

  it('whose later list dates a change before its own from (backwards across lists): the lists\' order wins, not that datetime', async () => {
    // Before, the deletion in the second list, dated before the first list's update of the same resource, lost to it
    // by its datetime: the update was fetched, got 404, and that failure held the checkpoint back on every run.
    source({ '/a': 'A' });
    const index = (entries: string) => `<?xml version="1.0"?>\n<sitemapindex ${NS}><rs:md capability="changelist" from="2020-01-01T00:00:00Z"/>${entries.replaceAll('<url>', '<sitemap>').replaceAll('</url>', '</sitemap>')}</sitemapindex>`;
    files.set('/cap.xml', urlset('capability="capabilitylist"', url('/rl.xml', 'capability="resourcelist"') + url('/cli.xml', 'capability="changelist"')));
    expect(await run()).toMatchObject({ mode: 'baseline', created: 1 });
    files.delete('/a');
    files.set('/cl1.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z" until="2020-01-10T00:00:00Z"', url('/a', fixity('A2', 'change="updated" datetime="2020-01-09T00:00:00Z"'))));
    files.set('/cl2.xml', urlset('capability="changelist" from="2020-01-10T00:00:00Z"', url('/a', 'change="deleted" datetime="2020-01-05T00:00:00Z"')));
    files.set('/cli.xml', index(url('/cl1.xml', 'from="2020-01-01T00:00:00Z" until="2020-01-10T00:00:00Z"') + url('/cl2.xml', 'from="2020-01-10T00:00:00Z"')));
    const result = await run({ deletePolicy: 'delete' });
    expect(result).toMatchObject({ mode: 'incremental', deleted: 1, failed: 0 });
    expect(existsSync(file('a'))).toBe(false);
    // The reader's finding says what the Source got wrong; the checkpoint moves to where the deletion was placed.
    expect(result.findings.map((f) => f.code)).toContain('datetime-out-of-range');
    expect(checkpoint()).toBe('2020-01-10T00:00:00.000Z');
  });
});

describe('an index that names one list many ways', () => {
  // The same document: other spellings of the host and port, a fragment (never sent to the server).
  const spellings = (path: string) => {
    const { port } = new URL(base);
    return [`${base}${path}`, `${base}${path}#again`, `HTTP://127.0.0.1:${port}${path}`, `http://127.0.0.1:${port}${path}#x`];
  };

  it('a Resource List Index: each part is read once, and a note says how often it was named again', async () => {
    files.set('/a', 'A');
    files.set('/cap.xml', urlset('capability="capabilitylist"', url('/rli.xml', 'capability="resourcelist"')));
    files.set('/part.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', url('/a', fixity('A'))));
    const parts = Array.from({ length: 100 }, () => spellings('/part.xml')).flat();
    files.set(
      '/rli.xml',
      `<?xml version="1.0"?>\n<sitemapindex ${NS}><rs:md capability="resourcelist" at="2020-01-01T00:00:00Z"/>${parts.map((loc) => `<sitemap><loc>${loc}</loc></sitemap>`).join('')}</sitemapindex>`,
    );
    expect(await run()).toMatchObject({ mode: 'baseline', created: 1, failed: 0 });
    expect(readFileSync(file('a'), 'utf8')).toBe('A');
    expect(requests.filter((p) => p === '/part.xml')).toHaveLength(1);
    expect(notes.join('\n')).toContain(`The Resource List Index ${base}/rli.xml names a list it names before 399 times; each list is read once.`);
  });

  it('a Resource List Index that names itself among its parts: the other parts are read, and a note says so', async () => {
    files.set('/a', 'A');
    files.set('/cap.xml', urlset('capability="capabilitylist"', url('/rli.xml', 'capability="resourcelist"')));
    files.set('/part.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', url('/a', fixity('A'))));
    files.set(
      '/rli.xml',
      `<?xml version="1.0"?>\n<sitemapindex ${NS}><rs:md capability="resourcelist" at="2020-01-01T00:00:00Z"/>${[`${base}/rli.xml`, `${base}/part.xml`].map((loc) => `<sitemap><loc>${loc}</loc></sitemap>`).join('')}</sitemapindex>`,
    );
    // It stopped the run: "…/rli.xml, listed in the Resource List Index, is not a Resource List".
    expect(await run()).toMatchObject({ mode: 'baseline', created: 1, failed: 0 });
    expect(readFileSync(file('a'), 'utf8')).toBe('A');
    expect(notes.join('\n')).toContain(`The Resource List Index ${base}/rli.xml names a list it names before, or itself, 1 time; each list is read once.`);
  });

  it('a Change List Index: each list is read once, however it is spelled', async () => {
    source({ '/a': 'A' });
    files.set('/cap.xml', urlset('capability="capabilitylist"', url('/rl.xml', 'capability="resourcelist"') + url('/cli.xml', 'capability="changelist"')));
    expect(await run()).toMatchObject({ mode: 'baseline', created: 1 });
    files.set('/a', 'A2');
    files.set('/cl1.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', url('/a', fixity('A2', 'change="updated" datetime="2020-01-02T00:00:00Z"'))));
    const parts = Array.from({ length: 50 }, () => spellings('/cl1.xml')).flat();
    files.set(
      '/cli.xml',
      `<?xml version="1.0"?>\n<sitemapindex ${NS}><rs:md capability="changelist"/>${parts.map((loc) => `<sitemap><loc>${loc}</loc><rs:md capability="changelist" from="2020-01-01T00:00:00Z"/></sitemap>`).join('')}</sitemapindex>`,
    );
    const mark = requests.length;
    expect(await run()).toMatchObject({ mode: 'incremental', updated: 1, failed: 0 });
    expect(readFileSync(file('a'), 'utf8')).toBe('A2');
    expect(requests.slice(mark).filter((p) => p === '/cl1.xml')).toHaveLength(1);
    expect(notes.join('\n')).toMatch(/The Change List Index names a list it names before, or itself, 199 times; each list is read once/);
  });
});

describe('a list full of entries that break the spec', () => {
  const runFailures = (runId: number) => {
    const state = new MirrorState(stateDirOf(dest));
    try {
      const run = state.run(runId);
      return { rows: state.failures(runId).length, failed: run?.failed, status: run?.status, message: run?.message };
    } finally {
      state.close();
    }
  };

  it('counts every one as failed but lists only the first 1,000, in memory and in the journal, and says so', async () => {
    source({ '/a': 'A' });
    // 5,000 entries without a loc (6 bytes each: 50 MB of them is eight million), and one resource.
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', '<url/>'.repeat(5_000) + url('/a', fixity('A'))));
    const baseline = await run();
    expect(baseline).toMatchObject({ mode: 'baseline', created: 1, failed: 5_000 });
    expect(baseline.failures).toHaveLength(MAX_LISTED_ENTRY_FAILURES);
    expect(baseline.failures[0]).toMatchObject({ reason: 'not applied: the entry has no <loc> (mandatory, core spec §7)', permanent: true });
    expect(runFailures(baseline.runId!)).toEqual({
      rows: MAX_LISTED_ENTRY_FAILURES,
      failed: 5_000,
      status: 'completed',
      // Not "fetches them again": nothing can mend them but the Source.
      message: "5,000 entries of the Source's lists could not be applied: they break the spec, and fetching again cannot mend that",
    });
    expect(notes).toContain(
      '4,000 more entries break the spec (no loc, a loc that is not an http(s) URI, no valid change) and were not applied; ' +
        'they count among the failed, but only the first 1,000 such entries are listed one by one.',
    );
    // They hold nothing back: the checkpoint is the list's.
    expect(checkpoint()).toBe('2020-01-01T00:00:00Z');

    // A Change List of 3,000 changes that are no change at all, and one that is.
    files.set('/a', 'A2');
    changeList('<url><loc>http://127.0.0.1/x</loc><rs:md change="moved" datetime="2020-01-02T00:00:00Z"/></url>'.repeat(3_000) + url('/a', fixity('A2', 'change="updated" datetime="2020-01-02T00:00:00Z"')));
    notes = [];
    const incremental = await run();
    expect(incremental).toMatchObject({ mode: 'incremental', updated: 1, failed: 3_000 });
    expect(incremental.failures).toHaveLength(MAX_LISTED_ENTRY_FAILURES);
    expect(runFailures(incremental.runId!)).toMatchObject({ rows: MAX_LISTED_ENTRY_FAILURES, failed: 3_000, status: 'completed' });
    expect(notes.join('\n')).toContain('2,000 more entries break the spec');
    expect(readFileSync(file('a'), 'utf8')).toBe('A2');
  });
});
