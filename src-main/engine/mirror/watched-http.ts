// The HTTP client of a run's list requests (Resource Lists, Change Lists, their indexes, a dump's manifest copies and
// packages), watched by the run's RefusalWatch as the resources' fetcher is. Before, a list request took the first
// 503 or 429 as its answer: a Source saying "come back in a minute" to its Change List got a note that it "does so
// when no change is listed", and to its Resource List a failed baseline. Now a refusal is waited out (its Retry-After,
// else a growing backoff) and asked again, for as long as the run-wide limit allows; then the watch pauses the run,
// resumable, with its message. A request that gets no answer is tried at most RETRIES more times, as a resource is.
import { clip } from '../clip.ts';
import { Http, type GetInit, type HttpResponse } from '../http/client.ts';
import { NetworkError } from '../http/errors.ts';
import { retriable, retryAfterMs, RETRY_STATUSES } from './fetcher.ts';
import { refusalWords, type RefusalWatch } from './refusal-watch.ts';

const RETRIES = 3;
const BACKOFF_MS = 500;
/** The longest backoff between two refusals without a Retry-After. */
const MAX_BACKOFF_MS = 30_000;
/** A longer Retry-After is not waited for: the run pauses at once, saying how long the Source asked it to wait. */
export const MAX_LIST_RETRY_AFTER_MS = 120_000;

export class WatchedHttp extends Http {
  #watch: RefusalWatch | null = null;

  /** From now on, refusals are waited out and reported to `watch` (null: answered as they come, as before the run). */
  watchWith(watch: RefusalWatch | null): void {
    this.#watch = watch;
  }

  override async get(url: string, init: GetInit = {}): Promise<HttpResponse> {
    let unanswered = 0;
    for (let attempt = 0; ; attempt++) {
      const watch = this.#watch;
      if (watch === null) return super.get(url, init);
      if (watch.stopped) throw watch.stopped;
      let response: HttpResponse;
      try {
        response = await super.get(url, init);
      } catch (err) {
        if (init.signal?.aborted || !(err instanceof NetworkError) || !retriable(err)) throw err;
        watch.refused(`no answer (${clip(err.message, 200)})`, null);
        if (++unanswered > RETRIES) throw err;
        await pause(backoff(attempt), init.signal, watch);
        continue;
      }
      if (!RETRY_STATUSES.has(response.status)) {
        watch.answered();
        return response;
      }
      const wait = retryAfterMs(response.headers['retry-after']);
      await response.abandon();
      if (wait !== null && wait > MAX_LIST_RETRY_AFTER_MS) {
        // Longer than a run waits: the run pauses, resumable, rather than take the refusal for the list's answer.
        watch.askedToWait(refusalWords(response.status), wait, MAX_LIST_RETRY_AFTER_MS, url);
        throw watch.stopped!;
      }
      watch.refused(refusalWords(response.status), wait);
      await pause(wait ?? backoff(attempt), init.signal, watch);
    }
  }
}

const backoff = (attempt: number) => Math.min(MAX_BACKOFF_MS, BACKOFF_MS * 2 ** Math.min(attempt, 16)) * (0.75 + Math.random() / 2);

/** A wait between attempts, ended by the request's signal (a pause, a cancel) or by the watch giving up. */
function pause(ms: number, signal: AbortSignal | undefined, watch: RefusalWatch): Promise<void> {
  const stop = signal ? AbortSignal.any([signal, watch.signal]) : watch.signal;
  const why = () => (!signal?.aborted && watch.stopped ? watch.stopped : stop.reason);
  return new Promise<void>((resolve, reject) => {
    if (stop.aborted) return reject(why());
    const end = () => {
      clearTimeout(timer);
      reject(why());
    };
    const timer = setTimeout(() => {
      stop.removeEventListener('abort', end);
      resolve();
    }, ms);
    stop.addEventListener('abort', end, { once: true });
  });
}
