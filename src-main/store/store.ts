// The embedded database: node:sqlite (no native module), WAL, foreign keys, versioned migrations.
import { DatabaseSync } from 'node:sqlite';
import { DocumentsTable } from './documents.ts';
import { migrate } from './migrations.ts';
import type { SecretBox } from './secrets.ts';
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
  /** The schema version the database is at (after migrating). */
  readonly schemaVersion: number;
  close(): void;
}

/** Opens (creating and migrating as needed) the database at path; ':memory:' gives a private in-memory one. */
export function openStore(path: string, options: { secrets?: SecretBox } = {}): Store {
  const db = new DatabaseSync(path, { enableForeignKeyConstraints: true, timeout: 5_000 });
  try {
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA synchronous = NORMAL');
    db.exec('PRAGMA foreign_keys = ON');
    const schemaVersion = migrate(db, path);
    const documents = new DocumentsTable(db);
    documents.dropUnfinished();
    return {
      path,
      schemaVersion,
      sources: new SourcesTable(db),
      settings: new SettingsTable(db, options.secrets),
      documents,
      close() {
        if (db.isOpen) db.close();
      },
    };
  } catch (error) {
    db.close();
    throw error;
  }
}
