// Places each Change List entry in time (core spec §12.1). Entries MUST be in chronological order, and one without a
// `datetime` is dated by its place (spec Example 19): after the dated entry before it (or the list's `from`), before
// the dated entry after it. So an undated entry is new only when the next dated entry is at or after the checkpoint
// (or none follows), and it sorts at the time of the one before it. Reading undated entries as "always new" re-applied
// an old deletion on every run, undoing the creation listed after it.
import { parseW3cDatetime, w3cPeriodEnd } from '../documents/datetime.ts';
import type { Entry } from '../documents/model.ts';

/** Clock differences between a Source and this computer not worth a word (a datetime "in the future" within it). */
export const CLOCK_SLACK_MS = 60 * 60 * 1000;

/**
 * `ms`: the entry's time, or for an undated one the earliest it can be (null when nothing before it is dated and the
 * list has no `from`). `seq`: its place in reading order, for ties.
 */
export type Timed = { entry: Entry; ms: number | null; seq: number };

/** Chronological order: by time (an undated change before any dated one first), then reading order. */
export function compareChanges(a: Timed, b: Timed): number {
  return (a.ms ?? -Infinity) - (b.ms ?? -Infinity) || a.seq - b.seq;
}

export class ChangeTimeline {
  readonly #since: number;
  readonly #emit: (change: Timed) => void;
  #seq = 0;
  #before: number | null = null;
  #waiting: Timed[] = [];
  #until: number | null = null;
  /** The list's own `from`: a change dated before it is placed at it (see push). */
  #from: number | null = null;

  /** `since`: changes before it are old (the checkpoint, or an audit's Resource List `at`). */
  constructor(since: number, emit: (change: Timed) => void) {
    this.#since = since;
    this.#emit = emit;
  }

  /**
   * A new Change List begins, with its `from` and the end of its `until`'s period (from its own `rs:md` or its Change
   * List Index entry). The lists of an index are read in chronological order, so without a `from` it starts where the
   * last one ended.
   */
  begin(fromMs: number | null, untilMs: number | null = null): void {
    this.end();
    if (fromMs !== null) this.#before = fromMs;
    this.#from = fromMs;
    this.#until = untilMs;
  }

  push(entry: Entry): void {
    const ms = entry.md.datetime !== undefined ? parseW3cDatetime(entry.md.datetime) : null;
    if (ms === null) {
      this.#waiting.push({ entry, ms: this.#before, seq: this.#seq++ });
      return;
    }
    // A change dated outside its list's period (§7: a Change List holds the changes from its `from` to its `until`;
    // the reader reports it) is placed at the nearer end of that period for its order: the lists' order, which their
    // index gives, is the Source's word on what came after what. Taken by its own date, a deletion in the later list
    // dated before the earlier list's update of the same resource lost to it, the update's fetch got 404 run after
    // run, and the failure held the checkpoint back for good.
    const placed = this.#from !== null && ms < this.#from ? this.#from : this.#until !== null && ms > this.#until ? this.#until : ms;
    // New when any moment of the period it names ("2020-01-03": the whole day) is at or after `since`: by its own
    // datetime still, so that a list whose `from` is later than its entries (a Source that sets it to the time of the
    // request) does not have every change taken for new on every run.
    const isNew = w3cPeriodEnd(entry.md.datetime!)! >= this.#since;
    // The undated entries before this one happened at or before it.
    this.#flush(isNew);
    this.#before = placed;
    if (isNew) this.#emit({ entry, ms: placed, seq: this.#seq++ });
  }

  /** The list ended: undated entries at its end are new unless the list closed before `since`. */
  end(): void {
    this.#flush(this.#until === null || this.#until >= this.#since);
  }

  #flush(isNew: boolean): void {
    if (isNew) for (const change of this.#waiting) this.#emit(change);
    this.#waiting = [];
  }
}

/**
 * The same rule for a list read whole (a Change Dump Manifest): for each entry, the instant by which it is judged new
 * (at or after a checkpoint): the end of the period its `datetime` names, or for an undated one that of the next
 * dated entry; undefined when no dated entry follows (new whatever the checkpoint).
 */
export function newAfter(entries: readonly Pick<Entry, 'md'>[]): (number | undefined)[] {
  const out = new Array<number | undefined>(entries.length);
  let next: number | undefined;
  for (let i = entries.length - 1; i >= 0; i--) {
    const datetime = entries[i]!.md.datetime;
    const end = datetime !== undefined ? w3cPeriodEnd(datetime) : null;
    if (end !== null) next = end;
    out[i] = next;
  }
  return out;
}
