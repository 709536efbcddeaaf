// Stores deliveries durably off the main thread. A delivery's row must be on disk (synchronous=FULL) before the hub
// gets its 2xx; node:sqlite commits synchronously, so a commit on the main thread stops everything else there —
// reading the next requests, accepting connections (libuv accepts one per loop turn), answering, applying — for as
// long as the disk takes to sync (0.5–4 ms here, more under load). A worker thread with its own connection to the
// mirror's state.sqlite does the commits instead: group commit, one transaction for everything that arrived while
// the previous one was being made durable. Inbox ids follow the order deliveries were handed over.
//
// The worker's code is a string (an eval worker), so that it needs no file of its own next to the bundled app.
import { Worker } from 'node:worker_threads';

export interface NewDelivery {
  subscriptionId: number;
  sha256: string;
  contentType: string | null;
  link: string | null;
  body: Uint8Array;
}

const WORKER_CODE = `
// node:sqlite says it is experimental in every thread that loads it; the main thread already had its say.
const emit = process.emit;
process.emit = function (name, data, ...rest) {
  if (name === 'warning' && data && data.name === 'ExperimentalWarning' && /SQLite/.test(String(data.message))) return false;
  return emit.call(this, name, data, ...rest);
};
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.path, { enableForeignKeyConstraints: true, timeout: 10000 });
db.exec('PRAGMA journal_mode = WAL');
db.exec('PRAGMA synchronous = FULL');
const insert = db.prepare("INSERT INTO live_inbox (subscription_id, received_at, sha256, content_type, link, body, status) VALUES (?, ?, ?, ?, ?, ?, 'received')");
let queue = [];
let scheduled = false;
function flush() {
  scheduled = false;
  const batch = queue;
  queue = [];
  if (batch.length === 0) return;
  const now = new Date().toISOString();
  try {
    db.exec('BEGIN IMMEDIATE');
    const ids = [];
    try {
      for (const d of batch) ids.push(Number(insert.run(d.subscriptionId, now, d.sha256, d.contentType, d.link, d.body).lastInsertRowid));
      db.exec('COMMIT');
    } catch (err) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw err;
    }
    parentPort.postMessage({ seqs: batch.map((d) => d.seq), ids });
  } catch (err) {
    parentPort.postMessage({ seqs: batch.map((d) => d.seq), error: String(err && err.message || err) });
  }
}
parentPort.on('message', (m) => {
  if (m === 'close') {
    flush();
    db.close();
    parentPort.close();
    return;
  }
  queue.push(m);
  if (!scheduled) {
    scheduled = true;
    setImmediate(flush);
  }
});
`;

interface Waiting {
  resolve: (id: number) => void;
  reject: (err: unknown) => void;
}

export class InboxWriter {
  readonly #worker: Worker;
  readonly #waiting = new Map<number, Waiting>();
  #seq = 0;
  #failed: Error | null = null;
  #closed: Promise<void> | null = null;

  /** `path`: the mirror's state.sqlite, already migrated (the live_inbox table exists). */
  constructor(path: string) {
    this.#worker = new Worker(WORKER_CODE, { eval: true, workerData: { path } });
    this.#worker.unref();
    this.#worker.on('message', (m: { seqs?: number[]; ids?: number[]; error?: string }) => {
      if (!m.seqs) return;
      m.seqs.forEach((seq, i) => {
        const w = this.#waiting.get(seq);
        this.#waiting.delete(seq);
        if (!w) return;
        if (m.ids) w.resolve(m.ids[i]);
        else w.reject(new Error(`The delivery could not be stored: ${m.error}`));
      });
      if (this.#waiting.size === 0) this.#worker.unref();
    });
    const fail = (err: Error) => {
      this.#failed ??= err;
      for (const w of this.#waiting.values()) w.reject(new Error(`The delivery could not be stored: ${err.message}`));
      this.#waiting.clear();
    };
    this.#worker.on('error', fail);
    this.#worker.on('exit', () => fail(new Error('the storing thread has stopped')));
  }

  /** Resolves with the inbox id once the delivery is committed and on disk. */
  receive(d: NewDelivery): Promise<number> {
    if (this.#failed) return Promise.reject(new Error(`The delivery could not be stored: ${this.#failed.message}`));
    if (this.#closed) return Promise.reject(new Error('The delivery could not be stored: the mirror is being closed'));
    const seq = ++this.#seq;
    return new Promise((resolve, reject) => {
      // Held while a commit is awaited: a process must not exit with a delivery half stored.
      if (this.#waiting.size === 0) this.#worker.ref();
      this.#waiting.set(seq, { resolve, reject });
      this.#worker.postMessage({ seq, subscriptionId: d.subscriptionId, sha256: d.sha256, contentType: d.contentType, link: d.link, body: d.body });
    });
  }

  /** Commits what was handed over, then stops the thread. */
  close(): Promise<void> {
    this.#closed ??= new Promise<void>((resolve) => {
      if (this.#failed) return resolve();
      this.#worker.ref();
      this.#worker.once('exit', () => resolve());
      this.#worker.postMessage('close');
    });
    return this.#closed;
  }
}
