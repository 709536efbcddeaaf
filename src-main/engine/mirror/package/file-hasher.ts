// A package's fixity computed off the main thread: a worker reads the part file as the download writes it and feeds
// the hashes, so the main thread (which receives the package and, when it is read while downloading, inflates and
// hashes its bitstreams) spends nothing on the package's own md5 or sha. The worker reads what was just written back
// from the page cache through one reused buffer: no copy of the socket's chunks to it, no garbage.
//
// Its code is a plain JavaScript string run with `eval: true`, like file-thread.ts, so it works the same from the
// TypeScript sources and from the Electron bundle.
import { Worker } from 'node:worker_threads';

const SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const crypto = require('node:crypto');
const hashes = workerData.algorithms.map((a) => crypto.createHash(a));
const buffer = Buffer.allocUnsafe(1 << 20);
let fd = null;
let position = 0;
let target = 0;
let end = null;
parentPort.on('message', (m) => {
  try {
    if (fd === null) fd = fs.openSync(workerData.path, 'r');
    if (m.upTo !== undefined && m.upTo > target) target = m.upTo;
    if (m.end !== undefined) end = target = m.end;
    while (position < target) {
      const n = fs.readSync(fd, buffer, 0, Math.min(buffer.length, target - position), position);
      if (n === 0) throw new Error('the file ends at ' + position + ' bytes, before the ' + target + ' written');
      const view = buffer.subarray(0, n);
      for (const h of hashes) h.update(view);
      position += n;
    }
    if (end !== null && position === end) {
      fs.closeSync(fd);
      parentPort.postMessage({ digests: hashes.map((h) => h.digest('hex')) });
    }
  } catch (err) {
    parentPort.postMessage({ error: String((err && err.message) || err) });
  }
});
`;

/** Tells the worker about new bytes at most this often (each message costs a little on both sides). */
const STEP = 4 << 20;

export class FileHasher {
  readonly #worker: Worker;
  readonly #result: Promise<string[]>;
  #told = 0;

  /** Hashes `path` with Node's `algorithms` (md5, sha1, sha256), from its first byte, as far as it is written. */
  constructor(path: string, algorithms: string[], written = 0) {
    this.#worker = new Worker(SOURCE, { eval: true, name: 'rsdesk-package-hash', workerData: { path, algorithms } });
    this.#result = new Promise((resolve, reject) => {
      this.#worker.once('message', (m: { digests?: string[]; error?: string }) => {
        if (m.digests) resolve(m.digests);
        else reject(new Error(`The package's hash could not be computed: ${m.error}`));
      });
      this.#worker.once('error', reject);
      this.#worker.once('exit', (code) => reject(new Error(`The package's hash could not be computed (the hashing thread ended with ${code})`)));
    });
    this.#result.catch(() => undefined);
    if (written > 0) this.written(written);
  }

  /** The file now holds `bytes` bytes from its start. */
  written(bytes: number): void {
    if (bytes - this.#told < STEP) return;
    this.#told = bytes;
    this.#worker.postMessage({ upTo: bytes });
  }

  /** The digests of the file's first `bytes` bytes (all written), in the order of the algorithms. */
  async digests(bytes: number): Promise<string[]> {
    this.#worker.postMessage({ end: bytes });
    try {
      return await this.#result;
    } finally {
      void this.#worker.terminate();
    }
  }

  /** Stops hashing (the transfer failed or was stopped). */
  close(): void {
    void this.#worker.terminate();
  }
}
