// Bitstreams extracted off the main thread: read from the package file, inflated, hashed and written to their
// temporary files by a thread of their own, while the main thread receives the next package bytes.
//
// Why: on the main thread, every 256 KiB of a bitstream cost it several callbacks (a file read, the inflater, the
// hash, the write), and each turn of its event loop is also when the download's socket is read, 64 KiB at a time.
// While a 1 GiB package was read as it downloaded, the download slowed to the pace of the extraction (a quarter of
// its speed alone), and every inflated chunk was memory the main heap had to account for: dozens of full garbage
// collections of the whole heap. Here the main thread only hands out byte ranges and reads back verdicts; the
// thread's own small heap takes the garbage.
//
// The thread reads through a file descriptor the main thread keeps open (PackageBytes.fileRange) and is closed only
// after every job on it settled. A job writes only to the temporary path it is given and removes it on failure; the
// verdict (length, CRC-32, digests against the manifest) is the caller's, with the same check as VerifyStream.
//
// Its code is a plain JavaScript string run with `eval: true`, like file-thread.ts, so it works the same from the
// TypeScript sources and from the Electron bundle.
import { Worker } from 'node:worker_threads';

/** Bitstreams from this length on are written with O_DIRECT (the thread's code has the same number). */
const DIRECT_FROM = 1 << 20;

const SOURCE = String.raw`
'use strict';
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const crypto = require('node:crypto');
const zlib = require('node:zlib');
const { pipeline } = require('node:stream/promises');
const { Readable, Transform, Writable } = require('node:stream');
const running = new Map();
function failure(code, message) {
  const err = new Error(message);
  err.failure = code;
  return err;
}
// An error of the file being written: a sink failure unless it already says what it is.
function sinkFailed(err) {
  if (err && !err.failure) err.failure = 'sink-failed';
}
// Bytes [start, end) of a descriptor that is not this thread's: read with positions, never closed here (a stream
// of Node's own closes its descriptor when destroyed, even with autoClose off). settled() waits for a read under way.
function rangeReader(fd, start, end) {
  let position = start;
  let reading = Promise.resolve();
  const stream = new Readable({
    highWaterMark: 1 << 20,
    read() {
      const want = Math.min(1 << 20, end - position);
      if (want <= 0) {
        this.push(null);
        return;
      }
      const buffer = Buffer.allocUnsafe(want);
      reading = new Promise((resolve) => {
        fs.read(fd, buffer, 0, want, position, (err, n) => {
          resolve();
          if (this.destroyed) return;
          if (err) this.destroy(err);
          else if (n === 0) this.destroy(failure('corrupt', 'the package ends before the entry does'));
          else {
            position += n;
            this.push(n === want ? buffer : buffer.subarray(0, n));
          }
        });
      });
    },
  });
  stream.settled = () => reading;
  return stream;
}
// Large bitstreams are written with O_DIRECT where the system allows it (Linux, a file system that supports it):
// the bytes go from a buffer of ours to the disk without a copy into the page cache. On this project's test machine
// (a VM whose free memory is handed back to its host) every new page-cache page cost a fault on the host: writing a
// GiB through the cache took ~2.4 s of kernel time and ran at ~350 MB/s with its fsync, against ~1.2 GB/s direct.
// O_DIRECT needs buffers, lengths and file positions aligned to the device's block: the buffers are slices of one
// WebAssembly.Memory (page-aligned), every write but the last is a whole slab, and the last is padded to a block and
// the file then truncated to its length. Anything refused (no O_DIRECT here, a file system without it, an alignment
// larger than ours) falls back to plain writes, and the file is the same. Slabs of 512 KiB: a job holds two, and
// with 1 MiB ones the two threads' slabs were 16 MB of the dump's peak memory for no measurable speed.
const DIRECT = process.platform === 'linux' ? fs.constants.O_DIRECT : undefined;
const ALIGN = 4096;
const SLAB = 1 << 19;
const SLABS = 8;
const DIRECT_FROM = ${DIRECT_FROM};
// Deflated input read per step, in buffers reused from job to job (one per job under way).
const INPUT = 1 << 18;
const inputPool = [];
const RAW_INFLATE = (() => {
  try {
    const z = zlib.createInflateRaw();
    const ok = z._handle && typeof z._handle.writeSync === 'function' && z._writeState instanceof Uint32Array;
    z.close();
    return Boolean(ok) && !process.env.RSDESK_STREAM_INFLATE;
  } catch {
    return false;
  }
})();
let slabPool = null;
let directRefused = DIRECT === undefined;
function takeSlabs(n) {
  if (slabPool === null) {
    slabPool = [];
    try {
      const memory = new WebAssembly.Memory({ initial: (SLABS * SLAB) / 65536, maximum: (SLABS * SLAB) / 65536 });
      for (let i = 0; i < SLABS; i++) slabPool.push(new Uint8Array(memory.buffer, i * SLAB, SLAB));
    } catch {}
  }
  // Last returned, first taken: the same few slabs serve one job after the other, and the rest of the memory stays
  // untouched (not resident).
  return slabPool.length < n ? null : slabPool.splice(slabPool.length - n, n);
}
const readAt = (fd, buffer, offset, length, position) =>
  new Promise((resolve, reject) => fs.read(fd, buffer, offset, length, position, (err, n) => (err ? reject(err) : resolve(n))));
const writeAt = (fd, buffer, length, position) =>
  new Promise((resolve, reject) => fs.write(fd, buffer, 0, length, position, (err, n) => (err ? reject(err) : resolve(n))));
// A Writable onto path through two slabs: with O_DIRECT when asked for and the system allows it, else through the
// page cache. null when no slabs are free or the file cannot be opened (the caller then writes as usual).
function slabSink(path, wantDirect) {
  const slabs = takeSlabs(2);
  if (slabs === null) return null;
  let direct = wantDirect && !directRefused;
  const flags = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC;
  let fd;
  try {
    try {
      fd = fs.openSync(path, direct ? flags | DIRECT : flags, 0o666);
    } catch (err) {
      if (!direct || !err || err.code !== 'EINVAL') throw err;
      directRefused = true;
      direct = false;
      fd = fs.openSync(path, flags, 0o666);
    }
  } catch {
    slabPool.push(...slabs);
    return null;
  }
  let current = 0;
  let fill = 0;
  let position = 0;
  let pending = Promise.resolve();
  let released = false;
  // Writes slab bytes [0, length) at file position at; a write the system refuses as misaligned is done again without O_DIRECT.
  async function put(slab, length, at) {
    let done = 0;
    while (done < length) {
      let n;
      try {
        n = await writeAt(fd, done === 0 ? slab : slab.subarray(done), length - done, at + done);
      } catch (err) {
        if (!direct || !err || err.code !== 'EINVAL') throw err;
        direct = false;
        directRefused = true;
        const plain = fs.openSync(path, fs.constants.O_WRONLY);
        fs.closeSync(fd);
        fd = plain;
        continue;
      }
      if (n === 0) throw new Error('the disk took no bytes');
      done += n;
    }
  }
  function release() {
    if (released) return;
    released = true;
    slabPool.push(...slabs);
  }
  // The current slab is full: it is written while the other fills (waiting only for the write before it).
  async function slabFull() {
    await pending;
    pending = put(slabs[current], SLAB, position);
    // Awaited by the next slab or the end; until then a failure must not count as unhandled (it would end the thread).
    pending.catch(() => undefined);
    position += SLAB;
    current ^= 1;
    fill = 0;
  }
  async function append(chunk) {
    let at = 0;
    while (at < chunk.length) {
      const take = Math.min(SLAB - fill, chunk.length - at);
      slabs[current].set(chunk.subarray(at, at + take), fill);
      fill += take;
      at += take;
      if (fill === SLAB) await slabFull();
    }
  }
  const sink = new Writable({
    highWaterMark: SLAB,
    write(chunk, _encoding, callback) {
      append(chunk).then(() => callback(), callback);
    },
    final(callback) {
      (async () => {
        await pending;
        if (fill > 0) {
          const length = position + fill;
          if (direct) {
            const padded = Math.ceil(fill / ALIGN) * ALIGN;
            slabs[current].fill(0, fill, padded);
            await put(slabs[current], padded, position);
            fs.ftruncateSync(fd, length);
          } else await put(slabs[current], fill, position);
        }
        fs.closeSync(fd);
        fd = -1;
      })().then(() => { release(); callback(); }, (err) => { release(); callback(err); });
    },
    destroy(err, callback) {
      pending.catch(() => undefined).then(() => {
        if (fd !== -1) {
          try { fs.closeSync(fd); } catch {}
          fd = -1;
        }
        release();
        callback(err);
      });
    },
  });
  // Whether every byte went without the page cache (false after a fallback).
  sink.direct = () => direct;
  // n more bytes are in the current slab at fill (read or inflated there): shown to each(), and the slab written
  // once full (a failure of that write is the file's).
  async function took(n, each) {
    each(slabs[current].subarray(fill, fill + n));
    fill += n;
    if (fill === SLAB) {
      await slabFull().catch((err) => {
        sinkFailed(err);
        throw err;
      });
    }
  }
  // Bytes [from, to) of descriptor src read straight into the slabs (no buffer of their own, so no garbage: each
  // thread's spent buffers otherwise stayed in its memory until a full collection), each piece shown to each()
  // before it is written. Stops with the error stop() gives, if any.
  sink.readFrom = async (src, from, to, each, stop) => {
    let at = from;
    while (at < to) {
      const reason = stop();
      if (reason) throw reason;
      const want = Math.min(SLAB - fill, to - at);
      const n = await readAt(src, slabs[current], fill, want, at);
      if (n === 0) throw failure('corrupt', 'the package ends before the entry does');
      at += n;
      await took(n, each);
    }
  };
  // The deflated bytes [from, to) of descriptor src inflated straight into the slabs, through the zlib handle's
  // synchronous call that takes an output buffer (the one Node's own inflateRawSync makes; no public API takes a
  // caller's buffer). The stream way allocated a new buffer for every 256 KiB inflated, which glibc kept in this
  // thread's malloc arena once freed (~40 MB of the 1 GiB dump's peak); this way the only buffers are the slabs and
  // one input buffer per job, reused. At most limit + 1 bytes come out: enough for each() to tell a bomb, never more.
  // null where this Node has no such call (the caller then inflates through a stream).
  sink.inflateFrom = RAW_INFLATE ? async (src, from, to, limit, each, stop) => {
    const z = zlib.createInflateRaw();
    // Node reports a zlib error by destroying the stream, and emits 'error' later: seen here, never unhandled.
    z.on('error', () => undefined);
    const handle = z._handle;
    const state = z._writeState;
    const input = inputPool.pop() || Buffer.allocUnsafeSlow(INPUT);
    try {
      let at = from;
      let inOff = 0;
      let inLen = 0;
      let produced = 0;
      for (;;) {
        const reason = stop();
        if (reason) throw reason;
        if (inLen === 0 && at < to) {
          const n = await readAt(src, input, 0, Math.min(INPUT, to - at), at);
          if (n === 0) throw failure('corrupt', 'the package ends before the entry does');
          at += n;
          inOff = 0;
          inLen = n;
        }
        const room = Math.min(SLAB - fill, limit + 1 - produced);
        // Z_FINISH once every byte is in: a stream cut short then fails ('unexpected end of file').
        handle.writeSync(at >= to ? zlib.constants.Z_FINISH : zlib.constants.Z_NO_FLUSH, input, inOff, inLen, slabs[current], fill, room);
        if (z.destroyed) throw failure('corrupt', (z.errored && z.errored.message) || 'the deflated data is damaged');
        const used = inLen - state[1];
        const have = room - state[0];
        inOff += used;
        inLen -= used;
        if (have > 0) {
          produced += have;
          await took(have, each);
        }
        // Output room left over: zlib took all it was given and wants more (read on, unless every byte was given),
        // or the deflate stream ended before its input did (what follows is ignored, as the stream way ignores it;
        // a bitstream cut short fails its length check).
        if (state[0] > 0 && (inLen > 0 || at >= to)) break;
      }
    } finally {
      inputPool.push(input);
      z.close();
    }
  } : null;
  return sink;
}
// The last bytes of a file written through the slabs, and its close. A failure here is the file's (a disk that is
// full takes the earlier slabs and refuses the tail): the end's callback has it before the stream's 'error' event
// would mark it, so it is marked here, else a full disk was reported as a corrupt package.
function written(slabs) {
  return new Promise((resolve, reject) => slabs.end((err) => {
    if (!err) return resolve();
    sinkFailed(err);
    reject(err);
  }));
}
async function run(job) {
  const controller = new AbortController();
  running.set(job.id, controller);
  const hashes = job.algorithms.map((a) => crypto.createHash(a));
  let crc = 0;
  let bytes = 0;
  let input = null;
  let slabs = null;
  const tooLong = () => failure('size-mismatch', 'more bytes than the ' + job.length.toLocaleString('en') + ' the package declares; stopped reading');
  const see = (chunk) => {
    for (const h of hashes) h.update(chunk);
    if (job.crc) crc = zlib.crc32(chunk, crc);
  };
  try {
    // Every bitstream written to a file goes through the slabs (no buffers of its own); large ones past the page cache.
    slabs = job.out !== null ? slabSink(job.out, job.length >= DIRECT_FROM) : null;
    if (slabs !== null) slabs.on('error', sinkFailed);
    if (job.method === 0 && slabs !== null) {
      // Stored: the package's bytes are the bitstream's, read straight into the slabs that are written.
      if (job.end - job.start > job.length) throw tooLong();
      await slabs.readFrom(job.fd, job.start, job.end, (view) => {
        bytes += view.length;
        see(view);
      }, () => (controller.signal.aborted ? failure('cancelled', 'cancelled') : null));
      await written(slabs);
    } else if (job.method === 8 && slabs !== null && slabs.inflateFrom !== null) {
      await slabs.inflateFrom(job.fd, job.start, job.end, job.length, (view) => {
        bytes += view.length;
        if (bytes > job.length) throw tooLong();
        see(view);
      }, () => (controller.signal.aborted ? failure('cancelled', 'cancelled') : null));
      await written(slabs);
    } else {
      input = rangeReader(job.fd, job.start, job.end);
      const check = new Transform({
        highWaterMark: 1 << 20,
        transform(chunk, _encoding, callback) {
          bytes += chunk.length;
          if (bytes > job.length) {
            callback(tooLong());
            return;
          }
          see(chunk);
          callback(null, chunk);
        },
      });
      const out = job.out === null
        ? new Writable({ highWaterMark: 1 << 20, write: (_chunk, _encoding, callback) => callback() })
        : (slabs ?? fs.createWriteStream(job.out, { highWaterMark: 1 << 20 }).on('error', sinkFailed));
      // The package's own errors (a read that fails, damaged deflate data) say 'corrupt' before the pipeline hands
      // them on to the file being written, which would otherwise report them as its own failure.
      const corrupt = (err) => {
        if (err && !err.failure) err.failure = 'corrupt';
      };
      input.on('error', corrupt);
      const stages = job.method === 8 ? [input, zlib.createInflateRaw({ chunkSize: 256 * 1024 }).on('error', corrupt), check, out] : [input, check, out];
      await pipeline(...stages, { signal: controller.signal });
    }
    parentPort.postMessage({ id: job.id, bytes, crc, digests: hashes.map((h) => h.digest('hex')), direct: slabs !== null && slabs.direct() });
  } catch (err) {
    // The caller closes the descriptor once this job is answered: no read of it may still be under way.
    if (input !== null) await input.settled();
    // A file written through the slabs stopped half-way gives them back and is closed before it is removed.
    if (slabs !== null && !slabs.destroyed) await new Promise((resolve) => { slabs.once('close', resolve); slabs.destroy(); });
    if (job.out !== null) {
      try { fs.rmSync(job.out, { force: true }); } catch {}
    }
    const code = err && err.failure ? err.failure : controller.signal.aborted ? 'cancelled' : 'corrupt';
    parentPort.postMessage({ id: job.id, error: String((err && err.message) || err), code });
  } finally {
    running.delete(job.id);
  }
}
parentPort.on('message', (m) => {
  if (m.cancel !== undefined) running.get(m.cancel)?.abort();
  else run(m);
});
`;

export interface ExtractJob {
  /** An open descriptor of the package (kept open by the caller until the job settles). */
  fd: number;
  /** The entry's stored bytes [start, end) and how they are stored (0 stored, 8 deflated). */
  start: number;
  end: number;
  method: number;
  /** The uncompressed length declared: reading stops with 'size-mismatch' past it. */
  length: number;
  /** Node's names of the digests to compute. */
  algorithms: string[];
  /** Whether to compute the CRC-32 (the result's `crc` is 0 when not). */
  crc: boolean;
  /** The temporary file to write (created or truncated; removed again on failure), or null to only verify. */
  out: string | null;
}

export type ExtractResult =
  /** `direct`: the file was written with O_DIRECT, past the page cache (a large bitstream, where the system allows it). */
  | { ok: true; bytes: number; crc: number; digests: string[]; direct: boolean }
  /** `code`: size-mismatch (more bytes than declared), sink-failed (the file could not be written), cancelled, corrupt. */
  | { ok: false; code: 'size-mismatch' | 'sink-failed' | 'cancelled' | 'corrupt'; message: string };

type Reply = { id: number; bytes?: number; crc?: number; digests?: string[]; direct?: boolean; error?: string; code?: string };

/**
 * Two threads, each running several jobs at once; a job goes to the one with fewer under way, so that the hashing
 * of two bitstreams runs on both cores (md5, the bulk of the work, is not faster than ~750 MB/s on one). Both write
 * every bitstream through their slabs and make no buffer per chunk. (When deflated bitstreams were still inflated
 * through zlib streams, the spent 256 KiB buffers stayed in each thread's malloc arena, ~35 MB each: two threads
 * of that kind peaked at 272–286 MB for the 1 GiB dump, and the threads were split by kind instead, large stored
 * bitstreams on one, everything else on the other. Balanced by load now: 342–357 MB/s against 322–323 split by
 * kind, in alternating runs, at the same ~200 MB.)
 */
type Lane = 0 | 1;

interface Slot {
  worker: Worker;
  jobs: Map<number, (r: ExtractResult) => void>;
}

export class ExtractThreads {
  #slots = new Map<Lane, Slot>();
  #failed = false;
  /** Set when the second thread could not be started: the first takes every job. */
  #secondRefused = false;
  #next = 0;

  /** Whether jobs can run (false where no worker thread can be started, or one stopped). */
  get available(): boolean {
    return !this.#failed;
  }

  /** Threads started so far (tests). */
  get threads(): number {
    return this.#slots.size;
  }

  /** Runs one job on the thread with fewer jobs under way; `signal` cancels it (the result then says 'cancelled'). */
  run(job: ExtractJob, signal?: AbortSignal): Promise<ExtractResult> {
    const slot = this.#pick();
    if (slot === null) return Promise.resolve({ ok: false, code: 'corrupt', message: 'no extraction thread could be started' });
    const id = ++this.#next;
    return new Promise<ExtractResult>((resolve) => {
      const onAbort = () => slot.worker.postMessage({ cancel: id });
      signal?.addEventListener('abort', onAbort, { once: true });
      if (slot.jobs.size === 0) slot.worker.ref();
      slot.jobs.set(id, (result) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(result);
      });
      slot.worker.postMessage({ id, ...job });
      if (signal?.aborted) onAbort();
    });
  }

  #pick(): Slot | null {
    if (this.#failed) return null;
    const first = this.#slot(0);
    if (first === null || first.jobs.size === 0 || this.#secondRefused) return first;
    const second = this.#slot(1);
    if (second === null) {
      // Not tried again for every job.
      if (this.#failed) return null;
      this.#secondRefused = true;
      return first;
    }
    return second.jobs.size < first.jobs.size ? second : first;
  }

  #slot(lane: Lane): Slot | null {
    let slot = this.#slots.get(lane);
    if (slot === undefined) {
      const started = this.#start(lane);
      if (started === null) return null;
      this.#slots.set(lane, started);
      slot = started;
    }
    return slot;
  }

  #start(lane: Lane): Slot | null {
    let worker: Worker;
    try {
      // A small young generation: the thread's garbage is buffers' wrappers, and a large one only holds memory.
      worker = new Worker(SOURCE, { eval: true, name: `rsdesk-extract-${lane + 1}`, resourceLimits: { maxYoungGenerationSizeMb: 4 } });
    } catch {
      // Without a second thread the first takes every job; without any, nothing runs here.
      if (lane === 0) this.#failed = true;
      return null;
    }
    const slot: Slot = { worker, jobs: new Map() };
    worker.on('message', (m: Reply) => {
      const settle = slot.jobs.get(m.id);
      if (settle === undefined) return;
      slot.jobs.delete(m.id);
      if (slot.jobs.size === 0) worker.unref();
      if (m.error === undefined) settle({ ok: true, bytes: m.bytes ?? 0, crc: m.crc ?? 0, digests: m.digests ?? [], direct: m.direct === true });
      else settle({ ok: false, code: (m.code as Exclude<ExtractResult, { ok: true }>['code']) ?? 'corrupt', message: m.error });
    });
    const lost = () => {
      this.#failed = true;
      if (this.#slots.get(lane) === slot) this.#slots.delete(lane);
      for (const settle of slot.jobs.values()) settle({ ok: false, code: 'corrupt', message: 'the extraction thread stopped' });
      slot.jobs.clear();
    };
    worker.on('error', lost);
    worker.on('exit', lost);
    worker.unref();
    return slot;
  }
}

/** One per process: its threads are idle (and do not keep the process alive) between jobs. */
export const extractThreads = new ExtractThreads();
