// A dispatcher that hands undici no more requests for an origin than it has connections for it, keeping the others
// waiting here, where a request whose signal aborts is dropped at once.
//
// undici keeps a request that waits for a connection in its own queue (the Pool's, then the Client's) even once its
// signal has aborted: the request fails only when a connection frees and its turn comes (nothing is sent then). While
// every connection was held by a Source that stalls (a byte now and then keeps a body's timeout from firing), each
// cancelled or timed-out fetch left its entry there: 10,000 aborts took 10,000 entries and ~19 MB (undici 7.30), and
// once the connections freed, each of these entries, at its turn, closed the connection it was given, so the next
// real requests waited behind hundreds of new connections (368 made for 4 requests). abortable-request.ts makes the
// caller's promise fail at once; this keeps the entry out of undici altogether.
//
// Behind a proxy, the origins that go through it share one gate (`gateOf`): the proxy is the one host connected to.
import { Dispatcher } from 'undici';

interface Waiter {
  options: Dispatcher.DispatchOptions;
  handler: Dispatcher.DispatchHandler;
  signal: AbortSignal | null;
  aborted: (() => void) | null;
}

interface Origin {
  running: number;
  waiting: Waiter[];
}

export class OriginGate extends Dispatcher {
  readonly #inner: Dispatcher;
  readonly #limit: number;
  /** Gates by key: an origin, or a proxy its origins share. */
  readonly #origins = new Map<string, Origin>();
  readonly #gateOf: ((origin: string) => string) | undefined;
  #closing: (() => void) | null = null;

  /**
   * `limit`: the connections per origin the inner dispatcher opens (its `connections`); `gateOf`: the key of the gate an
   * origin's requests wait in, when it is not the origin's own (the proxy they go through).
   */
  constructor(inner: Dispatcher, limit: number, gateOf?: (origin: string) => string) {
    super();
    this.#inner = inner;
    this.#limit = limit;
    this.#gateOf = gateOf;
  }

  /** Requests waiting here for a connection, all origins together (tests). */
  get waiting(): number {
    let n = 0;
    for (const origin of this.#origins.values()) n += origin.waiting.length;
    return n;
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const key = this.#gateOf === undefined ? String(options.origin) : this.#gateOf(String(options.origin));
    let origin = this.#origins.get(key);
    if (origin === undefined) this.#origins.set(key, (origin = { running: 0, waiting: [] }));
    if (origin.running < this.#limit) {
      this.#start(key, origin, options, handler);
      return true;
    }
    const signal = (options as { signal?: AbortSignal | null }).signal ?? null;
    const waiter: Waiter = { options, handler, signal, aborted: null };
    if (signal !== null && typeof signal.addEventListener === 'function') {
      waiter.aborted = () => {
        const at = origin.waiting.indexOf(waiter);
        if (at !== -1) origin.waiting.splice(at, 1);
        this.#settled(key, origin);
        handler.onError?.(signal.reason instanceof Error ? signal.reason : new Error('The request was cancelled.'));
      };
      signal.addEventListener('abort', waiter.aborted, { once: true });
    }
    origin.waiting.push(waiter);
    return true;
  }

  #start(key: string, origin: Origin, options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    origin.running++;
    let done = false;
    const release = () => {
      if (done) return;
      done = true;
      // After undici has put the connection back (it does so just after this callback returns): the next request is
      // then given the connection, rather than queued in undici for a moment.
      queueMicrotask(() => this.#next(key, origin));
    };
    try {
      this.#inner.dispatch(options, new Releasing(handler, release) as unknown as Dispatcher.DispatchHandler);
    } catch (err) {
      release();
      handler.onError?.(err as Error);
    }
  }

  #next(key: string, origin: Origin): void {
    origin.running--;
    const next = origin.waiting.shift();
    if (next === undefined) return this.#settled(key, origin);
    if (next.aborted !== null) next.signal!.removeEventListener('abort', next.aborted);
    this.#start(key, origin, next.options, next.handler);
  }

  /** Forgets an origin with nothing running or waiting, and ends a close that waited for it. */
  #settled(key: string, origin: Origin): void {
    if (origin.running > 0 || origin.waiting.length > 0) return;
    this.#origins.delete(key);
    if (this.#origins.size === 0 && this.#closing !== null) this.#closing();
  }

  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    // What waits here is still to be sent, as undici sends what waits in its queue before it closes.
    const drained = this.#origins.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => (this.#closing = resolve));
    const closed = drained.then(() => this.#inner.close());
    if (callback === undefined) return closed;
    void closed.then(callback, callback);
  }

  override destroy(): Promise<void>;
  override destroy(err: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(err: Error | null, callback: () => void): void;
  override destroy(a?: Error | null | (() => void), b?: () => void): Promise<void> | void {
    const err = typeof a === 'function' ? null : (a ?? null);
    const callback = typeof a === 'function' ? a : b;
    for (const origin of this.#origins.values()) {
      for (const waiter of origin.waiting.splice(0)) {
        if (waiter.aborted !== null) waiter.signal!.removeEventListener('abort', waiter.aborted);
        waiter.handler.onError?.(err ?? new Error('The connections were closed before the request was sent.'));
      }
    }
    const destroyed = this.#inner.destroy(err);
    if (callback === undefined) return destroyed;
    void destroyed.then(callback, callback);
  }
}

type Callbacks = Record<string, ((...args: unknown[]) => unknown) | undefined>;

/**
 * The handler, calling `release` once when undici is done with the request (its connection is free then). undici's
 * legacy callbacks, the form agent.request's handler has: each one undici may call is passed on as it is. A class:
 * one object per request, not a closure per callback.
 */
class Releasing {
  readonly #h: Callbacks;
  readonly #release: () => void;

  constructor(handler: Dispatcher.DispatchHandler, release: () => void) {
    this.#h = handler as unknown as Callbacks;
    this.#release = release;
  }

  onConnect(...args: unknown[]): unknown {
    return this.#h.onConnect?.(...args);
  }
  onResponseStarted(...args: unknown[]): unknown {
    return this.#h.onResponseStarted?.(...args);
  }
  onHeaders(...args: unknown[]): unknown {
    return this.#h.onHeaders?.(...args);
  }
  onData(...args: unknown[]): unknown {
    return this.#h.onData?.(...args);
  }
  onBodySent(...args: unknown[]): unknown {
    return this.#h.onBodySent?.(...args);
  }
  onRequestSent(...args: unknown[]): unknown {
    return this.#h.onRequestSent?.(...args);
  }
  onComplete(...args: unknown[]): unknown {
    this.#release();
    return this.#h.onComplete?.(...args);
  }
  onError(...args: unknown[]): unknown {
    this.#release();
    return this.#h.onError?.(...args);
  }
  onUpgrade(...args: unknown[]): unknown {
    this.#release();
    return this.#h.onUpgrade?.(...args);
  }
}
