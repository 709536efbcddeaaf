// A bitstream's digests computed on a thread of its own while the main thread streams the bytes on to the sink.
// Extracting a Resource Dump is CPU-bound on a small machine: libuv's pool inflates and writes, and the main thread
// received, hashed (md5 at ~850 MB/s) and CRC-checked every byte, which made it the limit. Here the main thread only
// copies each chunk into a ring of shared memory (a memcpy) and posts where it is; the thread hashes from the ring
// and says how far it has read through a shared counter, which the main thread waits on (Atomics.waitAsync) only
// when the ring is full. No chunk is cloned or transferred, so nothing new is allocated per chunk on either side.
//
// One thread serves a few lanes (one bitstream each at a time): on two cores a second hashing thread would only
// compete with the first. When every lane is busy, or a bitstream is small, the caller hashes inline as before.
//
// Its code is a plain JavaScript string run with `eval: true`, like file-thread.ts, so it works the same from the
// TypeScript sources and from the Electron bundle.
import { Worker } from 'node:worker_threads';

// ES2024's Atomics.waitAsync (in Node since 16), not in the ES2023 library the project compiles against.
const waitAsync = (Atomics as unknown as {
  waitAsync(array: Int32Array, index: number, value: number, timeout: number): { async: boolean; value: Promise<unknown> | string };
}).waitAsync;

const SOURCE = String.raw`
'use strict';
const { parentPort } = require('node:worker_threads');
const crypto = require('node:crypto');
const zlib = require('node:zlib');
const lanes = new Map();
parentPort.on('message', (m) => {
  if (m.lane !== undefined && m.ring !== undefined) {
    lanes.set(m.lane, { bytes: new Uint8Array(m.ring), ctl: new Int32Array(m.ctl), seq: -1, hashes: [], crc: 0, failed: null });
    return;
  }
  const lane = lanes.get(m.lane);
  if (m.begin !== undefined) {
    lane.seq = m.begin;
    lane.failed = null;
    lane.crc = 0;
    lane.withCrc = m.crc;
    try {
      lane.hashes = m.algorithms.map((a) => crypto.createHash(a));
    } catch (err) {
      lane.hashes = [];
      lane.failed = String((err && err.message) || err);
    }
    return;
  }
  if (m.n !== undefined) {
    const view = lane.bytes.subarray(m.at, m.at + m.n);
    if (lane.failed === null) {
      for (const h of lane.hashes) h.update(view);
      if (lane.withCrc) lane.crc = zlib.crc32(view, lane.crc);
    }
    Atomics.add(lane.ctl, 0, m.n);
    Atomics.notify(lane.ctl, 0);
    return;
  }
  if (m.end !== undefined && m.end === lane.seq) {
    if (lane.failed !== null) parentPort.postMessage({ lane: m.lane, seq: m.end, error: lane.failed });
    else parentPort.postMessage({ lane: m.lane, seq: m.end, digests: lane.hashes.map((h) => h.digest('hex')), crc: lane.crc });
    lane.hashes = [];
  }
});
`;

/** Bytes of shared memory per lane: room for a few inflater chunks or file slices ahead of the hashing. */
const RING = 4 << 20;
/** Lanes (bitstreams hashed at once on the thread): a Resource Dump hands two bitstreams to its sink at a time. */
const LANES = 2;
/** How long to wait for room in a ring before checking that the thread is still there. */
const WAIT_MS = 2000;

export interface LaneResult {
  /** In the order of the algorithms given to `begin`. */
  digests: string[];
  /** The CRC-32 of the bytes (0 unless asked for). */
  crc: number;
}

type Reply = { lane: number; seq: number; digests?: string[]; crc?: number; error?: string };

export class HashThread {
  #worker: Worker | null = null;
  #failed = false;
  #free: HashLane[] = [];
  #lanes: HashLane[] = [];
  #busy = 0;

  /**
   * A lane hashing with Node's `algorithms` (md5, sha1, sha256), plus a CRC-32 when `crc`; null when every lane is
   * busy or no thread can run here (the caller then hashes inline). Give it back with `release`.
   */
  acquire(algorithms: string[], crc: boolean): HashLane | null {
    const worker = this.#start();
    if (worker === null) return null;
    let lane = this.#free.pop();
    if (lane === undefined) {
      if (this.#lanes.length >= LANES) return null;
      lane = new HashLane(this, worker, this.#lanes.length);
      this.#lanes.push(lane);
    }
    if (this.#busy++ === 0) worker.ref();
    lane.begin(algorithms, crc);
    return lane;
  }

  /** @internal */
  release(lane: HashLane): void {
    this.#free.push(lane);
    if (--this.#busy === 0) this.#worker?.unref();
  }

  get alive(): boolean {
    return this.#worker !== null;
  }

  #start(): Worker | null {
    if (this.#worker !== null) return this.#worker;
    if (this.#failed) return null;
    let worker: Worker;
    try {
      worker = new Worker(SOURCE, { eval: true, name: 'rsdesk-hash' });
    } catch {
      this.#failed = true;
      return null;
    }
    worker.on('message', (m: Reply) => this.#lanes[m.lane]?.settle(m));
    const lost = () => {
      if (this.#worker !== worker) return;
      this.#worker = null;
      this.#failed = true;
      for (const lane of this.#lanes) lane.lost();
    };
    worker.on('error', lost);
    worker.on('exit', lost);
    worker.unref();
    this.#worker = worker;
    return worker;
  }
}

export class HashLane {
  readonly #owner: HashThread;
  readonly #worker: Worker;
  readonly #id: number;
  readonly #bytes: Uint8Array;
  /** [0]: bytes the thread has hashed, ever (mod 2^32). */
  readonly #ctl: Int32Array;
  /** Bytes copied into the ring, ever (mod 2^32), and where the next copy goes. */
  #written = 0;
  #head = 0;
  #seq = 0;
  #result: { resolve: (r: LaneResult) => void; reject: (e: Error) => void } | null = null;
  #released = true;

  constructor(owner: HashThread, worker: Worker, id: number) {
    this.#owner = owner;
    this.#worker = worker;
    this.#id = id;
    const ring = new SharedArrayBuffer(RING);
    const ctl = new SharedArrayBuffer(4);
    this.#bytes = new Uint8Array(ring);
    this.#ctl = new Int32Array(ctl);
    worker.postMessage({ lane: id, ring, ctl });
  }

  /** @internal */
  begin(algorithms: string[], crc: boolean): void {
    this.#released = false;
    this.#seq++;
    this.#worker.postMessage({ lane: this.#id, begin: this.#seq, algorithms, crc });
  }

  /**
   * Hands `chunk` to the thread. Returns a promise only when the caller must wait (the ring was full); the chunk is
   * copied, so the caller may pass it on at once.
   */
  update(chunk: Uint8Array): Promise<void> | undefined {
    let at = 0;
    while (at < chunk.byteLength) {
      const room = RING - ((this.#written - Atomics.load(this.#ctl, 0)) >>> 0);
      if (room === 0) return this.#waitForRoom().then(() => this.update(chunk.subarray(at)));
      // Up to the ring's end, then from its start.
      const n = Math.min(chunk.byteLength - at, room, RING - this.#head);
      this.#bytes.set(chunk.subarray(at, at + n), this.#head);
      this.#worker.postMessage({ lane: this.#id, at: this.#head, n });
      this.#head = (this.#head + n) % RING;
      this.#written = (this.#written + n) | 0;
      at += n;
    }
    return undefined;
  }

  async #waitForRoom(): Promise<void> {
    for (;;) {
      const consumed = Atomics.load(this.#ctl, 0);
      if (RING - ((this.#written - consumed) >>> 0) > 0) return;
      if (!this.#owner.alive) throw new Error('the hashing thread stopped');
      const waited = waitAsync(this.#ctl, 0, consumed, WAIT_MS);
      if (waited.async) await waited.value;
    }
  }

  /** The digests of every byte given since `begin`; the lane is released once they are known. */
  digest(): Promise<LaneResult> {
    return new Promise<LaneResult>((resolve, reject) => {
      if (!this.#owner.alive) {
        reject(new Error('the hashing thread stopped'));
        return;
      }
      this.#result = { resolve, reject };
      this.#worker.postMessage({ lane: this.#id, end: this.#seq });
    }).finally(() => this.release());
  }

  /** Gives the lane back (a bitstream abandoned half-way: its bytes in flight are hashed and dropped). */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#result = null;
    this.#owner.release(this);
  }

  /** @internal */
  settle(reply: Reply): void {
    if (reply.seq !== this.#seq || this.#result === null) return;
    const { resolve, reject } = this.#result;
    this.#result = null;
    if (reply.error !== undefined) reject(new Error(reply.error));
    else resolve({ digests: reply.digests ?? [], crc: reply.crc ?? 0 });
  }

  /** @internal The thread died. */
  lost(): void {
    const pending = this.#result;
    this.#result = null;
    pending?.reject(new Error('the hashing thread stopped'));
  }
}

/** One per process: its thread is idle (and does not keep the process alive) while no lane is in use. */
export const hashThread = new HashThread();
