// The fixture Source's WebSub hub (CN §4, WebSub §5–§8), so the whole notification loop runs on 127.0.0.1:
// subscription requests (202, then intent verification by a GET to the callback with a challenge), leases (granted
// as asked unless capped, expiring), deliveries of each publication to every live subscriber of its topic, one at a
// time per subscriber and in publication order, signed with the subscriber's secret, retried on failure. Faults on
// demand: forged verifications, bad or missing signatures, out-of-order, duplicated and dropped publications,
// failing or denied subscription requests.
import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { request } from 'undici';

export type SignatureMethod = 'sha1' | 'sha256' | 'sha384' | 'sha512';

export interface HubSubscription {
  callback: string;
  topic: string;
  secret: string | null;
  leaseSeconds: number;
  /** Epoch ms. */
  expiresAt: number;
  verifiedAt: number;
}

export interface HubDelivery {
  callback: string;
  topic: string;
  /** 1-based publication number. */
  publication: number;
  attempt: number;
  /** null: the connection failed. */
  status: number | null;
  signature: string | null;
  at: number;
}

export interface HubVerification {
  callback: string;
  mode: string;
  topic: string;
  status: number | null;
  /** The callback echoed the challenge. */
  confirmed: boolean;
}

export interface HubFaults {
  /** Sign with the wrong key, or not at all. */
  signature?: 'bad' | 'missing' | null;
  method?: SignatureMethod;
  /** Drop the next N publications (the subscriber sees a gap). */
  drop?: number;
  /** Deliver the next N publications twice. */
  duplicate?: number;
  /** Hold the next publication back until the one after it was delivered (out of order). */
  holdNext?: number;
  /** Answer the next N subscription requests with 503. */
  failRequests?: number;
  /** Deny the next subscription with this reason (hub.mode=denied). */
  deny?: string | null;
  /** Wait this long before verifying. */
  verifyDelayMs?: number;
}

export interface HubOptions {
  /** The hub's own URL (rel="hub"). */
  url: string;
  /** Link rel="resourcesync" sent with each delivery, per topic. */
  capabilityListFor?: (topic: string) => string | null;
  /** Longest lease granted. Default 864000 (10 days). */
  maxLeaseSeconds?: number;
  /** Lease when none is asked for. Default 3600. */
  defaultLeaseSeconds?: number;
  /** Delivery attempts after the first. Default 3. */
  retries?: number;
  /** First retry delay, doubled each time. Default 50 ms. */
  retryDelayMs?: number;
  /** Deliveries in flight per subscriber. Default 1 (in order). */
  concurrency?: number;
}

const TIMEOUT_MS = 10_000;

export class FixtureHub {
  readonly url: string;
  readonly subscriptions = new Map<string, HubSubscription>();
  readonly deliveries: HubDelivery[] = [];
  readonly verifications: HubVerification[] = [];
  /** Every request POSTed to the hub (form or publication), raw. */
  readonly requests: { headers: Record<string, string>; body: string }[] = [];
  faults: HubFaults = {};
  readonly #o: Required<Omit<HubOptions, 'capabilityListFor'>> & Pick<HubOptions, 'capabilityListFor'>;
  readonly #queues = new Map<string, Promise<void>>();
  readonly #inflight = new Set<Promise<unknown>>();
  #held: { topic: string; payload: string; publication: number } | null = null;
  #publications = 0;
  #closed = false;

  constructor(options: HubOptions) {
    this.url = options.url;
    this.#o = {
      url: options.url,
      capabilityListFor: options.capabilityListFor,
      maxLeaseSeconds: options.maxLeaseSeconds ?? 864_000,
      defaultLeaseSeconds: options.defaultLeaseSeconds ?? 3_600,
      retries: options.retries ?? 3,
      retryDelayMs: options.retryDelayMs ?? 50,
      concurrency: options.concurrency ?? 1,
    };
  }

  /** Subscriptions whose lease has not run out, of one topic (or all). */
  live(topic?: string): HubSubscription[] {
    const now = Date.now();
    return [...this.subscriptions.values()].filter((s) => s.expiresAt > now && (topic === undefined || s.topic === topic));
  }

  /** POST /hub: a subscriber's form, or a Source's publication (application/xml with Link rel="self"). */
  async handle(req: IncomingMessage, res: ServerResponse, body: string): Promise<void> {
    const headers = flatten(req.headers);
    this.requests.push({ headers, body });
    const type = (headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (type === 'application/xml' || type === 'text/xml') {
      const self = /<([^>]+)>\s*;\s*rel="?self"?/.exec(headers.link ?? '')?.[1];
      if (!self) return text(res, 400, 'A publication needs a Link header with rel="self" (CN §4.1)\n');
      this.publish(self, body);
      return text(res, 200, 'Published\n');
    }
    if (type !== 'application/x-www-form-urlencoded') return text(res, 415, 'Expected application/x-www-form-urlencoded\n');
    const form = new URLSearchParams(body);
    const mode = form.get('hub.mode');
    const topic = form.get('hub.topic');
    const callback = form.get('hub.callback');
    if (mode !== 'subscribe' && mode !== 'unsubscribe') return text(res, 400, 'hub.mode must be subscribe or unsubscribe\n');
    if (!topic || !callback) return text(res, 400, 'hub.topic and hub.callback are required\n');
    try {
      new URL(callback);
    } catch {
      return text(res, 400, 'hub.callback is not a URL\n');
    }
    if (this.faults.failRequests) {
      this.faults.failRequests--;
      return text(res, 503, 'The hub is busy; try again later\n', { 'retry-after': '0' });
    }
    const secret = form.get('hub.secret');
    if (secret !== null && Buffer.byteLength(secret) >= 200) return text(res, 400, 'hub.secret must be less than 200 bytes\n');
    const asked = Number(form.get('hub.lease_seconds'));
    const lease = Number.isInteger(asked) && asked > 0 ? Math.min(asked, this.#o.maxLeaseSeconds) : this.#o.defaultLeaseSeconds;
    text(res, 202, 'Accepted\n');
    this.#track(this.#verify(mode, topic, callback, secret, lease));
  }

  async #verify(mode: 'subscribe' | 'unsubscribe', topic: string, callback: string, secret: string | null, lease: number): Promise<void> {
    if (this.faults.verifyDelayMs) await sleep(this.faults.verifyDelayMs);
    if (this.#closed) return;
    const key = `${topic} ${callback}`;
    if (mode === 'subscribe' && this.faults.deny) {
      const reason = this.faults.deny;
      this.faults.deny = null;
      await this.#get(callback, { 'hub.mode': 'denied', 'hub.topic': topic, 'hub.reason': reason });
      return;
    }
    const challenge = randomBytes(12).toString('hex');
    const params: Record<string, string> = { 'hub.mode': mode, 'hub.topic': topic, 'hub.challenge': challenge };
    if (mode === 'subscribe') params['hub.lease_seconds'] = String(lease);
    const answer = await this.#get(callback, params);
    const confirmed = answer.status !== null && answer.status >= 200 && answer.status <= 299 && answer.body === challenge;
    this.verifications.push({ callback, mode, topic, status: answer.status, confirmed });
    if (!confirmed) return;
    if (mode === 'unsubscribe') this.subscriptions.delete(key);
    else this.subscriptions.set(key, { callback, topic, secret, leaseSeconds: lease, expiresAt: Date.now() + lease * 1000, verifiedAt: Date.now() });
  }

  async #get(callback: string, params: Record<string, string>): Promise<{ status: number | null; body: string }> {
    const url = new URL(callback);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    try {
      const res = await request(url, { method: 'GET', headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS });
      return { status: res.statusCode, body: await res.body.text() };
    } catch {
      return { status: null, body: '' };
    }
  }

  /** A verification the hub never had reason to send (a forger's): what did the callback answer? */
  async forgeVerification(callback: string, params: Record<string, string>): Promise<{ status: number | null; body: string }> {
    return this.#get(callback, params);
  }

  /** Ends a subscription's lease now (the subscriber must have renewed). */
  expire(callback?: string): void {
    for (const s of this.subscriptions.values()) if (callback === undefined || s.callback === callback) s.expiresAt = Date.now();
  }

  /** Delivers a payload to every live subscriber of the topic, with whatever faults are set. */
  publish(topic: string, payload: string): void {
    if (this.#closed) return;
    const publication = ++this.#publications;
    if (this.faults.drop) {
      this.faults.drop--;
      return;
    }
    if (this.faults.holdNext) {
      this.faults.holdNext--;
      this.#held = { topic, payload, publication };
      return;
    }
    const times = this.faults.duplicate ? 2 : 1;
    if (this.faults.duplicate) this.faults.duplicate--;
    for (let i = 0; i < times; i++) this.#fanOut(topic, payload, publication);
    if (this.#held) {
      const held = this.#held;
      this.#held = null;
      this.#fanOut(held.topic, held.payload, held.publication);
    }
  }

  #fanOut(topic: string, payload: string, publication: number): void {
    for (const sub of this.live(topic)) {
      const headers = this.#headers(sub, payload);
      if (this.#o.concurrency > 1) {
        this.#track(this.#deliver(sub, payload, headers, publication));
        continue;
      }
      const previous = this.#queues.get(sub.callback) ?? Promise.resolve();
      const next = previous.then(() => this.#deliver(sub, payload, headers, publication));
      this.#queues.set(sub.callback, next);
      this.#track(next);
    }
  }

  #headers(sub: HubSubscription, payload: string): Record<string, string> {
    const headers: Record<string, string> = { 'content-type': 'application/xml' };
    const capabilityList = this.#o.capabilityListFor?.(sub.topic) ?? null;
    headers.link = `<${sub.topic}>; rel="self", <${this.url}>; rel="hub"` + (capabilityList ? `, <${capabilityList}>; rel="resourcesync"` : '');
    const method = this.faults.method ?? 'sha256';
    if (sub.secret !== null && this.faults.signature !== 'missing') {
      const key = this.faults.signature === 'bad' ? `${sub.secret}-forged` : sub.secret;
      headers['x-hub-signature'] = `${method}=${createHmac(method, key).update(payload).digest('hex')}`;
    }
    return headers;
  }

  async #deliver(sub: HubSubscription, payload: string, headers: Record<string, string>, publication: number): Promise<void> {
    for (let attempt = 1; attempt <= this.#o.retries + 1 && !this.#closed; attempt++) {
      let status: number | null = null;
      try {
        const res = await request(sub.callback, { method: 'POST', headers, body: payload, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS });
        status = res.statusCode;
        await res.body.dump();
      } catch {
        status = null;
      }
      this.deliveries.push({ callback: sub.callback, topic: sub.topic, publication, attempt, status, signature: headers['x-hub-signature'] ?? null, at: Date.now() });
      // 410 Gone: the subscriber ended the subscription (WebSub §7).
      if (status === 410) return void this.subscriptions.delete(`${sub.topic} ${sub.callback}`);
      if (status !== null && status >= 200 && status <= 299) return;
      await sleep(this.#o.retryDelayMs * 2 ** (attempt - 1));
    }
  }

  #track(p: Promise<unknown>): void {
    const tracked = p.catch(() => undefined).finally(() => this.#inflight.delete(tracked));
    this.#inflight.add(tracked);
  }

  /** Resolves when no verification or delivery is under way. */
  async settled(): Promise<void> {
    while (this.#inflight.size > 0) await Promise.all([...this.#inflight]);
  }

  close(): void {
    this.#closed = true;
  }
}

function flatten(headers: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

function text(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
