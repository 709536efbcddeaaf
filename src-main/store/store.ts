// The embedded database: node:sqlite (no native module), WAL, foreign keys, versioned migrations.
import { DatabaseSync } from 'node:sqlite';
import { DocumentsTable } from './documents.ts';
import { migrate } from './migrations.ts';
import { Purger } from './purge.ts';
import type { SecretBox } from './secrets.ts';
import { MirrorsTable } from './mirrors.ts';
import { SettingsTable } from './settings.ts';
import { SourcesTable } from './sources.ts';

export type { CachedDocument, DocumentMeta, DocumentWriter, EntryQuery } from './documents.ts';
export type { NewSource } from './sources.ts';
export type { SecretBox } from './secrets.ts';
export { SCHEMA_VERSION, SchemaTooNewError } from './migrations.ts';

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
export function openStore(path: string, options: { secrets?: SecretBox; documentCacheBytes?: number } = {}): Store {
  const db = new DatabaseSync(path, { enableForeignKeyConstraints: true, timeout: 5_000 });
  try {
    useIncrementalVacuum(db);
    db.exec('PRAGMA journal_mode = WAL');
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
    throw error;
  }
}

/**
 * Freed pages go back to the file system only in auto_vacuum mode; INCREMENTAL lets the purge do it a step at a
 * time. A new database takes the mode before its first table; an older one is converted once by a VACUUM (which
 * cannot run inside a migration's transaction, hence here).
 */
function useIncrementalVacuum(db: DatabaseSync): void {
  const INCREMENTAL = 2;
  const mode = Number((db.prepare('PRAGMA auto_vacuum').get() as { auto_vacuum: number }).auto_vacuum);
  if (mode === INCREMENTAL) return;
  db.exec('PRAGMA auto_vacuum = INCREMENTAL');
  const tables = Number((db.prepare("SELECT COUNT(*) AS n FROM sqlite_schema WHERE type = 'table'").get() as { n: number }).n);
  if (tables > 0) db.exec('VACUUM');
}
