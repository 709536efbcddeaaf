import type { DatabaseSync, StatementSync } from 'node:sqlite';

/**
 * Statements prepared once per connection, found by their SQL: preparing costs more than running the small ones, and
 * a burst of notifications runs several per delivery. For get, all and run only: a statement shared this way and left
 * half-read by iterate() would be reset by its next use.
 */
export class Statements {
  readonly #db: DatabaseSync;
  readonly #prepared = new Map<string, StatementSync>();

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  get(sql: string): StatementSync {
    let stmt = this.#prepared.get(sql);
    if (stmt === undefined) {
      stmt = this.#db.prepare(sql);
      this.#prepared.set(sql, stmt);
    }
    return stmt;
  }
}
