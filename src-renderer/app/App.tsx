import { useEffect } from 'react';
import { useMissedEvents, useSources, useSourcesSync } from '../data/queries.ts';
import { useMirrorEvents } from '../mirror/queries.ts';
import { useUi } from '../state/ui.ts';
import { useMirrorUi } from '../state/mirror.ts';
import { useCheck } from '../state/check.ts';
import { useLive } from '../live/state.ts';
import { MAIN_ID, MainPane } from './MainPane.tsx';
import { Sidebar } from './Sidebar.tsx';
import { useLiveFeedSync } from '../live/queries.ts';
import { focusDetailTitle } from '../detail/title-focus.ts';

export function App() {
  useSourcesSync();
  useMissedEvents();
  useMirrorEvents();
  useLiveFeedSync();
  const sources = useSources().data;
  const sourceId = useUi((s) => s.sourceId);
  // What the main pane shows, which the skip link names.
  const screen = useMirrorUi((s) => s.screen?.kind ?? null);
  const check = useCheck((s) => s.visible && s.run !== null);
  const live = useLive((s) => s.visible);
  const skipTo = screen === 'mirror' ? 'the mirror' : screen === 'create' ? 'the new-mirror form' : live ? 'the Live view' : check ? 'the Check report' : 'the entries and details';

  // Open the first saved Source on start, and drop a selection whose Source was removed.
  useEffect(() => {
    if (!sources) return;
    const { selectSource } = useUi.getState();
    if (sourceId === null && sources.length > 0) selectSource(sources[0].id);
    else if (sourceId !== null && !sources.some((s) => s.id === sourceId)) selectSource(sources[0]?.id ?? null);
  }, [sources, sourceId]);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.altKey && event.key === 'ArrowLeft') {
        event.preventDefault();
        useUi.getState().back();
        focusDetailTitle();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  return (
    <div className="app">
      <a
        className="skip-link"
        href={`#${MAIN_ID}`}
        onClick={(event) => {
          // No change of the address (its fragment carries the session token on the first load).
          event.preventDefault();
          const main = document.getElementById(MAIN_ID);
          const target = main?.querySelector<HTMLElement>('[role=grid]') ?? main;
          target?.focus();
        }}
      >
        Skip to {skipTo}
      </a>
      <Sidebar />
      <MainPane />
    </div>
  );
}
