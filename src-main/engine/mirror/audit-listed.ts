// What the Source lists, as an audit compares it with the mirror: every listed URI with its lastmod and rs:md, and the
// local paths the listed resources hold. Kept in a private temporary SQLite database (on disk, deleted when closed), not
// in the heap, so that an audit's memory does not grow with the Source: for 200,000 listed resources the Map and Set
// that held them cost ~80 MB of peak RSS (287 MB against 205 MB), and the audit took 4.6 s against 5.5 s now.
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { Entry } from '../documents/model.ts';
import { canonicalUri } from './uri.ts';

export type Listed = Pick<Entry, 'loc' | 'lastmod' | 'md'>;

export type FoundStatus = 'missing' | 'extra' | 'changed' | 'unverifiable' | 'kept';
export interface Found {
  item: string;
  reason: string | null;
}

/** Rows written in one transaction (a commit per row would cost a journal write each). */
const BATCH = 10_000;
/** Entries read back at a time. */
const PAGE = 1_000;

export class ListedResources {
  #db = new DatabaseSync('');
  #upsert: StatementSync;
  #insert: StatementSync;
  #delete: StatementSync;
  #has: StatementSync;
  #page: StatementSync;
  #addPath: StatementSync;
  #hasPath: StatementSync;
  #found: StatementSync;
  #foundPage: StatementSync;
  #damaged: StatementSync;
  #damagedPage: StatementSync;
  #seq = 0;
  #foundSeq = 0;
  #pending = 0;

  constructor() {
    this.#db.exec(`
      PRAGMA journal_mode = OFF;
      PRAGMA synchronous = OFF;
      CREATE TABLE listed (uri TEXT PRIMARY KEY, seq INTEGER NOT NULL, entry TEXT NOT NULL) WITHOUT ROWID;
      CREATE INDEX listed_seq ON listed (seq);
      CREATE TABLE paths (path TEXT PRIMARY KEY) WITHOUT ROWID;
      CREATE TABLE found (status TEXT NOT NULL, seq INTEGER NOT NULL, item TEXT NOT NULL, reason TEXT, PRIMARY KEY (status, seq)) WITHOUT ROWID;
      CREATE TABLE damaged (seq INTEGER PRIMARY KEY, uri TEXT NOT NULL);
    `);
    // A URI listed again keeps its first place and takes its last description, as Map.set did.
    this.#upsert = this.#db.prepare('INSERT INTO listed (uri, seq, entry) VALUES (?, ?, ?) ON CONFLICT (uri) DO UPDATE SET entry = excluded.entry');
    this.#insert = this.#db.prepare('INSERT INTO listed (uri, seq, entry) VALUES (?, ?, ?) ON CONFLICT (uri) DO NOTHING');
    this.#delete = this.#db.prepare('DELETE FROM listed WHERE uri = ?');
    this.#has = this.#db.prepare('SELECT 1 AS found FROM listed WHERE uri = ?');
    this.#page = this.#db.prepare('SELECT seq, entry FROM listed WHERE seq > ? ORDER BY seq LIMIT ?');
    this.#addPath = this.#db.prepare('INSERT OR IGNORE INTO paths (path) VALUES (?)');
    this.#hasPath = this.#db.prepare('SELECT 1 AS found FROM paths WHERE path = ?');
    this.#found = this.#db.prepare('INSERT INTO found (status, seq, item, reason) VALUES (?, ?, ?, ?)');
    this.#foundPage = this.#db.prepare('SELECT seq, item, reason FROM found WHERE status = ? AND seq > ? ORDER BY seq LIMIT ?');
    this.#damaged = this.#db.prepare('INSERT INTO damaged (uri) VALUES (?)');
    this.#damagedPage = this.#db.prepare('SELECT seq, uri FROM damaged WHERE seq > ? ORDER BY seq LIMIT ?');
  }

  // URIs by the form the mirror keeps them in (uri.ts), as a sync knows them.
  /** A change to a listed resource: its description replaces the one listed before. */
  set(entry: Entry | Listed): void {
    this.#write();
    const loc = canonicalUri(entry.loc);
    this.#upsert.run(loc, ++this.#seq, JSON.stringify({ loc, lastmod: entry.lastmod, md: entry.md }));
  }

  /**
   * An entry of the Resource List: a URI it lists again keeps its first description, as a sync takes it (sync.ts
   * passes over the repeats). Otherwise a Source that lists a URI twice with two hashes had the audit compare the
   * copy a sync verified against the other hash, and say "changed" after every sync.
   */
  add(entry: Entry | Listed): void {
    this.#write();
    const loc = canonicalUri(entry.loc);
    this.#insert.run(loc, ++this.#seq, JSON.stringify({ loc, lastmod: entry.lastmod, md: entry.md }));
  }

  delete(uri: string): void {
    this.#write();
    this.#delete.run(canonicalUri(uri));
  }

  has(uri: string): boolean {
    this.#commit();
    return this.#has.get(canonicalUri(uri)) !== undefined;
  }

  /** Every listed resource, in the order first listed; read a page at a time (the caller may await between them). */
  *entries(): Generator<Listed> {
    this.#commit();
    let after = 0;
    for (;;) {
      const rows = this.#page.all(after, PAGE) as { seq: number; entry: string }[];
      for (const row of rows) yield JSON.parse(row.entry) as Listed;
      if (rows.length < PAGE) return;
      after = rows.at(-1)!.seq;
    }
  }

  /** A local path that a listed resource holds (not extra). */
  addPath(path: string): void {
    this.#write();
    this.#addPath.run(path);
  }

  hasPath(path: string): boolean {
    this.#commit();
    return this.#hasPath.get(path) !== undefined;
  }

  // What the audit found not in sync, kept here rather than in the heap: a mirror far out of step with its Source has
  // as many differences as resources (a million missing URIs held as strings cost ~200 MB more peak RSS).
  /** A difference, kept in the order found. */
  addFound(status: FoundStatus, item: string, reason: string | null = null): void {
    this.#write();
    this.#found.run(status, ++this.#foundSeq, item, reason);
  }

  /** The differences of one kind, in the order found; at most `limit` of them. */
  *found(status: FoundStatus, limit = Infinity): Generator<Found> {
    this.#commit();
    let after = 0;
    let left = limit;
    while (left > 0) {
      const rows = this.#foundPage.all(status, after, Math.min(PAGE, left)) as { seq: number; item: string; reason: string | null }[];
      for (const row of rows) yield { item: row.item, reason: row.reason };
      if (rows.length < PAGE) return;
      left -= rows.length;
      after = rows.at(-1)!.seq;
    }
  }

  /** A listed URI whose local copy is no longer what was verified (the next sync fetches it again). */
  addDamaged(uri: string): void {
    this.#write();
    this.#damaged.run(uri);
  }

  /** The damaged URIs, `PAGE` at a time. */
  *damaged(): Generator<string[]> {
    this.#commit();
    let after = 0;
    for (;;) {
      const rows = this.#damagedPage.all(after, PAGE * 10) as { seq: number; uri: string }[];
      if (rows.length > 0) yield rows.map((r) => r.uri);
      if (rows.length < PAGE * 10) return;
      after = rows.at(-1)!.seq;
    }
  }

  close(): void {
    if (this.#db.isOpen) this.#db.close();
  }

  #write(): void {
    if (this.#pending >= BATCH) this.#commit();
    if (this.#pending++ === 0) this.#db.exec('BEGIN');
  }

  #commit(): void {
    if (this.#pending === 0) return;
    this.#pending = 0;
    this.#db.exec('COMMIT');
  }
}
