// Deleting a large document's entries off the hot path. A refused 50 MB list leaves ~250,000 rows behind; deleted
// in one statement that held the only connection for seconds (every command, `app.info` too, waited). Here the
// rows go in small transactions with the event loop free between them, then the freed pages are handed back to
// the file system (auto_vacuum = INCREMENTAL) and the WAL is truncated, so the database shrinks back.
import type { DatabaseSync, StatementSync } from 'node:sqlite';

export interface PurgeOptions {
  /** Entry rows deleted per transaction (a few milliseconds each). */
  batchRows?: number;
  /** Free pages returned to the file system per step. */
  vacuumPages?: number;
}

export const PURGE_BATCH_ROWS = 500;
export const VACUUM_PAGES = 1_024;

export class Purger {
  #db: DatabaseSync;
  #batchRows: number;
  #vacuumPages: number;
  #queue: number[] = [];
  #running: Promise<void> | null = null;
  #stopped = false;
  #deleteBatch: StatementSync;
  #deleteDocument: StatementSync;

  constructor(db: DatabaseSync, options: PurgeOptions = {}) {
    this.#db = db;
    this.#batchRows = options.batchRows ?? PURGE_BATCH_ROWS;
    this.#vacuumPages = options.vacuumPages ?? VACUUM_PAGES;
    // Guarded by the row's url: a document still (or again) visible is never touched.
    this.#deleteBatch = db.prepare(
      `DELETE FROM entries WHERE doc_id = ? AND idx IN (
         SELECT idx FROM entries WHERE doc_id = ? AND EXISTS (SELECT 1 FROM documents WHERE id = ? AND url IS NULL)
         ORDER BY idx LIMIT ?)`,
    );
    // Only a row no reader can see: a load that never finished, or a copy a newer one replaced.
    this.#deleteDocument = db.prepare('DELETE FROM documents WHERE id = ? AND url IS NULL');
  }

  /** Deletes the document row `docId` (whose url must already be NULL) and its entries, in the background. */
  enqueue(docId: number): void {
    if (this.#stopped) return;
    if (!this.#queue.includes(docId)) this.#queue.push(docId);
    this.#running ??= this.#run().finally(() => {
      this.#running = null;
    });
  }

  /** Resolves once nothing is left to purge (or the purger was stopped). */
  async idle(): Promise<void> {
    while (this.#running !== null) await this.#running;
  }

  /**
   * Stops before the next step (steps are synchronous, so none is under way when this runs); what is left stays
   * marked (url NULL) and is purged on the next open. The database may be closed right after.
   */
  stop(): void {
    this.#stopped = true;
    this.#queue = [];
  }

  async #run(): Promise<void> {
    // Never inside the caller's own transaction.
    await breathe();
    let purged = false;
    while (!this.#stopped && this.#queue.length > 0) {
      if (this.#db.isTransaction) {
        // Someone else's transaction is open on this connection (it yields while open): wait for it.
        await breathe();
        continue;
      }
      const docId = this.#queue[0]!;
      const deleted = Number(this.#deleteBatch.run(docId, docId, docId, this.#batchRows).changes);
      if (deleted < this.#batchRows) {
        this.#deleteDocument.run(docId);
        this.#queue.shift();
        purged = true;
      }
      await breathe();
    }
    if (purged && !this.#stopped) await this.#reclaim();
  }

  /** Returns free pages to the file system a step at a time, then empties the WAL file. */
  async #reclaim(): Promise<void> {
    const freePages = () => Number((this.#db.prepare('PRAGMA freelist_count').get() as { freelist_count: number }).freelist_count);
    let left = freePages();
    while (!this.#stopped && left > 0 && this.#queue.length === 0) {
      if (this.#db.isTransaction) {
        await breathe();
        continue;
      }
      this.#db.exec(`PRAGMA incremental_vacuum(${this.#vacuumPages})`);
      const now = freePages();
      // Not in incremental mode (a database that could not be converted): nothing more to gain.
      if (now >= left) break;
      left = now;
      await breathe();
    }
    if (this.#stopped || this.#queue.length > 0) return;
    try {
      this.#db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    } catch {
      // A reader holds the WAL (another process): it is truncated at a later checkpoint instead.
    }
  }
}

/** Lets every pending command and I/O callback run before the next step. */
function breathe(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
