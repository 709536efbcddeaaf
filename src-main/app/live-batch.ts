// Live events reach the renderer in batches: a burst of a thousand notifications becomes a few messages a second,
// never one message per event. What waits is capped: past the cap the oldest are dropped, and the batch says how
// many, so the feed can say so instead of pretending it saw everything.
import type { LiveEvent } from '../engine/live/model.ts';

export interface LiveBatch {
  events: LiveEvent[];
  /** Events dropped before this batch because too many were waiting. */
  dropped: number;
}

export interface BatcherOptions {
  /** How often a batch goes out, at most. */
  intervalMs?: number;
  /** The most events waiting between batches. */
  maxPending?: number;
}

export class LiveBatcher {
  readonly #send: (batch: LiveBatch) => void;
  readonly #intervalMs: number;
  readonly #maxPending: number;
  #pending: LiveEvent[] = [];
  #dropped = 0;
  #timer: NodeJS.Timeout | null = null;
  #closed = false;

  constructor(send: (batch: LiveBatch) => void, options: BatcherOptions = {}) {
    this.#send = send;
    this.#intervalMs = options.intervalMs ?? 250;
    this.#maxPending = options.maxPending ?? 2_000;
  }

  push(event: LiveEvent): void {
    // The engine still speaks while it stops (after the app closed this): nothing is sent any more, and no timer
    // keeps the closing process waiting.
    if (this.#closed) return;
    this.#pending.push(event);
    if (this.#pending.length > this.#maxPending) {
      const over = this.#pending.length - this.#maxPending;
      this.#pending.splice(0, over);
      this.#dropped += over;
    }
    this.#timer ??= setTimeout(() => this.flush(), this.#intervalMs);
  }

  flush(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#pending.length === 0 && this.#dropped === 0) return;
    const batch = { events: this.#pending, dropped: this.#dropped };
    this.#pending = [];
    this.#dropped = 0;
    this.#send(batch);
  }

  close(): void {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#pending = [];
    this.#dropped = 0;
  }
}
