// Where a mirror's credentials (a bearer token, a basic password) are kept: never in the mirror folder, which is made
// to be copied and moved, but in a store of the person's own (the CLI: a file in the user's data folder, mode 600; the
// desktop app: the same file with every value sealed by the OS keychain through Electron's safeStorage, handed in as
// a SecretBox). The binding in the folder records only which scheme is used and under which key.
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { SecretBox } from '../../store/secrets.ts';

export interface SecretStore {
  get(key: string): string | null;
  set(key: string, value: string): void;
  delete(key: string): void;
  /** Where and how values are kept, for a note to people ("sealed with the OS keychain in …"). */
  readonly description: string;
  /** True when values are sealed (by the OS keychain) before they are written. */
  readonly sealed: boolean;
}

/**
 * A store's writes held back until `commit()`: a run keeps a secret given to it only once it is sure to keep the
 * mirror it belongs to (not in a dry run, not when the run is refused or binds nothing). Reads see the held writes.
 */
export class DeferredSecrets implements SecretStore {
  readonly #store: SecretStore;
  readonly #held = new Map<string, string | null>();
  readonly #notes: string[] = [];

  constructor(store: SecretStore) {
    this.#store = store;
  }

  get description(): string {
    return this.#store.description;
  }

  get sealed(): boolean {
    return this.#store.sealed;
  }

  get(key: string): string | null {
    return this.#held.has(key) ? this.#held.get(key)! : this.#store.get(key);
  }

  set(key: string, value: string): void {
    this.#held.set(key, value);
  }

  delete(key: string): void {
    this.#held.set(key, null);
  }

  /** A note about what is kept, said when it is. */
  note(text: string): void {
    this.#notes.push(text);
  }

  /** Writes what was held, then says so. */
  commit(onNote?: (note: string) => void): void {
    for (const [key, value] of this.#held) {
      if (value === null) this.#store.delete(key);
      else this.#store.set(key, value);
    }
    this.#held.clear();
    for (const text of this.#notes.splice(0)) onNote?.(text);
  }
}

/** Secrets that live only as long as the process (nothing is written). */
export class MemorySecretStore implements SecretStore {
  readonly description = 'in memory only (not kept after this run)';
  readonly sealed = false;
  readonly #values = new Map<string, string>();
  get(key: string): string | null {
    return this.#values.get(key) ?? null;
  }
  set(key: string, value: string): void {
    this.#values.set(key, value);
  }
  delete(key: string): void {
    this.#values.delete(key);
  }
}

type Stored = { sealed: boolean; value: string };

/** A JSON file readable only by its owner; each value sealed by `box` when there is one. */
export class FileSecretStore implements SecretStore {
  readonly path: string;
  readonly description: string;
  readonly sealed: boolean;
  readonly #box: SecretBox | undefined;

  constructor(path: string, box?: SecretBox) {
    this.path = path;
    this.#box = box;
    this.sealed = box !== undefined;
    this.description = box
      ? `sealed with the OS keychain in ${path}`
      : `unsealed (in clear, readable only by your user account) in ${path}`;
  }

  #read(): Record<string, Stored> {
    try {
      const value = JSON.parse(readFileSync(this.path, 'utf8')) as unknown;
      return value !== null && typeof value === 'object' ? (value as Record<string, Stored>) : {};
    } catch {
      return {};
    }
  }

  #write(all: Record<string, Stored>): void {
    mkdirSync(dirname(this.path), { recursive: true });
    const temp = `${this.path}.${process.pid}.tmp`;
    writeFileSync(temp, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
    chmodSync(temp, 0o600);
    renameSync(temp, this.path);
  }

  get(key: string): string | null {
    const stored = this.#read()[key];
    if (!stored || typeof stored.value !== 'string') return null;
    if (!stored.sealed) return stored.value;
    // Sealed on another machine or by another user, or no keychain here: as good as absent.
    if (!this.#box) return null;
    try {
      return this.#box.open(stored.value);
    } catch {
      return null;
    }
  }

  set(key: string, value: string): void {
    const all = this.#read();
    all[key] = this.#box ? { sealed: true, value: this.#box.seal(value) } : { sealed: false, value };
    this.#write(all);
  }

  delete(key: string): void {
    const all = this.#read();
    if (!(key in all)) return;
    delete all[key];
    this.#write(all);
  }
}
