// Subscriber requests to a hub (WebSub §5.1): a form POST with hub.mode, hub.topic, hub.callback and, for a
// subscription, hub.lease_seconds and hub.secret. The hub answers 202 Accepted and verifies our intent afterwards;
// any other answer is a failure, reported with the hub's own words (clipped). A deadline on the whole exchange.
import { request, type Dispatcher } from 'undici';
import { clip } from '../clip.ts';
import { formatSeconds, toNetworkError } from '../http/errors.ts';
import { parseHttpUrl, DEFAULT_USER_AGENT } from '../http/client.ts';
import { makeDispatcher, proxyFor, type ProxyEnv } from '../http/dispatcher.ts';
import type { HubGate } from './hub-gate.ts';

export interface HubRequest {
  hub: string;
  mode: 'subscribe' | 'unsubscribe';
  topic: string;
  callback: string;
  leaseSeconds?: number | null;
  secret?: string | null;
  timeoutMs?: number;
  /** Ends the exchange at once (the engine stopping): an unanswered request kept the process up to its deadline. */
  signal?: AbortSignal;
  /** Bounds the requests in flight to one hub (hub-gate.ts); the deadline starts once this one may go. */
  gate?: HubGate;
  /** Where the proxies are read from (HTTP_PROXY, HTTPS_PROXY, NO_PROXY), as for every other request. Default process.env. */
  proxyEnv?: ProxyEnv;
}

export type HubAnswer = { ok: true; status: number } | { ok: false; status: number | null; reason: string; retryAfterMs: number | null };

/** WebSub §5.1: hub.secret MUST be less than 200 bytes. */
export const MAX_SECRET_BYTES = 199;

export async function askHub(r: HubRequest): Promise<HubAnswer> {
  const url = parseHttpUrl(r.hub);
  const form = new URLSearchParams({ 'hub.mode': r.mode, 'hub.topic': r.topic, 'hub.callback': r.callback });
  if (r.mode === 'subscribe' && r.leaseSeconds) form.set('hub.lease_seconds', String(r.leaseSeconds));
  if (r.mode === 'subscribe' && r.secret) form.set('hub.secret', r.secret);
  const timeoutMs = r.timeoutMs ?? 30_000;
  const env = r.proxyEnv ?? process.env;
  // Through the environment's proxy like every other request: undici's own request() goes straight to the hub, which
  // a network that lets requests out only through a proxy refuses.
  let dispatcher: Dispatcher | null = null;
  let release: (() => void) | null = null;
  try {
    release = (await r.gate?.enter(url.origin, r.signal)) ?? null;
    dispatcher = makeDispatcher({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs }, 'env', env);
    const res = await request(url, {
      dispatcher,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': DEFAULT_USER_AGENT },
      body: form.toString(),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: r.signal ? AbortSignal.any([r.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs),
    } as Parameters<typeof request>[1]);
    let text = '';
    try {
      // The hub's explanation, if any: at most 4 KiB of it is read.
      for await (const chunk of res.body) {
        text += Buffer.from(chunk as Uint8Array).toString('utf8');
        if (text.length > 4096) break;
      }
    } catch {
      // A body that breaks off changes nothing about the status.
    }
    res.body.destroy();
    if (res.statusCode >= 200 && res.statusCode <= 299) return { ok: true, status: res.statusCode };
    const retryAfter = res.headers['retry-after'];
    const seconds = typeof retryAfter === 'string' && /^\d+$/.test(retryAfter.trim()) ? Number(retryAfter) * 1000 : null;
    const said = text.trim() ? `: ${clip(text.trim().replace(/\s+/g, ' '), 200)}` : '';
    return { ok: false, status: res.statusCode, reason: `the hub ${url.host} answered HTTP ${res.statusCode}${said}`, retryAfterMs: seconds };
  } catch (err) {
    if (r.signal?.aborted) return { ok: false, status: null, reason: `stopped before the hub ${url.host} answered`, retryAfterMs: null };
    // The deadline on the whole exchange ends it with a TimeoutError, which read "Network error for …: The operation
    // was aborted due to timeout" in every retry of a hub that never answers.
    if (err instanceof Error && err.name === 'TimeoutError') {
      return { ok: false, status: null, reason: `the hub ${url.host} did not answer within ${formatSeconds(timeoutMs)} (${url.href})`, retryAfterMs: null };
    }
    return { ok: false, status: null, reason: toNetworkError(err, url.href, timeoutMs, 'response', proxyFor(url, 'env', env)).message, retryAfterMs: null };
  } finally {
    await dispatcher?.destroy().catch(() => undefined);
    release?.();
  }
}
