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
    const rows = this.#db.prepare('SELECT * FROM sources ORDER BY id').all() as unknown as SourceRow[];
    return rows.map(toSource);
  }

  get(id: number): SavedSource | null {
    const row = this.#db.prepare('SELECT * FROM sources WHERE id = ?').get(id) as unknown as SourceRow | undefined;
    return row ? toSource(row) : null;
  }

  /**
   * Saves a Source unless the same one is already saved: same start URL, same Source Description, or (for a
   * Source known only by its Capability Lists) the same Capability Lists. Then the existing one is returned.
   */
  add(source: NewSource): { source: SavedSource; created: boolean } {
    const listJson = JSON.stringify(source.capabilityListUrls);
    return transaction(this.#db, () => {
      const existing = this.#db
        .prepare(
          `SELECT * FROM sources
           WHERE start_url = ?
              OR (source_description_url IS NOT NULL AND source_description_url = ?)
              OR (? IS NULL AND source_description_url IS NULL AND capability_list_urls = ? AND ? <> '[]')
           ORDER BY id LIMIT 1`,
        )
        .get(source.startUrl, source.sourceDescriptionUrl, source.sourceDescriptionUrl, listJson, listJson) as
        | unknown
        | undefined;
      if (existing) return { source: toSource(existing as SourceRow), created: false };
      const result = this.#db
        .prepare(
          `INSERT INTO sources (name, start_url, source_description_url, capability_list_urls, added_at)
           VALUES (?, ?, ?, ?, ?)`,
        )
        .run(source.name, source.startUrl, source.sourceDescriptionUrl, listJson, new Date().toISOString());
      return { source: this.get(Number(result.lastInsertRowid))!, created: true };
    });
  }

  remove(id: number): boolean {
    return Number(this.#db.prepare('DELETE FROM sources WHERE id = ?').run(id).changes) > 0;
  }
}
