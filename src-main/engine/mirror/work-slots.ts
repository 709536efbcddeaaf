// At most so many resources in flight at once. A run starts one resource per listed entry, thousands a second:
// `Promise.race` over the set in flight (the obvious way) adds a reaction to every pending promise per entry, which
// the main thread pays for; here each task costs one reaction, and a waiter is woken when a slot frees.

export class WorkSlots {
  readonly #limit: number;
  #active = 0;
  #waiting: (() => void) | null = null;
  #idle: (() => void)[] = [];
  #error: { err: unknown } | null = null;

  constructor(limit: number) {
    this.#limit = Math.max(1, limit);
  }

  get active(): number {
    return this.#active;
  }

  /**
   * Counts `task` in flight until it settles. Returns a promise to await when every slot is taken (resolves when one
   * frees), else undefined. One caller adds at a time (the list reader): it awaits before adding the next.
   */
  add(task: Promise<unknown>): Promise<void> | undefined {
    this.#active++;
    task.then(
      () => this.#settled(),
      (err: unknown) => {
        this.#error ??= { err };
        this.#settled();
      },
    );
    if (this.#active < this.#limit) return undefined;
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }

  #settled(): void {
    this.#active--;
    if (this.#waiting !== null && this.#active < this.#limit) {
      const wake = this.#waiting;
      this.#waiting = null;
      wake();
    }
    if (this.#active === 0) for (const resolve of this.#idle.splice(0)) resolve();
  }

  /** Resolves when nothing is in flight. */
  allSettled(): Promise<void> {
    if (this.#active === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Resolves when nothing is in flight; rejects then with the first task's rejection, if one rejected. */
  async all(): Promise<void> {
    await this.allSettled();
    if (this.#error !== null) throw this.#error.err;
  }
}
