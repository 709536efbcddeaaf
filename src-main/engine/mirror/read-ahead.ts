// A list is read ahead of the downloads, up to `limit` entries waiting, instead of in step with them: its total is
// then known within moments rather than at the run's end (a progress bar at 98 % for the whole run, "about 8 s
// left" for two minutes), while memory stays bounded by `limit`. Entries reach `work` one at a time, in order.

export class ReadAhead<T> {
  readonly #limit: number;
  #items: (T | undefined)[] = [];
  #head = 0;
  #ended = false;
  #stopped = false;
  #failed: unknown = null;
  #wakeWorker: (() => void) | null = null;
  #wakeReader: (() => void) | null = null;
  /**
   * Settles when every entry was handed to `work` (after `end`), or after `stop` once the work under way returns;
   * rejects with the work's error.
   */
  readonly done: Promise<void>;

  constructor(limit: number, work: (item: T) => Promise<void> | undefined) {
    this.#limit = Math.max(1, limit);
    this.done = this.#run(work);
    // Its error reaches whoever awaits `done`; until then it must not count as unhandled.
    this.done.catch(() => undefined);
  }

  /** Entries read and not yet handed on. */
  get waiting(): number {
    return this.#items.length - this.#head;
  }

  /**
   * Queues an entry; returns a promise to await when `limit` entries wait (the reader pauses until half are taken).
   * Once the work failed, that promise rejects with its error, so the reader stops reading.
   */
  push(item: T): Promise<void> | undefined {
    if (this.#failed !== null) return this.done;
    if (this.#stopped) return undefined;
    this.#items.push(item);
    this.#wake('worker');
    if (this.waiting < this.#limit) return undefined;
    return new Promise((resolve) => {
      this.#wakeReader = resolve;
    });
  }

  /** No more entries: `done` settles once the waiting ones are handed on. */
  end(): void {
    this.#ended = true;
    this.#wake('worker');
  }

  /** Drops the waiting entries and hands on no more. */
  stop(): void {
    this.#stopped = true;
    this.#items = [];
    this.#head = 0;
    this.#wake('worker');
    this.#wake('reader');
  }

  #wake(who: 'worker' | 'reader'): void {
    const wake = who === 'worker' ? this.#wakeWorker : this.#wakeReader;
    if (wake === null) return;
    if (who === 'worker') this.#wakeWorker = null;
    else this.#wakeReader = null;
    wake();
  }

  async #run(work: (item: T) => Promise<void> | undefined): Promise<void> {
    try {
      for (;;) {
        if (this.#stopped) return;
        if (this.#head < this.#items.length) {
          const item = this.#items[this.#head] as T;
          this.#items[this.#head++] = undefined;
          // Taken entries are let go in steps, not one shift() per entry.
          if (this.#head >= 4096 && this.#head * 2 >= this.#items.length) {
            this.#items = this.#items.slice(this.#head);
            this.#head = 0;
          }
          if (this.#wakeReader !== null && this.waiting <= this.#limit / 2) this.#wake('reader');
          const wait = work(item);
          if (wait !== undefined) await wait;
          continue;
        }
        if (this.#ended) return;
        await new Promise<void>((resolve) => {
          this.#wakeWorker = resolve;
        });
      }
    } catch (err) {
      this.#failed = err;
      this.stop();
      throw err;
    }
  }
}
