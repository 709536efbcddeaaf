// The live engine's event stream: listeners get every event as it happens; the last events are kept (a capped
// buffer) so a view that opens late can show what it missed.
import type { LiveEvent, LiveEventInput } from './model.ts';

export type LiveListener = (event: LiveEvent) => void;

export class LiveEvents {
  readonly #listeners = new Set<LiveListener>();
  readonly #recent: LiveEvent[] = [];
  readonly #keep: number;

  constructor(keep = 1_000) {
    this.#keep = keep;
  }

  /** Adds a listener; returns the function that removes it. */
  on(listener: LiveListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  emit(input: LiveEventInput): LiveEvent {
    const event = { at: new Date().toISOString(), ...input } as LiveEvent;
    this.#recent.push(event);
    if (this.#recent.length > this.#keep) this.#recent.splice(0, this.#recent.length - this.#keep);
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch {
        // A listener's failure is its own; the others still hear the event.
      }
    }
    return event;
  }

  /** The last events, oldest first. */
  recent(): LiveEvent[] {
    return [...this.#recent];
  }
}
