// The service's event fan-out: adapters (Electron IPC, SSE) subscribe and forward every event to their clients.
import type { EventName } from '../contract/names.ts';
import type { Events } from '../contract/types.ts';

export type EventListener = (name: EventName, payload: unknown) => void;

export class EventHub {
  #listeners = new Set<EventListener>();

  emit<E extends EventName>(name: E, payload: Events[E]): void {
    // A copy: a listener may unsubscribe (or subscribe another) while we deliver.
    for (const listener of [...this.#listeners]) {
      try {
        listener(name, payload);
      } catch (error) {
        // One broken client must not stop the others or the service.
        console.error(`[events] listener failed on ${name}:`, error);
      }
    }
  }

  /** Returns an unsubscribe that removes exactly this subscription. */
  subscribe(listener: EventListener): () => void {
    // A wrapper, so subscribing the same function twice gives two independent subscriptions.
    const entry: EventListener = (name, payload) => listener(name, payload);
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }

  get size(): number {
    return this.#listeners.size;
  }
}
