// The last change per URI of the Change Lists an incremental sync reads (core spec §12: only the last change of a
// resource matters), given back in forward chronological order. A Map while they are few: an incremental of a few
// thousand changes pays nothing more. Past MAX_IN_MEMORY URIs they move to a private temporary SQLite database (on
// disk, deleted when closed), as the URIs a baseline lists do (listed-uris.ts): held in the heap, each change kept
// its entry and the parser's text it was sliced from, and a Change List Index of millions of changes grew without bound.
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { Entry } from '../documents/model.ts';
import { compareChanges, type Timed } from './change-timeline.ts';
import { MAX_IN_MEMORY } from './listed-uris.ts';

/** Stands for "undated, nothing dated before it" (compareChanges' -Infinity) in the database, which sorts it first. */
const UNDATED = -Number.MAX_VALUE;

/**
 * Changes written to the database by one statement: a call into SQLite per change was most of what a spilled change
 * cost beyond making its JSON. Within one statement the rows go in the order given, so a URI twice in a batch is kept
 * as compareChanges says, as when written one by one.
 */
const BATCH = 100;

export class LastChanges {
  #map: Map<string, Timed> | null = new Map();
  #sorted: Timed[] | null = null;
  #db: DatabaseSync | null = null;
  /** Writes BATCH changes (upsert). */
  #write: StatementSync | null = null;
  /** The parameters of the changes not yet written, BATCH at most. */
  #batch: (string | number)[] = [];
  /** URIs with a change: counted in memory, then asked of the database (null: ask it again). */
  #size: number | null = 0;
  /** Writes since the open transaction began (a commit per change would cost a journal write each). */
  #pending = 0;
  readonly #max: number;

  constructor(max = MAX_IN_MEMORY) {
    this.#max = max;
  }

  /** How many URIs have a change. */
  get size(): number {
    if (this.#size === null) {
      this.#flush();
      this.#size = Number((this.#db!.prepare('SELECT count(*) AS n FROM changes').get() as { n: number }).n);
    }
    return this.#size;
  }

  /** Whether the changes moved to the temporary database (past the bound). */
  get spilled(): boolean {
    return this.#db !== null;
  }

  /** Keeps `change` when it is the first of its URI or later than the one kept (by time; reading order among equals). */
  offer(change: Timed): void {
    this.#sorted = null;
    if (this.#map !== null) {
      const uri = change.entry.loc;
      const prior = this.#map.get(uri);
      if (prior !== undefined) {
        if (compareChanges(change, prior) > 0) this.#map.set(uri, change);
        return;
      }
      if (this.#map.size < this.#max) {
        this.#map.set(uri, change);
        this.#size!++;
        return;
      }
      this.#spill();
    }
    this.#store(change);
  }

  /** The changes kept, in forward chronological order (compareChanges). */
  *ordered(): Generator<Timed> {
    if (this.#map !== null) {
      this.#sorted ??= [...this.#map.values()].sort(compareChanges);
      yield* this.#sorted;
      return;
    }
    this.#flush();
    const rows = this.#db!.prepare('SELECT ms, seq, entry FROM changes ORDER BY ms, seq').iterate() as Iterable<{ ms: number; seq: number; entry: string }>;
    for (const r of rows) yield { entry: JSON.parse(r.entry) as Entry, ms: r.ms === UNDATED ? null : r.ms, seq: r.seq };
  }

  /** Each URI kept (its `entry.loc`) with the time of its change, in the same order: no entry read back from disk. */
  *times(): Generator<{ entry: { loc: string }; ms: number | null }> {
    if (this.#map !== null) {
      yield* this.ordered();
      return;
    }
    this.#flush();
    const rows = this.#db!.prepare('SELECT uri, ms FROM changes ORDER BY ms, seq').iterate() as Iterable<{ uri: string; ms: number }>;
    for (const r of rows) yield { entry: { loc: r.uri }, ms: r.ms === UNDATED ? null : r.ms };
  }

  close(): void {
    this.#map = null;
    this.#sorted = null;
    if (this.#db?.isOpen) this.#db.close();
  }

  /** Adds `c` to the batch, which is written once full. */
  #store(c: Timed): void {
    this.#size = null;
    this.#batch.push(c.entry.loc, c.ms ?? UNDATED, c.seq, JSON.stringify(c.entry));
    if (this.#batch.length === BATCH * 4) this.#writeBatch();
  }

  #writeBatch(): void {
    if (this.#pending >= 10_000) this.#commit();
    if (this.#pending === 0) this.#db!.exec('BEGIN');
    const rows = this.#batch.length / 4;
    this.#pending += rows;
    (rows === BATCH ? this.#write! : upsert(this.#db!, rows)).run(...this.#batch);
    this.#batch = [];
  }

  /** Everything offered is in the database, committed. */
  #flush(): void {
    if (this.#batch.length > 0) this.#writeBatch();
    this.#commit();
  }

  #spill(): void {
    const db = new DatabaseSync('');
    db.exec(`
      PRAGMA journal_mode = OFF;
      PRAGMA synchronous = OFF;
      CREATE TABLE changes (uri TEXT PRIMARY KEY, ms REAL NOT NULL, seq INTEGER NOT NULL, entry TEXT NOT NULL) WITHOUT ROWID;
    `);
    this.#db = db;
    this.#write = upsert(db, BATCH);
    for (const c of this.#map!.values()) this.#store(c);
    this.#map = null;
  }

  #commit(): void {
    if (this.#pending === 0) return;
    this.#pending = 0;
    this.#db!.exec('COMMIT');
  }
}

/**
 * Writes `rows` changes: a URI's first, or one later than the one kept (by time; reading order only grows, so a later
 * change of the same time replaces it, as compareChanges says).
 */
function upsert(db: DatabaseSync, rows: number): StatementSync {
  return db.prepare(
    `INSERT INTO changes (uri, ms, seq, entry) VALUES ${Array(rows).fill('(?, ?, ?, ?)').join(', ')} ` +
      'ON CONFLICT (uri) DO UPDATE SET ms = excluded.ms, seq = excluded.seq, entry = excluded.entry WHERE excluded.ms >= changes.ms',
  );
}
