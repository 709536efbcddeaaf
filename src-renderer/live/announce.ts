// What a screen reader is told of the live feed as it goes: the notes that need a person (refused deliveries, errors,
// notes such as a short lease, gaps), never each change. Notes that come close together are said once, together: a hub
// refusing thousands of deliveries, or a burst of errors, must not keep the reader talking.
import type { FeedRow } from './feed.ts';

/** The least time between two announcements. */
export const ANNOUNCE_EVERY_MS = 10_000;

const NOTE_KINDS = new Set<FeedRow['kind']>(['rejected', 'error', 'note', 'gap']);

export function isNote(row: FeedRow): boolean {
  return NOTE_KINDS.has(row.kind);
}

/** The rows `next` has that `previous` did not have at its top (the newest): what just arrived, newest first. */
export function arrived(previous: readonly FeedRow[], next: readonly FeedRow[]): FeedRow[] {
  if (previous.length === 0) return [...next];
  const at = next.indexOf(previous[0]!);
  // Not there: the feed was replaced (cleared, or every row changed); what was new cannot be told from it.
  return at < 0 ? [] : next.slice(0, at);
}

/** One sentence for the notes that came since the last announcement (newest first), or null when there are none. */
export function announcement(notes: readonly FeedRow[]): string | null {
  const latest = notes[0];
  if (latest === undefined) return null;
  if (notes.length === 1) return `Live feed: ${latest.text ?? ''}`;
  return `Live feed: ${notes.length.toLocaleString('en')} new notes; the latest: ${latest.text ?? ''}`;
}

/**
 * Says notes through `say`: the first at once, then at most one sentence every ANNOUNCE_EVERY_MS for all that came
 * in between. `stop` drops what waits.
 */
export function announcer(say: (text: string) => void): { add(notes: readonly FeedRow[]): void; stop(): void } {
  let waiting: FeedRow[] = [];
  let lastAt = Number.NEGATIVE_INFINITY;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const flush = () => {
    timer = null;
    const text = announcement(waiting);
    waiting = [];
    if (text === null) return;
    lastAt = Date.now();
    say(text);
  };
  return {
    add(notes) {
      if (notes.length === 0) return;
      waiting = [...notes, ...waiting];
      timer ??= setTimeout(flush, Math.max(0, lastAt + ANNOUNCE_EVERY_MS - Date.now()));
    },
    stop() {
      if (timer !== null) clearTimeout(timer);
      timer = null;
      waiting = [];
    },
  };
}
