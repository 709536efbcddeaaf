// The live engine: one callback server for every mirror's WebSub subscriptions and for pings, an event stream of
// typed events, and the functions a UI or the CLI calls (subscribe, unsubscribe, list, find channels, self-test).
// Each mirror's subscriptions and deliveries live in that mirror's own state.sqlite (feed.ts).
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { request } from 'undici';
import { startCallbackServer, type CallbackServer, type HttpAnswer } from '../../server/callback-server.ts';
import { clip } from '../clip.ts';
import { Http } from '../http/client.ts';
import { findChannels, type ChannelsFound } from './channels.ts';
import { LiveEvents } from './events.ts';
import { NoiseGate } from './noise.ts';
import { HubGate } from './hub-gate.ts';
import { MirrorFeed, type FeedOptions, type GivenCredentials } from './feed.ts';
import type { SecretStore } from '../mirror/secrets.ts';
import type { Ping, Subscription } from './model.ts';
import { readPing10, readPing20, type PingResult } from './ping.ts';
import { readXmlRpcPing, xmlRpcAnswer } from './xmlrpc.ts';

/** The default callback port: fixed, so hubs keep reaching the same callback URLs across restarts. */
export const DEFAULT_LIVE_PORT = 8741;

export interface LiveEngineOptions {
  host?: string;
  /** 0 = any free port (tests). Default DEFAULT_LIVE_PORT. */
  port?: number;
  /** The URL hubs reach this server by (a tunnel, a reverse proxy), without the /websub/… part. */
  publicUrl?: string | null;
  http?: Http;
  hubTimeoutMs?: number;
  /** Requests in flight to one hub at once (default HUB_REQUESTS_AT_ONCE, hub-gate.ts). */
  hubRequestsAtOnce?: number;
  verifyTimeoutMs?: number;
  retryBaseMs?: number;
  renewAt?: number;
  /** Least time between a verification and the renewal after it, whatever lease the hub grants (subscriber.ts). */
  minRenewMs?: number;
  /** Most time between a verification and the renewal after it, however long the lease (subscriber.ts). */
  maxRenewMs?: number;
  /** Most time a failed renewal waits past the lease's end (subscriber.ts; tests set less). */
  lapsedRetryMaxMs?: number;
  reorderWaitMs?: number;
  maxBodyBytes?: number;
  /** Connections the callback server holds at once (callback-server.ts; default 256). */
  maxConnections?: number;
  concurrency?: number;
  lockRetryMs?: number;
  /** Events kept for late listeners. */
  keepEvents?: number;
  /** How many events anyone can cause (pings, refused requests) are listed per window, and its length (noise.ts). */
  noise?: { perWindow?: number; windowMs?: number };
  /** Where mirrors' credentials are kept (the store their syncs use): applying notifications sends them too. */
  secretStore?: SecretStore;
  /** Credentials given for a mirror now (the app: its Settings token), asked again before each batch. */
  givenCredentials?: GivenCredentials;
  /** How the free space of mirrors' disks is read (tests give their own; feed.ts). */
  diskSpace?: FeedOptions['diskSpace'];
  /** The most each mirror's inbox holds waiting to be applied (feed.ts, MAX_PENDING). */
  maxPending?: FeedOptions['maxPending'];
  /** The longest Retry-After a batch waits out before it holds the mirror's notifications (feed.ts; tests set less). */
  maxRetryAfterMs?: number;
}

export interface SelfTest {
  url: string;
  reachable: boolean;
  message: string;
}

export interface SubscribeInput {
  dest: string;
  topic: string;
  hub: string;
  leaseSeconds?: number | null;
  secret?: string | null;
}

export class LiveEngine {
  readonly events: LiveEvents;
  readonly #noise: NoiseGate;
  /** One for every mirror: several mirrors may have their subscriptions at the same hub. */
  readonly #hubGate: HubGate;
  readonly #o: Required<Omit<LiveEngineOptions, 'http' | 'publicUrl' | 'minRenewMs' | 'maxRenewMs' | 'lapsedRetryMaxMs' | 'keepEvents' | 'noise' | 'secretStore' | 'givenCredentials' | 'diskSpace' | 'maxPending' | 'maxConnections' | 'hubRequestsAtOnce' | 'maxRetryAfterMs'>> & { maxConnections?: number } & { publicUrl: string | null };
  readonly #secrets: SecretStore | undefined;
  readonly #minRenewMs: number | undefined;
  readonly #maxRenewMs: number | undefined;
  readonly #lapsedRetryMaxMs: number | undefined;
  readonly #given: GivenCredentials | undefined;
  readonly #diskSpace: FeedOptions['diskSpace'];
  readonly #maxPending: FeedOptions['maxPending'];
  readonly #maxRetryAfterMs: number | undefined;
  readonly #http: Http;
  readonly #ownHttp: boolean;
  readonly #feeds = new Map<string, MirrorFeed>();
  readonly #selfTests = new Set<string>();
  #server: CallbackServer | null = null;
  /** Servers at an address given up, kept until hubs have verified the old callbacks' unsubscription. */
  readonly #retired = new Set<CallbackServer>();

  constructor(options: LiveEngineOptions = {}) {
    this.events = new LiveEvents(options.keepEvents ?? 1_000);
    this.#noise = new NoiseGate(this.events, options.noise);
    this.#hubGate = new HubGate(options.hubRequestsAtOnce);
    this.#o = {
      host: options.host ?? '127.0.0.1',
      port: options.port ?? DEFAULT_LIVE_PORT,
      publicUrl: options.publicUrl ? options.publicUrl.replace(/\/+$/, '') : null,
      hubTimeoutMs: options.hubTimeoutMs ?? 30_000,
      verifyTimeoutMs: options.verifyTimeoutMs ?? 120_000,
      retryBaseMs: options.retryBaseMs ?? 1_000,
      renewAt: options.renewAt ?? 0.8,
      reorderWaitMs: options.reorderWaitMs ?? 5_000,
      maxBodyBytes: options.maxBodyBytes ?? 10 * 1024 * 1024,
      concurrency: options.concurrency ?? 8,
      lockRetryMs: options.lockRetryMs ?? 2_000,
      ...(options.maxConnections !== undefined ? { maxConnections: options.maxConnections } : {}),
    };
    if (this.#o.publicUrl !== null) new URL(this.#o.publicUrl);
    this.#secrets = options.secretStore;
    this.#minRenewMs = options.minRenewMs;
    this.#maxRenewMs = options.maxRenewMs;
    this.#lapsedRetryMaxMs = options.lapsedRetryMaxMs;
    this.#given = options.givenCredentials;
    this.#diskSpace = options.diskSpace;
    this.#maxPending = options.maxPending;
    this.#maxRetryAfterMs = options.maxRetryAfterMs;
    this.#http = options.http ?? new Http();
    this.#ownHttp = options.http === undefined;
  }

  /** Starts the callback server. */
  async start(): Promise<{ address: string; callbackBase: string }> {
    this.#server = await this.#listen(this.#o.host, this.#o.port);
    const address = this.#server.url;
    this.events.emit({ type: 'listening', address, callbackBase: this.callbackBase() });
    return { address, callbackBase: this.callbackBase() };
  }

  #listen(host: string, port: number): Promise<CallbackServer> {
    return startCallbackServer(
      {
        verification: (token, query) => this.#verification(token, query),
        delivery: (token, headers, body) => this.#delivery(token, headers, body),
        pingGet: async (query) => this.#ping(readPing10(query), 'text'),
        pingPost: async (_headers, body) => this.#ping(readPing20(body.toString('utf8')), 'text'),
        xmlRpc: async (_headers, body) => this.#ping(readXmlRpcPing(body.toString('utf8')), 'xmlrpc'),
        selfTest: (nonce) => (this.#selfTests.has(nonce) ? { status: 200, body: nonce } : { status: 404, body: 'Not found\n' }),
        refused: (method, path, status, reason) =>
          this.#noise.emit({ type: 'rejected', what: path.includes('/websub/') ? (method === 'GET' ? 'verification' : 'delivery') : 'ping', reason: `${method}${path ? ` ${clip(path, 80)}` : ''}: ${reason} (answered ${status})`, path: clip(path, 200) }),
        dropped: (max) => this.#noise.dropped(max),
      },
      { host, port, maxBodyBytes: this.#o.maxBodyBytes, ...(this.#o.maxConnections !== undefined ? { maxConnections: this.#o.maxConnections } : {}) },
    );
  }

  /**
   * Moves the callback server to another address or public URL while running. Every subscription whose callback
   * URL changes is asked for again at once at the new one, and the hub asked to unsubscribe the old one; the old
   * address keeps being served until the hubs have verified that (or for at most `graceMs`), so that verification
   * can reach us. Throws when the new address cannot be listened on (the old one is then still served), or when
   * the same port on another interface could not be taken over (then nothing is served: start again).
   */
  async reconfigure(o: { host: string; port: number; publicUrl: string | null }, graceMs = Math.min(this.#o.verifyTimeoutMs, 60_000)): Promise<void> {
    const publicUrl = o.publicUrl ? o.publicUrl.replace(/\/+$/, '') : null;
    if (publicUrl !== null) new URL(publicUrl);
    const old = this.#server;
    if (old === null) throw new Error('The callback server is not started');
    let fresh: CallbackServer | null = null;
    if (o.host !== this.#o.host || o.port !== old.port) {
      try {
        fresh = await this.#listen(o.host, o.port);
      } catch (err) {
        // The same port on another interface: the old server has to let go of it first (no grace period then).
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || o.port !== old.port) throw err;
        await old.close();
        this.#server = null;
        fresh = await this.#listen(o.host, o.port);
      }
    }
    this.#o.host = o.host;
    this.#o.port = o.port;
    this.#o.publicUrl = publicUrl;
    const givenUp = fresh !== null ? this.#server : null;
    if (fresh !== null) this.#server = fresh;
    this.events.emit({ type: 'listening', address: this.#server!.url, callbackBase: this.callbackBase() });
    for (const feed of this.#feeds.values()) feed.subscriber.moveCallbacks();
    this.#afterMove(givenUp, graceMs);
  }

  /**
   * After a move: the server given up (if the port changed) is closed once no hub still has to verify an old
   * callback's unsubscription, or after graceMs; past that, such a verification is no longer expected anywhere.
   */
  #afterMove(server: CallbackServer | null, graceMs: number): void {
    if (server !== null) this.#retired.add(server);
    const until = Date.now() + graceMs;
    const timer = setInterval(() => {
      const waiting = [...this.#feeds.values()].some((f) => f.subscriber.retiring > 0);
      if (waiting && Date.now() < until && (server === null || this.#retired.has(server))) return;
      clearInterval(timer);
      if (server !== null && this.#retired.delete(server)) void server.close();
      if (this.#retired.size === 0) for (const f of this.#feeds.values()) f.subscriber.forgetRetiring();
    }, 100);
    timer.unref?.();
  }

  /** Addresses given up that are still served (hubs have yet to verify the old callbacks' unsubscription). */
  get retiredAddresses(): string[] {
    return [...this.#retired].map((s) => s.url);
  }

  get address(): string | null {
    return this.#server?.url ?? null;
  }

  /** Where hubs send to: the public URL setting, else the server's own address (127.0.0.1 for a wildcard bind). */
  callbackBase(): string {
    if (this.#o.publicUrl !== null) return this.#o.publicUrl;
    if (this.#server === null) throw new Error('The callback server is not started');
    const wildcard = this.#server.host === '0.0.0.0' || this.#server.host === '::';
    return wildcard ? `http://127.0.0.1:${this.#server.port}` : this.#server.url;
  }

  /** Opens a mirror's live side: its subscriptions are taken up again and stored deliveries processed. */
  openMirror(dest: string, options: Partial<FeedOptions> = {}): MirrorFeed {
    const key = resolve(dest);
    const existing = this.#feeds.get(key);
    if (existing) return existing;
    const feed = new MirrorFeed(
      key,
      this.events,
      this.#http,
      {
        apply: options.apply ?? true,
        deletePolicy: options.deletePolicy ?? 'keep',
        pingSync: options.pingSync ?? false,
        pingSyncIntervalMs: options.pingSyncIntervalMs,
        reorderWaitMs: options.reorderWaitMs ?? this.#o.reorderWaitMs,
        concurrency: options.concurrency ?? this.#o.concurrency,
        lockRetryMs: options.lockRetryMs ?? this.#o.lockRetryMs,
        batchSize: options.batchSize,
        diskSpace: options.diskSpace ?? this.#diskSpace,
        maxPending: options.maxPending ?? this.#maxPending,
        maxRetryAfterMs: options.maxRetryAfterMs ?? this.#maxRetryAfterMs,
        secretStore: options.secretStore ?? this.#secrets,
        givenCredentials: options.givenCredentials ?? this.#given,
        discarded: options.discarded ?? ((e) => this.#noise.emit(e)),
      },
      {
        callbackUrl: (token) => `${this.callbackBase()}/websub/${token}`,
        hubTimeoutMs: this.#o.hubTimeoutMs,
        verifyTimeoutMs: this.#o.verifyTimeoutMs,
        retryBaseMs: this.#o.retryBaseMs,
        renewAt: this.#o.renewAt,
        minRenewMs: this.#minRenewMs,
        maxRenewMs: this.#maxRenewMs,
        lapsedRetryMaxMs: this.#lapsedRetryMaxMs,
        discarded: (e) => this.#noise.emit(e),
        hubGate: this.#hubGate,
      },
    );
    this.#feeds.set(key, feed);
    feed.start();
    return feed;
  }

  async closeMirror(dest: string): Promise<void> {
    const key = resolve(dest);
    const feed = this.#feeds.get(key);
    this.#feeds.delete(key);
    await feed?.close();
  }

  feed(dest: string): MirrorFeed | null {
    return this.#feeds.get(resolve(dest)) ?? null;
  }

  /** Finds the notification channels of a Capability List or a topic URL. */
  channels(url: string, signal?: AbortSignal): Promise<ChannelsFound> {
    return findChannels(this.#http, url, signal);
  }

  subscribe(input: SubscribeInput): Promise<Subscription> {
    const feed = this.feed(input.dest) ?? this.openMirror(input.dest);
    return feed.subscribe({ topic: input.topic, hub: input.hub, leaseSeconds: input.leaseSeconds, secret: input.secret });
  }

  /** `timeoutMs`: a deadline for the request to the hub shorter than the usual one (a program that is stopping). */
  unsubscribe(dest: string, id: number, timeoutMs?: number): Promise<Subscription> {
    const feed = this.feed(dest);
    if (!feed) throw new Error(`${dest} is not open`);
    return feed.unsubscribe(id, timeoutMs);
  }

  /** Every subscription of every open mirror. */
  subscriptions(): Subscription[] {
    return [...this.#feeds.values()].flatMap((f) => f.subscriptions());
  }

  /** Asks this server, through the public callback URL, for a one-time answer: can hubs reach us that way? */
  async selfTest(timeoutMs = 10_000): Promise<SelfTest> {
    const nonce = randomBytes(16).toString('base64url');
    const url = `${this.callbackBase()}/.rsdesk-selftest/${nonce}`;
    this.#selfTests.add(nonce);
    try {
      const res = await request(url, { method: 'GET', headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs) });
      // Only the start of the answer matters: whatever else answers at the public URL may send without end.
      let text = '';
      for await (const chunk of res.body) {
        text += Buffer.from(chunk as Uint8Array).toString('latin1');
        if (text.length > 200) break;
      }
      res.body.destroy();
      if (res.statusCode === 200 && text === nonce) return { url: this.callbackBase(), reachable: true, message: `Reachable: ${this.callbackBase()} leads to this callback server.` };
      return { url: this.callbackBase(), reachable: false, message: `${this.callbackBase()} answered HTTP ${res.statusCode}, but not as this callback server: hubs would not reach it there.` };
    } catch (err) {
      return { url: this.callbackBase(), reachable: false, message: `${this.callbackBase()} could not be reached: ${(err as Error).message}` };
    } finally {
      this.#selfTests.delete(nonce);
    }
  }

  /** Resolves once every open mirror has read and applied what it received. */
  async idle(): Promise<void> {
    await Promise.all([...this.#feeds.values()].map((f) => f.idle()));
  }

  async stop(): Promise<void> {
    this.#noise.close();
    await this.#server?.close();
    this.#server = null;
    for (const server of this.#retired) await server.close();
    this.#retired.clear();
    for (const feed of this.#feeds.values()) await feed.close();
    this.#feeds.clear();
    if (this.#ownHttp) await this.#http.close();
  }

  #find(token: string) {
    for (const feed of this.#feeds.values()) {
      const row = feed.byToken(token);
      if (row) return { feed, row };
    }
    return null;
  }

  #verification(token: string, query: URLSearchParams): HttpAnswer {
    const found = this.#find(token);
    if (!found) {
      this.#noise.emit({ type: 'rejected', what: 'verification', reason: `a verification (hub.mode=${clip(query.get('hub.mode') ?? '', 30)}) for a callback no subscription has`, path: '/websub/…' });
      return { status: 404, body: 'No such subscription\n' };
    }
    return found.feed.verify(found.row, query);
  }

  async #delivery(token: string, headers: Record<string, string>, body: Buffer): Promise<HttpAnswer> {
    const found = this.#find(token);
    if (!found) {
      this.#noise.emit({ type: 'rejected', what: 'delivery', reason: 'a delivery to a callback no subscription has', path: '/websub/…' });
      return { status: 404, body: 'No such subscription\n' };
    }
    return found.feed.deliver(found.row, { headers, body });
  }

  #ping(result: PingResult, style: 'text' | 'xmlrpc'): HttpAnswer {
    if (!result.ok) {
      this.#noise.emit({ type: 'rejected', what: 'ping', reason: result.reason });
      return style === 'xmlrpc'
        ? { status: 400, body: xmlRpcAnswer(true, `Malformed ping: ${result.reason}`), contentType: 'text/xml; charset=utf-8' }
        : { status: 400, body: `Malformed ping: ${result.reason}\n` };
    }
    const triggered = this.#pingSync(result.ping);
    this.#noise.emit({ type: 'ping', ping: result.ping, triggered });
    const message = 'Thanks for the ping.';
    return style === 'xmlrpc' ? { status: 200, body: xmlRpcAnswer(false, message), contentType: 'text/xml; charset=utf-8' } : { status: 200, body: `${message}\n` };
  }

  /** Mirrors whose Source (same origin as what they are bound to) the ping names, that sync on pings. */
  #pingSync(ping: Ping): string[] {
    const urls = [ping.siteUri, ping.feedUri, ...ping.items.map((i) => i.link)].filter((u): u is string => u !== null);
    const origins = new Set(urls.map((u) => new URL(u).origin));
    const triggered: string[] = [];
    for (const feed of this.#feeds.values()) {
      const binding = feed.state.binding();
      if (!binding) continue;
      const theirs = [binding.url, binding.capabilityListUrl].filter((u): u is string => !!u).map((u) => new URL(u).origin);
      if (!theirs.some((o) => origins.has(o))) continue;
      if (feed.pingSync(`a ${ping.kind} ping for ${clip(urls[0] ?? '', 100)}`)) triggered.push(feed.dest);
    }
    return triggered;
  }
}
