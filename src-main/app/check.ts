// Checks of whole Sources for the UI: one run per runId, cancellable by runId, progress as events.
import type { CheckReport } from '../contract/types.ts';
import { checkSource } from '../engine/check/walk.ts';
import { InvalidArgumentsError } from './errors.ts';
import type { EventHub } from './events.ts';
import type { HttpHolder } from './http-holder.ts';
import { normalizeStartUrl } from './start-url.ts';

export class CheckService {
  #http: HttpHolder;
  #events: EventHub;
  #runs = new Map<string, { abort: AbortController; done: Promise<unknown> }>();

  constructor(deps: { http: HttpHolder; events: EventHub }) {
    this.#http = deps.http;
    this.#events = deps.events;
  }

  /** Resolves with the report, also when cancelled (what was checked until then, marked cancelled). */
  run(url: string, runId: string, maxDocuments?: number): Promise<CheckReport> {
    const start = normalizeStartUrl(url);
    if (this.#runs.has(runId)) throw new InvalidArgumentsError(`A check with run id ${runId} is already running`);
    const abort = new AbortController();
    const done = this.#http.use((http) =>
      checkSource(start, {
        http,
        signal: abort.signal,
        maxDocuments,
        onProgress: (progress) => this.#events.emit('check.progress', { runId, ...progress }),
      }),
    );
    const run = { abort, done };
    this.#runs.set(runId, run);
    void done.finally(() => this.#runs.delete(runId)).catch(() => undefined);
    return done;
  }

  cancel(runId: string): { cancelled: boolean } {
    const run = this.#runs.get(runId);
    if (run === undefined) return { cancelled: false };
    run.abort.abort();
    return { cancelled: true };
  }

  async close(): Promise<void> {
    const runs = [...this.#runs.values()];
    for (const run of runs) run.abort.abort();
    await Promise.allSettled(runs.map((run) => run.done));
  }
}
