// How many requests go to one hub at once. Each request to a hub has a connection of its own (hub-client.ts), and
// nothing bounded them: a Capability List offers up to 1,000 channels, a moved callback server asks again for every
// subscription and asks the hub to end each old URL, all at the same moment, so one hub got thousands of connections
// from us at once. Past the limit a request waits here, in order; its deadline starts when it is sent, and the wait is
// bounded by the requests ahead of it, each with its own deadline. A request whose signal aborts (the engine stopping)
// leaves the queue at once.

/** Requests in flight to one hub (its origin) at once. */
export const HUB_REQUESTS_AT_ONCE = 4;

interface Queue {
  running: number;
  waiting: { go: () => void; fail: (err: unknown) => void }[];
}

export class HubGate {
  readonly #limit: number;
  readonly #origins = new Map<string, Queue>();

  constructor(limit = HUB_REQUESTS_AT_ONCE) {
    this.#limit = limit;
  }

  /** Requests waiting here, all hubs together (tests). */
  get waiting(): number {
    let n = 0;
    for (const q of this.#origins.values()) n += q.waiting.length;
    return n;
  }

  /** Resolves, with the function that lets the next one go, once a request to `origin` may be sent. */
  enter(origin: string, signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    let q = this.#origins.get(origin);
    if (q === undefined) this.#origins.set(origin, (q = { running: 0, waiting: [] }));
    const queue = q;
    if (queue.running < this.#limit) {
      queue.running++;
      return Promise.resolve(this.#release(origin, queue));
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const at = queue.waiting.indexOf(waiter);
        if (at !== -1) queue.waiting.splice(at, 1);
        this.#forget(origin, queue);
        reject(signal!.reason);
      };
      const waiter = {
        go: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.#release(origin, queue));
        },
        fail: reject,
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      queue.waiting.push(waiter);
    });
  }

  #release(origin: string, queue: Queue): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = queue.waiting.shift();
      if (next !== undefined) return next.go();
      queue.running--;
      this.#forget(origin, queue);
    };
  }

  #forget(origin: string, queue: Queue): void {
    if (queue.running === 0 && queue.waiting.length === 0 && this.#origins.get(origin) === queue) this.#origins.delete(origin);
  }
}
