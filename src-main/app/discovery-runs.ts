// Discoveries that are running, by the runId the UI gave them, so a person can cancel one: the abort reaches the
// HTTP client, which drops the fetch under way, and the discovery's own checks between fetches.
import { CancelledError, InvalidArgumentsError } from './errors.ts';

export class DiscoveryRuns {
  #runs = new Map<string, AbortController>();
  #closing: AbortSignal;

  /** closing: aborted when the service closes; every run stops with it. */
  constructor(closing: AbortSignal) {
    this.#closing = closing;
  }

  /**
   * Runs work with a signal that cancel(runId) (or closing) aborts. A run cancelled before its work finished
   * rejects with CancelledError, whatever the work threw on the way out; work checks the signal before it saves.
   */
  async run<T>(runId: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (this.#runs.has(runId)) throw new InvalidArgumentsError(`A discovery with run id ${runId} is already running`);
    const controller = new AbortController();
    this.#runs.set(runId, controller);
    try {
      // Work that finished (and saved) before a cancel arrived stands: nothing is undone behind the person's back.
      return await work(AbortSignal.any([this.#closing, controller.signal]));
    } catch (error) {
      if (controller.signal.aborted) throw cancelled();
      throw error;
    } finally {
      this.#runs.delete(runId);
    }
  }

  /** false when no such run is going on (it may have finished just before). */
  cancel(runId: string): { cancelled: boolean } {
    const controller = this.#runs.get(runId);
    if (controller === undefined) return { cancelled: false };
    controller.abort();
    return { cancelled: true };
  }

  get size(): number {
    return this.#runs.size;
  }
}

function cancelled(): CancelledError {
  return new CancelledError('Discovery cancelled. Nothing was saved.');
}
