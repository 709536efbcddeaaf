// Whether the page can reach the app server. Only the browser's bridge (`rsdesk serve`) can lose it: it says so here
// when its event stream stays down (or a command cannot be sent), and again when the stream is back. In the desktop
// app the main process is always there, so this stays `reachable`.
import { create } from 'zustand';

interface ConnectionState {
  reachable: boolean;
  /** Bumped each time the connection comes back after it was lost: what the page holds is read again then. */
  recoveries: number;
  lost(): void;
  back(): void;
}

export const useConnection = create<ConnectionState>()((set, get) => ({
  reachable: true,
  recoveries: 0,
  lost() {
    if (get().reachable) set({ reachable: false });
  },
  back() {
    if (!get().reachable) set((s) => ({ reachable: true, recoveries: s.recoveries + 1 }));
  },
}));

/** What the run views say while the app server cannot be reached. */
export const UNREACHABLE_RUN =
  'The app cannot be reached (rsdesk serve may have stopped, or the connection to it dropped), so the state of this run is unknown: it may still be running, or have ended. This view shows it again as soon as the app is reached again.';
