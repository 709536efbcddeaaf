// Saved Sources: what the person added, with the Source Description and Capability Lists discovery found.
import type { DatabaseSync } from 'node:sqlite';
import type { SavedSource } from '../contract/types.ts';
import { transaction } from './tx.ts';

export interface NewSource {
  name: string;
  startUrl: string;
  sourceDescriptionUrl: string | null;
  capabilityListUrls: string[];
}

interface SourceRow {
  id: number;
  name: string;
  start_url: string;
  source_description_url: string | null;
  capability_list_urls: string;
  added_at: string;
  removed_at: string | null;
}

function toSource(row: SourceRow): SavedSource {
  let capabilityListUrls: string[] = [];
  try {
    const parsed: unknown = JSON.parse(row.capability_list_urls);
    if (Array.isArray(parsed)) capabilityListUrls = parsed.filter((u): u is string => typeof u === 'string');
  } catch {
    // A damaged row still lists; it just shows no Capability Lists.
  }
  return {
    id: Number(row.id),
    name: row.name,
    startUrl: row.start_url,
    sourceDescriptionUrl: row.source_description_url,
    capabilityListUrls,
    addedAt: row.added_at,
  };
}

export class SourcesTable {
  #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  list(): SavedSource[] {
    const rows = this.#db.prepare('SELECT * FROM sources WHERE removed_at IS NULL ORDER BY id').all() as unknown as SourceRow[];
    return rows.map(toSource);
  }

  get(id: number): SavedSource | null {
    const row = this.#db.prepare('SELECT * FROM sources WHERE id = ? AND removed_at IS NULL').get(id) as unknown as
      | SourceRow
      | undefined;
    return row ? toSource(row) : null;
  }

  /**
   * Saves a Source unless the same one is already saved: same start URL, same Source Description, or (for a
   * Source known only by its Capability Lists) the same Capability Lists. Then the existing one is returned.
   */
  add(source: NewSource): { source: SavedSource; created: boolean } {
    const listJson = JSON.stringify(source.capabilityListUrls);
    return transaction(this.#db, () => {
      const same = this.#db
        .prepare(
          `SELECT * FROM sources
           WHERE start_url = ?
              OR (source_description_url IS NOT NULL AND source_description_url = ?)
              OR (? IS NULL AND source_description_url IS NULL AND capability_list_urls = ? AND ? <> '[]')
           ORDER BY id`,
        )
        .all(source.startUrl, source.sourceDescriptionUrl, source.sourceDescriptionUrl, listJson, listJson) as unknown as
        SourceRow[];
      const existing = same.find((row) => row.removed_at === null);
      if (existing) return { source: toSource(existing), created: false };
      // Added again after a remove: the new Source replaces the removed one, which can no longer be restored.
      for (const removed of same) this.#db.prepare('DELETE FROM sources WHERE id = ?').run(removed.id);
      const result = this.#db
        .prepare(
          `INSERT INTO sources (name, start_url, source_description_url, capability_list_urls, added_at)
           VALUES (?, ?, ?, ?, ?)`,
        )
        .run(source.name, source.startUrl, source.sourceDescriptionUrl, listJson, new Date().toISOString());
      return { source: this.get(Number(result.lastInsertRowid))!, created: true };
    });
  }

  /** Marks the Source removed: it no longer lists, and restore(id) brings it back until purgeRemoved(). */
  remove(id: number): boolean {
    const at = new Date().toISOString();
    return Number(this.#db.prepare('UPDATE sources SET removed_at = ? WHERE id = ? AND removed_at IS NULL').run(at, id).changes) > 0;
  }

  /** Undoes remove(id): the Source as it was, with its id; null when there is nothing to restore. */
  restore(id: number): SavedSource | null {
    const changed = Number(
      this.#db.prepare('UPDATE sources SET removed_at = NULL WHERE id = ? AND removed_at IS NOT NULL').run(id).changes,
    );
    return changed > 0 ? this.get(id) : null;
  }

  /** Deletes the Sources removed earlier for good (done when the store opens: an undo lasts one session). */
  purgeRemoved(): number {
    return Number(this.#db.prepare('DELETE FROM sources WHERE removed_at IS NOT NULL').run().changes);
  }
}
