// Giving a mirror's state.sqlite's free space back to the file system. SQLite keeps the pages of deleted rows (a
// mirror whose Source dropped most of its resources, the inbox's dropped bodies, old audit reports) as free pages
// inside the file, reused by new rows but never returned: the file stays at its largest. With auto_vacuum =
// INCREMENTAL (every state made since), `PRAGMA incremental_vacuum(N)` hands N free pages back at a time; it is run
// here in small steps with the event loop free between them, so neither the app nor a run waits long. A state made
// before is converted once, by a VACUUM, when that is cheap and the disk has room for it (convertState).
import { statfsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { Worker } from 'node:worker_threads';

/** SQLite's auto_vacuum value for INCREMENTAL. */
export const INCREMENTAL = 2;
/** Free pages handed back per step (1 MiB of 4 KiB pages): ~0.2 ms a step here, ~45 ms for one that checkpoints. */
export const RECLAIM_PAGES = 256;
/**
 * How long the steps of one reclaim may take in all; what is left is handed back next time. 900,000 rows deleted
 * free ~117,000 pages, handed back in ~3.5 s here: little beside the run that deleted their 900,000 files.
 */
export const RECLAIM_BUDGET_MS = 10_000;
/**
 * The most data (pages in use) a state may hold to be converted by the VACUUM while a live subscription may write to
 * it: the VACUUM rewrites all of it (~1 s for 50 MB here; 282 MB took 6.4 s on a loaded machine) holding the state's
 * write lock, and the live feed's writers wait meanwhile (busy timeout 5 s, on the app's main thread for some). Its
 * memory is SQLite's page cache whatever the size (282 MB: +16 MB resident): time is what the limit bounds. Without a
 * live subscription no one else writes while the run holds the mirror's lock, and a state of any size is converted.
 */
export const CONVERT_MAX_BYTES = 64 * 1024 * 1024;
/** A state this large is said to be rewritten, since the run's end waits for it. */
const SAY_REWRITE_BYTES = 256 * 1024 * 1024;
/** The most the last step's checkpoint waits for other connections' reads to end. */
const CHECKPOINT_WAIT_MS = 100;
/** Free pages worth a word when a state cannot be converted: below this the file is as good as its data. */
const WORTH_SAYING_BYTES = 64 * 1024 * 1024;

function pragma(db: DatabaseSync, name: string): number {
  const row = db.prepare(`PRAGMA ${name}`).get() as Record<string, number> | undefined;
  return Number(row?.[name] ?? 0);
}

export interface StateSpace {
  autoVacuum: number;
  pageSize: number;
  pages: number;
  freePages: number;
}

export function stateSpace(db: DatabaseSync): StateSpace {
  // A read first: a connection reads the mode from the file's header when a transaction begins, so one that has been
  // idle while another converted the file would still say the old mode.
  db.prepare('SELECT 1 AS found FROM sqlite_schema LIMIT 1').get();
  return { autoVacuum: pragma(db, 'auto_vacuum'), pageSize: pragma(db, 'page_size'), pages: pragma(db, 'page_count'), freePages: pragma(db, 'freelist_count') };
}

/** Lets every pending callback and I/O run before the next step. */
function breathe(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

export interface ReclaimOptions {
  pages?: number;
  budgetMs?: number;
  /** True once the caller is closing the database: no step is begun after it. */
  stopped?: () => boolean;
}

/**
 * Hands the free pages of an INCREMENTAL database back to the file system, RECLAIM_PAGES at a time, then empties the
 * WAL file. Returns the bytes given back. A database in another mode, or one whose connection is inside a
 * transaction of someone else's for the whole budget, is left as it is.
 */
export async function reclaimSpace(db: DatabaseSync, options: ReclaimOptions = {}): Promise<number> {
  const pages = options.pages ?? RECLAIM_PAGES;
  const deadline = performance.now() + (options.budgetMs ?? RECLAIM_BUDGET_MS);
  const stopped = () => !db.isOpen || (options.stopped?.() ?? false);
  if (stopped()) return 0;
  const start = stateSpace(db);
  if (start.autoVacuum !== INCREMENTAL || start.freePages === 0) return 0;
  let left = start.freePages;
  while (left > 0 && performance.now() < deadline) {
    if (stopped()) return (start.freePages - left) * start.pageSize;
    if (db.isTransaction) {
      // A transaction is open on this connection (its owner awaits inside it): a step would join it.
      await breathe();
      continue;
    }
    // Not made durable one by one (synchronous = NORMAL for the step): a step lost to a power cut moved pages no
    // row needs, and the WAL stays consistent; the next durable commit or checkpoint syncs it. It is the fsyncs that
    // take a step's time, not the moves.
    const synchronous = pragma(db, 'synchronous');
    db.exec('PRAGMA synchronous = NORMAL');
    try {
      db.exec(`PRAGMA incremental_vacuum(${pages})`);
    } finally {
      db.exec(`PRAGMA synchronous = ${synchronous}`);
    }
    const now = pragma(db, 'freelist_count');
    if (now >= left) break;
    left = now;
    await breathe();
  }
  if (stopped()) return (start.freePages - left) * start.pageSize;
  if (!db.isTransaction) {
    // A TRUNCATE checkpoint waits (the busy timeout, 5 s) for every other connection's read to end: on the app's
    // main thread (the live feed prunes there) with a sync, an audit or a database tool reading the state, the app
    // stood frozen for those seconds. It waits a moment only; what it could not empty goes at a later checkpoint.
    const timeout = Number((db.prepare('PRAGMA busy_timeout').get() as { timeout: number }).timeout);
    db.exec(`PRAGMA busy_timeout = ${CHECKPOINT_WAIT_MS}`);
    try {
      db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    } catch {
      // Another connection reads or writes: the WAL is emptied at a later checkpoint.
    } finally {
      db.exec(`PRAGMA busy_timeout = ${timeout}`);
    }
  }
  return (start.freePages - left) * start.pageSize;
}

function freeBytes(path: string): number {
  const s = statfsSync(path);
  return Number(s.bavail) * Number(s.bsize);
}

/**
 * Whether the disks have room for a VACUUM of a database holding `used` bytes: SQLite's copy in the temporary folder,
 * and the WAL that carries it back beside the database (both on one disk when they share it), with a margin.
 */
export function roomToRewrite(path: string, used: number, freeOf: (dir: string) => number = freeBytes): boolean {
  const margin = 16 * 1024 * 1024;
  try {
    const here = freeOf(dirname(path));
    const temp = freeOf(tmpdir());
    const sameDisk = statSync(dirname(path)).dev === statSync(tmpdir()).dev;
    return sameDisk ? here >= 2 * used + margin : here >= used + margin && temp >= used + margin;
  } catch {
    return false;
  }
}

export type Conversion = 'incremental' | 'converted' | 'too-large' | 'no-room' | 'busy';

export interface ConvertOptions {
  onNote?: (message: string) => void;
  /** The most data to convert while a live subscription may write (CONVERT_MAX_BYTES). */
  maxBytes?: number;
  /** The bytes free on the disk of a folder (tests). */
  freeBytes?: (dir: string) => number;
}

/**
 * Converts a state made before auto_vacuum = INCREMENTAL, once: a VACUUM rewrites it (giving back every free page
 * at once) and sets the mode. Call it only while holding the mirror's lock, and outside any transaction: no run of
 * another process is writing then, save a live subscription's feed: with one, the pages in use are rewritten only
 * when they are few (CONVERT_MAX_BYTES; after a large deletion is when they are). And only when the disk has room for
 * the copy SQLite makes (in the temporary folder) and for the WAL that carries it back (beside the state): the space is checked
 * first, and a state that cannot be converted now is left as it was, with a note when it holds much free space.
 * The VACUUM runs on a thread of its own so that the event loop is free meanwhile.
 */
export async function convertState(db: DatabaseSync, path: string, options: ConvertOptions = {}): Promise<Conversion> {
  const space = stateSpace(db);
  if (space.autoVacuum === INCREMENTAL) return 'incremental';
  if (db.isTransaction) return 'busy';
  const used = (space.pages - space.freePages) * space.pageSize;
  const free = space.freePages * space.pageSize;
  if (used > (options.maxBytes ?? CONVERT_MAX_BYTES) && liveWriters(db)) {
    if (free >= WORTH_SAYING_BYTES) {
      options.onNote?.(
        `The mirror's state ${path} holds ${mib(free)} of free space it could give back, but rewriting it (${mib(used)}) would hold up the live subscription's writes too long; ` +
          `it keeps its size while the subscription is on, and is rewritten after a run once it is off.`,
      );
    }
    return 'too-large';
  }
  if (!roomToRewrite(path, used, options.freeBytes)) {
    if (free >= WORTH_SAYING_BYTES) {
      options.onNote?.(
        `The mirror's state ${path} holds ${mib(free)} of free space it could give back, but the disk has too little room ` +
          `left to rewrite it (about ${mib(2 * used)} needed); it keeps its size for now and is tried again after the next run.`,
      );
    }
    return 'no-room';
  }
  if (used >= SAY_REWRITE_BYTES) {
    options.onNote?.(`The mirror's state (${mib(used)}) is rewritten once, so that the space it frees is given back to the disk from now on; the run ends when that is done (a few seconds per 100 MB).`);
  }
  await vacuumOnThread(path);
  return 'converted';
}

/** Whether a live subscription of the mirror may write to its state (deliveries, their pruning) at any moment. */
function liveWriters(db: DatabaseSync): boolean {
  try {
    return db.prepare("SELECT 1 AS found FROM live_subscriptions WHERE status NOT IN ('unsubscribed', 'denied', 'expired') LIMIT 1").get() !== undefined;
  } catch {
    // No such table (a database of another kind): taken to have writers, as before.
    return true;
  }
}

function mib(bytes: number): string {
  return `${Math.max(1, Math.round(bytes / 1024 / 1024)).toLocaleString('en')} MB`;
}

const VACUUM_CODE = `
const emit = process.emit;
process.emit = function (name, data, ...rest) {
  if (name === 'warning' && data && data.name === 'ExperimentalWarning' && /SQLite/.test(String(data.message))) return false;
  return emit.call(this, name, data, ...rest);
};
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
let db;
try {
  db = new DatabaseSync(workerData.path, { timeout: 5000 });
  db.exec('PRAGMA auto_vacuum = INCREMENTAL');
  db.exec('VACUUM');
  try { db.exec('PRAGMA wal_checkpoint(TRUNCATE)'); } catch {}
  parentPort.postMessage({ ok: true });
} catch (err) {
  parentPort.postMessage({ error: String((err && err.message) || err), errcode: err && err.errcode });
} finally {
  if (db && db.isOpen) db.close();
}
`;

/** Runs the converting VACUUM on a connection of its own, on a worker thread. */
function vacuumOnThread(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(VACUUM_CODE, { eval: true, name: 'rsdesk-vacuum', workerData: { path } });
    let settled = false;
    worker.once('message', (m: { ok?: boolean; error?: string; errcode?: number }) => {
      settled = true;
      if (m.ok) resolve();
      else reject(Object.assign(new Error(m.error), { errcode: m.errcode }));
    });
    worker.once('error', (err) => {
      if (!settled) reject(err);
      settled = true;
    });
    worker.once('exit', () => {
      if (!settled) reject(new Error('The thread that rewrites the mirror state stopped before it was done.'));
      settled = true;
    });
  });
}

/**
 * After a run, under the mirror's lock: converts a state made before INCREMENTAL when that is cheap, else hands back
 * free pages step by step. Never fails the run: what cannot be given back now is given back after a later one.
 */
export async function tidyState(db: DatabaseSync, path: string, options: ReclaimOptions & ConvertOptions = {}): Promise<void> {
  try {
    if (!db.isOpen || options.stopped?.()) return;
    const conversion = await convertState(db, path, options);
    if (conversion === 'converted') return;
    await reclaimSpace(db, options);
  } catch {
    // Space not given back this time is no loss; the next run tries again.
  }
}
