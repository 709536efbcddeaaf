// Cases the spec (or HTTP) decides, against a small Source of static documents that each test writes: where undated changes sit
// in time (§12.1, Example 19: by their place in the Change List), what holds the checkpoint back, and what an audit
// makes of a hash in an algorithm the mirror did not record (§7 `hash`: any algorithm may be given).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { syncFromCheckpoint } from '../live/apply-live.ts';
import { Http } from '../http/client.ts';
import { audit } from './audit.ts';
import { retryResources } from './retry.ts';
import { Fetcher } from './fetcher.ts';
import { MirrorState, stateDirOf } from './state.ts';
import { sync, type SyncOptions } from './sync.ts';

const NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
const md5 = (s: string) => createHash('md5').update(s).digest('hex');

let server: Server;
let base = '';
let dest = '';
/** Path → body; a body of null answers 500. */
const files = new Map<string, string | Buffer | null>();
/** Path → a status answered instead (with no body). */
const statuses = new Map<string, number>();
/** Milliseconds each resource (not a list) waits before it is answered. */
let slowMs = 0;
/** Path → headers added to its answer. */
const headers = new Map<string, Record<string, string>>();
const urlset = (md: string, urls: string) => `<?xml version="1.0"?>\n<urlset ${NS}><rs:md ${md}/>${urls}</urlset>`;
const url = (path: string, md: string) => `<url><loc>${base}${path}</loc><rs:md ${md}/></url>`;
/** The rs:md attributes of a body (the Source's bytes are set apart, in `files`). */
const fixity = (body: string, md = '') => `hash="md5:${md5(body)}" length="${body.length}"${md ? ` ${md}` : ''}`;

beforeEach(async () => {
  files.clear();
  statuses.clear();
  headers.clear();
  slowMs = 0;
  server = createServer(async (req, res) => {
    if (slowMs > 0 && !req.url!.endsWith('.xml')) await new Promise((r) => setTimeout(r, slowMs));
    const body = files.get(req.url ?? '');
    const status = statuses.get(req.url ?? '');
    if (status !== undefined) res.writeHead(status).end();
    else if (body === undefined) res.writeHead(404).end();
    else if (body === null) res.writeHead(500).end();
    else res.writeHead(200, { ...(req.url!.endsWith('.xml') ? { 'content-type': 'application/xml' } : {}), ...headers.get(req.url!) }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dest = mkdtempSync(join(tmpdir(), 'change-order-'));
});
afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const run = (options: Partial<SyncOptions> = {}) => sync({ url: `${base}/cap.xml`, dest, timeoutMs: 2_000, proxyEnv: {}, deletePolicy: 'delete', ...options });
const checkpoint = () => {
  const state = new MirrorState(stateDirOf(dest));
  try {
    return state.checkpoint()?.at ?? null;
  } finally {
    state.close();
  }
};
const file = (path: string) => join(dest, new URL(base).host.replace(':', '_'), path);

function capabilityList(changeList = '/cl.xml'): void {
  files.set('/cap.xml', urlset('capability="capabilitylist"', url('/rl.xml', 'capability="resourcelist"') + url(changeList, 'capability="changelist"')));
}

describe('undated changes', () => {
  it('are placed by the dated change after them: an old undated deletion is not applied again on later runs', async () => {
    capabilityList();
    files.set('/r1', 'one').set('/r2', 'two');
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', url('/r1', fixity('one')) + url('/r2', fixity('two'))));
    files.set(
      '/cl.xml',
      urlset(
        'capability="changelist" from="2020-01-01T00:00:00Z"',
        url('/r1', 'change="deleted"') + url('/r1', fixity('one', 'change="created" datetime="2020-01-02T00:00:00Z"')) + url('/r2', fixity('two!', 'change="updated" datetime="2020-01-03T00:00:00Z"')),
      ),
    );
    expect(await run()).toMatchObject({ mode: 'baseline', created: 2, failed: 0 });
    files.set('/r2', 'two!');
    // The deletion came before the creation: r1 is there, whatever the run.
    expect(await run()).toMatchObject({ mode: 'incremental', deleted: 0, failed: 0 });
    expect(checkpoint()).toBe('2020-01-03T00:00:00.000Z');
    const third = await run();
    expect(third).toMatchObject({ mode: 'incremental', deleted: 0, created: 0, failed: 0 });
    expect(readFileSync(file('r1'), 'utf8')).toBe('one');
    expect(readFileSync(file('r2'), 'utf8')).toBe('two!');
  });

  it('dated to the day (or month) count as new when any moment of that day is at or after the checkpoint', async () => {
    capabilityList();
    files.set('/r1', 'one').set('/r2', 'two');
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-03T10:00:00Z"', url('/r1', fixity('one')) + url('/r2', fixity('two'))));
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', ''));
    expect(await run()).toMatchObject({ mode: 'baseline', created: 2 });
    files.set('/r1', 'one!');
    // Made on 3 January, perhaps at 23:00, after the baseline's 10:00; r2's change of 2 January is older.
    files.set(
      '/cl.xml',
      urlset('capability="changelist" from="2020-01-01T00:00:00Z"', url('/r2', fixity('two?', 'change="updated" datetime="2020-01-02"')) + url('/r1', fixity('one!', 'change="updated" datetime="2020-01-03"'))),
    );
    expect(await run()).toMatchObject({ mode: 'incremental', updated: 1, failed: 0 });
    expect(readFileSync(file('r1'), 'utf8')).toBe('one!');
    expect(readFileSync(file('r2'), 'utf8')).toBe('two');
  });

  it('count as new at the end of an open list, and a failed one holds the checkpoint back until it is applied', async () => {
    capabilityList('/cli.xml');
    files.set('/r2', 'two').set('/r3', 'three');
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', url('/r2', fixity('two')) + url('/r3', fixity('three'))));
    files.set(
      '/cli.xml',
      `<?xml version="1.0"?>\n<sitemapindex ${NS}><rs:md capability="changelist" from="2020-01-01T00:00:00Z"/>` +
        `<sitemap><loc>${base}/cl1.xml</loc><rs:md from="2020-01-01T00:00:00Z" until="2020-01-05T00:00:00Z"/></sitemap>` +
        `<sitemap><loc>${base}/cl2.xml</loc><rs:md from="2020-01-05T00:00:00Z"/></sitemap></sitemapindex>`,
    );
    files.set('/cl1.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z" until="2020-01-05T00:00:00Z"', url('/r3', 'change="updated"')));
    files.set('/cl2.xml', urlset('capability="changelist" from="2020-01-05T00:00:00Z"', url('/r2', fixity('two!', 'change="updated" datetime="2020-01-06T00:00:00Z"'))));
    expect(await run()).toMatchObject({ mode: 'baseline', created: 2, failed: 0 });
    files.set('/r2', 'two!').set('/r3', null);
    const failed = await run();
    expect(failed).toMatchObject({ mode: 'incremental', updated: 1, failed: 1 });
    expect(checkpoint()).toBe('2020-01-01T00:00:00Z');
    files.set('/r3', 'three!');
    const mended = await run();
    expect(mended).toMatchObject({ mode: 'incremental', updated: 1, failed: 0 });
    expect(readFileSync(file('r3'), 'utf8')).toBe('three!');
    expect(checkpoint()).toBe('2020-01-06T00:00:00.000Z');
    expect(existsSync(file('r2'))).toBe(true);
  });

  it('are counted by an audit as a sync applies them', async () => {
    capabilityList();
    files.set('/r1', 'one').set('/r2', 'two');
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', url('/r1', fixity('one')) + url('/r2', fixity('two'))));
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', ''));
    expect(await run()).toMatchObject({ mode: 'baseline', created: 2, failed: 0 });
    files.delete('/r1');
    files.set('/r2', 'two!');
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', url('/r1', 'change="deleted"') + url('/r2', fixity('two!', 'change="updated"'))));
    expect(await run()).toMatchObject({ mode: 'incremental', deleted: 1, updated: 1, failed: 0 });
    expect(await audit({ dest, proxyEnv: {}, timeoutMs: 2_000 })).toMatchObject({ inSync: true, missing: [], changed: [] });
  });

  it('a change the mirror leaves out by its own rules (another host) does not hold the checkpoint back', async () => {
    capabilityList();
    files.set('/r2', 'two');
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', url('/r2', fixity('two'))));
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', ''));
    expect(await run()).toMatchObject({ mode: 'baseline', created: 1, failed: 0 });
    files.set('/r2', 'two!');
    files.set(
      '/cl.xml',
      urlset(
        'capability="changelist" from="2020-01-01T00:00:00Z"',
        `<url><loc>http://127.0.0.1:9/elsewhere</loc><rs:md change="updated" datetime="2020-01-02T00:00:00Z"/></url>` +
          url('/r2', fixity('two!', 'change="updated" datetime="2020-01-03T00:00:00Z"')),
      ),
    );
    expect(await run()).toMatchObject({ mode: 'incremental', updated: 1, skipped: 1, failed: 0 });
    expect(checkpoint()).toBe('2020-01-03T00:00:00.000Z');
  });
  it('are placed the same way by a retry of the run that failed them: the later undated update is fetched, not the earlier one', async () => {
    capabilityList();
    files.set('/r1', 'one');
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', url('/r1', fixity('one'))));
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', ''));
    expect(await run()).toMatchObject({ mode: 'baseline', created: 1 });
    // r2 created on 2 January, then updated later that day or after (undated: after the entry before it).
    files.set(
      '/cl.xml',
      urlset('capability="changelist" from="2020-01-01T00:00:00Z"', url('/r2', fixity('two', 'change="created" datetime="2020-01-02T00:00:00Z"')) + url('/r2', fixity('two!', 'change="updated"'))),
    );
    files.set('/r2', null);
    const failed = await run();
    expect(failed).toMatchObject({ mode: 'incremental', failed: 1 });
    files.set('/r2', 'two!');
    const retried = await retryResources({ dest, runId: failed.runId!, proxyEnv: {}, timeoutMs: 2_000 });
    expect(retried).toMatchObject({ asked: 1, created: 1, failed: 0 });
    expect(readFileSync(file('r2'), 'utf8')).toBe('two!');
  });
});

describe('a Change List Index whose lists do not all give from', () => {
  it('is read in its own order, not with those lists first', async () => {
    capabilityList('/cli.xml');
    files.set('/r1', 'one');
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', url('/r1', fixity('one'))));
    files.set('/cli.xml', `<?xml version="1.0"?>\n<sitemapindex ${NS}><rs:md capability="changelist"/><sitemap><loc>${base}/cl1.xml</loc><rs:md from="2020-01-01T00:00:00Z"/></sitemap><sitemap><loc>${base}/cl2.xml</loc></sitemap></sitemapindex>`);
    files.set('/cl1.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z" until="2020-01-05T00:00:00Z"', ''));
    files.set('/cl2.xml', urlset('capability="changelist"', ''));
    expect(await run()).toMatchObject({ mode: 'baseline', created: 1 });
    // Undated changes: cl1 deletes r1, then cl2 (newer, but without from) creates it again.
    files.set('/cl1.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z" until="2020-01-05T00:00:00Z"', url('/r1', 'change="deleted"')));
    files.set('/cl2.xml', urlset('capability="changelist"', url('/r1', fixity('one', 'change="created"'))));
    expect(await run()).toMatchObject({ mode: 'incremental', deleted: 0, failed: 0 });
    expect(existsSync(file('r1'))).toBe(true);
  });
});

describe('a cancelled incremental sync', () => {
  it('ends cancelled and leaves the checkpoint before the changes it never started', async () => {
    capabilityList();
    const ids = Array.from({ length: 12 }, (_, i) => i);
    for (const i of ids) files.set(`/r${i}`, `v1-${i}`);
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', ids.map((i) => url(`/r${i}`, fixity(`v1-${i}`))).join('')));
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', ''));
    expect(await run()).toMatchObject({ mode: 'baseline', created: 12 });
    for (const i of ids) files.set(`/r${i}`, `v2-${i}`);
    const at = (i: number) => `2020-01-02T00:00:${String(i).padStart(2, '0')}Z`;
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', ids.map((i) => url(`/r${i}`, fixity(`v2-${i}`, `change="updated" datetime="${at(i)}"`))).join('')));
    slowMs = 200;
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 300);
    await expect(run({ signal: abort.signal, concurrency: 1 })).rejects.toThrow();
    expect(checkpoint()).toBe('2020-01-01T00:00:00Z');
    slowMs = 0;
    expect(await run()).toMatchObject({ mode: 'incremental', failed: 0 });
    for (const i of ids) expect(readFileSync(file(`r${i}`), 'utf8')).toBe(`v2-${i}`);
  });
});

describe('the journal of an incremental run whose Change List cannot be read', () => {
  it('says how long it spent on the lists', async () => {
    capabilityList();
    files.set('/r1', 'one');
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', url('/r1', fixity('one'))));
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', ''));
    expect(await run()).toMatchObject({ mode: 'baseline', created: 1 });
    statuses.set('/cl.xml', 404);
    await expect(run()).rejects.toThrow(/404/);
    const state = new MirrorState(stateDirOf(dest));
    try {
      const last = state.runs().at(-1)!;
      expect(last).toMatchObject({ kind: 'incremental', status: 'failed' });
      expect(Object.keys(last.phases).sort()).toEqual(['discovery', 'lists']);
    } finally {
      state.close();
    }
  });
});

describe('the Capability List', () => {
  it('is read again at each run: a closed Change List is followed by the one that continues it', async () => {
    capabilityList('/cl1.xml');
    files.set('/r1', 'one');
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', url('/r1', fixity('one'))));
    files.set('/cl1.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z" until="2020-01-05T00:00:00Z"', ''));
    expect(await run()).toMatchObject({ mode: 'baseline', created: 1 });
    expect(await run()).toMatchObject({ mode: 'incremental', updated: 0, failed: 0 });
    // The Source closed the first list long ago and now lists its changes in a second one.
    files.set('/r1', 'one!');
    files.set('/cl2.xml', urlset('capability="changelist" from="2020-01-05T00:00:00Z"', url('/r1', fixity('one!', 'change="updated" datetime="2020-01-06T00:00:00Z"'))));
    capabilityList('/cl2.xml');
    const notes: string[] = [];
    expect(await run({ onNote: (n) => notes.push(n) })).toMatchObject({ mode: 'incremental', updated: 1, failed: 0 });
    expect(notes).toContain(`The Capability List now names the Change List ${base}/cl2.xml (it was ${base}/cl1.xml); the mirror follows it.`);
    expect(readFileSync(file('r1'), 'utf8')).toBe('one!');
    // A Capability List that cannot be read: the lists known are used, and that is said.
    files.set('/cap.xml', null);
    const more: string[] = [];
    expect(await run({ onNote: (n) => more.push(n) })).toMatchObject({ mode: 'incremental', failed: 0 });
    expect(more.join('\n')).toMatch(/could not be read again \(.*500.*\); the lists it named before are used/);
  });
});

describe('a closed Change List the Capability List still names (§12.1)', () => {
  const index = (...lists: [string, string][]) =>
    `<?xml version="1.0"?>\n<sitemapindex ${NS}><rs:md capability="changelist" from="2020-01-01T00:00:00Z"/>${lists.map(([path, md]) => `<sitemap><loc>${base}${path}</loc><rs:md capability="changelist" ${md}/></sitemap>`).join('')}</sitemapindex>`;

  it('is followed by the lists its Change List Index names after its until; an index that cannot be read is said', async () => {
    capabilityList('/cl1.xml');
    files.set('/r1', 'one');
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', url('/r1', fixity('one'))));
    files.set('/cl1.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z" until="2020-01-05T00:00:00Z"', `<rs:ln rel="index" href="${base}/cli.xml"/>`));
    files.set('/cli.xml', index(['/cl1.xml', 'from="2020-01-01T00:00:00Z" until="2020-01-05T00:00:00Z"']));
    expect(await run()).toMatchObject({ mode: 'baseline', created: 1 });
    files.set('/r1', 'one!');
    files.set('/cl2.xml', urlset('capability="changelist" from="2020-01-05T00:00:00Z"', url('/r1', fixity('one!', 'change="updated" datetime="2020-01-06T00:00:00Z"'))));
    files.set('/cli.xml', index(['/cl1.xml', 'from="2020-01-01T00:00:00Z" until="2020-01-05T00:00:00Z"'], ['/cl2.xml', 'from="2020-01-05T00:00:00Z"']));
    expect(await run()).toMatchObject({ mode: 'incremental', updated: 1, failed: 0 });
    expect(readFileSync(file('r1'), 'utf8')).toBe('one!');
    expect(checkpoint()).toBe('2020-01-06T00:00:00.000Z');
    expect(await run()).toMatchObject({ mode: 'incremental', updated: 0, failed: 0 });

    files.set('/cli.xml', null);
    const notes: string[] = [];
    expect(await run({ onNote: (n) => notes.push(n) })).toMatchObject({ mode: 'incremental', failed: 0 });
    expect(notes.join('\n')).toContain(`The Change List ${base}/cl1.xml is closed (until 2020-01-05T00:00:00.000Z); its Change List Index ${base}/cli.xml, where the changes after that are listed, could not be read (`);
    expect(checkpoint()).toBe('2020-01-06T00:00:00.000Z');
  });
});

describe('a Change List that begins after the checkpoint (§7 from)', () => {
  const setUp = async () => {
    capabilityList('/cl1.xml');
    files.set('/r1', 'one');
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', url('/r1', fixity('one'))));
    files.set('/cl1.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', ''));
    expect(await run()).toMatchObject({ mode: 'baseline', created: 1 });
    // Changed in January, when no list the mirror reads said so; the Source now lists changes from February on.
    files.set('/r1', 'one!').set('/r2', 'two');
    files.set('/cl2.xml', urlset('capability="changelist" from="2020-02-01T00:00:00Z"', url('/r2', fixity('two', 'change="created" datetime="2020-02-02T00:00:00Z"'))));
    capabilityList('/cl2.xml');
  };

  it('is said, its changes applied, and the next sync is a baseline that finds what no list holds, when the mirror fell behind', async () => {
    await setUp();
    // As if that baseline had been made on 10 January 2020, and the mirror not synced since.
    const state = new MirrorState(stateDirOf(dest));
    state.setSyncedThrough({ ms: Date.parse('2020-01-01T00:00:00Z'), readAt: Date.parse('2020-01-10T00:00:00Z') });
    state.close();
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-02-03T00:00:00Z"', url('/r1', fixity('one!')) + url('/r2', fixity('two'))));
    const notes: string[] = [];
    expect(await run({ onNote: (n) => notes.push(n) })).toMatchObject({ mode: 'incremental', created: 1, failed: 0 });
    expect(notes.join('\n')).toContain(
      'The Change List begins at 2020-02-01T00:00:00Z, after the mirror was last in step with the Source (2020-01-01T00:00:00.000Z): changes made between them are listed nowhere, and only a new baseline finds them. The next sync is that baseline',
    );
    expect(await run()).toMatchObject({ mode: 'baseline', updated: 1, unchanged: 1, failed: 0 });
    expect(readFileSync(file('r1'), 'utf8')).toBe('one!');
    expect(checkpoint()).toBe('2020-02-03T00:00:00Z');
    const quiet: string[] = [];
    expect(await run({ onNote: (n) => quiet.push(n) })).toMatchObject({ mode: 'incremental', created: 0, updated: 0, failed: 0 });
    expect(quiet.join('\n')).not.toContain('listed nowhere');
  });

  it('found by a sync a ping asked for (live) owes a baseline too', async () => {
    await setUp();
    const stateDir = stateDirOf(dest);
    const state = new MirrorState(stateDir);
    state.setSyncedThrough({ ms: Date.parse('2020-01-01T00:00:00Z'), readAt: Date.parse('2020-01-10T00:00:00Z') });
    const http = new Http({ proxyEnv: {} });
    const fetcher = new Fetcher({ proxyEnv: {} });
    const notes: string[] = [];
    try {
      await syncFromCheckpoint({ dest, stateDir, state, store: null as never, fetcher, http, deletePolicy: 'delete', concurrency: 2, onNote: (n) => notes.push(n) }, `${base}/cl2.xml`);
      expect(state.baselineNeeded()).toMatch(/^The Change List begins at 2020-02-01T00:00:00Z, after the mirror was last in step/);
      expect(notes).toHaveLength(1);
    } finally {
      await fetcher.close();
      await http.close();
      state.close();
    }
    expect(await run()).toMatchObject({ mode: 'baseline' });
  });

  it('owes a baseline the Source cannot give (it no longer names a Resource List): the mirror goes on from its Change List', async () => {
    await setUp();
    const state = new MirrorState(stateDirOf(dest));
    state.setBaselineNeeded('A gap.');
    state.close();
    files.set('/cap.xml', urlset('capability="capabilitylist"', url('/cl2.xml', 'capability="changelist"')));
    expect(await run()).toMatchObject({ mode: 'incremental', created: 1, failed: 0 });
  });

  it('with a Resource List already older than the Change List when the baseline read it: said once, no baseline', async () => {
    await setUp();
    const notes: string[] = [];
    expect(await run({ onNote: (n) => notes.push(n) })).toMatchObject({ mode: 'incremental', created: 1 });
    expect(notes.join('\n')).toContain("The Source's Resource List was older than its Change List already then");
    // The next runs: in step as of the last read (a quiet Source is not a gap), incremental.
    for (let i = 0; i < 2; i++) {
      const more: string[] = [];
      expect(await run({ onNote: (n) => more.push(n) })).toMatchObject({ mode: 'incremental', failed: 0 });
      expect(more.join('\n')).not.toContain('listed nowhere');
    }
  });
});

describe("datetimes in the future (a Source's error)", () => {
  it('do not move the checkpoint past now, so later changes are still applied', async () => {
    capabilityList();
    files.set('/r1', 'one').set('/r2', 'two');
    // A Resource List dated in the year 9999.
    files.set('/rl.xml', urlset('capability="resourcelist" at="9999-01-01T00:00:00Z"', url('/r1', fixity('one')) + url('/r2', fixity('two'))));
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', ''));
    const notes: string[] = [];
    const before = Date.now();
    expect(await run({ onNote: (n) => notes.push(n) })).toMatchObject({ mode: 'baseline', created: 2 });
    expect(notes.join('\n')).toMatch(/The Resource List gives "at" 9999-01-01T00:00:00Z, in the future; the mirror's checkpoint is now/);
    const first = Date.parse(checkpoint()!);
    expect(first).toBeGreaterThanOrEqual(before - 1000);
    expect(first).toBeLessThanOrEqual(Date.now());
    // A change dated in the future, then a real one: the real one comes through on the next run.
    const soon = new Date(Date.now() + 2_000).toISOString();
    files.set('/r1', 'one!');
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', url('/r1', fixity('one!', 'change="updated" datetime="9999-12-31T00:00:00Z"'))));
    const more: string[] = [];
    expect(await run({ onNote: (n) => more.push(n) })).toMatchObject({ mode: 'incremental', updated: 1 });
    expect(more.join('\n')).toContain('1 change is dated in the future; the checkpoint moves no further than the time the lists were read.');
    expect(Date.parse(checkpoint()!)).toBeLessThanOrEqual(Date.now());
    files.set('/r2', 'two!');
    files.set(
      '/cl.xml',
      urlset('capability="changelist" from="2020-01-01T00:00:00Z"', url('/r1', fixity('one!', 'change="updated" datetime="9999-12-31T00:00:00Z"')) + url('/r2', fixity('two!', `change="updated" datetime="${soon}"`))),
    );
    await new Promise((r) => setTimeout(r, 2_100));
    expect(await run()).toMatchObject({ mode: 'incremental', updated: 1, unchanged: 1, failed: 0 });
    expect(readFileSync(file('r2'), 'utf8')).toBe('two!');
  });
});

describe('a document that is not the Resource List it was named as', () => {
  it('is refused before any of its entries is applied', async () => {
    capabilityList();
    files.set('/r1', 'one');
    // Named a Resource List by the Capability List, but a Change List.
    files.set('/rl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', url('/r1', fixity('one', 'change="created" datetime="2020-01-02T00:00:00Z"'))));
    await expect(run()).rejects.toThrow(`${base}/rl.xml is a changelist, not a Resource List`);
    expect(existsSync(file('r1'))).toBe(false);
    // An index whose part is an index (itself): nothing of either is mirrored as a resource.
    files.set('/rl.xml', `<?xml version="1.0"?>\n<sitemapindex ${NS}><rs:md capability="resourcelist" at="2020-01-01T00:00:00Z"/><sitemap><loc>${base}/rl.xml</loc></sitemap></sitemapindex>`);
    await expect(run()).rejects.toThrow(`${base}/rl.xml, listed in the Resource List Index, is not a Resource List`);
    expect(existsSync(file('rl.xml'))).toBe(false);
  });
});

describe('HTTP', () => {
  it('a URI listed twice is mirrored once, as its first entry says, and that is said', async () => {
    capabilityList();
    files.set('/r1', 'one');
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', url('/r1', fixity('one')) + url('/r1', fixity('uno'))));
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', ''));
    const notes: string[] = [];
    expect(await run({ onNote: (n) => notes.push(n) })).toMatchObject({ created: 1, failed: 0 });
    expect(notes).toContain(`1 entry repeats a URI listed before (the first: ${base}/r1); each URI is mirrored once, as its first entry describes it.`);
  });

  it('a mirror folder that is a file is refused in plain words', async () => {
    const path = join(dest, 'a-file');
    writeFileSync(path, 'x');
    await expect(run({ dest: path })).rejects.toThrow(`${path} is a file, not a folder: give a folder for the mirror`);
  });

  it('a 304 Not Modified to a request that was not conditional fails the resource with that reason', async () => {
    capabilityList();
    files.set('/r1', 'one');
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', url('/r1', fixity('one'))));
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', ''));
    statuses.set('/r1', 304);
    const result = await run();
    expect(result.failures).toEqual([{ uri: `${base}/r1`, reason: 'the server answered 304 Not Modified to a request that was not conditional' }]);
  });

  it('a body sent with a content coding that was not asked for is kept as sent: verified when the list describes those bytes, else the reason names the coding', async () => {
    capabilityList();
    const coded = gzipSync('one');
    files.set('/gz', coded).set('/r1', gzipSync('one'));
    headers.set('/gz', { 'content-encoding': 'gzip' }).set('/r1', { 'content-encoding': 'gzip' });
    // gz: listed as the bytes stored (a .gz file); r1: listed as the decoded bytes.
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', url('/gz', `hash="md5:${createHash('md5').update(coded).digest('hex')}" length="${coded.length}"`) + url('/r1', fixity('one'))));
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', ''));
    const result = await run();
    expect(result).toMatchObject({ created: 1, failed: 1 });
    expect(readFileSync(file('gz')).equals(coded)).toBe(true);
    expect(result.failures).toEqual([{ uri: `${base}/r1`, reason: expect.stringMatching(/\(the server sent it with Content-Encoding: gzip, which was not asked for and is not decoded\)$/) }]);
    expect(existsSync(file('r1'))).toBe(false);
  });
});

describe('metadata listed in its own right (§14.5)', () => {
  it('stays when the resource it describes is deleted', async () => {
    capabilityList();
    files.set('/r1', 'one').set('/m1.xml', '<dc/>');
    files.set(
      '/rl.xml',
      urlset(
        'capability="resourcelist" at="2020-01-01T00:00:00Z"',
        `<url><loc>${base}/r1</loc><rs:md ${fixity('one')}/><rs:ln rel="describedby" href="${base}/m1.xml"/></url>` +
          `<url><loc>${base}/m1.xml</loc><rs:md ${fixity('<dc/>')}/><rs:ln rel="describes" href="${base}/r1"/></url>`,
      ),
    );
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', ''));
    expect(await run({ withMetadata: true })).toMatchObject({ mode: 'baseline', failed: 0 });
    files.delete('/r1');
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', url('/r1', 'change="deleted" datetime="2020-01-02T00:00:00Z"')));
    expect(await run({ withMetadata: true })).toMatchObject({ mode: 'incremental', deleted: 1, failed: 0 });
    expect(existsSync(file('r1'))).toBe(false);
    expect(readFileSync(file('m1.xml'), 'utf8')).toBe('<dc/>');
  });
});

describe('metadata named in another spelling', () => {
  it('is the resource the Resource List names in its own right: one row and one file, its relations under one URI', async () => {
    capabilityList();
    files.set('/r1', 'one').set('/~m1.xml', '<dc/>').set('/%7em1.xml', '<dc/>');
    const port = new URL(base).port;
    files.set(
      '/rl.xml',
      urlset(
        'capability="resourcelist" at="2020-01-01T00:00:00Z"',
        `<url><loc>${base}/r1</loc><rs:md ${fixity('one')}/><rs:ln rel="describedby" href="HTTP://127.0.0.1:${port}/%7em1.xml"/></url>` +
          `<url><loc>${base}/~m1.xml</loc><rs:md ${fixity('<dc/>')}/><rs:ln rel="describes" href="${base}/r1"/></url>`,
      ),
    );
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', ''));
    expect(await run({ withMetadata: true })).toMatchObject({ mode: 'baseline', failed: 0 });
    const state = new MirrorState(stateDirOf(dest));
    try {
      expect([...state.rows()].map((r) => r.uri).sort()).toEqual([`${base}/r1`, `${base}/~m1.xml`]);
      expect(state.db.prepare('SELECT uri, describes FROM described_by ORDER BY describes').all()).toEqual([
        { uri: `${base}/~m1.xml`, describes: `${base}/r1` },
        { uri: `${base}/~m1.xml`, describes: `${base}/~m1.xml` },
      ]);
    } finally {
      state.close();
    }
    // Deleting the resource it describes leaves it: listed in its own right.
    files.delete('/r1');
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', url('/r1', 'change="deleted" datetime="2020-01-02T00:00:00Z"')));
    expect(await run({ withMetadata: true })).toMatchObject({ mode: 'incremental', deleted: 1, failed: 0 });
    expect(readFileSync(file('~m1.xml'), 'utf8')).toBe('<dc/>');
  });
});

describe('a URI a Resource List lists twice', () => {
  it('is read by a retry as a sync reads it: by its first description', async () => {
    capabilityList();
    files.set('/r1', 'one');
    // Its first entry gives a hash its bytes do not have: the sync fails it, and so must a retry.
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', url('/r1', fixity('another')) + url('/r1', fixity('one'))));
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', ''));
    const failed = await run();
    expect(failed).toMatchObject({ mode: 'baseline', created: 0, failed: 1 });
    const retried = await retryResources({ dest, runId: failed.runId!, proxyEnv: {}, timeoutMs: 2_000 });
    expect(retried).toMatchObject({ asked: 1, created: 0, failed: 1 });
    expect(retried.failures[0]!.reason).toBe(failed.failures[0]!.reason);
  });

  it('is read by an audit as a sync reads it: in sync after the sync', async () => {
    capabilityList();
    files.set('/r1', 'one');
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', url('/r1', fixity('one')) + url('/r1', fixity('another'))));
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', ''));
    expect(await run()).toMatchObject({ mode: 'baseline', created: 1, failed: 0 });
    expect(await audit({ dest, proxyEnv: {}, timeoutMs: 2_000 })).toMatchObject({ inSync: true, inSyncCount: 1, changed: [] });
  });
});

describe('audit', () => {
  it("calls extra the files in the folders the mirror writes into (its host's, a map's), not those beside them", async () => {
    capabilityList();
    files.set('/r1', 'one').set('/a/r2', 'two');
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', url('/r1', fixity('one')) + url('/a/r2', fixity('two'))));
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', ''));
    expect(await run({ maps: [{ prefix: `${base}/a/`, dir: 'mapped/a' }] })).toMatchObject({ mode: 'baseline', created: 2, failed: 0 });
    expect(readFileSync(join(dest, 'mapped', 'a', 'r2'), 'utf8')).toBe('two');
    const host = new URL(base).host.replace(':', '_');
    for (const stray of [`${host}/stray`, 'mapped/a/stray', 'notes.txt', 'mapped/beside', 'other/file']) {
      mkdirSync(join(dest, stray, '..'), { recursive: true });
      writeFileSync(join(dest, stray), 'x');
    }
    const report = await audit({ dest, proxyEnv: {}, timeoutMs: 2_000 });
    expect(report.extra.sort()).toEqual([`${host}/stray`, 'mapped/a/stray']);
    expect(report.inSyncCount).toBe(2);
  });

  it('leaves out, and says so, a listed resource the mirror does not mirror by its own rules (another host): not missing', async () => {
    capabilityList();
    files.set('/r1', 'one');
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', url('/r1', fixity('one')) + '<url><loc>http://elsewhere.invalid/r2</loc></url>'));
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', ''));
    expect(await run()).toMatchObject({ mode: 'baseline', created: 1, skipped: 1, failed: 0 });
    const report = await audit({ dest, proxyEnv: {}, timeoutMs: 2_000 });
    expect(report).toMatchObject({ inSync: true, inSyncCount: 1, missing: [] });
    expect(report.notes).toEqual([
      "1 listed resource is not mirrored by this mirror's own rules, as a sync skips it, and was not compared (the first: http://elsewhere.invalid/r2: on another host (elsewhere.invalid) than the Source's (" +
        new URL(base).host +
        '); not mirrored unless that host is allowed).',
    ]);
  });

  it('refuses a Resource List URL that now answers another document, rather than call everything missing', async () => {
    capabilityList();
    files.set('/r1', 'one');
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', url('/r1', fixity('one'))));
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', ''));
    expect(await run()).toMatchObject({ mode: 'baseline', created: 1, failed: 0 });
    files.set('/rl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', url('/r2', fixity('two', 'change="created"'))));
    await expect(audit({ dest, proxyEnv: {}, timeoutMs: 2_000 })).rejects.toThrow(/rl\.xml is a changelist, not a Resource List$/);
  });

  it('compares a lastmod by the time it names, not by how it is written', async () => {
    capabilityList();
    files.set('/r1', 'one').set('/r2', 'two');
    const listed = (r1: string, r2: string) =>
      urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', `<url><loc>${base}/r1</loc><lastmod>${r1}</lastmod></url><url><loc>${base}/r2</loc><lastmod>${r2}</lastmod></url>`);
    files.set('/rl.xml', listed('2019-01-01T00:00:00Z', '2019-01-01T00:00:00Z'));
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', ''));
    expect(await run()).toMatchObject({ mode: 'baseline', created: 2, failed: 0 });
    // r1: the same instant written otherwise; r2: a second later.
    files.set('/rl.xml', listed('2019-01-01T01:00:00.000+01:00', '2019-01-01T00:00:01Z'));
    const report = await audit({ dest, proxyEnv: {}, timeoutMs: 2_000 });
    expect(report.changed).toEqual([{ uri: `${base}/r2`, reason: "lastmod is 2019-01-01T00:00:01Z, the mirrored copy's 2019-01-01T00:00:00Z" }]);
    expect(report.inSyncCount).toBe(1);
  });

  it('checks the file itself when the list gives a hash in an algorithm the mirror did not record', async () => {
    capabilityList();
    files.set('/r1', 'one').set('/r2', 'two');
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', url('/r1', fixity('one')) + url('/r2', fixity('two'))));
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', ''));
    expect(await run()).toMatchObject({ mode: 'baseline', created: 2, failed: 0 });
    const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
    // The Source now gives sha-256 alone (r1), and md5 plus sha-256 (r2) where the sha-256 is of other bytes.
    files.set(
      '/rl.xml',
      urlset(
        'capability="resourcelist" at="2020-01-01T00:00:00Z"',
        url('/r1', `hash="sha-256:${sha256('one')}" length="3"`) + url('/r2', `hash="md5:${md5('two')} sha-256:${sha256('two?')}" length="3"`),
      ),
    );
    const report = await audit({ dest, proxyEnv: {}, timeoutMs: 2_000 });
    expect(report.inSyncCount).toBe(1);
    expect(report.changed).toEqual([{ uri: `${base}/r2`, reason: expect.stringContaining('sha-256') }]);
  });
});

describe('a --map prefix', () => {
  const dropMapRule = () => {
    // A mirror made before the rule was recorded: its binding has none.
    const state = new MirrorState(stateDirOf(dest));
    const { mapRule, ...binding } = state.binding()!;
    expect(mapRule).toBe('segments');
    expect(binding.maps.map((m) => m.rule)).toEqual(['segments']);
    state.setBinding({ ...binding, maps: binding.maps.map(({ prefix, dir }) => ({ prefix, dir })) });
    state.close();
  };
  const mapRule = () => {
    const state = new MirrorState(stateDirOf(dest));
    try {
      const binding = state.binding()!;
      // Each map carries the mirror's rule, for whatever maps from the binding (the live side too).
      expect(binding.maps.map((m) => m.rule)).toEqual([binding.mapRule]);
      return binding.mapRule;
    } finally {
      state.close();
    }
  };

  it('matches at a segment boundary: `/data` takes `/data/x` and `/data?q`, never `/database/x`', async () => {
    capabilityList();
    files.set('/data/x', 'x').set('/data?q', 'q').set('/database/x', 'dbx');
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', url('/data/x', fixity('x')) + url('/data?q', fixity('q')) + url('/database/x', fixity('dbx'))));
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', ''));
    expect(await run({ maps: [{ prefix: `${base}/data`, dir: 'd' }] })).toMatchObject({ mode: 'baseline', created: 3, failed: 0 });
    expect(readFileSync(join(dest, 'd', 'x'), 'utf8')).toBe('x');
    expect(readFileSync(join(dest, 'd', '%index%qq'), 'utf8')).toBe('q');
    expect(readFileSync(file('database/x'), 'utf8')).toBe('dbx');
    expect(existsSync(join(dest, 'd', 'base'))).toBe(false);
    expect(mapRule()).toBe('segments');
    expect((await audit({ dest, proxyEnv: {}, timeoutMs: 2_000 })).inSync).toBe(true);
  });

  it('keeps the bare string rule in a mirror made before whose inventory relied on it, and says so once', async () => {
    capabilityList();
    files.set('/database/x', 'dbx');
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', url('/database/x', fixity('dbx'))));
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', ''));
    const maps = [{ prefix: `${base}/data`, dir: 'd' }];
    expect(await run({ maps })).toMatchObject({ created: 1, failed: 0 });
    // As the old rule mapped it.
    const state = new MirrorState(stateDirOf(dest));
    const row = state.get(`${base}/database/x`)!;
    state.put({ ...row, path: 'd/base/x' });
    state.close();
    mkdirSync(join(dest, 'd', 'base'), { recursive: true });
    renameSync(file('database/x'), join(dest, 'd', 'base', 'x'));
    dropMapRule();

    files.set('/database/y', 'dby');
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-02T00:00:00Z"', url('/database/x', fixity('dbx')) + url('/database/y', fixity('dby'))));
    const notes: string[] = [];
    expect(await run({ maps, mode: 'baseline', onNote: (n) => void notes.push(n) })).toMatchObject({ created: 1, unchanged: 1, failed: 0 });
    // Beside its sibling, where the old rule puts it.
    expect(readFileSync(join(dest, 'd', 'base', 'y'), 'utf8')).toBe('dby');
    expect(existsSync(file('database/y'))).toBe(false);
    expect(notes.filter((n) => n.includes('a mapping matched any URI starting with its prefix'))).toEqual([
      `This mirror was made when a mapping matched any URI starting with its prefix, and it has mirrored ${base}/database/x under ${base}/data=d: its mappings keep that rule, so that what comes next goes where the rest went. (New mirrors match a prefix only up to a /, ? or #.)`,
    ]);
    expect(mapRule()).toBe('prefix');
    expect((await audit({ dest, proxyEnv: {}, timeoutMs: 2_000 })).inSync).toBe(true);
    notes.length = 0;
    expect(await run({ maps, mode: 'baseline', onNote: (n) => void notes.push(n) })).toMatchObject({ unchanged: 2, failed: 0 });
    expect(notes.filter((n) => n.includes('a mapping matched'))).toEqual([]);
  });

  it('takes the segment rule in a mirror made before when no URI it holds would move', async () => {
    capabilityList();
    files.set('/data/x', 'x');
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-01T00:00:00Z"', url('/data/x', fixity('x'))));
    files.set('/cl.xml', urlset('capability="changelist" from="2020-01-01T00:00:00Z"', ''));
    const maps = [{ prefix: `${base}/data`, dir: 'd' }];
    expect(await run({ maps })).toMatchObject({ created: 1, failed: 0 });
    dropMapRule();
    files.set('/database/y', 'dby');
    files.set('/rl.xml', urlset('capability="resourcelist" at="2020-01-02T00:00:00Z"', url('/data/x', fixity('x')) + url('/database/y', fixity('dby'))));
    const notes: string[] = [];
    expect(await run({ maps, mode: 'baseline', onNote: (n) => void notes.push(n) })).toMatchObject({ created: 1, unchanged: 1, failed: 0 });
    expect(readFileSync(file('database/y'), 'utf8')).toBe('dby');
    expect(notes.filter((n) => n.includes('a mapping matched'))).toEqual([]);
    expect(mapRule()).toBe('segments');
  });
});
