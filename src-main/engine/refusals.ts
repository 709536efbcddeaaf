// A short memory of refused documents, per URL: a retry soon after (a click, a refresh, adding the same Source again)
// answers the remembered refusal at once instead of downloading up to 50 MB again only to refuse it again.
import { DocumentError } from './documents/errors.ts';
import { NetworkError } from './http/errors.ts';

/** How long a refusal is remembered. */
export const REFUSAL_MEMORY_MS = 10 * 60_000;
const MAX_REMEMBERED = 1_000;

export type Refusal = DocumentError | NetworkError;

export interface Recalled {
  error: Refusal;
  /** "refused 3 min ago and not fetched again; it can be retried in 7 min" */
  note: string;
}

/** Refusals worth remembering: the document itself is the problem, not a passing network failure. */
export function isRefusal(error: unknown): error is Refusal {
  if (error instanceof DocumentError) return error.code !== 'aborted' && error.code !== 'io';
  return error instanceof NetworkError && error.code === 'too-large';
}

export class RefusalMemory {
  #now: () => number;
  #known = new Map<string, { error: Refusal; at: number }>();

  constructor(options: { now?: () => number } = {}) {
    this.#now = options.now ?? Date.now;
  }

  /** Remembers `error` for url when it is a refusal; anything else is ignored. */
  remember(url: string, error: unknown): void {
    if (!isRefusal(error)) return;
    const now = this.#now();
    for (const [known, { at }] of this.#known) if (now - at >= REFUSAL_MEMORY_MS) this.#known.delete(known);
    // Bounded: the oldest is forgotten first (a Map keeps insertion order).
    if (this.#known.size >= MAX_REMEMBERED) this.#known.delete(this.#known.keys().next().value as string);
    this.#known.delete(url);
    this.#known.set(url, { error, at: now });
  }

  /** The refusal of url when it is recent enough, with a note saying so. */
  recall(url: string): Recalled | null {
    const known = this.#known.get(url);
    if (known === undefined) return null;
    const now = this.#now();
    if (now - known.at >= REFUSAL_MEMORY_MS) {
      this.#known.delete(url);
      return null;
    }
    const ago = Math.max(0, Math.round((now - known.at) / 60_000));
    const left = Math.max(1, Math.ceil((known.at + REFUSAL_MEMORY_MS - now) / 60_000));
    const note = `refused ${ago === 0 ? 'less than a minute' : `${ago} min`} ago and not fetched again; it can be retried in ${left} min`;
    return { error: known.error, note };
  }

  /** The remembered refusal as an error of the same kind and code, its message ending with the note. */
  recallError(url: string): Refusal | null {
    const recalled = this.recall(url);
    if (recalled === null) return null;
    const { error, note } = recalled;
    const message = `${error.message} (${note})`;
    if (error instanceof DocumentError) return new DocumentError(error.code, message, error.line === undefined ? undefined : { line: error.line });
    return new NetworkError(error.code, message, error.url);
  }
}
