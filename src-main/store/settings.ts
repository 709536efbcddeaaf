// Settings as key/value rows holding JSON values, so new settings need no migration.
import type { DatabaseSync } from 'node:sqlite';
import type { Settings } from '../contract/types.ts';
import { transaction } from './tx.ts';

export const DEFAULT_SETTINGS: Settings = { bearerToken: null, timeoutMs: 30_000 };

export class SettingsTable {
  #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  get(): Settings {
    const rows = this.#db.prepare('SELECT key, value FROM settings').all() as unknown as { key: string; value: string }[];
    const settings: Settings = { ...DEFAULT_SETTINGS };
    for (const { key, value } of rows) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(value);
      } catch {
        continue;
      }
      if (key === 'bearerToken' && (parsed === null || typeof parsed === 'string')) settings.bearerToken = parsed;
      if (key === 'timeoutMs' && typeof parsed === 'number' && Number.isFinite(parsed) && parsed > 0) {
        settings.timeoutMs = parsed;
      }
    }
    return settings;
  }

  /** Absent keys stay as they are; `bearerToken: null` clears the token. */
  set(patch: Partial<Settings>): Settings {
    const upsert = this.#db.prepare(
      'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    );
    transaction(this.#db, () => {
      if (patch.bearerToken !== undefined) {
        const token = patch.bearerToken === '' ? null : patch.bearerToken;
        upsert.run('bearerToken', JSON.stringify(token));
      }
      if (patch.timeoutMs !== undefined) upsert.run('timeoutMs', JSON.stringify(patch.timeoutMs));
    });
    return this.get();
  }
}
