// One thread of its own for the system calls of many small files (create, write, mtime, rename). fsyncs are not
// here: they wait on the disk and would hold up the quick jobs behind them (durable.ts runs them in libuv's pool).
//
// Why not libuv's thread pool: each asynchronous fs call is a hop to a pool thread and back, a small file takes five
// of them, and four pool threads creating files in the same folders at once contend for the same kernel locks — on
// this project's 2-core test machine the kernel time per file more than doubled. One thread that runs plain
// synchronous calls, a batch per message, keeps the main thread free for HTTP and hashing and does the file work
// without contention. Jobs travel in batches, results come back in order: at most two messages are on their way
// (one running, one waiting), and whatever is queued meanwhile goes with the next, so a busy thread gets fewer, larger
// messages (each costs the main thread a postMessage and a reply) and an idle one gets its jobs at once. The bytes of
// the small files a message writes travel in one buffer of its own, moved to the thread, not copied.
//
// The thread's code is a plain JavaScript string run with `eval: true`, so that it works the same whether the engine
// runs from TypeScript sources (the CLI, the tests) or from the Electron bundle (no separate entry to build).
import { Worker } from 'node:worker_threads';
import { writeAll } from './write-all.ts';

export type FileJob =
  | { op: 'write'; path: string; chunks: Uint8Array[]; mtimeMs?: number }
  /** Bytes `at` to `at + length` of the message's packed buffer (FileThread.write). */
  | { op: 'write-packed'; path: string; at: number; length: number; mtimeMs?: number }
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
function run(job, packed) {
  switch (job.op) {
    case 'write-packed': {
      const fd = fs.openSync(job.path, 'w');
      try {
        let at = 0;
        while (at < job.length) at += fs.writeSync(fd, packed, job.at + at, job.length - at);
        if (job.mtimeMs !== undefined) fs.futimesSync(fd, job.mtimeMs / 1000, job.mtimeMs / 1000);
      } finally {
        fs.closeSync(fd);
      }
      return;
    }
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
parentPort.on('message', ({ jobs, packed }) => {
  const bytes = packed ? new Uint8Array(packed) : null;
  const results = new Array(jobs.length);
  for (let i = 0; i < jobs.length; i++) {
    try {
      run(jobs[i], bytes);
      results[i] = null;
    } catch (err) {
      results[i] = err && err.message ? String(err.message) : String(err);
    }
  }
  parentPort.postMessage(results);
});
`;

/** Messages on their way to the thread at once: one it runs, one waiting, so it never waits for the main thread. */
const IN_FLIGHT = 2;
/**
 * A second message goes while the thread is busy only with at least this many jobs: each message costs the main
 * thread ~50–70 µs whatever it carries (measured here), and a thread that keeps up would otherwise get one per job
 * or two, thousands of them for a baseline of small files. Fewer jobs wait for the thread's answer, which sends them.
 */
const SECOND_MESSAGE_FROM = 32;
/**
 * Writes no one waits for yet (a download's file, awaited only when its durable batch is committed, which calls
 * `flush`) wait this long for others to an idle thread: a baseline of small files then sends some 300 messages, not
 * 1,000–1,300 of a few jobs each (each costs the main thread its postMessage and its reply). Jobs someone awaits go
 * after a millisecond, as before.
 */
const LAZY_DELAY_MS = 8;

type Part = { from: number; to: number; resolve: (r: FileJobResult[]) => void };

export class FileThread {
  #worker: Worker | null = null;
  #failed = false;
  #queued: FileJob[] = [];
  /** Bytes of queued `write` calls, packed into one buffer when their message is sent. */
  #pack: { job: FileJob & { op: 'write-packed' }; chunks: Uint8Array[] }[] = [];
  #packBytes = 0;
  #queuedResolvers: Part[] = [];
  #transfer: ArrayBuffer[] = [];
  #scheduled = false;
  /** The timer of a scheduled send, and whether it waits the lazy delay. */
  #timer: NodeJS.Timeout | NodeJS.Immediate | null = null;
  #lazyTimer = false;
  readonly #lazyDelayMs: number;
  #messages = 0;
  #inFlight: { parts: Part[] }[] = [];
  #here: Promise<void> = Promise.resolve();

  constructor(options: { lazyDelayMs?: number } = {}) {
    this.#lazyDelayMs = options.lazyDelayMs ?? LAZY_DELAY_MS;
  }

  /** Messages sent to the thread so far (tests). */
  get messages(): number {
    return this.#messages;
  }

  /**
   * Runs `jobs` in order on the file thread (after every job queued before them); resolves with one result each.
   * `transfer`: ArrayBuffers of the jobs' chunks that move to the thread instead of being copied (the caller must not
   * touch them afterwards).
   */
  run(jobs: FileJob[], transfer: ArrayBuffer[] = []): Promise<FileJobResult[]> {
    return this.#enqueue(jobs, transfer, false);
  }

  #enqueue(jobs: FileJob[], transfer: ArrayBuffer[], lazy: boolean): Promise<FileJobResult[]> {
    if (jobs.length === 0) return Promise.resolve([]);
    // Without a thread (it could not start, or stopped) the jobs still go through the queue: #send runs them here.
    this.#start();
    return new Promise((resolve) => {
      const from = this.#queued.length;
      this.#queued.push(...jobs);
      this.#transfer.push(...transfer);
      this.#queuedResolvers.push({ from, to: this.#queued.length, resolve });
      const busy = this.#inFlight.length;
      const full = this.#queued.length >= SECOND_MESSAGE_FROM;
      if (busy === 0 || (busy < IN_FLIGHT && full)) {
        // Everything queued meanwhile travels in the same message: to an idle thread a few jobs go after a
        // millisecond (a thread that keeps up would otherwise get a message per job), or after LAZY_DELAY_MS when no
        // one waits for them; a full batch at once.
        if (full) this.#schedule(0);
        else this.#schedule(lazy ? this.#lazyDelayMs : 1);
      }
    });
  }

  /** Sends after `ms` (0: at the next turn), unless a send is due sooner already. */
  #schedule(ms: number): void {
    if (this.#scheduled && !(this.#lazyTimer && ms < this.#lazyDelayMs)) return;
    this.#cancelTimer();
    this.#scheduled = true;
    this.#lazyTimer = ms === this.#lazyDelayMs;
    this.#timer = ms === 0 ? setImmediate(() => this.#send()) : setTimeout(() => this.#send(), ms);
  }

  #cancelTimer(): void {
    if (this.#timer === null) return;
    if ('refresh' in this.#timer) clearTimeout(this.#timer);
    else clearImmediate(this.#timer as NodeJS.Immediate);
    this.#timer = null;
  }

  /** Jobs queued are now awaited (a durable batch is being committed): they go at once to an idle thread. */
  flush(): void {
    if (this.#queued.length > 0 && this.#inFlight.length === 0) this.#schedule(0);
  }

  /**
   * Writes a small file (created or truncated, given `mtimeMs`) from `chunks`, which may be views of larger buffers:
   * their bytes are copied into the buffer that moves to the thread with the next message. Rejects with its error.
   */
  async write(path: string, chunks: Uint8Array[], mtimeMs?: number, lazy = false): Promise<void> {
    let length = 0;
    for (const chunk of chunks) length += chunk.byteLength;
    const job: FileJob & { op: 'write-packed' } = { op: 'write-packed', path, at: 0, length, mtimeMs };
    this.#pack.push({ job, chunks });
    this.#packBytes += length;
    const [result] = await this.#enqueue([job], [], lazy);
    if (result !== null && result !== undefined) throw new Error(result);
  }

  /** One job; rejects with its error. */
  async one(job: FileJob, transfer: ArrayBuffer[] = []): Promise<void> {
    const [result] = await this.run([job], transfer);
    if (result !== null && result !== undefined) throw new Error(result);
  }

  #send(): void {
    this.#scheduled = false;
    this.#cancelTimer();
    const worker = this.#worker;
    const jobs = this.#queued;
    const parts = this.#queuedResolvers;
    const transfer = this.#transfer;
    this.#queued = [];
    this.#queuedResolvers = [];
    this.#transfer = [];
    if (jobs.length === 0) return;
    const packed = this.#packed();
    if (packed !== null) transfer.push(packed.buffer as ArrayBuffer);
    if (worker === null) {
      // One batch after the other, as the thread would.
      this.#here = this.#here.then(() => runHere(jobs, packed).then((results) => settle(parts, results)));
      return;
    }
    if (this.#inFlight.length === 0) worker.ref();
    this.#inFlight.push({ parts });
    this.#messages++;
    worker.postMessage({ jobs, packed: packed?.buffer ?? null }, transfer);
  }

  /** The bytes of the queued `write` calls in one buffer of their own (null when there are none); sets each job's `at`. */
  #packed(): Uint8Array | null {
    if (this.#pack.length === 0) return null;
    // Its own memory (not a slice of Node's pool), which can move to the thread; not zeroed, every byte is set below.
    const packed = new Uint8Array(Buffer.allocUnsafeSlow(this.#packBytes).buffer);
    let at = 0;
    for (const { job, chunks } of this.#pack) {
      job.at = at;
      for (const chunk of chunks) {
        packed.set(chunk, at);
        at += chunk.byteLength;
      }
    }
    this.#pack = [];
    this.#packBytes = 0;
    return packed;
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
      // What was queued while the thread was busy goes now, in one message.
      if (this.#queued.length > 0 && !this.#scheduled) this.#send();
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
    // Jobs held back while it was busy run here.
    if (this.#queued.length > 0 && !this.#scheduled) this.#send();
  }
}

function settle(parts: Part[], results: FileJobResult[]): void {
  for (const part of parts) part.resolve(results.slice(part.from, part.to));
}

/** Where no worker thread can be started: the same jobs through fs/promises, in order. */
async function runHere(jobs: FileJob[], packed: Uint8Array | null = null): Promise<FileJobResult[]> {
  const fs = await import('node:fs/promises');
  const results: FileJobResult[] = [];
  for (const job of jobs) {
    try {
      switch (job.op) {
        case 'write-packed': {
          const handle = await fs.open(job.path, 'w');
          try {
            await writeAll(handle, [packed!.subarray(job.at, job.at + job.length)]);
            if (job.mtimeMs !== undefined) await handle.utimes(job.mtimeMs / 1000, job.mtimeMs / 1000);
          } finally {
            await handle.close();
          }
          break;
        }
        case 'write': {
          const handle = await fs.open(job.path, 'w');
          try {
            await writeAll(handle, job.chunks);
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
