// Events anyone on the network can cause — a ping, a request refused at a path or callback nobody has — pass at most
// a few per window; the rest are counted and said in one note when the window ends. A flood of pings (tens of
// thousands) emitted as many events: they pushed every notification, failure and note out of the events kept for
// views that open late, and filled the live feed with them. Each request is still answered, and a ping still starts
// the sync of a mirror it names (that has its own interval, feed.ts).
import type { LiveEvents } from './events.ts';
import type { LiveEventInput } from './model.ts';

/** How many such events a window lets through, and how long a window is. */
export const NOISE_PER_WINDOW = 20;
export const NOISE_WINDOW_MS = 10_000;

export class NoiseGate {
  readonly #events: LiveEvents;
  readonly #perWindow: number;
  readonly #windowMs: number;
  #windowStart = Number.NEGATIVE_INFINITY;
  #passed = 0;
  #held = { pings: 0, refused: 0, dropped: 0 };
  /** The callback server's limit of connections at once, as it said when it closed one. */
  #maxConnections = 0;
  #timer: NodeJS.Timeout | null = null;

  constructor(events: LiveEvents, o: { perWindow?: number; windowMs?: number } = {}) {
    this.#events = events;
    this.#perWindow = o.perWindow ?? NOISE_PER_WINDOW;
    this.#windowMs = o.windowMs ?? NOISE_WINDOW_MS;
  }

  emit(input: LiveEventInput): void {
    const now = this.#window();
    if (this.#passed < this.#perWindow) {
      this.#passed++;
      this.#events.emit(input);
      return;
    }
    if (input.type === 'ping') this.#held.pings++;
    else this.#held.refused++;
    this.#sayAtWindowEnd(now);
  }

  /**
   * A connection the callback server closed unanswered, `max` being open already: never listed one by one (each
   * is one connection anyone may open), said with the others of its window when the window ends.
   */
  dropped(max: number): void {
    const now = this.#window();
    this.#held.dropped++;
    this.#maxConnections = max;
    this.#sayAtWindowEnd(now);
  }

  /** Now, having started a new window if the last one is over. */
  #window(): number {
    const now = performance.now();
    if (now - this.#windowStart >= this.#windowMs) {
      this.#say();
      this.#windowStart = now;
      this.#passed = 0;
    }
    return now;
  }

  #sayAtWindowEnd(now: number): void {
    if (this.#timer === null) {
      this.#timer = setTimeout(() => this.#say(), Math.max(0, this.#windowStart + this.#windowMs - now));
      this.#timer.unref?.();
    }
  }

  /** The note for what the window held back, if anything. */
  #say(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    const { pings, refused, dropped } = this.#held;
    this.#held = { pings: 0, refused: 0, dropped: 0 };
    if (dropped > 0) {
      this.#events.emit({
        type: 'note',
        message:
          `The callback server closed ${dropped.toLocaleString('en')} connection${dropped === 1 ? '' : 's'} unanswered within ${Math.round(this.#windowMs / 1000)} s: ` +
          `${this.#maxConnections.toLocaleString('en')} were open already, the most it holds at once, so that senders who open connections and send nothing cannot use up what this app may have open. ` +
          'A hub sends a delivery it could not make again later.',
      });
    }
    if (pings === 0 && refused === 0) return;
    const parts = [pings > 0 ? `${pings.toLocaleString('en')} more ping${pings === 1 ? '' : 's'}` : null, refused > 0 ? `${refused.toLocaleString('en')} more refused request${refused === 1 ? '' : 's'}` : null].filter((p) => p !== null);
    this.#events.emit({
      type: 'note',
      message:
        `${parts.join(' and ')} came within ${Math.round(this.#windowMs / 1000)} s of the first ${this.#perWindow} listed: each was answered, but they are not listed one by one, ` +
        'so that a flood of them does not push everything else out of the feed. Pings naming a watched Source still started its sync.',
    });
  }

  close(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }
}
