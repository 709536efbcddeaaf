// UI state of the Check report (which run is shown, its filters). The report itself is engine data (react-query).
// A store of its own, beside ui.ts: opening a document anywhere (tree, link, report) hides the report.
import { create } from 'zustand';
import type { Severity } from '../../src-main/engine/documents/model.ts';
import { useUi } from './ui.ts';

export interface CheckRunRef {
  runId: string;
  url: string;
  /** The Source's name, for the title. */
  name: string;
}

interface CheckState {
  run: CheckRunRef | null;
  visible: boolean;
  severity: Severity | 'all';
  text: string;
  start(url: string, name: string): void;
  show(): void;
  hide(): void;
  setSeverity(severity: Severity | 'all'): void;
  setText(text: string): void;
}

let counter = 0;

export const useCheck = create<CheckState>()((set) => ({
  run: null,
  visible: false,
  severity: 'all',
  text: '',
  start(url, name) {
    counter++;
    set({ run: { runId: `check-${Date.now()}-${counter}`, url, name }, visible: true, severity: 'all', text: '' });
  },
  show() {
    set({ visible: true });
  },
  hide() {
    set({ visible: false });
  },
  setSeverity(severity) {
    set({ severity });
  },
  setText(text) {
    set({ text });
  },
}));

// Selecting a document (the one already selected too: its panes come back) or a Source elsewhere brings the
// document panes back.
useUi.subscribe((state, previous) => {
  if (state.node !== previous.node || state.sourceId !== previous.sourceId || state.selections !== previous.selections) useCheck.getState().hide();
});
