// The URIs a baseline read from the Source's lists: to pass over a URI listed twice, and to tell afterwards which
// resources of the inventory the Source no longer lists. A Set while they are few (a baseline of small lists pays
// nothing more); past MAX_IN_MEMORY they move to a private temporary SQLite database (on disk, deleted when closed).
// Held in the heap, 200,000 URIs kept ~60 MB and the text of the lists they were read from alive (each URI a slice of
// the parser's 64 KB chunk): at the millions of resources of an archive that was gigabytes.
import { DatabaseSync, type StatementSync } from 'node:sqlite';

/** URIs held in the heap before they move to the temporary database. */
export const MAX_IN_MEMORY = 100_000;

export class ListedUris {
  #set: Set<string> | null = new Set();
  #db: DatabaseSync | null = null;
  #insert: StatementSync | null = null;
  #has: StatementSync | null = null;
  #size = 0;
  /** Inserts since the open transaction began (a commit per URI would cost a journal write each). */
  #pending = 0;
  readonly #max: number;

  constructor(max = MAX_IN_MEMORY) {
    this.#max = max;
  }

  /** How many distinct URIs were added. */
  get size(): number {
    return this.#size;
  }

  /** Whether the URIs moved to the temporary database (past the bound). */
  get spilled(): boolean {
    return this.#db !== null;
  }

  /** Adds a URI; false when it was added before. */
  add(uri: string): boolean {
    if (this.#set !== null) {
      if (this.#set.has(uri)) return false;
      if (this.#set.size < this.#max) {
        this.#set.add(uri);
        this.#size++;
        return true;
      }
      this.#spill();
    }
    this.#write();
    const added = this.#insert!.run(uri).changes > 0;
    if (added) this.#size++;
    return added;
  }

  has(uri: string): boolean {
    if (this.#set !== null) return this.#set.has(uri);
    this.#commit();
    return this.#has!.get(uri) !== undefined;
  }

  close(): void {
    this.#set = null;
    if (this.#db?.isOpen) this.#db.close();
  }

  #spill(): void {
    const db = new DatabaseSync('');
    db.exec(`
      PRAGMA journal_mode = OFF;
      PRAGMA synchronous = OFF;
      CREATE TABLE listed (uri TEXT PRIMARY KEY) WITHOUT ROWID;
    `);
    this.#db = db;
    this.#insert = db.prepare('INSERT INTO listed (uri) VALUES (?) ON CONFLICT (uri) DO NOTHING');
    this.#has = db.prepare('SELECT 1 AS found FROM listed WHERE uri = ?');
    for (const uri of this.#set!) {
      this.#write();
      this.#insert.run(uri);
    }
    this.#set = null;
  }

  #write(): void {
    if (this.#pending >= 10_000) this.#commit();
    if (this.#pending++ === 0) this.#db!.exec('BEGIN');
  }

  #commit(): void {
    if (this.#pending === 0) return;
    this.#pending = 0;
    this.#db!.exec('COMMIT');
  }
}
