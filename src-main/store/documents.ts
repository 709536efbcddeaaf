// The document cache: one row per fetched document and one row per entry, so that a 50,000-entry list is
// filtered, sorted and paged by SQLite and never held in memory.
import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import type { EntryPage, EntrySortKey } from '../contract/types.ts';
import { parseW3cDatetime } from '../engine/documents/datetime.ts';
import type { DocumentSummary, Entry } from '../engine/documents/model.ts';
import { ShapeTracker, shapeOf, type EntryShape } from '../engine/documents/shape.ts';
import type { Purger } from './purge.ts';
import { transaction } from './tx.ts';

/** Entries are written in batches of this size, each in one transaction. */
export const ENTRY_BATCH_SIZE = 2_000;

/**
 * The most the cache keeps, counted as the documents' sizes as fetched (their entries and sort indexes take about
 * twice that in the database: 2.2 times for a list of 50,000 entries with hashes). Every document opened in the browser stays cached until the cache is
 * cleared, so without a bound browsing a large Source would grow the app's database until the disk is full. Past
 * it, the least recently used documents are dropped (fetched again when opened again); the one just fetched stays
 * even when it alone is larger.
 */
export const CACHE_MAX_BYTES = 256 * 1024 * 1024;

export interface CachedDocument {
  url: string;
  fetchedAt: string;
  summary: DocumentSummary;
  bytes: number;
  contentType: string | null;
  /** The first bytes of the raw document, decoded (for the raw view). */
  head: string;
  /** Found by the writer as the entries stream in. */
  shape: EntryShape;
}

export type DocumentMeta = Omit<CachedDocument, 'url' | 'shape'>;

export interface EntryQuery {
  offset: number;
  limit: number;
  /** Case-insensitive substring of `loc`. */
  uri?: string;
  change?: string;
  sort?: EntrySortKey;
  descending?: boolean;
}

/** Streams one document's entries into the cache; the previous cached copy stays visible until commit. */
export interface DocumentWriter {
  readonly url: string;
  /** Entries added so far. */
  readonly count: number;
  add(entry: Entry): void;
  /** Replaces the cached copy of the URL (and all its old entries) in one transaction. */
  commit(meta: DocumentMeta): CachedDocument;
  /** Drops everything written by this writer. Safe to call more than once, and after commit (no-op then). */
  abort(): void;
}

interface DocumentRow {
  id: number;
  url: string;
  fetched_at: string;
  summary: string;
  bytes: number;
  content_type: string | null;
  head: string;
  shape: string | null;
}

function toCached(row: DocumentRow, shape: EntryShape): CachedDocument {
  return {
    url: row.url,
    fetchedAt: row.fetched_at,
    summary: JSON.parse(row.summary) as DocumentSummary,
    bytes: Number(row.bytes),
    contentType: row.content_type,
    head: row.head,
    shape,
  };
}

function parseLength(value: string | undefined): number | null {
  if (value === undefined || !/^\s*\d{1,15}\s*$/.test(value)) return null;
  return Number(value);
}

function toEntry(idx: number, json: string): Entry {
  const entry = JSON.parse(json) as Entry;
  entry.index = Number(idx);
  return entry;
}

/** LIKE pattern for a substring, with LIKE's own wildcards escaped (ESCAPE '\'). */
export function likeSubstring(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Sort column of each key; the nullable ones put entries without a value last, in both directions. */
const SORT_COLUMN: Record<EntrySortKey, { column: string; nullable: boolean }> = {
  index: { column: 'idx', nullable: false },
  loc: { column: 'loc', nullable: false },
  lastmod: { column: 'lastmod_ms', nullable: true },
  datetime: { column: 'datetime_ms', nullable: true },
  length: { column: 'length', nullable: true },
};

export class DocumentsTable {
  #db: DatabaseSync;
  #purger: Purger;
  readonly #maxBytes: number;
  /**
   * When each document was last used in this session (a counter, not a clock: no two alike). Kept in memory, not in
   * the database, so that reading a page costs no write; documents not used since the app started count as older
   * than any that were, and among themselves by when they were fetched.
   */
  readonly #used = new Map<string, number>();
  #uses = 0;

  constructor(db: DatabaseSync, purger: Purger, options: { maxBytes?: number } = {}) {
    this.#db = db;
    this.#purger = purger;
    this.#maxBytes = options.maxBytes ?? CACHE_MAX_BYTES;
  }

  #touch(url: string): void {
    this.#used.delete(url);
    this.#used.set(url, ++this.#uses);
  }

  /** Drops the least recently used documents while the cache holds more than its bound; `keep` stays. */
  #evict(keep: string): void {
    const rows = this.#db.prepare('SELECT url, bytes, fetched_at FROM documents WHERE url IS NOT NULL').all() as { url: string; bytes: number; fetched_at: string }[];
    let total = rows.reduce((n, r) => n + Number(r.bytes ?? 0), 0);
    if (total <= this.#maxBytes) return;
    const order = (r: { url: string; fetched_at: string }) => this.#used.get(r.url) ?? 0;
    rows.sort((a, b) => order(a) - order(b) || (a.fetched_at < b.fetched_at ? -1 : a.fetched_at > b.fetched_at ? 1 : 0));
    for (const r of rows) {
      if (total <= this.#maxBytes) break;
      if (r.url === keep) continue;
      this.#detach(r.url);
      total -= Number(r.bytes ?? 0);
    }
  }

  /** Purges, in the background, loads that never finished (the process died while streaming) and left-overs. */
  dropUnfinished(): void {
    const rows = this.#db.prepare('SELECT id FROM documents WHERE url IS NULL').all() as { id: number }[];
    for (const row of rows) this.#purger.enqueue(Number(row.id));
  }

  /** Hides the cached copy of url at once (one small update) and deletes its rows in the background. */
  #detach(url: string): boolean {
    const row = this.#db.prepare('UPDATE documents SET url = NULL, loading_url = NULL WHERE url = ? RETURNING id').get(url) as
      | { id: number }
      | undefined;
    this.#used.delete(url);
    if (row === undefined) return false;
    this.#purger.enqueue(Number(row.id));
    return true;
  }

  get(url: string): CachedDocument | null {
    const row = this.#db.prepare('SELECT * FROM documents WHERE url = ?').get(url) as unknown as
      | DocumentRow
      | undefined;
    if (!row) return null;
    this.#touch(url);
    return toCached(row, row.shape === null ? this.#storeShape(Number(row.id), url) : (JSON.parse(row.shape) as EntryShape));
  }

  /** The shape of a document cached before shapes were kept: one pass over its entries, then kept. */
  #storeShape(docId: number, url: string): EntryShape {
    const shape = shapeOf(this.iterate(url));
    this.#db.prepare('UPDATE documents SET shape = ? WHERE id = ?').run(JSON.stringify(shape), docId);
    return shape;
  }

  remove(url: string): boolean {
    return this.#detach(url);
  }

  begin(url: string): DocumentWriter {
    const db = this.#db;
    const docId = Number(db.prepare('INSERT INTO documents (loading_url) VALUES (?)').run(url).lastInsertRowid);
    const insert = db.prepare(
      `INSERT INTO entries (doc_id, idx, loc, lastmod_ms, datetime_ms, length, change, entry)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    let batch: Entry[] = [];
    let count = 0;
    const shape = new ShapeTracker();
    let state: 'open' | 'committed' | 'aborted' = 'open';

    const flush = () => {
      if (batch.length === 0) return;
      const rows = batch;
      batch = [];
      transaction(db, () => {
        for (const entry of rows) {
          const { index, ...rest } = entry;
          insert.run(
            docId,
            index,
            entry.loc,
            entry.lastmod === undefined ? null : parseW3cDatetime(entry.lastmod),
            entry.md.datetime === undefined ? null : parseW3cDatetime(entry.md.datetime),
            parseLength(entry.md.length),
            entry.md.change ?? null,
            JSON.stringify(rest),
          );
        }
      });
    };

    return {
      url,
      get count() {
        return count;
      },
      add(entry) {
        if (state !== 'open') throw new Error(`document writer for ${url} is ${state}`);
        batch.push(entry);
        shape.add(entry);
        count++;
        if (batch.length >= ENTRY_BATCH_SIZE) flush();
      },
      commit: (meta) => {
        if (state !== 'open') throw new Error(`document writer for ${url} is ${state}`);
        flush();
        const found = shape.shape;
        // The old copy's entries (up to a whole list) are deleted afterwards, in the background.
        transaction(db, () => {
          this.#detach(url);
          db.prepare(
            `UPDATE documents SET url = ?, loading_url = NULL, fetched_at = ?, summary = ?, bytes = ?,
               content_type = ?, head = ?, shape = ? WHERE id = ?`,
          ).run(url, meta.fetchedAt, JSON.stringify(meta.summary), meta.bytes, meta.contentType, meta.head, JSON.stringify(found), docId);
        });
        state = 'committed';
        this.#touch(url);
        this.#evict(url);
        return { url, ...meta, shape: found };
      },
      abort: () => {
        if (state !== 'open') return;
        state = 'aborted';
        batch = [];
        // A refused 50 MB document leaves some 250,000 rows: deleted in small steps, never in one long stall.
        this.#purger.enqueue(docId);
      },
    };
  }

  /** Records the documents an index lists (replacing what an earlier copy of the index listed). */
  setIndexParts(indexUrl: string, partUrls: Iterable<string>): void {
    transaction(this.#db, () => {
      this.#db.prepare('DELETE FROM index_parts WHERE index_url = ?').run(indexUrl);
      const insert = this.#db.prepare('INSERT OR IGNORE INTO index_parts (part_url, index_url) VALUES (?, ?)');
      for (const part of partUrls) insert.run(part, indexUrl);
    });
  }

  /** URLs of the indexes known to list partUrl. */
  indexesOf(partUrl: string): string[] {
    const rows = this.#db.prepare('SELECT index_url FROM index_parts WHERE part_url = ? ORDER BY index_url').all(partUrl);
    return rows.map((row) => String((row as { index_url: string }).index_url));
  }

  #docId(url: string): number | null {
    const row = this.#db.prepare('SELECT id FROM documents WHERE url = ?').get(url) as { id: number } | undefined;
    if (row) this.#touch(url);
    return row ? Number(row.id) : null;
  }

  /** A page of entries, or null when the document is not cached. */
  query(url: string, query: EntryQuery): EntryPage | null {
    const docId = this.#docId(url);
    if (docId === null) return null;
    const where = ['doc_id = ?'];
    const params: SQLInputValue[] = [docId];
    if (query.uri !== undefined && query.uri !== '') {
      where.push("loc LIKE ? ESCAPE '\\'");
      params.push(likeSubstring(query.uri));
    }
    if (query.change !== undefined) {
      where.push('change = ?');
      params.push(query.change);
    }
    const total = this.#count(['doc_id = ?'], [docId]);
    const matched = where.length === 1 ? total : this.#count(where, params);
    const indexes = this.#pageIndexes(where, params, query);
    const get = this.#db.prepare('SELECT entry FROM entries WHERE doc_id = ? AND idx = ?');
    const rows = indexes.map((idx) => toEntry(idx, (get.get(docId, idx) as { entry: string }).entry));
    return { total, matched, offset: query.offset, rows };
  }

  #count(where: string[], params: SQLInputValue[]): number {
    const sql = `SELECT COUNT(*) AS n FROM entries WHERE ${where.join(' AND ')}`;
    return Number((this.#db.prepare(sql).get(...params) as { n: number }).n);
  }

  // Two steps: the page's positions come from a walk of a covering sort index (cheap even at a deep offset),
  // then only the page's rows are read.
  #pageIndexes(where: string[], params: SQLInputValue[], query: EntryQuery): number[] {
    const { column, nullable } = SORT_COLUMN[query.sort ?? 'index'];
    const select = (clauses: string[], order: string, limit: number, offset: number): number[] =>
      (
        this.#db
          .prepare(`SELECT idx FROM entries WHERE ${clauses.join(' AND ')} ORDER BY ${order} LIMIT ? OFFSET ?`)
          .all(...params, limit, offset) as { idx: number }[]
      ).map((row) => Number(row.idx));
    const order = (direction: 'ASC' | 'DESC') =>
      column === 'idx' ? `idx ${direction}` : `${column} ${direction}, idx ${direction}`;
    // SQLite orders NULL lowest, so a descending walk already puts them last.
    if (query.descending) return select(where, order('DESC'), query.limit, query.offset);
    if (!nullable) return select(where, order('ASC'), query.limit, query.offset);
    // Ascending with nulls last: the valued part of the index first, then the null part, as one sequence.
    const valued = select([...where, `${column} IS NOT NULL`], order('ASC'), query.limit, query.offset);
    if (valued.length === query.limit) return valued;
    let nullOffset = 0;
    if (valued.length === 0) {
      nullOffset = Math.max(0, query.offset - this.#count([...where, `${column} IS NOT NULL`], params));
    }
    const nulls = select([...where, `${column} IS NULL`], 'idx ASC', query.limit - valued.length, nullOffset);
    return [...valued, ...nulls];
  }

  /** One entry by position; undefined when the document is cached but has no such entry, null when not cached. */
  entry(url: string, index: number): Entry | undefined | null {
    const docId = this.#docId(url);
    if (docId === null) return null;
    const row = this.#db.prepare('SELECT idx, entry FROM entries WHERE doc_id = ? AND idx = ?').get(docId, index) as
      | { idx: number; entry: string }
      | undefined;
    return row ? toEntry(row.idx, row.entry) : undefined;
  }

  /** Every entry in document order, read lazily. */
  *iterate(url: string): Generator<Entry> {
    const docId = this.#docId(url);
    if (docId === null) return;
    const statement = this.#db.prepare('SELECT idx, entry FROM entries WHERE doc_id = ? ORDER BY idx');
    for (const row of statement.iterate(docId) as Iterable<{ idx: number; entry: string }>) {
      yield toEntry(row.idx, row.entry);
    }
  }
}
