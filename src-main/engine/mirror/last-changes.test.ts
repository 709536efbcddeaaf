// The last change per URI of an incremental sync's Change Lists, held in memory while few and past `max` in a
// temporary database: both must keep the same change of each URI and give them back in the same order (core spec §12:
// forward chronological order, only the last change per URI). Then an incremental sync against the fixture Source
// that keeps two in memory must do exactly what one that keeps them all does.
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import type { Entry } from '../documents/model.ts';
import type { Timed } from './change-timeline.ts';
import { LastChanges } from './last-changes.ts';
import { MirrorState, stateDirOf } from './state.ts';
import { sync, type SyncOptions } from './sync.ts';

const made: LastChanges[] = [];
vi.mock('./last-changes.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('./last-changes.ts')>();
  class Watched extends original.LastChanges {
    constructor(max?: number) {
      super(max);
      made.push(this);
    }
  }
  return { ...original, LastChanges: Watched };
});

const entry = (loc: string, change: string, extra: Partial<Entry> = {}): Entry => ({ index: 0, loc, line: 1, md: { change }, links: [], ...extra });

/** A reading of changes: URIs repeated, undated ones (null) first and among the dated, equal times, a deletion last. */
function reading(): Timed[] {
  const out: Timed[] = [];
  let seq = 0;
  for (let i = 0; i < 60; i++) {
    const uri = `http://127.0.0.1/r/${(i * 7) % 23}`;
    const ms = i % 11 === 0 ? null : 1_000 + Math.floor(i / 3) * 10;
    out.push({ entry: entry(uri, i % 13 === 0 ? 'deleted' : 'updated', { lastmod: `v${i}`, links: [{ rel: 'describedby', href: `http://127.0.0.1/m/${i}` }] }), ms, seq: seq++ });
  }
  return out;
}

describe('the last change per URI', () => {
  beforeEach(() => void (made.length = 0));

  it('past the changes it holds in memory, keeps the same ones in the same order as in memory', () => {
    const all = new LastChanges();
    const few = new LastChanges(3);
    for (const c of reading()) {
      all.offer(c);
      few.offer(c);
    }
    expect(all.spilled).toBe(false);
    expect(few.spilled).toBe(true);
    expect(few.size).toBe(23);
    expect(all.size).toBe(23);
    expect([...few.ordered()]).toEqual([...all.ordered()]);
    expect([...few.times()].map((t) => [t.entry.loc, t.ms])).toEqual([...all.times()].map((t) => [t.entry.loc, t.ms]));
    // The last of each URI: by time, the later read among equals (reading order grows).
    const expected = new Map<string, Timed>();
    for (const c of reading()) {
      const prior = expected.get(c.entry.loc);
      if (!prior || (c.ms ?? -Infinity) >= (prior.ms ?? -Infinity)) expected.set(c.entry.loc, c);
    }
    expect(new Map([...few.ordered()].map((c) => [c.entry.loc, c.seq]))).toEqual(new Map([...expected].map(([k, c]) => [k, c.seq])));
    few.close();
    all.close();
  });
});

describe('the last change per URI, written to disk in batches', () => {
  it('keeps the same ones as in memory when a URI comes again within a batch and across batches, undated or at one time', () => {
    const all = new LastChanges();
    const few = new LastChanges(5);
    let seq = 0;
    for (let i = 0; i < 2_345; i++) {
      // 97 URIs, each many times over; times that go back and forth, equal ones, undated ones.
      const uri = `http://127.0.0.1/r/${(i * 31) % 97}`;
      const ms = i % 17 === 0 ? null : 1_000 + ((i * 7) % 5) * 10;
      const change: Timed = { entry: entry(uri, 'updated', { lastmod: `v${i}` }), ms, seq: seq++ };
      all.offer(change);
      few.offer(change);
      if (i === 1_000) expect(few.size).toBe(all.size);
    }
    expect(few.spilled).toBe(true);
    expect(few.size).toBe(97);
    expect([...few.ordered()]).toEqual([...all.ordered()]);
    expect([...few.times()].map((t) => [t.entry.loc, t.ms])).toEqual([...all.times()].map((t) => [t.entry.loc, t.ms]));
    few.close();
    all.close();
  });
});

describe('an incremental sync of more URIs than it holds in memory', () => {
  let fixture: FixtureSource;
  beforeEach(async () => {
    fixture = await startFixtureSource({ resources: 20, changeListSize: 6 });
  });
  afterEach(async () => {
    await fixture.close();
  });

  function files(dest: string): Record<string, string> {
    const out: Record<string, string> = {};
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        if (name === '.resourcesync') continue;
        const p = join(dir, name);
        if (statSync(p).isDirectory()) walk(p);
        else out[relative(dest, p)] = readFileSync(p, 'latin1');
      }
    };
    walk(dest);
    return out;
  }

  it('applies the same last changes, in the same order, to the same checkpoint', async () => {
    const a = mkdtempSync(join(tmpdir(), 'last-changes-a-'));
    const b = mkdtempSync(join(tmpdir(), 'last-changes-b-'));
    const run = (dest: string, o: Partial<SyncOptions> = {}) => sync({ url: fixture.url + fixture.paths.dataset1.capabilityList, dest, timeoutMs: 2_000, deletePolicy: 'delete', ...o });
    await run(a);
    await run(b);
    // Across several Change Lists of the index: a resource changed more than once, created then deleted, deleted.
    for (const id of [1, 2, 3, 1, 4, 2, 1]) fixture.change('update', 1, id);
    const [created] = fixture.change('create');
    fixture.change('update', 1, created.id);
    fixture.change('delete', 1, 5);
    fixture.change('delete', 1, created.id);
    fixture.change('update', 1, 6);
    made.length = 0;
    const bounded = await run(a, { mode: 'incremental', inMemoryUris: 2 });
    expect(made.some((m) => m.spilled)).toBe(true);
    const held = await run(b, { mode: 'incremental' });
    expect(bounded).toMatchObject({ mode: 'incremental', failed: 0 });
    const counts = (r: typeof held) => ({ created: r.created, updated: r.updated, deleted: r.deleted, unchanged: r.unchanged, failed: r.failed });
    expect(counts(bounded)).toEqual(counts(held));
    expect(bounded.checkpoint).toBe(held.checkpoint);
    expect(files(a)).toEqual(files(b));
    const state = new MirrorState(stateDirOf(a));
    try {
      expect(state.get(fixture.state.locOf(5))).toBeNull();
      expect(state.get(fixture.state.locOf(created.id))).toBeNull();
    } finally {
      state.close();
    }
  });
});
