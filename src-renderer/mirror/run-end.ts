// How a run's end is said: one short sentence for the status region that announces it (and that takes focus), and
// the rest of the engine's message for reading on screen. The counters stand beside them in their own list. Before,
// the status region held the whole message and every counter: a screen reader read "Baseline completed: 40 created,
// 0 updated, 0 deleted, 0 unchanged. Created 40 Updated 0 Unchanged 0 Deleted 0 Skipped 0 Failed 0".
import type { MirrorRunEnd } from '../../src-main/contract/types.ts';
import { formatCount } from '../lib/format.ts';

/** "40 created, 0 updated, 0 deleted, 0 unchanged" (and ", 2 skipped"), as the engine's message lists them. */
const COUNTS = /^\d[\d,]* created, \d[\d,]* updated, \d[\d,]* deleted, \d[\d,]* unchanged(, \d[\d,]* skipped)?\.?\s*/;

/** The message's first clause (to the first ". " or "; ") and what follows it. */
function split(message: string): [string, string] {
  const end = /[.;](\s+|$)/.exec(message);
  if (!end) return [message.trim(), ''];
  return [message.slice(0, end.index).trim(), message.slice(end.index + end[0].length).trim()];
}

/** What changed, in the fewest words: "40 created", "2 updated and 1 deleted", "nothing changed". */
function changes(end: Pick<MirrorRunEnd, 'created' | 'updated' | 'deleted'>): string {
  const parts = (
    [
      [end.created, 'created'],
      [end.updated, 'updated'],
      [end.deleted, 'deleted'],
    ] as const
  )
    .filter(([n]) => n > 0)
    .map(([n, what]) => `${formatCount(n)} ${what}`);
  if (parts.length === 0) return 'nothing changed';
  return parts.length === 1 ? parts[0]! : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
}

export interface RunEndWords {
  /** One short sentence: "Baseline completed: 40 created.", "Baseline ended with 2 failures.", "Paused after 12 resources." */
  sentence: string;
  /** The rest of the message, without the counts the counters show ("Retry fetches what failed again."), or ''. */
  rest: string;
}

export function runEndWords(end: MirrorRunEnd): RunEndWords {
  const message = end.message ?? (end.status === 'completed' ? 'Completed' : 'The run ended');
  let [first, rest] = split(message);
  // "Baseline completed: 40 created, 0 updated, …": the head, and what changed in a few words.
  const colon = first.indexOf(': ');
  if (colon >= 0 && COUNTS.test(first.slice(colon + 2))) {
    const head = first.slice(0, colon);
    first = / completed$/.test(head) ? `${head}: ${changes(end)}` : head;
  }
  // "…: 2 failed again; 0 created, 0 updated, 0 deleted, 0 unchanged. The Failures tab says why."
  rest = rest.replace(COUNTS, '');
  return { sentence: `${first}.`, rest };
}
