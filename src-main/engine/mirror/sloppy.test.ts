// Real Sources are sloppy (fixture: e2e/fixture-source/sloppy.ts): an index written as a <urlset>, no Content-Type, no
// hashes, ISO datetimes in Last-Modified, HEAD refused, a Change List without `from` whose `until` is "now" while it
// grows, a 500 for an empty Change List. The mirror degrades gracefully, says what happened and loses nothing; entries
// that break a MUST fail alone, the rest is applied. Also: `auto` without a Change List is a baseline compared with
// the inventory.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ODD_BODY, SLOPPY, startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { duplicates } from './apply.ts';
import { audit } from './audit.ts';
import { MirrorState, stateDirOf } from './state.ts';
import { sync, type SyncOptions } from './sync.ts';

let fixture: FixtureSource;
let dest: string;
let notes: string[];

beforeEach(async () => {
  fixture = await startFixtureSource({ resources: 10 });
  dest = mkdtempSync(join(tmpdir(), 'sloppy-'));
  notes = [];
});
afterEach(async () => {
  await fixture.close();
});

const run = (options: Partial<SyncOptions> = {}) =>
  sync({ url: fixture.url + SLOPPY.capabilityList, dest, timeoutMs: 5_000, proxyEnv: {}, onNote: (n) => notes.push(n), ...options });
const host = () => new URL(fixture.url).host.replace(':', '_');
const fileOf = (id: number) => join(dest, host(), 'sloppy', 'res', String(id));
const resourceRequests = () => fixture.requests.filter((r) => r.path.startsWith('/sloppy/res/'));

function inventory() {
  const state = new MirrorState(stateDirOf(dest));
  try {
    return [...state.rows()];
  } finally {
    state.close();
  }
}

function expectMirrorMatchesSource(): void {
  for (const r of fixture.state.live()) {
    expect(readFileSync(fileOf(r.id)).equals(fixture.state.representation(r.id, r.version).body), `resource ${r.id}`).toBe(true);
  }
}

describe('a sloppy Source', () => {
  it('without hashes to check a file by, one the inventory does not know is left as it is, never replaced', async () => {
    mkdirSync(join(fileOf(1), '..'), { recursive: true });
    writeFileSync(fileOf(1), 'mine');
    const result = await run();
    expect(result).toMatchObject({ created: 9, failed: 1 });
    expect(result.failures).toEqual([{ uri: expect.stringContaining('/sloppy/res/1'), reason: expect.stringMatching(/^a file not made by this mirror is already at .*; it was left as it is/) }]);
    expect(readFileSync(fileOf(1), 'utf8')).toBe('mine');
  });

  it('reads a <urlset> index as an index, mirrors without Content-Type or hashes, and asks conditionally with an HTTP-date', async () => {
    const result = await run();
    expect(result).toMatchObject({ mode: 'baseline', created: 10, failed: 0 });
    expect(notes.join('\n')).toMatch(/is written as a <urlset>, but 2 of its entries are Resource Lists themselves/);
    expectMirrorMatchesSource();
    // The parts were not mirrored as resources, nor are they taken for missing ones by an audit.
    expect(inventory().map((r) => r.uri).every((u) => u.includes('/sloppy/res/'))).toBe(true);
    expect(await audit({ dest, proxyEnv: {}, timeoutMs: 5_000 })).toMatchObject({ inSync: true, inSyncCount: 10, missing: [], kept: [] });
    // No hash in the list: unchecked, with md5 recorded; the ISO Last-Modified kept as an HTTP-date.
    const row = inventory()[0]!;
    expect(row.status).toBe('unchecked');
    expect(row.lastModified).toMatch(/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} 2025 \d{2}:\d{2}:\d{2} GMT$/);
    // Never a HEAD (the Source refuses it).
    expect(fixture.requests.some((r) => r.method === 'HEAD')).toBe(false);

    // A baseline again: nothing to compare but validators, so each is asked with If-Modified-Since and answers 304.
    const n = resourceRequests().length;
    const again = await run({ mode: 'baseline' });
    expect(again).toMatchObject({ unchanged: 10, created: 0, updated: 0, failed: 0, bytes: 0 });
    const asked = resourceRequests().slice(n);
    expect(asked).toHaveLength(10);
    expect(asked.every((r) => /GMT$/.test(r.headers['if-modified-since'] ?? ''))).toBe(true);
  });

  it('takes a 500 for an empty Change List as "nothing yet", then follows a list without from whose until is always now', async () => {
    await run();
    const checkpoint = inventory().length && (await run()).checkpoint;
    expect(notes.join('\n')).toMatch(/The Change List answered HTTP 500 .*nothing was applied and the checkpoint stays at/);
    const quiet = await run();
    expect(quiet).toMatchObject({ mode: 'incremental', created: 0, updated: 0, failed: 0 });
    expect(quiet.checkpoint).toBe(checkpoint);

    fixture.change('update', 2);
    fixture.change('create', 1);
    const first = await run();
    expect(first).toMatchObject({ mode: 'incremental', updated: 2, created: 1, failed: 0 });
    // The list grows while its `until` keeps saying "now": the next run reads it again and applies only what is new.
    fixture.change('update', 1);
    const second = await run();
    expect(second).toMatchObject({ mode: 'incremental', updated: 1, created: 0, failed: 0 });
    // Only the new version was downloaded (the change at the checkpoint itself is asked again, conditionally: 304).
    const [latest] = fixture.state.changes.slice(-1);
    expect(second.bytes).toBe(fixture.state.representation(latest!.id, latest!.version).body.length);
    expectMirrorMatchesSource();
  });

  it('mirrors as a resource a dated entry of a <urlset> that is not a Resource List, and reads as a part one that is', async () => {
    const dated = fixture.url + SLOPPY.odd + 'dated.txt';
    const missing = fixture.url + SLOPPY.resource(999);
    fixture.sloppy.extraIndexEntries.push(
      { loc: dated, md: { at: '2020-01-01T00:00:00Z' } },
      { loc: missing, md: { completed: '2020-01-01T00:00:00Z' } },
      // A part that says only `at`: still read as one.
      { loc: fixture.url + SLOPPY.resourceListPart(2), md: { at: '2020-01-01T00:00:00Z' } },
    );
    // A dated entry that cannot be had may be a part: the baseline stops, deleting nothing a part might list.
    await expect(run({ deletePolicy: 'delete' })).rejects.toThrow(/404/);
    fixture.sloppy.extraIndexEntries.splice(1, 1);
    const baseline = await run();
    expect(readFileSync(join(dest, host(), 'sloppy', 'odd', 'dated.txt'), 'utf8')).toBe(ODD_BODY);
    expect(baseline.failures).toEqual([]);
    expect(baseline.checkpoint).not.toBeNull();
    expect(notes.join('\n')).toMatch(/1 entry of .* carries `at` or `completed`, as the parts of an index do, but is not a Resource List: it was mirrored as a resource\./);
    expect(notes.join('\n')).toMatch(/is written as a <urlset>, but 3 of its entries are Resource Lists themselves/);
    expectMirrorMatchesSource();
    // An audit reads the list as the sync did: the parts are lists, the dated entry that is not one a resource.
    const report = await audit({ dest, proxyEnv: {}, timeoutMs: 5_000 });
    expect(report).toMatchObject({ inSync: true, missing: [], extra: [], changed: [], kept: [] });
    expect(report.inSyncCount).toBe(fixture.state.live().length + 1);
  });

  it('fails alone each entry that breaks a MUST, applies the rest, and lets the checkpoint move on', async () => {
    const loc = (id: number) => fixture.url + SLOPPY.resource(id);
    fixture.sloppy.extraResources.push(
      { loc: '' },
      { loc: 'relative/path' },
      // A resource listed twice: the second time with a malformed hash (the first wins, the duplicate is skipped).
      { loc: fixture.url + SLOPPY.resource(3), md: { hash: 'md5:not-hex' } },
    );
    const baseline = await run();
    expect(baseline.created).toBe(10);
    expect(baseline.failures.map((f) => f.reason)).toEqual([
      expect.stringMatching(/the entry has no <loc>/),
      expect.stringMatching(/"relative\/path" is not an absolute http\(s\) URI/),
    ]);
    expect(baseline.failures[0]!.uri).toMatch(/resourcelist-2\.xml \(entry at line \d+\)$/);
    expect(baseline.checkpoint).not.toBeNull();

    fixture.change('update', 3);
    const [created] = fixture.change('create', 1);
    fixture.sloppy.extraChanges.push(
      { loc: loc(1), md: { change: 'modified', datetime: '2030-01-01T00:00:00Z' } },
      { loc: loc(2), lastmod: fixture.state.now(), md: { change: 'updated', datetime: fixture.state.now(), hash: 'sha-256:abc' } },
      { loc: '', md: { change: 'created', datetime: fixture.state.now() } },
    );
    const result = await run();
    expect(result.mode).toBe('incremental');
    const reasons = Object.fromEntries(result.failures.map((f) => [f.uri, f.reason]));
    expect(reasons[loc(1)]).toMatch(/change="modified" is not created, updated or deleted/);
    expect(reasons[loc(2)]).toMatch(/kept but not verified: hash .*sha-256/);
    expect(Object.keys(reasons).some((u) => /changelist\.xml \(entry at line \d+\)$/.test(u))).toBe(true);
    expect(result.failed).toBe(3);
    // The rest applied, and resource 2's bytes kept (unverifiable, not lost).
    expect(readFileSync(fileOf(created!.id)).equals(fixture.state.representation(created!.id, 1).body)).toBe(true);
    expect(inventory().find((r) => r.uri === loc(2))!.status).toBe('unverifiable');
    // Nothing to retry in those: the checkpoint moved past them.
    expect(result.checkpoint).not.toBe(baseline.checkpoint);
    expect(Date.parse(result.checkpoint!)).toBeGreaterThan(Date.parse(baseline.checkpoint!));
  });
});

describe('auto without a Change List', () => {
  it('is a baseline compared with the inventory: only what differs is fetched, what vanished goes by the policy', async () => {
    const url = fixture.url + fixture.paths.dataset1.resourceList;
    await run({ url });
    fixture.change('update', 2);
    fixture.change('create', 1);
    const [gone] = fixture.change('delete', 1);
    const n = fixture.requests.filter((r) => /\/res\/\d+/.test(r.path)).length;
    const result = await run({ url, deletePolicy: 'delete' });
    expect(result.mode).toBe('baseline');
    expect(notes.join('\n')).toMatch(/follows the Resource List .* alone, without a Change List .*: a new baseline is compared with the inventory/);
    const updatedIds = new Set(fixture.state.changes.slice(-4, -2).map((c) => c.id));
    const stillLive = [...updatedIds].filter((id) => id !== gone!.id).length;
    expect(result).toMatchObject({ created: 1, updated: stillLive, deleted: 1, failed: 0 });
    expect(result.unchanged).toBe(fixture.state.live().length - 1 - stillLive);
    expect(fixture.requests.filter((r) => /\/res\/\d+/.test(r.path)).length - n).toBe(1 + stillLive);
  });
});

describe('refusals and mirror locations', () => {
  it('refuses URIs on another host unless allowed, and keeps unsafe names inside the mirror', async () => {
    const other = await startFixtureSource({ resources: 2 });
    try {
      const foreign = other.url + SLOPPY.odd + 'elsewhere.txt';
      const odd = ['..%2F..%2F..%2Fescape.txt', 'CON', 'a%3Ab%3F.txt', '%2e%2e%5C%2e%2e%5Cwin.txt'].map((n) => fixture.url + SLOPPY.odd + n);
      fixture.sloppy.extraResources.push({ loc: foreign }, ...odd.map((loc) => ({ loc })));
      const refused = await run();
      expect(refused.skipped).toBe(1);
      expect(refused.failures).toEqual([
        { uri: foreign, reason: expect.stringMatching(/^not mirrored: on another host \(127\.0\.0\.1:\d+\) than the Source's/), permanent: true },
      ]);
      expect(other.requests.length).toBe(0);
      expect(refused.created).toBe(10 + odd.length);
      // Every odd name landed inside the mirror's folder for its host, with the Source's bytes; nothing outside it.
      const rows = inventory().filter((r) => r.uri.includes(SLOPPY.odd));
      expect(rows).toHaveLength(odd.length);
      for (const row of rows) {
        expect(row.path.startsWith(`${host()}/sloppy/odd/`), row.path).toBe(true);
        expect(row.path.split('/').some((seg) => seg === '..' || seg === '.' || seg.toUpperCase() === 'CON')).toBe(false);
        expect(readFileSync(join(dest, ...row.path.split('/')), 'utf8')).toBe(ODD_BODY);
      }
      expect(readdirSync(join(dest, '..')).some((n) => n === 'escape.txt' || n === 'win.txt')).toBe(false);
      expect(existsSync(join(dest, 'escape.txt'))).toBe(false);

      // Allowed: fetched, into a folder of its own host.
      const allowed = await run({ allowHosts: [new URL(other.url).host], mode: 'baseline' });
      // (The odd ones carry neither hash nor validators: downloaded again, as nothing tells they did not change.)
      expect(allowed).toMatchObject({ created: 1, unchanged: 10, updated: 4, skipped: 0, failed: 0 });
      expect(other.requests.map((r) => r.path)).toEqual([SLOPPY.odd + 'elsewhere.txt']);
      expect(readFileSync(join(dest, new URL(other.url).host.replace(':', '_'), 'sloppy', 'odd', 'elsewhere.txt'), 'utf8')).toBe(ODD_BODY);
    } finally {
      await other.close();
    }
  });

  it('tries mirror locations by pri (then document order), http(s) only, before loc', () => {
    const entry = {
      index: 0,
      line: 1,
      loc: 'http://s/a',
      md: {},
      links: [
        { rel: 'duplicate', href: 'http://m3/a' },
        { rel: 'duplicate', href: 'http://m2/a', pri: '2' },
        { rel: 'alternate', href: 'http://alt/a', pri: '1' },
        { rel: 'duplicate', href: 'ftp://m0/a', pri: '0' },
        { rel: 'duplicate', href: 'http://m1/a', pri: '1' },
        { rel: 'duplicate', href: 'http://m2b/a', pri: '2' },
        { rel: 'duplicate', href: 'http://mx/a', pri: 'high' },
      ],
    };
    expect(duplicates(entry)).toEqual(['http://m1/a', 'http://m2/a', 'http://m2b/a', 'http://m3/a', 'http://mx/a']);
  });

  it('falls back from a failing mirror location on another host to loc', async () => {
    const other = await startFixtureSource({ resources: 2 });
    await fixture.close();
    fixture = await startFixtureSource({ resources: 10, duplicateBase: `${other.url}/mirror` });
    try {
      // Resource 5's mirror is gone, resource 10's answers 503 until retries run out: both come from loc.
      other.setBroken(`/mirror${fixture.state.pathOf(5)}`, { status: 404 });
      other.setBroken(`/mirror${fixture.state.pathOf(10)}`, { status: 503, headers: { 'retry-after': '0' } });
      const result = await run({ url: fixture.url + fixture.paths.dataset1.resourceList });
      expect(result).toMatchObject({ created: 10, failed: 0 });
      expect(other.requests.filter((r) => r.path === `/mirror${fixture.state.pathOf(10)}`).length).toBe(4);
      expect(fixture.requests.some((r) => r.path === fixture.state.pathOf(5))).toBe(true);
      expect(fixture.requests.some((r) => r.path === fixture.state.pathOf(10))).toBe(true);
    } finally {
      await other.close();
    }
  });

  it('reads hash algorithm names in capitals (MD5:, SHA-256:) as the spec\'s: verified when the bytes agree, refused when they do not', async () => {
    // Before, "MD5" was an unknown algorithm: each resource was kept as unverifiable, even one whose bytes its digest
    // contradicts, and every run failed for entries that break nothing a mirror cannot read.
    const md5 = createHash('md5').update(ODD_BODY).digest('hex').toUpperCase();
    const good = fixture.url + SLOPPY.odd + 'capitals.txt';
    const bad = fixture.url + SLOPPY.odd + 'contradicted.txt';
    fixture.sloppy.extraResources.push({ loc: good, md: { hash: `MD5:${md5}` } }, { loc: bad, md: { hash: `SHA-256:${'AB'.repeat(32)}`, length: String(ODD_BODY.length) } });
    const result = await run();
    expect(result.created).toBe(11);
    expect(result.failures).toEqual([{ uri: bad, reason: expect.stringMatching(/^fixity mismatch: sha-256 /) }]);
    const rows = inventory();
    expect(rows.find((r) => r.uri === good)).toMatchObject({ status: 'verified', digests: { md5: md5.toLowerCase() } });
    expect(rows.find((r) => r.uri === bad)).toBeUndefined();
    expect(existsSync(join(dest, host(), 'sloppy', 'odd', 'contradicted.txt'))).toBe(false);
    // Said among what the lists break, not hidden.
    expect(result.findings).toContainEqual(expect.objectContaining({ code: 'invalid-hash', message: expect.stringContaining('"MD5": read as md5, as the spec writes it') }));
  });
});
