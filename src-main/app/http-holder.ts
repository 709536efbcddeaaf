// The service's one Http client, built from the settings. When the settings change a new client is built; the
// old one is closed once the requests already using it are done (closing it at once would cut them off).
import type { Settings } from '../contract/types.ts';
import { Http, type SourceHeaders } from '../engine/http/index.ts';
import { settingsTokenHeaders } from './settings-token.ts';

interface Slot {
  http: Http;
  users: number;
  retired: boolean;
}

export class HttpHolder {
  #userAgent: string;
  #sourceHeadersFor: ((origin: string) => SourceHeaders | null) | undefined;
  #current: Slot;
  #closing: Promise<void>[] = [];

  /**
   * `sourceHeadersFor`: the credentials kept for an origin (its sign-in, else a mirror's own), asked per request; else
   * the Settings token, for its own origin only.
   */
  constructor(settings: Settings, userAgent: string, sourceHeadersFor?: (origin: string) => SourceHeaders | null) {
    this.#userAgent = userAgent;
    this.#sourceHeadersFor = sourceHeadersFor;
    this.#current = this.#build(settings);
  }

  #build(settings: Settings): Slot {
    // What is kept for an origin wins over the Settings token, which goes to the one origin named for it.
    const sourceHeadersFor = (origin: string) => this.#sourceHeadersFor?.(origin) ?? settingsTokenHeaders(settings, origin);
    return {
      http: new Http({ timeoutMs: settings.timeoutMs, userAgent: this.#userAgent, sourceHeadersFor }),
      users: 0,
      retired: false,
    };
  }

  #retire(slot: Slot): void {
    slot.retired = true;
    if (slot.users === 0) this.#closing.push(slot.http.close().catch(() => undefined));
  }

  /** Runs fn with the current client; the client stays open until fn settles. */
  async use<T>(fn: (http: Http) => Promise<T>): Promise<T> {
    const slot = this.#current;
    slot.users++;
    try {
      return await fn(slot.http);
    } finally {
      slot.users--;
      if (slot.retired && slot.users === 0) this.#closing.push(slot.http.close().catch(() => undefined));
    }
  }

  rebuild(settings: Settings): void {
    const old = this.#current;
    this.#current = this.#build(settings);
    this.#retire(old);
  }

  /** The current client (for tests and diagnostics). */
  get http(): Http {
    return this.#current.http;
  }

  async close(): Promise<void> {
    this.#retire(this.#current);
    await Promise.all(this.#closing);
  }
}
