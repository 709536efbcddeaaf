// Credentials kept per Source origin (scheme, host, port): given while adding a Source, or when its documents
// answered 401/403. They live in the same secret store as the mirrors' passwords (sealed with the OS keychain in the
// desktop app), under `source:<origin>`, and are sent by the app's browser to that origin only. A new mirror of that
// origin takes them as its own (mirrors.ts), so the Source is signed in to once, not once per mirror.
import type { SignInShown } from '../contract/types.ts';
import type { SecretStore } from '../engine/mirror/secrets.ts';
import { authorizationOf, type Credentials } from '../engine/mirror/settings.ts';

export function signInKey(origin: string): string {
  return `source:${origin}`;
}

/** The origins signed in to, in the order they were first signed in to (a secret store cannot list its keys). */
const INDEX_KEY = 'sources:signed-in';

function parse(text: string | null): Credentials | null {
  if (text === null) return null;
  try {
    const value = JSON.parse(text) as Partial<{ scheme: string; user: string; password: string; token: string }>;
    if (value.scheme === 'basic' && typeof value.user === 'string' && typeof value.password === 'string') {
      return { scheme: 'basic', user: value.user, password: value.password };
    }
    if (value.scheme === 'bearer' && typeof value.token === 'string') return { scheme: 'bearer', token: value.token };
  } catch {
    // Written by something else, or damaged: as good as absent.
  }
  return null;
}

export class SourceSignIns {
  readonly #store: SecretStore | undefined;
  /** Origin → its credentials (null: none), read once: the browser asks before every request. */
  readonly #known = new Map<string, Credentials | null>();

  constructor(store: SecretStore | undefined) {
    this.#store = store;
  }

  /** False when the app has nowhere to keep a secret. */
  get available(): boolean {
    return this.#store !== undefined;
  }

  get(origin: string): Credentials | null {
    if (!this.#known.has(origin)) this.#known.set(origin, parse(this.#store?.get(signInKey(origin)) ?? null));
    return this.#known.get(origin) ?? null;
  }

  /** The Authorization header value for `origin`, or null. */
  authorizationFor(origin: string): string | null {
    const credentials = this.get(origin);
    return credentials === null ? null : authorizationOf(credentials);
  }

  shown(origin: string): SignInShown | null {
    const c = this.get(origin);
    if (c === null) return null;
    return c.scheme === 'basic' ? { origin, scheme: 'basic', user: c.user } : { origin, scheme: 'bearer' };
  }

  /** Every origin signed in to whose credentials this computer can open, as the UI may see them. */
  list(): SignInShown[] {
    return this.#index().flatMap((origin) => this.shown(origin) ?? []);
  }

  set(origin: string, credentials: Credentials): void {
    if (!this.#store) throw new Error('nowhere to keep credentials');
    const value = credentials.scheme === 'basic' ? { scheme: 'basic', user: credentials.user, password: credentials.password } : { scheme: 'bearer', token: credentials.token };
    this.#store.set(signInKey(origin), JSON.stringify(value));
    this.#known.set(origin, credentials);
    const index = this.#index();
    if (!index.includes(origin)) this.#store.set(INDEX_KEY, JSON.stringify([...index, origin]));
  }

  delete(origin: string): void {
    this.#store?.delete(signInKey(origin));
    this.#known.set(origin, null);
    const index = this.#index();
    if (index.includes(origin)) this.#store?.set(INDEX_KEY, JSON.stringify(index.filter((o) => o !== origin)));
  }

  #index(): string[] {
    try {
      const value = JSON.parse(this.#store?.get(INDEX_KEY) ?? '[]') as unknown;
      return Array.isArray(value) ? value.filter((o): o is string => typeof o === 'string') : [];
    } catch {
      return [];
    }
  }
}
