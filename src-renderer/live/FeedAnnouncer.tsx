import { useEffect, useState } from 'react';
import { announcer, arrived, isNote } from './announce.ts';
import { useLive } from './state.ts';

/**
 * A polite live region, read by screen readers only, that says the feed's notes as they arrive (announce.ts): at
 * most one sentence every ANNOUNCE_EVERY_MS, for all that came in between.
 */
export function FeedAnnouncer() {
  const [said, setSaid] = useState('');
  useEffect(() => {
    const notes = announcer(setSaid);
    const off = useLive.subscribe((state, previous) => {
      if (state.rows !== previous.rows) notes.add(arrived(previous.rows, state.rows).filter(isNote));
    });
    return () => {
      off();
      notes.stop();
    };
  }, []);
  return (
    <div className="sr-only live-announcer" aria-live="polite" aria-atomic="true">
      {said}
    </div>
  );
}
