// A baseline of more URIs than it holds in memory (`inMemoryUris`, 100,000 unless told: listed-uris.ts,
// run-inventory.ts) asks the mirror's state and a temporary database instead. Made to happen here with a bound of a
// few URIs against the fixture Source: the mirror must come out exactly as a baseline held in memory makes it.
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SLOPPY, startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { audit } from './audit.ts';
import { MirrorState, stateDirOf } from './state.ts';
import { sync, type SyncOptions } from './sync.ts';

let fixture: FixtureSource;
afterEach(async () => {
  await fixture.close();
});

function inventory(dest: string) {
  const state = new MirrorState(stateDirOf(dest));
  try {
    return [...state.rows()].map((r) => ({ uri: r.uri, path: r.path, status: r.status, length: r.length }));
  } finally {
    state.close();
  }
}

function visibleFiles(dir: string, rel = ''): string[] {
  return readdirSync(join(dir, rel), { withFileTypes: true }).flatMap((d) => {
    if (rel === '' && d.name === '.resourcesync') return [];
    const path = rel ? `${rel}/${d.name}` : d.name;
    return d.isDirectory() ? visibleFiles(dir, path) : [path];
  });
}

describe('a baseline of more URIs than it holds in memory', () => {
  beforeEach(async () => {
    fixture = await startFixtureSource({ resources: 10 });
  });

  it('mirrors a repeated URI once, as its first entry says, and gives clashing paths the same alternates', async () => {
    const odd = (name: string) => fixture.url + SLOPPY.odd + name;
    fixture.sloppy.extraResources.push(
      // Listed again after the bound was passed, with a hash its bytes do not have: applied, it would fail fixity.
      { loc: fixture.url + SLOPPY.resource(3), md: { hash: `md5:${'0'.repeat(32)}` } },
      { loc: odd('Readme.txt') },
      { loc: odd('README.txt') },
      { loc: odd('a') },
      { loc: odd('a/b') },
      { loc: odd('Readme.txt'), md: { length: '1' } },
    );
    const outcome = async (inMemoryUris?: number) => {
      const dest = mkdtempSync(join(tmpdir(), 'beyond-memory-'));
      const notes: string[] = [];
      const options: SyncOptions = { url: fixture.url + SLOPPY.capabilityList, dest, timeoutMs: 5_000, proxyEnv: {}, batchSize: 3, inMemoryUris, onNote: (n) => notes.push(n) };
      const result = await sync(options);
      return { dest, notes, result, options };
    };
    const held = await outcome();
    const bounded = await outcome(2);
    for (const { result, notes } of [held, bounded]) {
      expect(result).toMatchObject({ created: 14, failed: 0, failures: [] });
      expect(notes).toContain(`2 entries repeat URIs listed before (the first: ${fixture.url + SLOPPY.resource(3)}); each URI is mirrored once, as its first entry describes it.`);
    }
    const rows = inventory(bounded.dest);
    expect(rows).toEqual(inventory(held.dest));
    expect(rows.map((r) => r.path.replace(/^[^/]+\/sloppy\/odd\//, ''))).toEqual(expect.arrayContaining(['Readme.txt', 'README.txt%~2', 'a', 'a%dir/b']));
    expect(visibleFiles(bounded.dest).sort()).toEqual(visibleFiles(held.dest).sort());

    // Again over the mirror it made: nothing fetched, nothing taken for unlisted.
    // (The odd resources are listed with no hash nor length, and answer with no validators: fetched again.)
    const counts = ({ created, updated, unchanged, deleted, failed, wouldDeleteCount }: Awaited<ReturnType<typeof sync>>) => ({ created, updated, unchanged, deleted, failed, wouldDeleteCount });
    const again = await sync({ ...bounded.options, mode: 'baseline' });
    expect(counts(again)).toEqual({ created: 0, updated: 4, unchanged: 10, deleted: 0, failed: 0, wouldDeleteCount: 0 });
    expect(counts(await sync({ ...held.options, mode: 'baseline' }))).toEqual(counts(again));
    expect(inventory(bounded.dest).map((r) => r.path)).toEqual(rows.map((r) => r.path));
    expect(await audit({ dest: bounded.dest })).toMatchObject({ inSync: true, missing: [], extra: [], changed: [] });
  });
});

describe('what the Source no longer lists, past the bound', () => {
  beforeEach(async () => {
    fixture = await startFixtureSource({ resources: 30, changeListSize: 20 });
  });

  it('is kept, held back or deleted by the policy as in memory, and new paths after the deletions are claimed right', async () => {
    const dest = mkdtempSync(join(tmpdir(), 'beyond-memory-'));
    const notes: string[] = [];
    const run = (options: Partial<SyncOptions> = {}) =>
      sync({ url: fixture.url + fixture.paths.dataset1.capabilityList, dest, batchSize: 4, timeoutMs: 2_000, inMemoryUris: 3, mode: 'baseline', onNote: (n) => notes.push(n), ...options });
    expect(await run()).toMatchObject({ created: 30, failed: 0 });
    const gone = fixture.change('delete', 20).map((c) => c.loc);
    fixture.change('create', 5);

    const kept = await run({ dryRun: true });
    expect([...kept.wouldDelete].sort()).toEqual([...gone].sort());
    expect(kept.wouldDeleteCount).toBe(20);
    const held = await run({ deletePolicy: 'delete' });
    expect(held).toMatchObject({ deleted: 0, created: 5, wouldDeleteCount: 20 });
    expect(notes).toContain(
      'The Source no longer lists 20 resources this mirror holds, more than the 15 it lists now: none was deleted, in case the list was served empty or cut short by mistake. ' +
        "If they are really gone, sync again allowing it: rsdesk sync --allow-mass-delete, or in the app the button under this run's end.",
    );
    const preview = await run({ deletePolicy: 'quarantine', allowMassDelete: true, dryRun: true });
    expect(preview).toMatchObject({ deleted: 20, wouldRemoveCount: 20 });
    expect([...preview.wouldRemove].sort()).toEqual([...gone].sort());

    fixture.change('create', 3);
    const removed = await run({ deletePolicy: 'delete', allowMassDelete: true });
    expect(removed).toMatchObject({ deleted: 20, created: 3, failed: 0, wouldDeleteCount: 0 });
    const live = fixture.state.live().map((r) => fixture.state.locOf(r.id)).sort();
    expect(inventory(dest).map((r) => r.uri).sort()).toEqual(live);
    expect(visibleFiles(dest)).toHaveLength(18);
    expect(await audit({ dest })).toMatchObject({ inSync: true, missing: [], extra: [], changed: [] });
  });
});

describe('MirrorState.urisPaged', () => {
  it('gives every URI once, in order, while rows are removed between pages', () => {
    fixture = { close: async () => undefined } as FixtureSource;
    const state = new MirrorState(join(mkdtempSync(join(tmpdir(), 'beyond-memory-')), '.resourcesync'));
    try {
      const uris = Array.from({ length: 11 }, (_, i) => `http://h/${String(i).padStart(2, '0')}`);
      state.transaction(() => {
        for (const uri of uris) state.put({ uri, path: uri.slice(7), length: 1, digests: {}, lastmod: null, etag: null, lastModified: null, type: null, status: 'verified', verifiedAt: null, runId: 1 });
      });
      const seen: string[] = [];
      for (const uri of state.urisPaged(3)) {
        seen.push(uri);
        state.remove(uri);
      }
      expect(seen).toEqual(uris);
    } finally {
      state.close();
    }
  });
});
