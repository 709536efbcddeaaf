// One thread of its own for the system calls of many small files (create, write, mtime, rename). fsyncs are not
// here: they wait on the disk and would hold up the quick jobs behind them (durable.ts runs them in libuv's pool).
//
// Why not libuv's thread pool: each asynchronous fs call is a hop to a pool thread and back, a small file takes five
// of them, and four pool threads creating files in the same folders at once contend for the same kernel locks — on
// this project's 2-core test machine the kernel time per file more than doubled. One thread that runs plain
// synchronous calls, a batch per message, keeps the main thread free for HTTP and hashing and does the file work
// without contention. Jobs queued in the same tick travel in one message; results come back in order.
//
// The thread's code is a plain JavaScript string run with `eval: true`, so that it works the same whether the engine
// runs from TypeScript sources (the CLI, the tests) or from the Electron bundle (no separate entry to build).
import { Worker } from 'node:worker_threads';

export type FileJob =
  | { op: 'write'; path: string; chunks: Uint8Array[]; mtimeMs?: number }
  | { op: 'utimes'; path: string; mtimeMs: number }
  | { op: 'mkdir'; path: string }
  | { op: 'rename'; from: string; to: string }
  | { op: 'rm'; path: string };

/** null when the job succeeded, else the error's message. */
export type FileJobResult = string | null;

const THREAD_SOURCE = String.raw`
'use strict';
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
function run(job) {
  switch (job.op) {
    case 'write': {
      const fd = fs.openSync(job.path, 'w');
      try {
        for (const chunk of job.chunks) {
          let at = 0;
          while (at < chunk.byteLength) at += fs.writeSync(fd, chunk, at, chunk.byteLength - at);
        }
        if (job.mtimeMs !== undefined) fs.futimesSync(fd, job.mtimeMs / 1000, job.mtimeMs / 1000);
      } finally {
        fs.closeSync(fd);
      }
      return;
    }
    case 'utimes':
      fs.utimesSync(job.path, job.mtimeMs / 1000, job.mtimeMs / 1000);
      return;
    case 'mkdir':
      fs.mkdirSync(job.path, { recursive: true });
      return;
    case 'rename':
      fs.renameSync(job.from, job.to);
      return;
    case 'rm':
      fs.rmSync(job.path, { force: true });
      return;
    default:
      throw new Error('unknown file job ' + job.op);
  }
}
parentPort.on('message', (jobs) => {
  const results = new Array(jobs.length);
  for (let i = 0; i < jobs.length; i++) {
    try {
      run(jobs[i]);
      results[i] = null;
    } catch (err) {
      results[i] = err && err.message ? String(err.message) : String(err);
    }
  }
  parentPort.postMessage(results);
});
`;

export class FileThread {
  #worker: Worker | null = null;
  #failed = false;
  #queued: FileJob[] = [];
  #queuedResolvers: { from: number; to: number; resolve: (r: FileJobResult[]) => void }[] = [];
  #transfer: ArrayBuffer[] = [];
  #scheduled = false;
  #inFlight: { parts: { from: number; to: number; resolve: (r: FileJobResult[]) => void }[] }[] = [];

  /**
   * Runs `jobs` in order on the file thread (after every job queued before them); resolves with one result each.
   * `transfer`: ArrayBuffers of the jobs' chunks that move to the thread instead of being copied (the caller must not
   * touch them afterwards).
   */
  run(jobs: FileJob[], transfer: ArrayBuffer[] = []): Promise<FileJobResult[]> {
    if (jobs.length === 0) return Promise.resolve([]);
    const worker = this.#start();
    if (worker === null) return runHere(jobs);
    return new Promise((resolve) => {
      const from = this.#queued.length;
      this.#queued.push(...jobs);
      this.#transfer.push(...transfer);
      this.#queuedResolvers.push({ from, to: this.#queued.length, resolve });
      if (!this.#scheduled) {
        this.#scheduled = true;
        // Everything queued in this turn of the event loop travels in one message.
        setImmediate(() => this.#send());
      }
    });
  }

  /** One job; rejects with its error. */
  async one(job: FileJob, transfer: ArrayBuffer[] = []): Promise<void> {
    const [result] = await this.run([job], transfer);
    if (result !== null && result !== undefined) throw new Error(result);
  }

  #send(): void {
    this.#scheduled = false;
    const worker = this.#worker;
    const jobs = this.#queued;
    const parts = this.#queuedResolvers;
    const transfer = this.#transfer;
    this.#queued = [];
    this.#queuedResolvers = [];
    this.#transfer = [];
    if (jobs.length === 0) return;
    if (worker === null) {
      void runHere(jobs).then((results) => settle(parts, results));
      return;
    }
    if (this.#inFlight.length === 0) worker.ref();
    this.#inFlight.push({ parts });
    worker.postMessage(jobs, transfer);
  }

  #start(): Worker | null {
    if (this.#worker !== null) return this.#worker;
    if (this.#failed) return null;
    let worker: Worker;
    try {
      worker = new Worker(THREAD_SOURCE, { eval: true, name: 'rsdesk-files' });
    } catch {
      this.#failed = true;
      return null;
    }
    worker.on('message', (results: FileJobResult[]) => {
      const batch = this.#inFlight.shift();
      if (this.#inFlight.length === 0) worker.unref();
      if (batch) settle(batch.parts, results);
    });
    worker.on('error', () => this.#lost(worker));
    worker.on('exit', () => this.#lost(worker));
    worker.unref();
    this.#worker = worker;
    return worker;
  }

  /** The thread died (it should not): what it was doing is reported as failed, and later jobs run here. */
  #lost(worker: Worker): void {
    if (this.#worker !== worker) return;
    this.#worker = null;
    this.#failed = true;
    for (const batch of this.#inFlight.splice(0)) {
      for (const part of batch.parts) part.resolve(new Array(part.to - part.from).fill('the file thread stopped'));
    }
  }
}

function settle(parts: { from: number; to: number; resolve: (r: FileJobResult[]) => void }[], results: FileJobResult[]): void {
  for (const part of parts) part.resolve(results.slice(part.from, part.to));
}

/** Where no worker thread can be started: the same jobs through fs/promises, in order. */
async function runHere(jobs: FileJob[]): Promise<FileJobResult[]> {
  const fs = await import('node:fs/promises');
  const results: FileJobResult[] = [];
  for (const job of jobs) {
    try {
      switch (job.op) {
        case 'write': {
          const handle = await fs.open(job.path, 'w');
          try {
            await handle.writev(job.chunks);
            if (job.mtimeMs !== undefined) await handle.utimes(job.mtimeMs / 1000, job.mtimeMs / 1000);
          } finally {
            await handle.close();
          }
          break;
        }
        case 'utimes':
          await fs.utimes(job.path, job.mtimeMs / 1000, job.mtimeMs / 1000);
          break;
        case 'mkdir':
          await fs.mkdir(job.path, { recursive: true });
          break;
        case 'rename':
          await fs.rename(job.from, job.to);
          break;
        case 'rm':
          await fs.rm(job.path, { force: true });
          break;
      }
      results.push(null);
    } catch (err) {
      results.push(err instanceof Error ? err.message : String(err));
    }
  }
  return results;
}

/** One per process: its thread is idle (and does not keep the process alive) between batches. */
export const fileThread = new FileThread();
