// The one HTTP client of the engine: undici's Agent (connection pools per origin), GET only, redirects followed by
// hand so each hop is recorded and checked, timeouts on connect/headers and on an idle body, a byte limit.
import { Agent } from 'undici';
import type { Readable } from 'node:stream';
import { charsetOf, readText, streamBody, tooLarge } from './body.ts';
import { NetworkError, toNetworkError } from './errors.ts';

export interface HttpOptions {
  /** Sent as `Authorization: Bearer …` on every request (and dropped on a redirect to another origin). */
  bearerToken?: string | null;
  /** Connect + response headers, and the longest pause allowed while reading a body. Default 30000. */
  timeoutMs?: number;
  /** Default 5. */
  maxRedirects?: number;
  userAgent?: string;
}

export interface GetInit {
  signal?: AbortSignal;
  accept?: string;
  /** Largest body accepted, counted while streaming (decoded bytes). */
  maxBytes?: number;
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
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_REDIRECTS = 5;
export const DEFAULT_USER_AGENT = 'ResourceSync-Desktop/0.1';
const DEFAULT_TEXT_LIMIT = 16 * 1024 * 1024;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Parses and checks a URL: only absolute http(s) URLs are fetched. */
export function parseHttpUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new NetworkError('bad-url', `Not a valid URL: ${url}`, url);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new NetworkError('bad-url', `Only http and https URLs can be fetched, not ${parsed.protocol} (${url})`, url);
  }
  return parsed;
}

export class Http {
  readonly timeoutMs: number;
  readonly maxRedirects: number;
  readonly userAgent: string;
  #bearerToken: string | null;
  #agent: Agent;

  constructor(options: HttpOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
    this.userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
    this.#bearerToken = options.bearerToken ? options.bearerToken : null;
    this.#agent = new Agent({
      connect: { timeout: this.timeoutMs },
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
      connections: 16,
    });
  }

  async get(url: string, init: GetInit = {}): Promise<HttpResponse> {
    const start = parseHttpUrl(url);
    const redirects: string[] = [];
    let current = start;
    for (;;) {
      const href = current.href;
      const headers: Record<string, string> = {
        'user-agent': this.userAgent,
        accept: init.accept ?? '*/*',
      };
      // A token for one Source must not leak to whatever host a redirect names.
      if (this.#bearerToken && current.origin === start.origin) headers.authorization = `Bearer ${this.#bearerToken}`;
      if (init.signal?.aborted) throw new NetworkError('aborted', `Cancelled: ${href}`, href);
      let data;
      try {
        data = await this.#agent.request({
          origin: current.origin,
          path: current.pathname + current.search,
          method: 'GET',
          headers,
          signal: init.signal,
        });
      } catch (err) {
        throw toNetworkError(err, href, this.timeoutMs);
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
          throw new NetworkError('bad-redirect', `${href} redirects to an invalid URL: ${location}`, href);
        }
        const nextUrl = new URL(next);
        if (nextUrl.protocol !== 'http:' && nextUrl.protocol !== 'https:') {
          throw new NetworkError('bad-redirect', `${href} redirects to a ${nextUrl.protocol} URL, which is not followed`, href);
        }
        current = nextUrl;
        continue;
      }
      return this.#response(href, data.statusCode, data.statusText, responseHeaders, redirects, data.body, init);
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
  ): HttpResponse {
    const maxBytes = init.maxBytes;
    const declared = headers['content-length'] === undefined ? NaN : Number(headers['content-length']);
    // Refuse up front when the server says the body is too big, but only for identity bodies (a coded body's
    // Content-Length says nothing about its decoded size).
    if (maxBytes !== undefined && !headers['content-encoding'] && declared > maxBytes) {
      raw.destroy();
      throw tooLarge(url, maxBytes);
    }
    const body = streamBody(raw, { url, contentEncoding: headers['content-encoding'], maxBytes, timeoutMs: this.timeoutMs });
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
