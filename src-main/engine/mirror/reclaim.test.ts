// A mirror's state gives back the space of what it no longer holds: a new state is INCREMENTAL and hands its free
// pages back in small steps; one made before is converted once by a VACUUM when that is cheap and the disk has room.
import { mkdirSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { startFixtureSource } from '../../../e2e/fixture-source/index.ts';
import { convertState, INCREMENTAL, reclaimSpace, stateSpace, tidyState } from './reclaim.ts';
import { MirrorState, STATE_FILE, stateDirOf, WAL_KEEP_BYTES, type InventoryRow } from './state.ts';
import { sync } from './sync.ts';

function row(i: number): InventoryRow {
  const p = String(i).padStart(6, '0');
  return {
    uri: `https://example.org/items/${p}/data.json`,
    path: `example.org/items/${p}/data.json`,
    length: 2048,
    digests: { md5: 'd41d8cd98f00b204e9800998ecf8427e' },
    lastmod: '2024-01-01T00:00:00Z',
    etag: null,
    lastModified: null,
    type: 'application/json',
    status: 'verified',
    verifiedAt: '2024-01-01T00:00:00Z',
    runId: 1,
  };
}

/** A state with `n` rows of which all but a tenth are then deleted, the WAL emptied. */
function shrunk(state: MirrorState, n: number): void {
  for (let i = 0; i < n; i += 5_000) state.transaction(() => { for (let j = i; j < Math.min(n, i + 5_000); j++) state.put(row(j)); });
  state.transaction(() => { for (let j = 0; j < n * 0.9; j++) state.remove(row(j).uri); });
  state.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
}

/** A state made as before this change: auto_vacuum NONE. */
function legacyDir(): string {
  const stateDir = stateDirOf(mkdtempSync(join(tmpdir(), 'reclaim-')));
  mkdirSync(stateDir, { recursive: true });
  const db = new DatabaseSync(join(stateDir, STATE_FILE));
  db.exec('CREATE TABLE made_before (x)');
  db.exec('DROP TABLE made_before');
  db.close();
  return stateDir;
}

/** A live subscription of the mirror, in `status`. */
function subscribe(state: MirrorState, status: string): void {
  state.db
    .prepare("INSERT INTO live_subscriptions (topic, hub, callback_token, callback_url, status, created_at) VALUES ('http://127.0.0.1:1/cl.xml', 'http://127.0.0.1:2/hub', 't', 'http://127.0.0.1:3/cb/t', ?, '2026-01-01T00:00:00Z')")
    .run(status);
}

describe("a mirror state's free space", () => {
  it('a new state hands its free pages back in small steps, the event loop free between them', async () => {
    const state = new MirrorState(stateDirOf(mkdtempSync(join(tmpdir(), 'reclaim-'))));
    expect(stateSpace(state.db).autoVacuum).toBe(INCREMENTAL);
    shrunk(state, 20_000);
    const before = statSync(state.path).size;
    const free = stateSpace(state.db).freePages;
    expect(free).toBeGreaterThan(500);
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    const given = await reclaimSpace(state.db, { pages: 32 });
    clearInterval(ticker);
    expect(given).toBe(free * 4096);
    expect(turns).toBeGreaterThan(free / 32 / 2);
    expect(stateSpace(state.db).freePages).toBe(0);
    expect(statSync(state.path).size).toBeLessThan(before / 3);
    // The steps went without an fsync each; the connection's own commits are durable again (FULL).
    expect(state.db.prepare('PRAGMA synchronous').get()).toEqual({ synchronous: 2 });
    expect(state.inventoryCount()).toBe(2_000);
    expect(state.get(row(19_999).uri)?.path).toBe(row(19_999).path);
    state.close();
  });

  it('stops when its time is up or the caller stops, and goes on next time', async () => {
    const state = new MirrorState(stateDirOf(mkdtempSync(join(tmpdir(), 'reclaim-'))));
    shrunk(state, 10_000);
    const free = stateSpace(state.db).freePages;
    // Asked once before it begins, then before each step: three steps.
    let asked = 0;
    expect(await reclaimSpace(state.db, { pages: 8, stopped: () => ++asked > 4 })).toBe(3 * 8 * 4096);
    expect(await reclaimSpace(state.db, { pages: 8, budgetMs: 0 })).toBe(0);
    expect(stateSpace(state.db).freePages).toBe(free - 24);
    expect(await reclaimSpace(state.db)).toBe((free - 24) * 4096);
    state.close();
  });

  it('waits while a transaction is open on the connection instead of joining it', async () => {
    const state = new MirrorState(stateDirOf(mkdtempSync(join(tmpdir(), 'reclaim-'))));
    shrunk(state, 5_000);
    state.db.exec('BEGIN IMMEDIATE');
    state.put(row(999_999));
    const reclaiming = reclaimSpace(state.db, { pages: 8 });
    await new Promise((r) => setTimeout(r, 20));
    state.db.exec('ROLLBACK');
    await reclaiming;
    expect(state.get(row(999_999).uri)).toBeNull();
    expect(stateSpace(state.db).freePages).toBe(0);
    state.close();
  });

  it('does not stand waiting seconds to empty the WAL while another connection reads', async () => {
    const state = new MirrorState(stateDirOf(mkdtempSync(join(tmpdir(), 'reclaim-'))));
    shrunk(state, 5_000);
    // A reader that stays (a sync, an audit, a database tool): the checkpoint cannot empty the WAL past it.
    const reader = new DatabaseSync(state.path);
    reader.exec('BEGIN');
    reader.prepare('SELECT COUNT(*) AS n FROM inventory').get();
    const free = stateSpace(state.db).freePages;
    const t0 = performance.now();
    expect(await reclaimSpace(state.db, { pages: 64 })).toBe(free * 4096);
    // The busy timeout (5 s) before.
    expect(performance.now() - t0).toBeLessThan(3_000);
    expect(state.db.prepare('PRAGMA busy_timeout').get()).toEqual({ timeout: 5_000 });
    reader.exec('COMMIT');
    reader.close();
    state.close();
  });

  it('converts a state made before once, by a VACUUM on another thread, keeping every row', async () => {
    const stateDir = legacyDir();
    const state = new MirrorState(stateDir);
    expect(stateSpace(state.db).autoVacuum).toBe(0);
    shrunk(state, 20_000);
    const before = statSync(state.path).size;
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    expect(await convertState(state.db, state.path)).toBe('converted');
    clearInterval(ticker);
    expect(stateSpace(state.db)).toMatchObject({ autoVacuum: INCREMENTAL, freePages: 0 });
    expect(statSync(state.path).size).toBeLessThan(before / 3);
    expect(state.inventoryCount()).toBe(2_000);
    expect(state.get(row(19_999).uri)?.path).toBe(row(19_999).path);
    // Once: converted, it is left as it is.
    expect(await convertState(state.db, state.path)).toBe('incremental');
    state.close();
  });

  it('converts a state made before however large, unless a live subscription may write to it meanwhile', async () => {
    const state = new MirrorState(legacyDir());
    shrunk(state, 20_000);
    const { pages, freePages, pageSize } = stateSpace(state.db);
    const used = (pages - freePages) * pageSize;
    // The limit made small: the same as a state over 64 MB, in a moment. (A 282 MB state by hand: 6.4 s, +16 MB resident.)
    const maxBytes = used - 1;
    subscribe(state, 'active');
    expect(await convertState(state.db, state.path, { maxBytes })).toBe('too-large');
    state.db.exec("UPDATE live_subscriptions SET status = 'unsubscribed'");
    expect(await convertState(state.db, state.path, { maxBytes })).toBe('converted');
    expect(stateSpace(state.db)).toMatchObject({ autoVacuum: INCREMENTAL, freePages: 0 });
    expect(state.inventoryCount()).toBe(2_000);
    state.close();
  });

  it('leaves a state made before as it is when the disk has no room for the rewrite, and says so when it matters', async () => {
    const state = new MirrorState(legacyDir());
    shrunk(state, 20_000);
    const before = statSync(state.path).size;
    const notes: string[] = [];
    expect(await convertState(state.db, state.path, { freeBytes: () => 1_000_000, onNote: (m) => notes.push(m) })).toBe('no-room');
    // 5 MB free pages: not worth a word.
    expect(notes).toEqual([]);
    expect(statSync(state.path).size).toBe(before);
    expect(stateSpace(state.db).autoVacuum).toBe(0);
    // Over the size a live subscription's writers could wait for, with one on.
    subscribe(state, 'active');
    expect(await convertState(state.db, state.path, { maxBytes: 100_000 })).toBe('too-large');
    // Inside a transaction: never.
    state.db.exec('BEGIN');
    expect(await convertState(state.db, state.path)).toBe('busy');
    state.db.exec('ROLLBACK');
    // tidyState goes on without it: nothing to hand back in this mode, nothing thrown.
    await tidyState(state.db, state.path, { freeBytes: () => 0 });
    expect(statSync(state.path).size).toBe(before);
    expect(state.inventoryCount()).toBe(2_000);
    state.close();
  });

  it('a sync that deletes most of a mirror leaves its state without free pages, under the lock, before it returns', async () => {
    const fixture = await startFixtureSource({ resources: 400, changeListSize: 1_000 });
    try {
      const dest = mkdtempSync(join(tmpdir(), 'reclaim-sync-'));
      const run = () => sync({ url: fixture.url + fixture.paths.dataset1.capabilityList, dest, deletePolicy: 'delete', timeoutMs: 5_000, proxyEnv: {} });
      await run();
      fixture.change('delete', 380);
      const result = await run();
      expect(result.deleted).toBe(380);
      const state = MirrorState.forReading(stateDirOf(dest));
      expect(state.inventoryCount()).toBe(20);
      expect(stateSpace(state.db)).toMatchObject({ autoVacuum: INCREMENTAL, freePages: 0 });
      state.close();
    } finally {
      await fixture.close();
    }
  });

  it('cuts its WAL back once emptied, after it grew while a reader held its snapshot', () => {
    const state = new MirrorState(stateDirOf(mkdtempSync(join(tmpdir(), 'reclaim-'))));
    const reader = new DatabaseSync(state.path);
    reader.exec('BEGIN');
    reader.prepare('SELECT COUNT(*) AS n FROM inventory').get();
    for (let i = 0; i < 100_000; i += 5_000) state.transaction(() => { for (let j = i; j < i + 5_000; j++) state.put(row(j)); });
    expect(statSync(`${state.path}-wal`).size).toBeGreaterThan(WAL_KEEP_BYTES);
    reader.exec('COMMIT');
    reader.close();
    state.db.exec('PRAGMA wal_checkpoint(PASSIVE)');
    state.put(row(999_999));
    expect(statSync(`${state.path}-wal`).size).toBeLessThanOrEqual(WAL_KEEP_BYTES);
    state.close();
  });
});
