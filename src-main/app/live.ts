// The app's live side: one LiveEngine (callback server + subscriptions of every mirror that has any), its settings
// and the list of mirror folders with subscriptions kept in live.json beside the app's database, so the server
// comes back on the same address and every subscription is taken up again when the app starts.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { LiveSettings, LiveStatus, SubscriptionView } from '../contract/types.ts';
import { DEFAULT_LIVE_PORT, LiveEngine, type SelfTest } from '../engine/live/engine.ts';
import type { LiveEvent } from '../engine/live/model.ts';
import type { GivenCredentials } from '../engine/live/feed.ts';
import type { SecretStore } from '../engine/mirror/secrets.ts';
import { MirrorState, stateDirOf } from '../engine/mirror/state.ts';
import { InvalidArgumentsError, NotFoundError } from './errors.ts';
import { absoluteFolder } from './folder-path.ts';
import { LiveBatcher, type LiveBatch } from './live-batch.ts';
import { makeFolders } from '../engine/mirror/make-folders.ts';

export interface LiveServiceOptions {
  /** Where live.json is kept; null: in memory only (tests). */
  dataDir: string | null;
  /** Overrides the saved port for this run (tests: 0 for any free port). */
  port?: number;
  send: (batch: LiveBatch) => void;
  batchIntervalMs?: number;
  /** Lists the Capability Lists of saved Sources: where a channel's topic is looked up for its mirror's binding. */
  capabilityLists: () => string[];
  /** How often a callback port held by another program is tried again (default LISTEN_RETRY_MS). */
  listenRetryMs?: number;
  /** Where mirrors' credentials are kept (the same store as their syncs): applied notifications send them too. */
  secretStore?: SecretStore;
  /** Credentials the app gives a mirror's batches now (its Settings token), asked again for each batch. */
  givenCredentials?: GivenCredentials;
}

interface LiveConfig extends LiveSettings {
  /** Mirror folders with subscriptions (taken up again at start). */
  mirrors: string[];
}

/** How often a callback port held by another program is tried again. */
export const LISTEN_RETRY_MS = 15_000;

const DEFAULTS: LiveConfig = { host: '127.0.0.1', port: DEFAULT_LIVE_PORT, publicUrl: null, mirrors: [] };

export class LiveService {
  readonly #o: LiveServiceOptions;
  readonly #batcher: LiveBatcher;
  #config: LiveConfig;
  #engine: LiveEngine | null = null;
  #starting: Promise<void> | null = null;
  #serverError: string | null = null;
  #retry: NodeJS.Timeout | null = null;
  #closed = false;

  constructor(options: LiveServiceOptions) {
    this.#o = options;
    this.#batcher = new LiveBatcher(options.send, { intervalMs: options.batchIntervalMs });
    this.#config = this.#load();
  }

  /** Starts the callback server and takes up every mirror's subscriptions. Never throws: a failure is in status(). */
  start(): Promise<void> {
    this.#starting ??= this.#start();
    return this.#starting;
  }

  async #start(): Promise<void> {
    const port = this.#o.port ?? this.#config.port;
    const engine = new LiveEngine({ host: this.#config.host, port, publicUrl: this.#config.publicUrl, secretStore: this.#o.secretStore, givenCredentials: this.#o.givenCredentials });
    engine.events.on((e) => this.#batcher.push(e));
    this.#engine = engine;
    try {
      await engine.start();
      this.#serverError = null;
    } catch (err) {
      this.#notListening(engine, err);
      return;
    }
    this.#takeUp(engine);
  }

  /**
   * A port held by another program at start (a `rsdesk watch` still running, the app's previous instance still
   * stopping) left the server down until the settings were changed by hand, and every subscription with it, for
   * as long as the app ran. A busy port is tried again every LISTEN_RETRY_MS, and the status says so.
   */
  #notListening(engine: LiveEngine, err: unknown): void {
    const busy = (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
    this.#serverError = `The callback server could not start: ${(err as Error).message}.` + (busy ? ` It tries again every ${Math.round((this.#o.listenRetryMs ?? LISTEN_RETRY_MS) / 1000)} s; Settings → Callback server can choose another port.` : '');
    if (!busy || this.#closed) return;
    this.#retry = setTimeout(() => {
      this.#retry = null;
      if (this.#closed || this.#engine !== engine) return;
      engine.start().then(
        () => {
          // Closed or replaced while it was starting: it would listen on for nobody.
          if (this.#closed || this.#engine !== engine) return void engine.stop();
          this.#serverError = null;
          this.#takeUp(engine);
        },
        (again: unknown) => {
          if (this.#engine === engine) this.#notListening(engine, again);
        },
      );
    }, this.#o.listenRetryMs ?? LISTEN_RETRY_MS);
    this.#retry.unref?.();
  }

  #takeUp(engine: LiveEngine): void {
    for (const dest of this.#config.mirrors) {
      try {
        if (existsSync(dest)) engine.openMirror(dest);
      } catch (err) {
        engine.events.emit({ type: 'error', message: `The subscriptions of ${dest} could not be taken up: ${(err as Error).message}`, dest });
      }
    }
  }

  async #ready(): Promise<LiveEngine> {
    await this.start();
    if (this.#engine === null || this.#engine.address === null) {
      throw new InvalidArgumentsError(this.#serverError ?? 'The callback server is not running');
    }
    return this.#engine;
  }

  async status(): Promise<LiveStatus> {
    await this.start();
    const { host, port, publicUrl } = this.#config;
    const address = this.#engine?.address ?? null;
    return {
      settings: { host, port, publicUrl },
      address,
      callbackBase: address !== null ? this.#engine!.callbackBase() : null,
      error: this.#serverError,
      suggestedFolder: join(homedir(), 'ResourceSync mirrors'),
    };
  }

  /**
   * New settings move the running server: every subscription whose callback URL changes is asked for again at once
   * at the new URL, and its hub asked to unsubscribe the old one (engine.reconfigure). When the server cannot move
   * (the new port is taken), it is started afresh with the new settings, and status() says why it does not listen.
   */
  async setSettings(settings: LiveSettings): Promise<LiveStatus> {
    if (settings.publicUrl !== null) {
      const u = new URL(settings.publicUrl);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new InvalidArgumentsError('The public callback URL must be an http or https URL');
    }
    await this.start();
    this.#config = { ...this.#config, ...settings };
    this.#save();
    // A port set by the person wins over the test override from now on.
    this.#o.port = undefined;
    const engine = this.#engine;
    if (engine !== null && engine.address !== null) {
      try {
        await engine.reconfigure({ host: this.#config.host, port: this.#config.port, publicUrl: this.#config.publicUrl });
        this.#serverError = null;
        return this.status();
      } catch {
        // Could not move: started afresh below, which records why it cannot listen.
      }
    }
    if (this.#retry) clearTimeout(this.#retry);
    this.#retry = null;
    await engine?.stop();
    this.#engine = null;
    this.#starting = null;
    return this.status();
  }

  async selfTest(): Promise<SelfTest> {
    return (await this.#ready()).selfTest();
  }

  async subscriptions(): Promise<SubscriptionView[]> {
    await this.start();
    return (this.#engine?.subscriptions() ?? []).map((s) => ({ ...s, now: new Date().toISOString() }));
  }

  async subscribe(input: { topic: string; hub: string; folder: string; leaseSeconds?: number }): Promise<SubscriptionView> {
    // Checked before anything starts: a relative folder was made under the app's working folder.
    const dest = absoluteFolder(input.folder);
    const engine = await this.#ready();
    // Not Node's recursive mkdir: it spins for ever under /proc (make-folders.ts).
    makeFolders(dest);
    await this.#bindIfNew(engine, dest, input.topic);
    engine.openMirror(dest);
    const sub = await engine.subscribe({ dest, topic: input.topic, hub: input.hub, leaseSeconds: input.leaseSeconds ?? null });
    if (!this.#config.mirrors.includes(dest)) {
      this.#config.mirrors.push(dest);
      this.#save();
    }
    return { ...sub, now: new Date().toISOString() };
  }

  async unsubscribe(folder: string, id: number): Promise<SubscriptionView> {
    const dest = absoluteFolder(folder);
    const engine = await this.#ready();
    const feed = engine.feed(dest);
    if (!feed || !feed.subscriptions().some((s) => s.id === id)) throw new NotFoundError('This subscription is no longer there');
    return { ...(await engine.unsubscribe(dest, id)), now: new Date().toISOString() };
  }

  /** The last events, oldest first: what a feed opened late shows. */
  recent(): LiveEvent[] {
    return this.#engine?.events.recent() ?? [];
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#retry) clearTimeout(this.#retry);
    this.#batcher.close();
    await this.#starting?.catch(() => undefined);
    await this.#engine?.stop();
    this.#engine = null;
  }

  /** A new folder gets the binding of the Capability List that lists the channel (what applying and catch-up need). */
  async #bindIfNew(engine: LiveEngine, dest: string, topic: string): Promise<void> {
    const state = new MirrorState(stateDirOf(dest));
    try {
      if (state.binding() !== null) return;
      for (const url of this.#o.capabilityLists()) {
        const found = await engine.channels(url).catch(() => null);
        if (found?.binding && found.channels.some((c) => c.topic === topic)) {
          state.setBinding({ ...found.binding, maps: [], allowHosts: [], createdAt: new Date().toISOString() });
          return;
        }
      }
    } finally {
      state.close();
    }
  }

  #file(): string | null {
    return this.#o.dataDir === null ? null : join(this.#o.dataDir, 'live.json');
  }

  #load(): LiveConfig {
    const file = this.#file();
    if (file === null || !existsSync(file)) return { ...DEFAULTS, mirrors: [] };
    try {
      const saved = JSON.parse(readFileSync(file, 'utf8')) as Partial<LiveConfig>;
      return {
        host: typeof saved.host === 'string' ? saved.host : DEFAULTS.host,
        port: typeof saved.port === 'number' ? saved.port : DEFAULTS.port,
        publicUrl: typeof saved.publicUrl === 'string' ? saved.publicUrl : null,
        mirrors: Array.isArray(saved.mirrors) ? saved.mirrors.filter((m): m is string => typeof m === 'string') : [],
      };
    } catch {
      return { ...DEFAULTS, mirrors: [] };
    }
  }

  #save(): void {
    const file = this.#file();
    if (file === null) return;
    writeFileSync(`${file}.tmp`, JSON.stringify(this.#config, null, 2));
    renameSync(`${file}.tmp`, file);
  }
}
