// Resource fetching for mirrors: one undici Agent (a keep-alive pool per origin, `concurrency` connections per host),
// GET with bounded redirects followed by hand, connect / headers / stalled-body timeouts, an overall deadline per
// resource, conditional requests, and retries with backoff that honour Retry-After on 429 and 503. Leaner than the
// document client (engine/http): a mirror makes thousands of small requests, so nothing is done per chunk here.
import type { Dispatcher } from 'undici';
import { addSourceHeaders, type SourceHeaders } from '../http/client.ts';
import { abortableRequest } from '../http/abortable-request.ts';
import { makeDispatcher, proxyFor, type ProxyEnv, type ProxySetting } from '../http/dispatcher.ts';
import type { Readable } from 'node:stream';
import { NetworkError, ProxyError, formatDuration, informationalLimit, toNetworkError } from '../http/errors.ts';
import { SlowBody } from './slow-body.ts';
import { furtherInside } from '../http/address-scope.ts';
import { clip } from '../clip.ts';
import { refusalWords, type RefusalWatch } from './refusal-watch.ts';

export interface FetcherOptions {
  /** Connections per host. Default 8. */
  concurrency?: number;
  /** Connect, response headers, and the longest pause in a body. Default 30 s. */
  timeoutMs?: number;
  /** The longest one resource may take, redirects and retries' waits excluded. Default 10 min. */
  deadlineMs?: number;
  maxRedirects?: number;
  /** Attempts after the first, on 429, 503, 502, 504 and network failures. Default 3. */
  retries?: number;
  /**
   * Longest Retry-After honoured; a longer one pauses the run through `watch` (fails the resource, with that said,
   * without one). Default 120 s.
   */
  maxRetryAfterMs?: number;
  /** First backoff; doubled each retry. Default 500 ms. */
  backoffMs?: number;
  userAgent?: string;
  /** Credentials and extra headers, sent only to their origin (never to another host a redirect or a mirror location names). */
  source?: SourceHeaders | null;
  /** Default `env`: HTTP_PROXY / HTTPS_PROXY / NO_PROXY. */
  proxy?: ProxySetting;
  proxyEnv?: ProxyEnv;
  /**
   * Sees every answer: once the Source has refused everything for its limit, waits end and no request is made,
   * each `get` rejecting with its SourceRefusing (refusal-watch.ts).
   */
  watch?: RefusalWatch;
}

export interface Fetched {
  status: number;
  url: string;
  headers: Record<string, string>;
  body: Readable;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const CENTURY_MS = 100 * 365.25 * 86_400_000;
/** Answers a request is tried again after (watched-http.ts too). */
export const RETRY_STATUSES = new Set([429, 502, 503, 504]);

export class FetchFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FetchFailure';
  }
}

/** Retry-After as milliseconds from now: delta-seconds, an HTTP-date, or (sloppy Sources) an ISO datetime. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * A Last-Modified value fit to send back in If-Modified-Since: an HTTP-date as it is; a date in another form (sloppy
 * Sources send ISO datetimes) rewritten as an HTTP-date; anything unreadable dropped rather than echoed.
 */
export function httpDate(value: string | undefined): string | null {
  if (value === undefined || value.trim() === '') return null;
  if (/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(value.trim())) return value.trim();
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : new Date(ms).toUTCString();
}

function flatten(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

export class Fetcher {
  readonly timeoutMs: number;
  readonly deadlineMs: number;
  readonly #agent: Dispatcher;
  /** The proxy a request to a URL goes through, if any (said when it cannot be reached). */
  readonly #via: (url: URL) => string | null;
  readonly #options: Required<Omit<FetcherOptions, 'source' | 'proxy' | 'proxyEnv' | 'watch'>> & { source: SourceHeaders | null };
  #watch: RefusalWatch | null;

  constructor(options: FetcherOptions = {}) {
    this.#via = (url) => proxyFor(url, options.proxy, options.proxyEnv);
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.deadlineMs = options.deadlineMs ?? 10 * 60_000;
    this.#watch = options.watch ?? null;
    this.#options = {
      concurrency: options.concurrency ?? 8,
      timeoutMs: this.timeoutMs,
      deadlineMs: this.deadlineMs,
      maxRedirects: options.maxRedirects ?? 5,
      retries: options.retries ?? 3,
      maxRetryAfterMs: options.maxRetryAfterMs ?? 120_000,
      backoffMs: options.backoffMs ?? 500,
      userAgent: options.userAgent ?? 'ResourceSync-Desktop/0.1 (mirror)',
      source: options.source ?? null,
    };
    this.#agent = makeDispatcher(
      {
        connections: this.#options.concurrency,
        connect: { timeout: this.timeoutMs },
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        keepAliveTimeout: 30_000,
        maxHeaderSize: 16 * 1024,
      },
      options.proxy,
      options.proxyEnv,
    );
  }

  /**
   * Watches the requests from now on with `watch` (null: none), for a client that outlives one run: the live side's,
   * whose every batch of notifications has a watch of its own (apply-live.ts).
   */
  watchWith(watch: RefusalWatch | null): void {
    this.#watch = watch;
  }

  /**
   * GETs `url` with retries; neither `url` nor a redirect may reach further inside a network than `home` (default
   * `url`) does (address-scope.ts): a Source's other copy of a resource, or a redirect, to 169.254.169.254 is refused.
   * Resolves with the final response (any status that is not a redirect, nor a retried
   * one that ran out of retries: then it is returned as it is). The caller must consume or destroy `body`.
   * `signal` should carry the resource's deadline.
   */
  async get(url: string, headers: Record<string, string>, signal: AbortSignal, home?: string): Promise<Fetched> {
    const o = this.#options;
    const watch = this.#watch;
    for (let attempt = 0; ; attempt++) {
      if (watch?.stopped) throw watch.stopped;
      let response: Fetched;
      try {
        response = await this.#getOnce(url, headers, signal, home);
      } catch (err) {
        const again = !signal.aborted && err instanceof NetworkError && retriable(err);
        if (again && watch) watch.refused(`no answer (${clip(err.message, 200)})`, null);
        if (!again || attempt >= o.retries) throw err;
        await this.#wait(o.backoffMs * 2 ** attempt * (0.75 + Math.random() / 2), signal);
        continue;
      }
      if (!RETRY_STATUSES.has(response.status)) {
        watch?.answered();
        return response;
      }
      const wait = retryAfterMs(response.headers['retry-after']);
      if (wait !== null && wait > o.maxRetryAfterMs && watch) {
        // Longer than a run waits: the run pauses now, as for a list (watched-http.ts), resumable and its checkpoint
        // unmoved. Before, each resource failed at once: a Source answering everything "Retry-After: 3600" ended a
        // baseline "failed" with one failure per resource.
        response.body.destroy();
        watch.askedToWait(refusalWords(response.status), wait, o.maxRetryAfterMs, url, 'a resource');
        throw watch.stopped!;
      }
      watch?.refused(refusalWords(response.status), wait);
      if (attempt >= o.retries) return response;
      response.body.destroy();
      if (wait !== null && wait > o.maxRetryAfterMs) {
        // A Retry-After of hundreds of digits is Infinity ms: "∞ days" said nothing a person can read.
        const asked = wait > CENTURY_MS ? 'more than 100 years' : formatDuration(wait);
        throw new FetchFailure(`HTTP ${response.status}: the server asks to wait ${asked} (Retry-After), longer than the ${formatDuration(o.maxRetryAfterMs)} a mirror waits`);
      }
      await this.#wait(wait ?? o.backoffMs * 2 ** attempt * (0.75 + Math.random() / 2), signal);
    }
  }

  /** A wait between attempts: ended by the resource's signal, or by the watch when the Source has refused too long. */
  async #wait(ms: number, signal: AbortSignal): Promise<void> {
    const watch = this.#watch;
    if (watch === null) return sleep(ms, signal);
    try {
      await sleep(ms, AbortSignal.any([signal, watch.signal]));
    } catch (err) {
      if (!signal.aborted && watch.stopped) throw watch.stopped;
      throw err;
    }
  }

  async #getOnce(start: string, extra: Record<string, string>, signal: AbortSignal, home?: string): Promise<Fetched> {
    let current = new URL(start);
    const startOrigin = current.origin;
    const homeUrl = home === undefined ? current : new URL(home);
    const inside = furtherInside(homeUrl, current);
    if (inside !== null) throw new NetworkError('bad-redirect', `${clip(current.href)} is not requested: ${inside}`, current.href);
    for (let hops = 0; ; hops++) {
      // The caller's Accept stands (a JSON Patch asks for its media types); it was written over with */*.
      const headers: Record<string, string> = { accept: '*/*', ...extra, 'user-agent': this.#options.userAgent };
      addSourceHeaders(headers, current, this.#options.source);
      // Conditional headers are about the first URL's copy; a redirect elsewhere is fetched whole.
      if (current.origin !== startOrigin) {
        delete headers['if-none-match'];
        delete headers['if-modified-since'];
      }
      let data;
      try {
        data = await abortableRequest(this.#agent, {
          origin: current.origin,
          path: current.pathname + current.search,
          method: 'GET',
          headers,
          signal,
          onInfo: informationalLimit(current.href, this.timeoutMs),
        });
      } catch (err) {
        if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new NetworkError('aborted', `Cancelled: ${current.href}`, current.href);
        throw toNetworkError(err, current.href, this.timeoutMs, 'response', this.#via(current));
      }
      // An abort after the body was finished with must not surface as an unhandled error event.
      data.body.on('error', () => undefined);
      const h = flatten(data.headers as Record<string, string | string[] | undefined>);
      if (REDIRECTS.has(data.statusCode) && h.location !== undefined) {
        data.body.destroy();
        if (hops >= this.#options.maxRedirects) {
          throw new NetworkError('too-many-redirects', `Too many redirects: more than ${this.#options.maxRedirects} starting at ${start}`, start);
        }
        let next: URL;
        try {
          next = new URL(h.location, current);
        } catch {
          throw new NetworkError('bad-redirect', `${current.href} redirects to an invalid URL: ${clip(h.location)}`, current.href);
        }
        if (next.protocol !== 'http:' && next.protocol !== 'https:') {
          throw new NetworkError('bad-redirect', `${current.href} redirects to a ${clip(next.protocol, 40)} URL, which is not followed`, current.href);
        }
        const further = furtherInside(homeUrl, next);
        if (further !== null) throw new NetworkError('bad-redirect', `${current.href} redirects to ${clip(next.href)}, which is not followed: ${further}`, current.href);
        current = next;
        continue;
      }
      return { status: data.statusCode, url: current.href, headers: h, body: data.body };
    }
  }

  close(): Promise<void> {
    return this.#agent.close();
  }
}

export function retriable(err: NetworkError): boolean {
  // A proxy that could not reach the Source (502, 503, 504) may next time; one that wants credentials will not.
  if (err instanceof ProxyError) return err.status >= 500;
  return err.code === 'timeout' || err.code === 'reset' || err.code === 'network' || err.code === 'refused';
}

/** An AbortSignal for one resource: the caller's, plus the overall deadline; `done()` clears the timer. */
export function resourceSignal(deadlineMs: number, outer?: AbortSignal): { signal: AbortSignal; done: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new NetworkError('deadline', `did not finish within ${formatDuration(deadlineMs)}`, '')), deadlineMs);
  return { signal: outer ? AbortSignal.any([outer, controller.signal]) : controller.signal, done: () => clearTimeout(timer) };
}

/**
 * A resource whose length is known (listed, or announced by Content-Length) gets at least the time to arrive at this
 * rate: 2 GiB over a 2 MB/s link takes 17 min, past the 10 min deadline, and failed on every run.
 */
export const DEADLINE_BYTES_PER_SECOND = 256 * 1024;

interface InFlight {
  controller: AbortController;
  started: number;
  at: number;
  /** The length its deadline was grown for (else 0). */
  length: number;
  /** When its headers came in and its body started (else 0). */
  bodyStarted: number;
  /** Body bytes so far and their rate check, once the headers are in. */
  body: SlowBody | null;
}

/** One resource's signal, and what its download tells the deadline and the rate check. */
export interface ResourceTurn {
  signal: AbortSignal;
  done: () => void;
  /** The headers are in: the body starts, `length` bytes of it when known (its deadline grows to fit them). */
  receiving: (length: number | undefined) => void;
  received: (bytes: number) => void;
}

/**
 * Signals for the many resources of one run, each aborted by the run's signal, at its own deadline, or when its
 * body arrives too slowly (slow-body.ts; `windowMs` its window), for little
 * per resource: one listener on the run's signal and one sweeping timer while resources are in flight, instead of a
 * timer and a combined signal (AbortSignal.any) each. A deadline is met within a tenth of it (at most a second late).
 */
export class ResourceSignals {
  readonly #deadlineMs: number;
  readonly #windowMs: number;
  readonly #outer: AbortSignal | undefined;
  readonly #live = new Set<InFlight>();
  #timer: NodeJS.Timeout | null = null;
  readonly #onAbort = () => {
    const reason: unknown = this.#outer!.reason;
    for (const l of [...this.#live]) l.controller.abort(reason);
    this.#live.clear();
    this.#idle();
  };

  constructor(deadlineMs: number, outer?: AbortSignal, windowMs = 30_000) {
    this.#deadlineMs = deadlineMs;
    this.#windowMs = windowMs;
    this.#outer = outer;
  }

  /** A signal for one resource; `done()` when it is finished with. */
  start(): ResourceTurn {
    const controller = new AbortController();
    if (this.#outer?.aborted) {
      controller.abort(this.#outer.reason);
      return { signal: controller.signal, done: noop, receiving: noop, received: noop };
    }
    const now = Date.now();
    const item: InFlight = { controller, started: now, at: now + this.#deadlineMs, length: 0, bodyStarted: 0, body: null };
    if (this.#live.size === 0) this.#busy();
    this.#live.add(item);
    return {
      signal: controller.signal,
      done: () => {
        if (this.#live.delete(item) && this.#live.size === 0) this.#idle();
      },
      receiving: (length) => {
        item.body = new SlowBody(this.#windowMs);
        item.bodyStarted = Date.now();
        if (length !== undefined && Number.isFinite(length) && length > 0) {
          const grown = item.started + Math.ceil((1000 * length) / DEADLINE_BYTES_PER_SECOND);
          if (grown > item.at) {
            item.at = grown;
            item.length = length;
          }
        }
      },
      received: (bytes) => {
        if (item.body !== null) item.body.bytes += bytes;
      },
    };
  }

  /** Resources in flight (tests). */
  get size(): number {
    return this.#live.size;
  }

  // Listener and timer exist only while a resource is in flight: a long-lived run signal gathers no listeners.
  #busy(): void {
    this.#outer?.addEventListener('abort', this.#onAbort, { once: true });
    const every = Math.max(10, Math.min(1000, Math.floor(Math.min(this.#deadlineMs, this.#windowMs) / 10)));
    this.#timer = setInterval(() => this.#sweep(), every);
    this.#timer.unref();
  }

  #idle(): void {
    this.#outer?.removeEventListener('abort', this.#onAbort);
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  #sweep(): void {
    const now = Date.now();
    for (const l of this.#live) {
      if (l.at <= now) {
        this.#live.delete(l);
        const arrived = l.body !== null && l.body.bytes > 0 ? ` (${l.body.bytes.toLocaleString('en')} bytes had arrived)` : '';
        l.controller.abort(new NetworkError('deadline', `did not finish within ${formatDuration(l.at - l.started)}${arrived}`, ''));
        continue;
      }
      const late = l.length > 0 && l.body !== null ? cannotMakeIt(l, now, this.#deadlineMs) : null;
      if (late !== null) {
        this.#live.delete(l);
        l.controller.abort(new NetworkError('deadline', late, ''));
        continue;
      }
      const slow = l.body?.check(now);
      if (slow) {
        this.#live.delete(l);
        l.controller.abort(new NetworkError('timeout', slow, ''));
      }
    }
    if (this.#live.size === 0) this.#idle();
  }
}

/**
 * Past the ordinary deadline, a deadline grown for a listed or announced length holds only while the body keeps a pace
 * that can bring that length in time. Else a Source that lists 10^15 bytes got centuries, and a body trickling just
 * above the slowest rate (slow-body.ts) held its slot for as long as it kept trickling. The pace is the body's own
 * (from its first byte's wait, not the request's), and is given twice the time left before it is judged short: a
 * pace that wavers (or timers late on a busy machine) must not cut a body that would make it.
 */
function cannotMakeIt(l: InFlight, now: number, ordinaryMs: number): string | null {
  // A body that has just started has no pace yet: judged once it has run for half the ordinary deadline.
  if (now - l.started < ordinaryMs || now - l.bodyStarted < ordinaryMs / 2) return null;
  const bytes = l.body!.bytes;
  const bodyMs = now - l.bodyStarted;
  if (bytes + (bytes / bodyMs) * 2 * Math.max(0, l.at - now) >= l.length) return null;
  return (
    `would not finish within ${formatDuration(l.at - l.started)} (the time given for its ${l.length.toLocaleString('en')} bytes) at the pace it arrives: ` +
    `${bytes.toLocaleString('en')} bytes in ${formatDuration(bodyMs)}; stopped`
  );
}

function noop(): void {}
