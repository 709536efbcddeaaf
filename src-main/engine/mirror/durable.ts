// Atomic, durable writes in batches. Each resource is written to a temporary file under `.resourcesync/tmp/` (never
// in the visible tree); once a batch is full: one syncfs makes every temporary file's bytes (and mtimes) durable, each
// is renamed into place, a second syncfs makes the renames durable, and only then are the batch's inventory rows
// committed, in one transaction. A crash may lose unrecorded work (files renamed but not yet recorded are found again
// and checked by the next run), never record work that is lost.
//
// fsync per file caps a writer near 400–3,700 files/s here; one syncfs(2) per few hundred files costs a few
// milliseconds (a batch of few or large files is fsynced file by file instead: see #flushBatch). Node has no syncfs,
// so a small shell kept for the writer's life runs `sync -f` on request (spawning `sync` from Node each time costs
// the event loop 5–10 ms). Where `sync -f` is missing (macOS, Windows) every file and folder is fsynced instead.
// Small files are created, written, given their mtimes and renamed on a thread of their own (file-thread.ts);
// large ones stream through libuv's thread pool, where fsyncs run too (several at once: they wait on the disk). On a busy disk creating a file can take a
// millisecond or more, which must not stall the downloads on the main thread.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { appendFile, open, rm, truncate, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileThread, type FileJob } from './file-thread.ts';
import { writeAll } from './write-all.ts';
import { checkFolders } from './within-folder.ts';
import { isDiskFull } from './disk-full.ts';

export interface Staged<T> {
  /** The temporary file (already closed), or null for a row without a file (nothing to rename). */
  temp: string | null;
  /** Its final place. */
  final: string;
  /** The file's mtime (the entry's lastmod), epoch ms. */
  mtimeMs?: number;
  /** What to record once the file is durable. */
  record: T;
  /** The file's size, so that a batch is also flushed by bytes. */
  bytes?: number;
  /**
   * Settles when the temporary file is fully written (TempFile.close()): a download hands its file over without
   * waiting for the disk, and the batch waits for it before making it durable. A rejection fails that file alone.
   */
  written?: Promise<void>;
}

export interface DurableOptions<T> {
  tmpDir: string;
  /** Files per batch. Default 500. */
  batchSize?: number;
  /** Bytes per batch: large files are made durable while the next ones download. Default 64 MiB. */
  batchBytes?: number;
  /** Commits the rows of a batch whose files are durable and in place (one transaction). Failed renames are given apart. */
  commit: (done: T[], failed: { record: T; reason: string }[]) => void;
  /**
   * Called with the records of the files about to be renamed into place, their bytes durable, before any is: a file
   * that replaces an older copy leaves that copy's row describing bytes that are gone until the commit, and a crash
   * in between must not leave it saying "verified". `others`: the batch's records without a file (a deletion, say),
   * whose work on files must not be undone by the renames that follow.
   */
  beforeRename?: (records: T[], others: T[]) => void;
  /**
   * A file kept beside the temporary folder: before a batch's files are renamed into place, the text `intent` gives
   * for their records is added to it, made durable with their bytes (by the same syncfs, so a batch of small files
   * costs no commit of the database more); it is emptied once the batch is committed. A crash in between leaves it
   * saying which files in view are the writer's own though no record says so yet.
   */
  intentFile?: string;
  intent?: (records: T[]) => string;
  /** Set false to skip syncing (tests of other things; never in a real mirror). */
  durable?: boolean;
  /** The mirror's folder: no file is put in place through a symbolic link below it (within-folder.ts). */
  root?: string;
}

let syncfsWorks: boolean | null = process.platform === 'linux' ? null : false;

/**
 * Runs `sync -f PATH` (syncfs(2): every dirty page and inode of PATH's file system) from a long-lived shell, one
 * request at a time. Resolves false when syncfs is not available here (then the caller fsyncs file by file).
 */
class Syncfs {
  #shell: ChildProcessWithoutNullStreams | null = null;
  #waiting: ((ok: boolean) => void)[] = [];
  #buffer = '';

  run(path: string): Promise<boolean> {
    // One path per line: a path with a newline cannot be passed this way (the caller then fsyncs).
    if (syncfsWorks === false || path.includes('\n')) return Promise.resolve(false);
    const shell = this.#start();
    if (shell === null) return Promise.resolve(false);
    return new Promise((resolve) => {
      // Referenced only while a request is pending: an idle shell never keeps the process alive.
      if (this.#waiting.length === 0) this.#ref(shell, true);
      this.#waiting.push((ok) => {
        if (!ok && syncfsWorks === null) syncfsWorks = false;
        else if (ok) syncfsWorks = true;
        resolve(ok);
      });
      shell.stdin.write(`${path}\n`);
    });
  }

  #start(): ChildProcessWithoutNullStreams | null {
    if (this.#shell !== null) return this.#shell;
    let shell: ChildProcessWithoutNullStreams;
    try {
      shell = spawn('/bin/sh', ['-c', 'while IFS= read -r p; do if sync -f "$p" 2>/dev/null; then echo 0; else echo 1; fi; done'], {
        stdio: ['pipe', 'pipe', 'pipe'],
      });
    } catch {
      syncfsWorks = false;
      return null;
    }
    shell.stdout.setEncoding('utf8');
    shell.stdout.on('data', (text: string) => {
      this.#buffer += text;
      let at: number;
      while ((at = this.#buffer.indexOf('\n')) !== -1) {
        const line = this.#buffer.slice(0, at);
        this.#buffer = this.#buffer.slice(at + 1);
        this.#settle(line === '0');
      }
    });
    const gone = () => {
      this.#shell = null;
      while (this.#waiting.length > 0) this.#settle(false);
    };
    shell.on('error', gone);
    shell.on('exit', gone);
    shell.stdin.on('error', () => undefined);
    (shell.stderr as unknown as { unref(): void }).unref();
    (shell.stdin as unknown as { unref(): void }).unref();
    this.#ref(shell, false);
    this.#shell = shell;
    return shell;
  }

  #ref(shell: ChildProcessWithoutNullStreams, on: boolean): void {
    const stdout = shell.stdout as unknown as { ref(): void; unref(): void };
    if (on) {
      shell.ref();
      stdout.ref();
    } else {
      shell.unref();
      stdout.unref();
    }
  }

  #settle(ok: boolean): void {
    this.#waiting.shift()?.(ok);
    if (this.#waiting.length === 0 && this.#shell !== null) this.#ref(this.#shell, false);
  }
}

/** One per process: the shell exits with it (its stdin closes). */
const syncfsHelper = new Syncfs();

function syncfs(path: string): Promise<boolean> {
  return syncfsHelper.run(path);
}

/** Makes one file's bytes (and metadata: its mtime) durable. Throws when the disk refuses. */
async function fsyncFile(path: string): Promise<void> {
  // 'r+': Windows flushes only a handle open for writing.
  const handle = await open(path, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Makes a folder's entries (renames into it) durable, where folders can be fsynced. */
export async function fsyncDir(path: string): Promise<void> {
  try {
    const handle = await open(path, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Folders cannot be fsynced on Windows; nothing more can be done there.
  }
}

/** Runs `fn` over `items`, at most `limit` at a time (the thread pool has four threads). */
async function eachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** The longest a batch stays open: a run killed loses at most about this much of its downloads. */
export const BATCH_SECONDS = 2;
/** Batches of at most this many files, or of files this large on average, are fsynced file by file. */
const FEW_FILES = 64;
const LARGE_FILE = 256 * 1024;

/** Bodies up to this size go to the file thread (their cost is in system calls, not in bytes). */
const TINY = 64 * 1024;

/** Bytes kept in memory before a temporary file is written to: a small resource is written in one go. */
const SLICE = 1 << 20;

/**
 * A temporary file written off the main thread: a body up to 64 KiB in one job on the file thread, up to 1 MiB in
 * one write in libuv's pool, a larger one in slices of about
 * 1 MiB, each written while the next is being received.
 */
export class TempFile {
  readonly path: string;
  #chunks: Buffer[] = [];
  #held = 0;
  #handle: Promise<FileHandle> | null = null;
  #writing: Promise<unknown> = Promise.resolve();
  #closed = false;

  /** Given at creation, the file gets its mtime as it is written (one system call fewer than setting it later). */
  readonly mtimeMs: number | undefined;

  constructor(path: string, mtimeMs?: number) {
    this.path = path;
    this.mtimeMs = mtimeMs !== undefined && Number.isFinite(mtimeMs) ? mtimeMs : undefined;
  }

  /** Adds a chunk; returns a promise to await only when the caller should wait for the disk (backpressure). */
  add(chunk: Buffer): Promise<void> | undefined {
    this.#chunks.push(chunk);
    this.#held += chunk.byteLength;
    if (this.#held < SLICE) return undefined;
    return this.#spill();
  }

  async #spill(): Promise<void> {
    const chunks = this.#chunks;
    this.#chunks = [];
    this.#held = 0;
    this.#handle ??= open(this.path, 'w');
    const handle = await this.#handle;
    // At most one slice being written while the next one fills.
    await this.#writing;
    this.#writing = writeAll(handle, chunks);
    // Its failure (a full disk) is met by the next slice, close or discard; until then it is no unhandled rejection,
    // which would end the whole process.
    this.#writing.catch(() => undefined);
  }

  /**
   * Writes what is left and closes the file. `lazy`: no one awaits it before its durable batch is committed (which
   * flushes the file thread), so a small body may wait a few milliseconds for others to travel with.
   */
  async close(lazy = false): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#handle === null && this.#held > TINY) {
      // A body of a few hundred KiB: one writeFile in the pool, as it is (copying it to the file thread would cost
      // more than the system calls it saves).
      const chunks = this.#chunks;
      this.#chunks = [];
      const handle = await open(this.path, 'w');
      try {
        await writeAll(handle, chunks);
        if (this.mtimeMs !== undefined) await handle.utimes(this.mtimeMs / 1000, this.mtimeMs / 1000);
      } finally {
        await handle.close();
      }
      return;
    }
    if (this.#handle === null) {
      // A small body: created, written and closed in one job on the file thread. Its bytes are copied once, into the
      // buffer that carries the bytes of every file in the thread's next message: posting the chunks as they are
      // would copy every buffer they are views of (often a whole socket read of 64 KiB for a 2 KiB body).
      const chunks = this.#chunks;
      this.#chunks = [];
      await fileThread.write(this.path, chunks, this.mtimeMs, lazy);
      return;
    }
    const handle = await this.#handle;
    try {
      await this.#writing;
      if (this.#chunks.length > 0) await writeAll(handle, this.#chunks);
      this.#chunks = [];
      if (this.mtimeMs !== undefined) await handle.utimes(this.mtimeMs / 1000, this.mtimeMs / 1000);
    } finally {
      await handle.close();
    }
  }

  /** Closes (if open) and removes the file: an aborted or failed download. */
  async discard(): Promise<void> {
    this.#closed = true;
    this.#chunks = [];
    if (this.#handle !== null) {
      const handle = await this.#handle.catch(() => null);
      await this.#writing.catch(() => undefined);
      await handle?.close().catch(() => undefined);
    }
    await rm(this.path, { force: true });
  }
}

/** Batches queued for flushing beyond which `drained` waits: one being flushed while the next waits its turn. */
const MAX_QUEUED_BATCHES = 2;

export class DurableWriter<T> {
  readonly tmpDir: string;
  #batch: Staged<T>[] = [];
  #batchSize: number;
  #batchBytes: number;
  #stagedBytes = 0;
  #commit: DurableOptions<T>['commit'];
  #beforeRename: DurableOptions<T>['beforeRename'];
  #durable: boolean;
  #chain: Promise<void> = Promise.resolve();
  /** Each batch handed to #chain and not yet flushed, oldest first. */
  #queued: Promise<void>[] = [];
  #madeDirs = new Set<string>();
  #n = 0;
  #error: unknown = null;
  #ageTimer: ReturnType<typeof setTimeout> | null = null;
  #root: string | undefined;
  #intentFile: string | undefined;
  #intent: DurableOptions<T>['intent'];
  /** The intent file's folder entry was made durable (it is created once, then only emptied). */
  #intentKnown = false;

  constructor(options: DurableOptions<T>) {
    this.tmpDir = options.tmpDir;
    this.#root = options.root;
    this.#batchSize = options.batchSize ?? 500;
    this.#batchBytes = options.batchBytes ?? 64 * 1024 * 1024;
    this.#commit = options.commit;
    this.#beforeRename = options.beforeRename;
    this.#durable = options.durable ?? true;
    this.#intentFile = options.intent !== undefined ? options.intentFile : undefined;
    this.#intent = options.intent;
    // Whatever an earlier, killed run left half-written is thrown away.
    rmSync(this.tmpDir, { recursive: true, force: true });
    mkdirSync(this.tmpDir, { recursive: true });
  }

  /** A new temporary file path (unique in this writer). */
  tempPath(): string {
    return join(this.tmpDir, `${process.pid}-${++this.#n}.part`);
  }

  /** A new temporary file, written off the main thread; with `mtimeMs`, given that mtime as it is closed. */
  tempFile(mtimeMs?: number): TempFile {
    return new TempFile(this.tempPath(), mtimeMs);
  }

  /** Queues a finished file (or a row alone); a full batch (or one open for BATCH_SECONDS) is flushed in the background. */
  stage(item: Staged<T>): void {
    // A write that fails is reported by the flush that awaits it, maybe only after earlier ones: until then its
    // rejection must not count as unhandled (Node reports it, and may end the process).
    item.written?.catch(() => undefined);
    this.#batch.push(item);
    this.#stagedBytes += item.bytes ?? 0;
    if (this.#batch.length >= this.#batchSize || this.#stagedBytes >= this.#batchBytes) this.#flushInBackground();
    else if (this.#batch.length === 1) {
      // A slow run (a delay between requests, a slow Source) fills a batch slowly: what a kill would lose is bounded
      // by time too, not only by the batch's size.
      const batch = this.#batch;
      this.#ageTimer = setTimeout(() => {
        if (this.#batch === batch) this.#flushInBackground();
      }, BATCH_SECONDS * 1000);
      this.#ageTimer.unref();
    }
  }

  #flushInBackground(): void {
    // Its failure is kept (#error) and thrown by the next flush the run awaits.
    this.flush().catch(() => undefined);
  }

  get pending(): number {
    return this.#batch.length;
  }

  /**
   * Waits while too many batches are queued (backpressure for the fetchers): full batches are flushed in the
   * background as they fill, so a writer faster than the disk (small bitstreams of a dump, whose files the file
   * thread creates at the file system's pace) would otherwise queue batch after batch, and their bytes, in memory.
   */
  async drained(): Promise<void> {
    if (this.#batch.length >= this.#batchSize * 2 || this.#stagedBytes >= this.#batchBytes * 2) await this.flush();
    while (this.#queued.length >= MAX_QUEUED_BATCHES) await this.#queued[0];
  }

  /** Flushes what is staged; resolves when it is committed. Rejects if a commit failed. */
  flush(): Promise<void> {
    if (this.#ageTimer !== null) {
      clearTimeout(this.#ageTimer);
      this.#ageTimer = null;
    }
    const batch = this.#batch;
    this.#batch = [];
    this.#stagedBytes = 0;
    this.#chain = this.#chain.then(() => (batch.length > 0 ? this.#flushBatch(batch) : undefined)).catch((err: unknown) => {
      this.#error ??= err;
    });
    if (batch.length > 0) {
      const done = this.#chain;
      this.#queued.push(done);
      void done.then(() => this.#queued.splice(this.#queued.indexOf(done), 1));
    }
    return this.#chain.then(() => {
      if (this.#error !== null) throw this.#error;
    });
  }

  async #flushBatch(batch: Staged<T>[]): Promise<void> {
    // Small files handed over lazily are awaited now.
    fileThread.flush();
    const withFiles = batch.filter((b) => b.temp !== null);
    const failedTemps = new Map<Staged<T>, string>();
    // Files handed over before they were fully written: all written (or failed) before anything else happens.
    // (One after the other: by the time a batch is flushed nearly all are written, and an await each costs less than
    // an async function each.)
    for (const b of withFiles) {
      if (b.written === undefined) continue;
      try {
        await b.written;
      } catch (err) {
        failedTemps.set(b, `could not be written: ${isDiskFull(err) ? 'the disk is full' : (err as Error).message}`);
      }
    }
    // Which files are about to be put in place: written before the syncfs below makes them durable with the bytes.
    let intended = false;
    if (this.#intentFile !== undefined) {
      const text = this.#intent!(withFiles.filter((b) => !failedTemps.has(b)).map((b) => b.record));
      if (text !== '') {
        await appendFile(this.#intentFile, text);
        intended = true;
      }
    }
    // Runs one job per staged file on the file thread; a failed job fails its file with `why`.
    const each = async (items: Staged<T>[], job: (b: Staged<T>) => FileJob | null, why: string) => {
      const jobs: FileJob[] = [];
      const owners: Staged<T>[] = [];
      for (const b of items) {
        if (failedTemps.has(b)) continue;
        const j = job(b);
        if (j === null) continue;
        jobs.push(j);
        owners.push(b);
      }
      const results = await fileThread.run(jobs);
      results.forEach((r, i) => {
        if (r !== null) failedTemps.set(owners[i]!, `${why}: ${r}`);
      });
    };
    // mtimes first, so that the syncfs below makes them durable with the bytes.
    await each(
      withFiles,
      (b) => (b.mtimeMs === undefined || !Number.isFinite(b.mtimeMs) ? null : { op: 'utimes', path: b.temp!, mtimeMs: b.mtimeMs }),
      'its modification time could not be set',
    );
    // Many small files: one syncfs (an fsync each would cost a journal commit each). Few or large files: an fsync
    // each, which writes only their bytes — syncfs would also write out whatever else is dirty on the file system,
    // such as a dump's package that is deleted once read, or other programs' data.
    const bytes = withFiles.reduce((n, b) => n + (b.bytes ?? 0), 0);
    const fileByFile = withFiles.length <= FEW_FILES || bytes >= withFiles.length * LARGE_FILE;
    if (this.#durable && withFiles.length > 0) {
      // fsyncs wait on the disk: they run in libuv's pool, several at once, not on the file thread, where they would
      // hold up the quick jobs (small files being created) queued behind them. Small files: eight at once, so that
      // the file system commits their metadata together. Large ones: two, since their fsyncs wait on the disk's
      // bandwidth whatever their number, and each holds a pool thread that a dump's inflating and writing need (a
      // 1 GiB dump went from 3.7–4.1 s to 3.4–3.7 s here).
      if (fileByFile || !(await syncfs(this.tmpDir))) {
        const large = bytes >= withFiles.length * LARGE_FILE;
        await eachLimited(
          withFiles.filter((b) => !failedTemps.has(b)),
          large ? 2 : 8,
          async (b) => {
            try {
              await fsyncFile(b.temp!);
            } catch (err) {
              failedTemps.set(b, `could not be made durable: ${(err as Error).message}`);
            }
          },
        );
        // (A failure here fails the batch: its files must not be put in place unsaid.)
        if (intended) {
          await fsyncFile(this.#intentFile!);
          if (!this.#intentKnown) await fsyncDir(dirname(this.#intentFile!));
        }
      }
      this.#intentKnown ||= intended;
    }
    // Before the folders are made: a deletion's file may stand where a new file needs a folder (`a`, then `a/b`).
    // A file whose folder then cannot be made fails, and its commit puts back what this marked.
    if (this.#beforeRename !== undefined) {
      this.#beforeRename(
        withFiles.filter((b) => !failedTemps.has(b)).map((b) => b.record),
        batch.filter((b) => b.temp === null).map((b) => b.record),
      );
    }
    const newDirs: string[] = [];
    const badDirs = new Map<string, string>();
    for (const b of withFiles) {
      const dir = dirname(b.final);
      if (failedTemps.has(b) || this.#madeDirs.has(dir) || badDirs.has(dir)) continue;
      // The folders that exist already on the way are checked here (a few lstats per new folder, once a run); the
      // thread makes the rest.
      try {
        if (this.#root !== undefined) checkFolders(this.#root, dir);
        this.#madeDirs.add(dir);
        newDirs.push(dir);
      } catch (err) {
        badDirs.set(dir, (err as Error).message);
      }
    }
    const dirResults = await fileThread.run(newDirs.map((path) => ({ op: 'mkdir', path })));
    dirResults.forEach((r, i) => {
      if (r !== null) {
        badDirs.set(newDirs[i]!, r);
        this.#madeDirs.delete(newDirs[i]!);
      }
    });
    for (const b of withFiles) {
      const bad = badDirs.get(dirname(b.final));
      if (bad !== undefined && !failedTemps.has(b)) failedTemps.set(b, `could not be put in place: ${bad}`);
    }
    await each(withFiles, (b) => ({ op: 'rename', from: b.temp!, to: b.final }), 'could not be put in place');
    const touchedDirs = new Set<string>();
    for (const b of withFiles) if (!failedTemps.has(b)) touchedDirs.add(dirname(b.final));
    if (this.#durable && touchedDirs.size > 0) {
      if (fileByFile || !(await syncfs(this.tmpDir))) await eachLimited([...touchedDirs], 8, fsyncDir);
    }
    const done: T[] = [];
    const failed: { record: T; reason: string }[] = [];
    const removals: FileJob[] = [];
    for (const b of batch) {
      const reason = failedTemps.get(b);
      if (reason === undefined) done.push(b.record);
      else {
        removals.push({ op: 'rm', path: b.temp! });
        failed.push({ record: b.record, reason });
      }
    }
    await fileThread.run(removals);
    this.#commit(done, failed);
    // Kept while an earlier batch's commit failed: its files stay unrecorded, and still the writer's.
    if (intended && this.#error === null) await truncate(this.#intentFile!);
  }
}
