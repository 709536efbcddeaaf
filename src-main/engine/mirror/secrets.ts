// Where a mirror's credentials (a bearer token, a basic password) are kept: never in the mirror folder, which is made
// to be copied and moved, but in a store of the person's own (the CLI: a file in the user's data folder, mode 600; the
// desktop app: the same file with every value sealed by the OS keychain through Electron's safeStorage, handed in as
// a SecretBox). The binding in the folder records only which scheme is used and under which key.
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import type { SecretBox } from '../../store/secrets.ts';
import { SettingsError } from './settings.ts';

/** The secret store cannot be read or written; its message says which file and what to do. */
export class SecretStoreError extends SettingsError {
  constructor(message: string) {
    super(message);
    this.name = 'SecretStoreError';
  }
}

/**
 * How long a writer waits for another one to finish with the file, and after how long a lock left behind is stale.
 * A writer holds it for the milliseconds of one read and one rename; the wait blocks the thread (the store's API is
 * synchronous), so a lock a crashed writer left must be found stale well within the wait, and soon: else every
 * credential change in the app would freeze it for the whole wait, then fail.
 */
const LOCK_WAIT_MS = 5_000;
const LOCK_STALE_MS = 2_000;

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
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw new SecretStoreError(`The file that keeps mirrors' credentials, ${this.path}, cannot be read (${(err as Error).message}); nothing was changed.`);
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    // Anything else (a hand edit that left a trailing comma…) is refused, never replaced: writing over it would lose
    // the credentials of every mirror it holds.
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new SecretStoreError(
        `The file that keeps mirrors' credentials, ${this.path}, is not valid JSON (was it edited by hand?). It was left as it is: correct it, or move it away to start afresh (every mirror then needs its credentials given again).`,
      );
    }
    return value as Record<string, Stored>;
  }

  /**
   * Reads, changes and writes the file under a lock held across processes (two syncs of different mirrors, the app
   * and rsdesk), so that neither loses the other's change; the new content replaces the old in one rename.
   */
  #update(change: (all: Record<string, Stored>) => boolean): void {
    mkdirSync(dirname(this.path), { recursive: true });
    const unlock = this.#lock();
    try {
      const all = this.#read();
      if (!change(all)) return;
      const temp = `${this.path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
      try {
        writeFileSync(temp, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
        chmodSync(temp, 0o600);
        renameSync(temp, this.path);
      } catch (err) {
        try {
          unlinkSync(temp);
        } catch {
          // Not written at all.
        }
        throw err;
      }
    } finally {
      unlock();
    }
  }

  /** Takes `<file>.lock` (created exclusively), waiting for another writer; a lock older than a writer ever takes is stale. */
  #lock(): () => void {
    const lockPath = `${this.path}.lock`;
    const until = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        closeSync(openSync(lockPath, 'wx', 0o600));
        return () => {
          try {
            unlinkSync(lockPath);
          } catch {
            // Removed as stale by someone else; nothing to do.
          }
        };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      try {
        if (Date.now() - statSync(lockPath).mtimeMs > LOCK_STALE_MS) unlinkSync(lockPath);
      } catch {
        // Gone meanwhile: try again.
      }
      if (Date.now() > until) {
        throw new SecretStoreError(`The file that keeps mirrors' credentials, ${this.path}, is being written by another process for too long; nothing was changed. Try again; if ${lockPath} stays, delete it.`);
      }
      sleepMs(10 + Math.random() * 20);
    }
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
    const stored: Stored = this.#box ? { sealed: true, value: this.#box.seal(value) } : { sealed: false, value };
    this.#update((all) => {
      all[key] = stored;
      return true;
    });
  }

  delete(key: string): void {
    this.#update((all) => {
      if (!(key in all)) return false;
      delete all[key];
      return true;
    });
  }
}

function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
