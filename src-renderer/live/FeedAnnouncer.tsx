import { useEffect, useState } from 'react';
import { ANNOUNCE_EVERY_MS, announcement, arrived, isNote } from './announce.ts';
import type { FeedRow } from './feed.ts';
import { useLive } from './state.ts';

/**
 * A polite live region, read by screen readers only, that says the feed's notes (announce.ts) at most once every
 * ANNOUNCE_EVERY_MS: what comes in between is gathered and said at the end of it.
 */
export function FeedAnnouncer() {
  const [said, setSaid] = useState('');
  useEffect(() => {
    let waiting: FeedRow[] = [];
    let lastAt = Number.NEGATIVE_INFINITY;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const say = () => {
      timer = null;
      const text = announcement(waiting);
      waiting = [];
      if (text === null) return;
      lastAt = Date.now();
      setSaid(text);
    };
    const off = useLive.subscribe((state, previous) => {
      if (state.rows === previous.rows) return;
      const notes = arrived(previous.rows, state.rows).filter(isNote);
      if (notes.length === 0) return;
      waiting = [...notes, ...waiting];
      timer ??= setTimeout(say, Math.max(0, lastAt + ANNOUNCE_EVERY_MS - Date.now()));
    });
    return () => {
      off();
      if (timer !== null) clearTimeout(timer);
    };
  }, []);
  return (
    <div className="sr-only live-announcer" aria-live="polite" aria-atomic="true">
      {said}
    </div>
  );
}
