// Order of one subscription's notifications (CN §3): consecutive notifications cover consecutive, non-overlapping
// from/until intervals. The cursor is the `until` up to which everything was taken. A notification that starts at
// or before the cursor is taken at once; one that starts later waits (a bounded time) for the ones in between; when
// the wait is over, the hole is a gap, which the caller fills from the Change List (or marks) before going on.
// Pure logic, no I/O: the caller persists.

export interface Sequenced<T> {
  fromMs: number;
  untilMs: number;
  item: T;
}

export type Step<T> =
  /** Take these, in this order; `coveredBeforeMs`: their changes before it are already covered. */
  | { kind: 'take'; items: Sequenced<T>[]; coveredBeforeMs: number | null }
  /** Everything it says was covered already (a late copy after a catch-up, an interval before the mirror's checkpoint). */
  | { kind: 'covered'; item: Sequenced<T> }
  | { kind: 'gap'; fromMs: number; untilMs: number };

export class Sequencer<T> {
  #cursor: number | null;
  #waiting: Sequenced<T>[] = [];
  #waitSince: number | null = null;

  constructor(cursorMs: number | null) {
    this.#cursor = cursorMs;
  }

  get cursor(): number | null {
    return this.#cursor;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  /** Since when the earliest waiting notification has waited for its predecessor (epoch ms), or null. */
  get waitingSince(): number | null {
    return this.#waitSince;
  }

  /** Moves the cursor past what was taken elsewhere (a batch resumed after a crash). */
  advance(untilMs: number): void {
    if (this.#cursor === null || untilMs > this.#cursor) this.#cursor = untilMs;
  }

  /** Adds a notification; returns what can be done now. */
  add(n: Sequenced<T>, now = Date.now()): Step<T>[] {
    if (this.#cursor !== null && n.untilMs < this.#cursor) return [{ kind: 'covered', item: n }];
    // Into its place (after its equals: arrival order breaks ties). Sorting the whole list on each arrival made
    // thousands of notifications arriving out of order within the wait cost seconds of the main thread.
    this.#waiting.splice(this.#placeOf(n), 0, n);
    const steps = this.#drain();
    if (this.#waiting.length > 0 && this.#waitSince === null) this.#waitSince = now;
    if (this.#waiting.length === 0) this.#waitSince = null;
    return steps;
  }

  /** The bounded wait is over: the hole before the earliest waiting notification is a gap; then what follows. */
  expire(): Step<T>[] {
    const first = this.#waiting[0];
    if (!first) return [];
    const steps: Step<T>[] = [];
    if (this.#cursor !== null && first.fromMs > this.#cursor) steps.push({ kind: 'gap', fromMs: this.#cursor, untilMs: first.fromMs });
    this.#cursor = first.fromMs;
    for (const step of this.#drain()) steps.push(step);
    this.#waitSince = this.#waiting.length > 0 ? Date.now() : null;
    return steps;
  }

  /** Where `n` goes in the waiting list: after every notification that sorts before it or equal to it. */
  #placeOf(n: Sequenced<T>): number {
    let low = 0;
    let high = this.#waiting.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const m = this.#waiting[mid]!;
      if (m.fromMs < n.fromMs || (m.fromMs === n.fromMs && m.untilMs <= n.untilMs)) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  #drain(): Step<T>[] {
    const steps: Step<T>[] = [];
    const take: Sequenced<T>[] = [];
    let covered: number | null = this.#cursor;
    let taken = 0;
    for (; taken < this.#waiting.length; taken++) {
      const next = this.#waiting[taken]!;
      // The first notification of a subscription with no position yet starts the chain.
      if (this.#cursor !== null && next.fromMs > this.#cursor) break;
      if (this.#cursor !== null && next.untilMs < this.#cursor) {
        steps.push({ kind: 'covered', item: next });
        continue;
      }
      take.push(next);
      this.#cursor = this.#cursor === null ? next.untilMs : Math.max(this.#cursor, next.untilMs);
    }
    this.#waiting.splice(0, taken);
    if (take.length > 0) steps.unshift({ kind: 'take', items: take, coveredBeforeMs: covered });
    return steps;
  }
}
