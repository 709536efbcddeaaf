// Hashing on a thread of its own, for long streams whose bytes the main thread only passes along (a dump package
// being downloaded): md5 runs at about 600 MB/s, so hashing a package on the main thread costs it a second per
// 600 MB that the download and the extraction of other packages need. Bytes are copied into 1 MiB blocks that move
// to the thread (transferred, not cloned) and come back to be filled again; at most 4 MiB per stream wait for the
// thread, after which `update` asks the caller to wait.
import { createHash, type Hash } from 'node:crypto';
import { Worker } from 'node:worker_threads';

const THREAD_SOURCE = String.raw`
'use strict';
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const hashes = new Map();
parentPort.on('message', (m) => {
  if (m.t === 's') hashes.set(m.id, m.algorithms.map((a) => createHash(a)));
  else if (m.t === 'u') {
    const data = new Uint8Array(m.data, 0, m.length);
    const hs = hashes.get(m.id);
    if (hs !== undefined) for (const h of hs) h.update(data);
    // The block goes back to be filled again: no fresh memory per megabyte hashed.
    parentPort.postMessage({ t: 'a', id: m.id, n: m.length, data: m.data }, [m.data]);
  } else if (m.t === 'd') {
    const hs = hashes.get(m.id) || [];
    hashes.delete(m.id);
    parentPort.postMessage({ t: 'r', id: m.id, digests: hs.map((h) => h.digest('hex')) });
  } else if (m.t === 'x') hashes.delete(m.id);
});
`;

const BLOCK = 1 << 20;
const HIGH = 4 * BLOCK;
const LOW = 1 * BLOCK;
/** Blocks back from the thread, to be filled again (at most this many kept). */
const spare: Buffer[] = [];
const SPARE = 8;

interface Pending {
  outstanding: number;
  onDrain: (() => void) | null;
  onDigest: ((digests: string[]) => void) | null;
}

class HashThread {
  #worker: Worker | null = null;
  #failed = false;
  #next = 0;
  #pending = new Map<number, Pending>();

  worker(): Worker | null {
    if (this.#worker !== null) return this.#worker;
    if (this.#failed) return null;
    try {
      const worker = new Worker(THREAD_SOURCE, { eval: true, name: 'rsdesk-hash' });
      worker.on('message', (m: { t: string; id: number; n?: number; digests?: string[]; data?: ArrayBuffer }) => this.#onMessage(m));
      const lost = () => {
        this.#worker = null;
        this.#failed = true;
        // A hash that was under way cannot be finished: its digest reads as failed (an empty digest never matches).
        for (const p of this.#pending.values()) {
          p.onDrain?.();
          p.onDigest?.([]);
        }
        this.#pending.clear();
      };
      worker.on('error', lost);
      worker.on('exit', lost);
      worker.unref();
      this.#worker = worker;
      return worker;
    } catch {
      this.#failed = true;
      return null;
    }
  }

  open(algorithms: string[]): { id: number; pending: Pending } {
    const id = ++this.#next;
    const pending: Pending = { outstanding: 0, onDrain: null, onDigest: null };
    this.#pending.set(id, pending);
    if (this.#pending.size === 1) this.#worker?.ref();
    this.#worker!.postMessage({ t: 's', id, algorithms });
    return { id, pending };
  }

  close(id: number): void {
    this.#pending.delete(id);
    if (this.#pending.size === 0) this.#worker?.unref();
  }

  #onMessage(m: { t: string; id: number; n?: number; digests?: string[]; data?: ArrayBuffer }): void {
    if (m.data !== undefined && spare.length < SPARE) spare.push(Buffer.from(m.data));
    const p = this.#pending.get(m.id);
    if (p === undefined) return;
    if (m.t === 'a') {
      p.outstanding -= m.n!;
      if (p.onDrain !== null && p.outstanding <= LOW) {
        const drain = p.onDrain;
        p.onDrain = null;
        drain();
      }
    } else if (m.t === 'r') {
      this.close(m.id);
      p.onDigest?.(m.digests!);
    }
  }
}

const thread = new HashThread();

/** Several digests of one stream of bytes, computed off the main thread where a worker thread can run. */
export class StreamHash {
  readonly #algorithms: string[];
  #local: Hash[] | null = null;
  #remote: { id: number; pending: Pending } | null = null;
  #block: Buffer | null = null;
  #filled = 0;
  #finished = false;

  /** `algorithms`: Node's names (md5, sha1, sha256). */
  constructor(algorithms: string[]) {
    this.#algorithms = algorithms;
    const worker = algorithms.length === 0 ? null : thread.worker();
    if (worker === null) this.#local = algorithms.map((a) => createHash(a));
    else this.#remote = thread.open(algorithms);
  }

  /** Adds bytes; returns a promise to await only when the hashing thread is far behind (backpressure). */
  update(chunk: Uint8Array): Promise<void> | undefined {
    if (this.#local !== null) {
      for (const h of this.#local) h.update(chunk);
      return undefined;
    }
    if (this.#remote === null) return undefined;
    let at = 0;
    while (at < chunk.byteLength) {
      this.#block ??= spare.pop() ?? Buffer.allocUnsafeSlow(BLOCK);
      const n = Math.min(BLOCK - this.#filled, chunk.byteLength - at);
      this.#block.set(chunk.subarray(at, at + n), this.#filled);
      this.#filled += n;
      at += n;
      if (this.#filled === BLOCK) this.#send();
    }
    const pending = this.#remote.pending;
    if (pending.outstanding <= HIGH) return undefined;
    return new Promise((resolve) => (pending.onDrain = resolve));
  }

  #send(): void {
    if (this.#remote === null || this.#block === null || this.#filled === 0) return;
    const block = this.#block;
    const length = this.#filled;
    this.#block = null;
    this.#filled = 0;
    this.#remote.pending.outstanding += length;
    thread.worker()?.postMessage({ t: 'u', id: this.#remote.id, data: block.buffer, length }, [block.buffer as ArrayBuffer]);
  }

  /** The hex digests, one per algorithm in the constructor's order. Once only. */
  async digest(): Promise<string[]> {
    if (this.#finished) throw new Error('digest() was already called');
    this.#finished = true;
    if (this.#local !== null) return this.#local.map((h) => h.digest('hex'));
    if (this.#remote === null) return [];
    this.#send();
    const { id, pending } = this.#remote;
    const worker = thread.worker();
    if (worker === null) return [];
    return new Promise((resolve) => {
      pending.onDigest = resolve;
      worker.postMessage({ t: 'd', id });
    });
  }

  /** Drops an unfinished hash (a download that failed). */
  discard(): void {
    if (this.#finished) return;
    this.#finished = true;
    if (this.#remote !== null) {
      thread.worker()?.postMessage({ t: 'x', id: this.#remote.id });
      thread.close(this.#remote.id);
    }
  }

  get algorithms(): readonly string[] {
    return this.#algorithms;
  }
}
