// How a run's end is said: one short sentence for the status region that announces it (and that takes focus), and
// the rest of the engine's message for reading on screen. The counters stand beside them in their own list. Before,
// the status region held the whole message and every counter: a screen reader read "Baseline completed: 40 created,
// 0 updated, 0 deleted, 0 unchanged. Created 40 Updated 0 Unchanged 0 Deleted 0 Skipped 0 Failed 0".
import type { MirrorRunEnd } from '../../src-main/contract/types.ts';
import { formatCount } from '../lib/format.ts';

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

/** Made from the parts main sends beside its message (never from the message's wording, which main may change). */
export function runEndWords(end: MirrorRunEnd): RunEndWords {
  const { headline, changes: named, rest } = end.summary;
  return { sentence: `${headline}${named ? `: ${changes(end)}` : ''}.`, rest };
}
