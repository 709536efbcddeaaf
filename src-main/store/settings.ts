// Settings as key/value rows holding JSON values, so new settings need no migration.
import type { DatabaseSync } from 'node:sqlite';
import type { Settings } from '../contract/types.ts';
import type { SecretBox } from './secrets.ts';
import { transaction } from './tx.ts';

// A token kept by an earlier version has no tokenOrigin row: it reads as null, and the token is sent nowhere until the
// person names its Source (it used to go to every host the app reached).
export const DEFAULT_SETTINGS: Settings = { bearerToken: null, tokenOrigin: null, timeoutMs: 30_000 };

/** How a sealed token is kept: distinguishable from a plain (string) one written without a SecretBox. */
interface SealedValue {
  sealed: string;
}

export class SettingsTable {
  #db: DatabaseSync;
  #box: SecretBox | undefined;

  constructor(db: DatabaseSync, box?: SecretBox) {
    this.#db = db;
    this.#box = box;
  }

  #readToken(parsed: unknown): string | null {
    if (parsed === null || typeof parsed === 'string') return parsed;
    const sealed = (parsed as Partial<SealedValue> | undefined)?.sealed;
    if (typeof sealed !== 'string' || !this.#box) return null;
    try {
      return this.#box.open(sealed);
    } catch {
      // Sealed by another machine or user: as good as no token; the person sets it again.
      return null;
    }
  }

  #writeToken(token: string | null): string {
    if (token === null || !this.#box) return JSON.stringify(token);
    return JSON.stringify({ sealed: this.#box.seal(token) } satisfies SealedValue);
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
      if (key === 'bearerToken') settings.bearerToken = this.#readToken(parsed);
      if (key === 'tokenOrigin' && typeof parsed === 'string' && URL.canParse(parsed)) settings.tokenOrigin = new URL(parsed).origin;
      if (key === 'timeoutMs' && typeof parsed === 'number' && Number.isFinite(parsed) && parsed > 0) {
        settings.timeoutMs = parsed;
      }
    }
    return settings;
  }

  /** Absent keys stay as they are; `bearerToken: null` clears the token. `tokenOrigin`: an origin already, or null. */
  set(patch: Partial<Settings>): Settings {
    const upsert = this.#db.prepare(
      'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    );
    transaction(this.#db, () => {
      if (patch.bearerToken !== undefined) {
        const token = patch.bearerToken === '' ? null : patch.bearerToken;
        upsert.run('bearerToken', this.#writeToken(token));
      }
      // A cleared token takes its origin with it: a later token is given with its own.
      const origin = patch.tokenOrigin !== undefined ? patch.tokenOrigin || null : patch.bearerToken === null || patch.bearerToken === '' ? null : undefined;
      if (origin !== undefined) upsert.run('tokenOrigin', JSON.stringify(origin));
      if (patch.timeoutMs !== undefined) upsert.run('timeoutMs', JSON.stringify(patch.timeoutMs));
    });
    return this.get();
  }
}
