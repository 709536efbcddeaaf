// Versioned schema migrations. The schema version lives in SQLite's own `user_version` header field, which is
// written inside the same transaction as the migration: a crash mid-migration leaves the old version and schema.
import type { DatabaseSync } from 'node:sqlite';

export type Migration = (db: DatabaseSync) => void;

/** Ordered: migration i brings the schema from version i to version i + 1. Never edit one that has shipped. */
export const MIGRATIONS: readonly Migration[] = [
  (db) => {
    db.exec(`
      CREATE TABLE sources (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        start_url TEXT NOT NULL UNIQUE,
        source_description_url TEXT UNIQUE,
        capability_list_urls TEXT NOT NULL DEFAULT '[]',
        added_at TEXT NOT NULL
      );

      CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );

      -- url is NULL while a load is streaming its entries in; the finished load takes the url over in one
      -- transaction, so readers see either the old cached document or the new one, never a mix.
      CREATE TABLE documents (
        id INTEGER PRIMARY KEY,
        url TEXT UNIQUE,
        loading_url TEXT,
        fetched_at TEXT,
        summary TEXT,
        bytes INTEGER,
        content_type TEXT,
        head TEXT
      );

      CREATE TABLE entries (
        doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        loc TEXT NOT NULL,
        lastmod_ms REAL,
        datetime_ms REAL,
        length INTEGER,
        change TEXT,
        entry TEXT NOT NULL,
        PRIMARY KEY (doc_id, idx)
      ) WITHOUT ROWID;

      -- Sort indexes: (doc_id, key, idx) walks in either direction; change rides along so that a change
      -- filter is answered from the index alone.
      CREATE INDEX entries_by_loc ON entries (doc_id, loc, idx, change);
      CREATE INDEX entries_by_lastmod ON entries (doc_id, lastmod_ms, idx, change);
      CREATE INDEX entries_by_datetime ON entries (doc_id, datetime_ms, idx, change);
      CREATE INDEX entries_by_length ON entries (doc_id, length, idx, change);
      CREATE INDEX entries_by_change ON entries (doc_id, change, idx);
    `);
  },
  (db) => {
    // Which index lists which document, so a document reached through an index is checked against it
    // (capability, index and up links) whichever of the two was fetched first.
    db.exec(`
      CREATE TABLE index_parts (
        part_url TEXT NOT NULL,
        index_url TEXT NOT NULL,
        PRIMARY KEY (part_url, index_url)
      ) WITHOUT ROWID;
      CREATE INDEX index_parts_by_index ON index_parts (index_url);
    `);
  },
  (db) => {
    // The entries' shape (common loc prefix, fields present), found while they stream in: the UI picks its
    // columns from it without a pass over the entries. NULL for documents cached before: computed on first use.
    db.exec('ALTER TABLE documents ADD COLUMN shape TEXT');
  },
  (db) => {
    // A removed Source stays (marked) until the store is opened again, so that its removal can be undone with
    // the same id; its start URL and Source Description stay reserved for it meanwhile.
    db.exec('ALTER TABLE sources ADD COLUMN removed_at TEXT');
  },
  (db) => {
    // The mirrors the app remembers: a folder's path alone (its state lives in the folder) and how the app runs it.
    db.exec(`
      CREATE TABLE mirrors (
        path TEXT PRIMARY KEY,
        options TEXT NOT NULL DEFAULT '{}',
        added_at TEXT NOT NULL
      ) WITHOUT ROWID;
    `);
  },
];

export const SCHEMA_VERSION = MIGRATIONS.length;

export class SchemaTooNewError extends Error {
  readonly found: number;
  readonly known: number;
  constructor(path: string, found: number, known: number, advice = 'upgrade ResourceSync Desktop or use another data folder.') {
    super(`The database ${path} has schema version ${found}, but this version of ResourceSync Desktop only knows versions up to ${known}. It was written by a newer version; ${advice}`);
    this.found = found;
    this.known = known;
    this.name = 'SchemaTooNewError';
  }
}

export function schemaVersion(db: DatabaseSync): number {
  const row = db.prepare('PRAGMA user_version').get() as { user_version: number } | undefined;
  return Number(row?.user_version ?? 0);
}

/** Applies every pending migration, each in its own transaction. Idempotent. */
export function migrate(db: DatabaseSync, path: string, migrations: readonly Migration[] = MIGRATIONS): number {
  const current = schemaVersion(db);
  if (current > migrations.length) throw new SchemaTooNewError(path, current, migrations.length);
  for (let version = current; version < migrations.length; version++) {
    db.exec('BEGIN IMMEDIATE');
    try {
      // Re-read under the write lock: another process may have migrated in the meantime.
      if (schemaVersion(db) !== version) {
        db.exec('ROLLBACK');
        return migrate(db, path, migrations);
      }
      migrations[version]!(db);
      db.exec(`PRAGMA user_version = ${version + 1}`);
      db.exec('COMMIT');
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw error;
    }
  }
  return migrations.length;
}
