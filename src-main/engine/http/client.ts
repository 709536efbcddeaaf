// The one HTTP client of the engine: undici's Agent (connection pools per origin), GET only, redirects followed by
// hand so each hop is recorded and checked, timeouts on connect/headers and on an idle body, an overall deadline
// per fetch (a server trickling a byte a second never trips an idle timeout), a byte limit.
import type { Dispatcher } from 'undici';
import type { Readable } from 'node:stream';
import { clip } from '../clip.ts';
import { charsetOf, readText, streamBody, tooLarge } from './body.ts';
import { abortableRequest } from './abortable-request.ts';
import { makeDispatcher, proxyFor, type ProxyEnv, type ProxySetting } from './dispatcher.ts';
import { hideUserinfo } from './userinfo.ts';
import { furtherInside } from './address-scope.ts';
import { MAX_HEADER_BYTES, NetworkError, formatBytes, formatDuration, informationalLimit, toNetworkError } from './errors.ts';

export interface HttpOptions {
  /** Connect + response headers, and the longest pause allowed while reading a body. Default 30000. */
  timeoutMs?: number;
  /**
   * The longest a whole fetch may take, redirects and body included. Default: 10 × timeoutMs, at most 10 minutes
   * (50 MB at 100 KB/s takes about 8 minutes).
   */
  deadlineMs?: number;
  /** Default 5. */
  maxRedirects?: number;
  userAgent?: string;
  /**
   * Credentials and extra headers of one Source, sent only to `origin` (never to another host a redirect or a
   * document names). `authorization` is the whole header value (`Bearer …`, `Basic …`).
   */
  sourceHeaders?: SourceHeaders | null;
  /**
   * Asked before each request when `sourceHeaders` is not given: the credentials kept for that origin, if any (the
   * app's browser uses those of the mirrors of a Source). What it returns is sent to that origin only.
   */
  sourceHeadersFor?: (origin: string) => SourceHeaders | null;
  /** Default `env`: HTTP_PROXY / HTTPS_PROXY / NO_PROXY. */
  proxy?: ProxySetting;
  /** Where `env` reads the proxies from. Default process.env. */
  proxyEnv?: ProxyEnv;
}

export interface SourceHeaders {
  origin: string;
  authorization?: string | null;
  headers?: Record<string, string>;
}

/**
 * A bearer token for the origin of `url` alone, as `sourceHeaders`: the token given for one URL (rsdesk discover,
 * check, inspect --token) must not go to another host a document names (an up link, a resourcesync link). There is
 * no token "for every request": it reached whatever origin a fetch started at.
 */
export function bearerFor(url: string, token: string | null | undefined): SourceHeaders | null {
  if (!token || !URL.canParse(url)) return null;
  return { origin: new URL(url).origin, authorization: `Bearer ${token}` };
}

/** Adds a Source's own headers to a request bound for `url`'s origin, and only there. */
export function addSourceHeaders(headers: Record<string, string>, url: URL, source: SourceHeaders | null | undefined): void {
  if (!source || url.origin !== source.origin) return;
  for (const [name, value] of Object.entries(source.headers ?? {})) headers[name.toLowerCase()] = value;
  if (source.authorization) headers.authorization = source.authorization;
}

export interface GetInit {
  signal?: AbortSignal;
  accept?: string;
  /** Largest body accepted, counted while streaming (decoded bytes). */
  maxBytes?: number;
  /** A shorter deadline for this fetch (epoch ms), e.g. what is left of a discovery's time. */
  deadlineAt?: number;
  /**
   * The longest this fetch may take instead of the client's `deadlineMs`, for a body known to be large (a dump
   * package sized by its length): a transfer that is merely long must not be cut off like one that trickles.
   */
  deadlineMs?: number;
  /** Extra request headers (e.g. `range`, `if-range`), lower-case names; they cannot replace authorization. */
  headers?: Record<string, string>;
}

export interface HttpResponse {
  /** Final URL, after redirects. */
  url: string;
  status: number;
  statusText: string;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** Every URL that answered with a redirect, in order (the requested URL first). */
  redirects: string[];
  /** One-shot. */
  body: AsyncIterable<Uint8Array>;
  /** Reads the whole body as text (charset from Content-Type, else UTF-8). Default limit: `maxBytes` or 16 MiB. */
  text(limitBytes?: number): Promise<string>;
  /** Releases the body without reading it. */
  discard(): Promise<void>;
  /**
   * Drops the connection with whatever is left of the body. For a body known to be unwanted and possibly large:
   * `discard` reads up to 64 KiB more to keep the connection, and waits on a server that stalls.
   */
  abandon(): Promise<void>;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_REDIRECTS = 5;
export const MAX_DEADLINE_MS = 10 * 60_000;

/** The default overall deadline of one fetch for an idle timeout. */
export function deadlineFor(timeoutMs: number): number {
  return Math.min(10 * timeoutMs, MAX_DEADLINE_MS);
}
export const DEFAULT_USER_AGENT = 'ResourceSync-Desktop/0.1';
const DEFAULT_TEXT_LIMIT = 16 * 1024 * 1024;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Parses and checks a URL: only absolute http(s) URLs are fetched. */
export function parseHttpUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new NetworkError('bad-url', `Not a valid URL: ${clip(hideUserinfo(url))}`, hideUserinfo(url));
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new NetworkError('bad-url', `Only http and https URLs can be fetched, not ${clip(parsed.protocol, 40)} (${clip(hideUserinfo(url))})`, hideUserinfo(url));
  }
  return parsed;
}

export class Http {
  readonly timeoutMs: number;
  readonly deadlineMs: number;
  readonly maxRedirects: number;
  readonly userAgent: string;
  #source: SourceHeaders | null;
  #sourceFor: ((origin: string) => SourceHeaders | null) | null;
  #agent: Dispatcher;
  /** The proxy a request to a URL goes through, if any (said when it cannot be reached). */
  readonly #via: (url: URL) => string | null;

  constructor(options: HttpOptions = {}) {
    this.#via = (url) => proxyFor(url, options.proxy, options.proxyEnv);
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.deadlineMs = options.deadlineMs ?? deadlineFor(this.timeoutMs);
    this.maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
    this.userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
    this.#source = options.sourceHeaders ?? null;
    this.#sourceFor = options.sourceHeadersFor ?? null;
    this.#agent = makeDispatcher(
      {
        connect: { timeout: this.timeoutMs },
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        connections: 16,
        // Node's own default (16 KiB), stated: the message for a server over it names the number.
        maxHeaderSize: MAX_HEADER_BYTES,
      },
      options.proxy,
      options.proxyEnv,
    );
  }

  async get(url: string, init: GetInit = {}): Promise<HttpResponse> {
    const start = parseHttpUrl(url);
    if (init.signal?.aborted) throw new NetworkError('aborted', `Cancelled: ${start.href}`, start.href);
    const deadline = new Deadline(start.href, init.deadlineMs ?? this.deadlineMs, init.deadlineAt, init.signal);
    try {
      return await this.#get(start, init, deadline);
    } catch (err) {
      deadline.clear();
      throw deadline.expired() ?? err;
    }
  }

  async #get(start: URL, init: GetInit, deadline: Deadline): Promise<HttpResponse> {
    const redirects: string[] = [];
    let current = start;
    for (;;) {
      const href = current.href;
      const headers: Record<string, string> = {
        ...init.headers,
        'user-agent': this.userAgent,
        accept: init.accept ?? '*/*',
      };
      // Whatever its spelling: undici would send `Authorization` from a caller beside ours.
      for (const name of Object.keys(headers)) if (name.toLowerCase() === 'authorization') delete headers[name];
      // Per hop: credentials for one Source must not leak to whatever host a redirect names.
      addSourceHeaders(headers, current, this.#source ?? this.#sourceFor?.(current.origin) ?? null);
      if (init.signal?.aborted) throw new NetworkError('aborted', `Cancelled: ${href}`, href);
      let data;
      try {
        data = await abortableRequest(this.#agent, {
          origin: current.origin,
          path: current.pathname + current.search,
          method: 'GET',
          headers,
          signal: deadline.signal,
          onInfo: informationalLimit(href, this.timeoutMs),
        });
      } catch (err) {
        throw deadline.expired() ?? toNetworkError(err, href, this.timeoutMs, 'response', this.#via(current));
      }
      const responseHeaders = flattenHeaders(data.headers);
      const location = responseHeaders.location;
      if (REDIRECT_STATUSES.has(data.statusCode) && location !== undefined) {
        await dump(data.body);
        redirects.push(href);
        if (redirects.length > this.maxRedirects) {
          const loop = redirects.includes(resolveOrNull(location, current) ?? '') ? ' (a redirect loop)' : '';
          throw new NetworkError(
            'too-many-redirects',
            `Too many redirects${loop}: more than ${this.maxRedirects} starting at ${start.href}`,
            start.href,
          );
        }
        const next = resolveOrNull(location, current);
        if (next === null) {
          throw new NetworkError('bad-redirect', `${href} redirects to an invalid URL: ${clip(location)}`, href);
        }
        const nextUrl = new URL(next);
        if (nextUrl.protocol !== 'http:' && nextUrl.protocol !== 'https:') {
          throw new NetworkError('bad-redirect', `${href} redirects to a ${clip(nextUrl.protocol, 40)} URL, which is not followed`, href);
        }
        const further = furtherInside(start, nextUrl);
        if (further !== null) throw new NetworkError('bad-redirect', `${href} redirects to ${clip(nextUrl.href)}, which is not followed: ${further}`, href);
        current = nextUrl;
        continue;
      }
      return this.#response(href, data.statusCode, data.statusText, responseHeaders, redirects, data.body, init, deadline);
    }
  }

  #response(
    url: string,
    status: number,
    statusText: string,
    headers: Record<string, string>,
    redirects: string[],
    raw: Readable,
    init: GetInit,
    deadline: Deadline,
  ): HttpResponse {
    const maxBytes = init.maxBytes;
    const declared = headers['content-length'] === undefined ? NaN : Number(headers['content-length']);
    // Refuse up front when the server says the body is too big, but only for identity bodies (a coded body's
    // Content-Length says nothing about its decoded size).
    if (maxBytes !== undefined && !headers['content-encoding'] && declared > maxBytes) {
      raw.destroy();
      throw tooLarge(url, maxBytes);
    }
    const body = streamBody(raw, {
      url,
      contentEncoding: headers['content-encoding'],
      maxBytes,
      timeoutMs: this.timeoutMs,
      expired: (bytes) => deadline.expired(bytes),
      done: () => deadline.clear(),
    });
    const charset = charsetOf(headers['content-type']);
    return {
      url,
      status,
      statusText: statusText || '',
      headers,
      redirects,
      body,
      text: (limitBytes?: number) => readText(body, url, limitBytes ?? maxBytes ?? DEFAULT_TEXT_LIMIT, charset),
      discard: async () => {
        await body.return(undefined);
        await dump(raw);
        deadline.clear();
      },
      abandon: async () => {
        raw.destroy();
        await body.return(undefined);
        deadline.clear();
      },
    };
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function resolveOrNull(location: string, base: URL): string | null {
  try {
    return new URL(location, base).href;
  } catch {
    return null;
  }
}

/** Throws away a body; a large or stalled one is cut off rather than read to the end. */
async function dump(raw: Readable): Promise<void> {
  const dumpable = raw as Readable & { dump?: (opts?: { limit?: number }) => Promise<void> };
  try {
    if (typeof dumpable.dump === 'function') await dumpable.dump({ limit: 64 * 1024 });
    else raw.destroy();
  } catch {
    raw.destroy();
  }
}

/**
 * The overall deadline of one fetch: aborts the request (and, once headers arrived, its body) when the time is up.
 * Combined with the caller's signal; an abort by the caller stays a cancellation, not a timeout.
 */
class Deadline {
  readonly signal: AbortSignal;
  #url: string;
  #ms: number;
  #timer: ReturnType<typeof setTimeout> | null;
  #fired = false;
  /** The caller's own deadline was the shorter one. */
  #callerDeadline: boolean;
  #controller = new AbortController();

  constructor(url: string, ms: number, deadlineAt: number | undefined, callerSignal: AbortSignal | undefined) {
    this.#url = url;
    const own = Date.now() + ms;
    this.#callerDeadline = deadlineAt !== undefined && deadlineAt < own;
    const at = this.#callerDeadline ? (deadlineAt as number) : own;
    this.#ms = ms;
    this.#timer = setTimeout(() => {
      this.#fired = true;
      this.#controller.abort();
    }, Math.max(0, at - Date.now()));
    // A response nobody reads to the end must not keep a process alive for minutes.
    this.#timer.unref?.();
    this.signal = callerSignal ? AbortSignal.any([callerSignal, this.#controller.signal]) : this.#controller.signal;
  }

  /** The error to report when the deadline (not the caller) ended the fetch; null otherwise. */
  expired(bytes?: number): NetworkError | null {
    if (!this.#fired) return null;
    const got = bytes === undefined ? '' : ` (${formatBytes(bytes)} had arrived)`;
    if (this.#callerDeadline) {
      return new NetworkError('deadline', `Ran out of time while fetching ${this.#url}${got}`, this.#url);
    }
    return new NetworkError(
      'deadline',
      `${this.#url} did not finish within ${formatDuration(this.#ms)}${got}; the server sends too slowly or never ends`,
      this.#url,
    );
  }

  clear(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }
}
