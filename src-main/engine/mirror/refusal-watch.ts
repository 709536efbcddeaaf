// How long a Source may refuse every request of a run before the run stops asking. Each wait a Source asks for
// (Retry-After on 429 and 503) has its own bound, but the run as a whole had none: a Source answering 503 with
// Retry-After: 120 to everything kept a run of 10,000 resources going for days, one resource's three waits at a
// time. The watch sees every answer the fetcher gets; once nothing but refusals (429, 502, 503, 504) or no answer at
// all (timeouts, resets, refused connections) has come for `limitMs` in a row, its signal aborts: the run pauses as
// a person's pause does (resumable, nothing verified fetched again) and says what the Source answered and when to
// try again.
import { clip } from '../clip.ts';
import { formatDuration } from '../http/errors.ts';
import { REFUSAL_SECONDS } from '../../contract/limits.ts';
import type { SourceWait } from './state.ts';

/** The run stopped asking a Source that refused everything for too long: the message says what it answered. */
export class SourceRefusing extends Error {
  /** When the Source said it may answer again (its last Retry-After), if it said. */
  readonly retryAt: number | null;
  /** What the Source answered, in a clause of its own ("the Source answered HTTP 503 … to URL, asking to wait 1 h (Retry-After)"). */
  readonly said: string;
  constructor(message: string, retryAt: number | null, said = message) {
    super(message);
    this.name = 'SourceRefusing';
    this.retryAt = retryAt;
    this.said = said;
  }
}

export class RefusalWatch {
  readonly limitMs: number;
  readonly #controller = new AbortController();
  /** How the limit is changed, said in the message (the CLI's option or the app's setting). */
  readonly #howToChange: string;
  #since: number | null = null;
  #last: { what: string; at: number; retryAfterMs: number | null } | null = null;
  #refusals = 0;
  #timer: NodeJS.Timeout | null = null;
  #stopped: SourceRefusing | null = null;

  /** `again`: what resumes the run ("the sync", "the retry"). */
  readonly #again: string;
  /** A dry run records no run, so nothing of it is left to resume: its message must not promise that. */
  readonly #dryRun: boolean;

  constructor(limitMs = REFUSAL_SECONDS.default * 1000, again = 'the sync', howToChange = 'kept with the mirror: rsdesk sync --pause-after-refusals SECONDS changes it', dryRun = false) {
    this.limitMs = limitMs;
    this.#again = again;
    this.#howToChange = howToChange;
    this.#dryRun = dryRun;
  }

  /** Aborted (reason: the SourceRefusing) once the Source has refused everything for `limitMs`. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get stopped(): SourceRefusing | null {
    return this.#stopped;
  }

  /** A refusal (`what`: "HTTP 503 (Service Unavailable)", "no answer: …"), with the wait it asked for, if any. */
  refused(what: string, retryAfterMs: number | null): void {
    if (this.#stopped !== null) return;
    const now = Date.now();
    this.#last = { what, at: now, retryAfterMs };
    this.#refusals++;
    if (this.#since !== null) return;
    this.#since = now;
    this.#timer = setTimeout(() => this.#stop(), this.limitMs);
    this.#timer.unref();
  }

  /** Any other answer: the Source is serving, and the count starts again at its next refusal. */
  answered(): void {
    if (this.#since === null) return;
    this.#since = null;
    this.#refusals = 0;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  /**
   * The Source asked, with a Retry-After longer than the run waits for a list or a resource (`maxMs`; `waitedFor` says
   * which), to wait before it answers `url`: the run pauses now, saying so. Before, the refusal was taken as the list's answer: a Change List's run ended
   * completed with "Some Sources do so when no change is listed", telling the archivist nothing had changed, and a
   * Resource List's or a package's failed as if it could not be had.
   */
  askedToWait(what: string, retryAfterMs: number, maxMs: number, url: string, waitedFor = 'its lists and packages'): void {
    if (this.#stopped !== null) return;
    this.close();
    const at = Date.now();
    const retryAt = at + retryAfterMs <= MAX_DATE_MS ? at + retryAfterMs : null;
    const when = retryAt !== null ? `after ${clock(Math.ceil(retryAt / 60_000) * 60_000)}` : 'later';
    const said = `the Source answered ${what} to ${clip(url)}, asking to wait ${waitWords(retryAfterMs)} (Retry-After)`;
    this.#stopped = new SourceRefusing(
      `Paused: ${said}; a run waits at most ${formatDuration(maxMs)} for ${waitedFor}, so it stopped asking. ` +
        (this.#dryRun
          ? `Nothing was taken for an answer. ${this.#dryRunAgain(when)}`
          : `Nothing was taken for an answer: what was verified is kept and the checkpoint has not moved; run ${this.#again} again ${when} to resume.`),
      retryAt,
      said,
    );
    this.#controller.abort(this.#stopped);
  }

  #dryRunAgain(when: string): string {
    return `A dry run writes nothing, so there is nothing to resume: run the dry run again ${when}; it starts from the beginning.`;
  }

  close(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #stop(): void {
    this.#timer = null;
    const last = this.#last!;
    const retryAt = last.retryAfterMs !== null && last.at + last.retryAfterMs <= MAX_DATE_MS ? last.at + last.retryAfterMs : null;
    const asked = last.retryAfterMs !== null && last.retryAfterMs > 0 ? `, asking to wait ${waitWords(last.retryAfterMs)} (Retry-After)` : '';
    // Rounded up to the minute: "after 22:59" said at 22:59:30 of a wait ending at 22:59:31 was not yet true.
    const when = retryAt !== null && retryAt > Date.now() ? `after ${clock(Math.ceil(retryAt / 60_000) * 60_000)}` : 'later';
    const count = this.#refusals === 1 ? 'the one request' : `all ${this.#refusals.toLocaleString('en')} requests`;
    const said = `the Source refused ${count} of the last ${formatDuration(this.limitMs)} (since ${clock(this.#since!)}); its last answer was ${last.what}${asked}`;
    this.#stopped = new SourceRefusing(
      `Paused: ${said}. ${this.#dryRun ? this.#dryRunAgain(when) : `What was verified is kept; run ${this.#again} again ${when} to resume.`} (This limit is ${this.#howToChange}.)`,
      retryAt,
      said,
    );
    this.#controller.abort(this.#stopped);
  }
}

/**
 * What a run's end records of the Source's wait (MirrorState.setSourceWait): its Retry-After's end when the watch
 * paused the run and that end is still ahead, else null (the run ended otherwise: any wait asked before is over).
 */
export function sourceWaitOf(watch: RefusalWatch | null, status: string, runId: number, now = Date.now()): SourceWait | null {
  const retryAt = status === 'interrupted' ? (watch?.stopped?.retryAt ?? null) : null;
  return retryAt !== null && retryAt > now ? { until: new Date(retryAt).toISOString(), runId } : null;
}

/**
 * The note of a run started before the Source's wait is over (by hand: the schedule waits for it): it asks all the
 * same, since the person chose to, and says so, so that a pause again at once is not a surprise. Null when the wait is
 * over or none was asked.
 */
export function earlyNote(wait: SourceWait | null, again = 'run', now = Date.now()): string | null {
  const until = wait === null ? NaN : Date.parse(wait.until);
  if (!(until > now)) return null;
  return `The Source asked, when run ${wait!.runId} paused, not to be asked again before ${clock(Math.ceil(until / 60_000) * 60_000)} (Retry-After); this ${again} asks it now all the same, and pauses again if it is still refused.`;
}

/** The latest instant a Date holds: a Retry-After of 10^13 seconds goes past it, and toISOString() then throws. */
const MAX_DATE_MS = 8.64e15;

/** A wait a Source asked for, in words: one of hundreds of digits said as "1,157,407,407,407,407 days" said nothing. */
const waitWords = (ms: number) => (ms > 100 * 365.25 * 86_400_000 ? 'more than 100 years' : formatDuration(ms));

/** "22:40 UTC" (with the date when it is not today). */
export function clock(ms: number): string {
  const iso = new Date(ms).toISOString();
  const today = new Date().toISOString().slice(0, 10);
  return iso.slice(0, 10) === today ? `${iso.slice(11, 16)} UTC` : `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** Words for a refusal: the status and its reason phrase. */
export function refusalWords(status: number): string {
  const phrase = { 429: 'Too Many Requests', 502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout' }[status];
  return phrase ? `HTTP ${status} (${phrase})` : `HTTP ${status}`;
}

/** A run's message that says it was paused (by a person, or by the watch), not interrupted by a kill. */
export function pausedMessage(message: string | null | undefined): boolean {
  return message === 'Paused' || (message?.startsWith('Paused: ') ?? false);
}

/**
 * The message a run paused through `signal` records: the pause's reason when it says why in a sentence of its own
 * ("Paused: …", such as the app closing), else "Paused", a person's pause. The app's schedule takes up the first kind
 * by itself and leaves a person's pause for Resume.
 */
export function pauseMessage(signal: AbortSignal | undefined): string {
  const reason: unknown = signal?.reason;
  return typeof reason === 'string' && reason.startsWith('Paused: ') ? reason : 'Paused';
}

/** Whether a run that ended with `message` was paused by a person, who alone should take it up again (Resume). */
export function pausedByPerson(message: string | null | undefined): boolean {
  return message === 'Paused';
}
