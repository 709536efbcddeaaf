// The embedded database: node:sqlite (no native module), WAL, foreign keys, versioned migrations.
import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { CONVERT_MAX_BYTES, roomToRewrite } from '../engine/mirror/reclaim.ts';
import { DocumentsTable } from './documents.ts';
import { migrate, SchemaTooNewError } from './migrations.ts';
import { Purger } from './purge.ts';
import type { SecretBox } from './secrets.ts';
import { MirrorsTable } from './mirrors.ts';
import { SettingsTable } from './settings.ts';
import { SourcesTable } from './sources.ts';

export type { CachedDocument, DocumentMeta, DocumentWriter, EntryQuery } from './documents.ts';
export type { NewSource } from './sources.ts';
export type { SecretBox } from './secrets.ts';
export { SCHEMA_VERSION, SchemaTooNewError } from './migrations.ts';

/** How long a write waits for another connection's write lock before it gives up. */
const BUSY_TIMEOUT_MS = 5_000;

export interface Store {
  readonly path: string;
  readonly sources: SourcesTable;
  readonly settings: SettingsTable;
  readonly documents: DocumentsTable;
  readonly mirrors: MirrorsTable;
  /** The schema version the database is at (after migrating). */
  readonly schemaVersion: number;
  /** Resolves when the background deletion of dropped documents is done (tests, diagnostics). */
  purged(): Promise<void>;
  /** Stops background work (before its next step) and closes the database. */
  close(): void;
}

/** Opens (creating and migrating as needed) the database at path; ':memory:' gives a private in-memory one. */
export function openStore(path: string, options: { secrets?: SecretBox; documentCacheBytes?: number; freeBytes?: (dir: string) => number } = {}): Store {
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(path, { enableForeignKeyConstraints: true, timeout: BUSY_TIMEOUT_MS });
  } catch (error) {
    throw explainStoreError(path, error);
  }
  try {
    useIncrementalVacuum(db, path, options.freeBytes);
    db.exec('PRAGMA journal_mode = WAL');
    // A WAL grown by a large load while the UI read kept that size until the app quit: cut back once emptied.
    db.exec('PRAGMA journal_size_limit = 16777216');
    db.exec('PRAGMA synchronous = NORMAL');
    db.exec('PRAGMA foreign_keys = ON');
    const schemaVersion = migrate(db, path);
    const purger = new Purger(db);
    const documents = new DocumentsTable(db, purger, { maxBytes: options.documentCacheBytes });
    documents.dropUnfinished();
    const sources = new SourcesTable(db);
    // Removals of an earlier session are final: their Undo went with that session's window.
    sources.purgeRemoved();
    return {
      path,
      schemaVersion,
      sources,
      settings: new SettingsTable(db, options.secrets),
      documents,
      mirrors: new MirrorsTable(db),
      purged: () => purger.idle(),
      close() {
        purger.stop();
        if (db.isOpen) db.close();
      },
    };
  } catch (error) {
    db.close();
    throw explainStoreError(path, error);
  }
}

/**
 * Freed pages go back to the file system only in auto_vacuum mode; INCREMENTAL lets the purge do it a step at a
 * time. A new database takes the mode before its first table; an older one is converted once by a VACUUM (which
 * cannot run inside a migration's transaction, hence here). The VACUUM rewrites the whole database while the app
 * starts, and needs room on the disk for a copy of it: it is done only when the data is small enough to take about a
 * second and the disk has the room, and a VACUUM that fails anyway is left for a later start. It is an economy, not
 * a condition: on a nearly full disk it stopped the app from starting at all ("database or disk is full").
 */
function useIncrementalVacuum(db: DatabaseSync, path: string, freeOf?: (dir: string) => number): void {
  const INCREMENTAL = 2;
  const mode = Number((db.prepare('PRAGMA auto_vacuum').get() as { auto_vacuum: number }).auto_vacuum);
  if (mode === INCREMENTAL) return;
  db.exec('PRAGMA auto_vacuum = INCREMENTAL');
  const tables = Number((db.prepare("SELECT COUNT(*) AS n FROM sqlite_schema WHERE type = 'table'").get() as { n: number }).n);
  if (tables === 0) return;
  const pragma = (name: string) => Number((db.prepare(`PRAGMA ${name}`).get() as Record<string, number>)[name]);
  const used = (pragma('page_count') - pragma('freelist_count')) * pragma('page_size');
  const inMemory = path === ':memory:' || path === '';
  if (!inMemory && (used > CONVERT_MAX_BYTES || !roomToRewrite(path, used, freeOf))) return;
  try {
    db.exec('VACUUM');
  } catch {
    // Not converted this time: the database is as it was, and the next start tries again.
  }
}

/**
 * Why the app's database cannot be opened, in words a person can act on, naming the file: SQLite's own ("file is
 * not a database", "database is locked", "disk I/O error") say neither which file nor what to do, and the desktop
 * app shows this message when it cannot start.
 */
function explainStoreError(path: string, error: unknown): unknown {
  if (error instanceof SchemaTooNewError) return error;
  const code = (error as { errcode?: unknown }).errcode;
  if (typeof code !== 'number') return error;
  const primary = code & 0xff;
  const said = (error as Error).message;
  // SQLITE_CORRUPT, SQLITE_NOTADB.
  if (primary === 11 || primary === 26) {
    return new Error(
      `ResourceSync Desktop's database ${path} is damaged and cannot be read (${said}); nothing in it was changed. ` +
        `Put back a copy of it from a backup, or move it elsewhere to start with an empty one: the Sources and the list of mirrors are then to be added again ` +
        `(each mirror folder keeps its own state, and is added again by its path).`,
    );
  }
  // SQLITE_BUSY, SQLITE_LOCKED.
  if (primary === 5 || primary === 6) {
    return new Error(
      `ResourceSync Desktop's database ${path} is being written by another program, which kept it locked for more than ${BUSY_TIMEOUT_MS / 1000} seconds; ` +
        `nothing in it was changed. Is ResourceSync Desktop (or rsdesk serve) already running with this data folder? Close it, or a database tool that has the file open, and try again.`,
    );
  }
  // SQLITE_FULL; SQLITE_IOERR on a disk with (nearly) no room left, as a shared-memory file that cannot be made shows.
  if (primary === 13 || (primary === 10 && nearlyFull(dirname(path)))) {
    return new Error(`The disk holding ${dirname(path)} is full, so ResourceSync Desktop cannot open its database ${path}; nothing in it was changed. Free some space and try again.`);
  }
  // SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM.
  if (primary === 14 || primary === 8 || primary === 3) {
    return new Error(`ResourceSync Desktop cannot open its database ${path} (${said}): the folder holding it must exist and be writable by you.`);
  }
  return error;
}

function nearlyFull(dir: string): boolean {
  try {
    const s = statfsSync(dir);
    return Number(s.bavail) * Number(s.bsize) < 1024 * 1024;
  } catch {
    return false;
  }
}
