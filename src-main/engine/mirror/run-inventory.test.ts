// RunInventory answers a run's lookups from memory when the inventory was empty at the start: the answers must be the
// ones MirrorState gives (compared step by step with real SQLite), clashes still found across durable batches.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PathClaims } from './local-path.ts';
import { RunInventory } from './run-inventory.ts';
import { MirrorState, type InventoryRow } from './state.ts';

const row = (uri: string, path: string): InventoryRow => ({
  uri,
  path,
  length: 1,
  digests: {},
  lastmod: null,
  etag: null,
  lastModified: null,
  type: null,
  status: 'verified',
  verifiedAt: null,
  runId: 1,
});

const open: MirrorState[] = [];
const newState = () => {
  const state = new MirrorState(join(mkdtempSync(join(tmpdir(), 'run-inventory-')), '.resourcesync'));
  open.push(state);
  return state;
};
afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

// Paths that clash in every way PathClaims knows: case only, a file where a folder is needed and the reverse, alternates.
const WANTED: [string, string][] = [
  ['h/Readme', 'http://h/Readme'],
  ['h/a', 'http://h/a'],
  ['h/x/y', 'http://h/x/y'],
  ['h/README', 'http://h/README'],
  ['h/a/b', 'http://h/a/b'],
  ['h/X', 'http://h/X'],
  ['h/readme', 'http://h/readme'],
  ['h/A/c', 'http://h/A/c'],
  ['h/x/Y', 'http://h/x/Y'],
  ['h/Readme%~2', 'http://h/Readme%25~2'],
  ['h/free', 'http://h/free'],
  ['h/x', 'http://h/x'],
];

/**
 * One run: claims each wanted path, records rows in batches of `batch` (as the Applier commits them), and gives every
 * answer it saw. `store` is what PathClaims and the row lookups ask.
 */
function runOnce(state: MirrorState, view: RunInventory | null, batch: number): unknown[] {
  const claims = new PathClaims(view ?? state);
  view?.attach(claims);
  const get = (uri: string) => (view ? view.get(uri) : state.get(uri));
  const seen: unknown[] = [];
  let pending: InventoryRow[] = [];
  const commit = () => {
    state.transaction(() => {
      for (const r of pending) {
        state.put(r);
        view?.recorded(r.uri, r.path);
      }
    });
    pending = [];
  };
  for (const [wanted, uri] of [...WANTED, ...WANTED]) {
    const before = get(uri);
    const path = before ? before.path : claims.claim(wanted, uri);
    seen.push([uri, before?.path ?? null, path]);
    if (!before && !pending.some((r) => r.uri === uri)) pending.push(row(uri, path));
    if (pending.length >= batch) commit();
  }
  commit();
  return seen;
}

describe('RunInventory', () => {
  it('in a fresh inventory, gives the answers the database gives, whatever the batch size', () => {
    for (const batch of [1, 2, 3, 5, 100]) {
      const reference = runOnce(newState(), null, batch);
      const state = newState();
      const view = new RunInventory(state);
      expect(view.fresh).toBe(true);
      expect(runOnce(state, view, batch)).toEqual(reference);
      // Every path distinct, case-folded too: clashes were found across batches.
      const paths = [...state.rows()].map((r) => r.path.toLowerCase());
      expect(new Set(paths).size).toBe(paths.length);
      expect(paths.length).toBe(WANTED.length);
    }
  });

  it('past its bound, its claims forget what the database holds and the answers stay the same, whatever the batch size', () => {
    for (const batch of [1, 2, 3, 5, 100]) {
      const reference = runOnce(newState(), null, batch);
      for (const max of [0, 1, 2, 5]) {
        const state = newState();
        const view = new RunInventory(state, max);
        expect(runOnce(state, view, batch), `batches of ${batch}, ${max} remembered`).toEqual(reference);
        expect(view.fresh).toBe(false);
      }
    }
  });

  it('at its bound, keeps the claims of resources still in flight (not in the database yet)', () => {
    const state = newState();
    const view = new RunInventory(state, 1);
    const claims = new PathClaims(view);
    view.attach(claims);
    const commit = (uri: string, path: string) =>
      state.transaction(() => {
        state.put(row(uri, path));
        view.recorded(uri, path);
      });
    commit('http://h/a', claims.claim('h/a', 'http://h/a'));
    // Claimed, its download not done: no row yet.
    expect(claims.claim('h/b', 'http://h/b')).toBe('h/b');
    commit('http://h/c', claims.claim('h/c', 'http://h/c'));
    expect(view.fresh).toBe(false);
    expect(claims.size).toBe(1);
    expect(claims.claim('h/B', 'http://h/B')).toBe('h/B%~0000002');
    expect(claims.claim('h/A', 'http://h/A')).toBe('h/A%~0000002');
  });

  it('in an inventory that held rows, the claims of new paths are forgotten once their rows are committed', () => {
    const state = newState();
    state.transaction(() => state.put(row('http://h/old', 'h/old')));
    const view = new RunInventory(state);
    const claims = new PathClaims(view);
    view.attach(claims);
    expect(claims.claim('h/new', 'http://h/new')).toBe('h/new');
    expect(claims.size).toBe(1);
    state.transaction(() => {
      state.put(row('http://h/new', 'h/new'));
      view.recorded('http://h/new', 'h/new');
    });
    expect(claims.size).toBe(0);
    // Asked of the database now: the same answers.
    expect(claims.claim('h/NEW', 'http://h/NEW')).toBe('h/NEW%~0000002');
    expect(claims.claim('h/new/x', 'http://h/new/x')).toBe('h/new%dir/x');
  });

  it('finds the rows this run recorded, and asks the database for them', () => {
    const state = newState();
    const view = new RunInventory(state);
    expect(view.get('http://h/a')).toBeNull();
    state.transaction(() => state.put(row('http://h/a', 'h/a')));
    view.recorded('http://h/a', 'h/a');
    expect(view.get('http://h/a')).toMatchObject({ uri: 'http://h/a', path: 'h/a' });
    expect(view.fresh).toBe(true);
  });

  it('asks the database when the inventory held rows at the start', () => {
    const state = newState();
    state.transaction(() => state.put(row('http://h/a', 'h/a')));
    const view = new RunInventory(state);
    expect(view.fresh).toBe(false);
    expect(view.get('http://h/a')).toMatchObject({ path: 'h/a' });
    expect(view.fileByKey('h/a')).toEqual({ uri: 'http://h/a', path: 'h/a' });
    expect(view.hasUnder('h')).toBe(true);
    expect(new PathClaims(view).claim('h/A', 'http://h/A')).toBe('h/A%~0000002');
  });

  it('asks the database for paths once a row was removed in this run', () => {
    const state = newState();
    const view = new RunInventory(state);
    state.transaction(() => state.put(row('http://h/a/b', 'h/a/b')));
    view.recorded('http://h/a/b', 'h/a/b');
    expect(view.hasUnder('h/a')).toBe(false);
    view.removed();
    expect(view.hasUnder('h/a')).toBe(true);
    expect(view.fileByKey('h/a/b')).toEqual({ uri: 'http://h/a/b', path: 'h/a/b' });
  });

  it('stops remembering past its bound and asks the database from then on', () => {
    const state = newState();
    const view = new RunInventory(state, 2);
    for (const uri of ['http://h/1', 'http://h/2', 'http://h/3']) {
      state.transaction(() => state.put(row(uri, uri.slice(7))));
      view.recorded(uri, uri.slice(7));
    }
    expect(view.fresh).toBe(false);
    expect(view.get('http://h/3')).toMatchObject({ path: 'h/3' });
    expect(view.fileByKey('h/3')).toEqual({ uri: 'http://h/3', path: 'h/3' });
  });
});
