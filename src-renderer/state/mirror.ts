// UI state of the mirror views (which one is shown, the form's list, the audit filters). Mirrors and runs themselves
// are engine data (react-query). Like the Check report: opening a document or a Source elsewhere hides these views.
import { create } from 'zustand';
import { createJSONStorage, persist } from 'zustand/middleware';
import type { AuditStatus, MirrorOptions } from '../../src-main/contract/types.ts';
import { useLive } from '../live/state.ts';
import { useCheck } from './check.ts';
import { useUi } from './ui.ts';

export type MirrorScreen =
  | { kind: 'create'; url: string; capability: string | undefined; sourceName: string | null }
  | { kind: 'mirror'; path: string };

export type MirrorTab = 'runs' | 'failures' | 'audit' | 'access' | 'options';

/** A mirror just taken off the list: Undo adds its folder again, with its options, until the next remove or a dismiss. */
export interface RemovedMirror {
  path: string;
  name: string;
  options: MirrorOptions;
}

interface MirrorUiState {
  screen: MirrorScreen | null;
  tab: MirrorTab;
  /** The run whose failures the Failures tab shows (null: the last sync run). */
  failuresRun: number | null;
  auditStatus: AuditStatus | 'all';
  auditText: string;
  removed: RemovedMirror | null;
  openCreate(url: string, capability: string | undefined, sourceName: string | null): void;
  openMirror(path: string, tab?: MirrorTab): void;
  close(): void;
  setTab(tab: MirrorTab): void;
  showFailures(runId: number | null): void;
  setAuditStatus(status: AuditStatus | 'all'): void;
  setAuditText(text: string): void;
  setRemoved(removed: RemovedMirror | null): void;
}

/** localStorage key of the mirror view shown and its tab, so a reload (mid-run too) shows it again. */
export const MIRROR_UI_STORAGE_KEY = 'rsdesk.mirror-ui';

const TABS: readonly MirrorTab[] = ['runs', 'failures', 'audit', 'access', 'options'];

export const useMirrorUi = create<MirrorUiState>()(persist((set, get) => ({
  screen: null,
  tab: 'runs',
  failuresRun: null,
  auditStatus: 'all',
  auditText: '',
  removed: null,
  openCreate(url, capability, sourceName) {
    set({ screen: { kind: 'create', url, capability, sourceName } });
  },
  openMirror(path, tab) {
    const current = get().screen;
    const same = current?.kind === 'mirror' && current.path === path;
    set({ screen: { kind: 'mirror', path }, tab: tab ?? (same ? get().tab : 'runs'), ...(same ? {} : { failuresRun: null, auditStatus: 'all', auditText: '' }) });
  },
  close() {
    set({ screen: null });
  },
  setTab(tab) {
    set({ tab });
  },
  showFailures(runId) {
    set({ tab: 'failures', failuresRun: runId });
  },
  setAuditStatus(auditStatus) {
    set({ auditStatus });
  },
  setAuditText(auditText) {
    set({ auditText });
  },
  setRemoved(removed) {
    set({ removed });
  },
}), {
  name: MIRROR_UI_STORAGE_KEY,
  version: 1,
  storage: createJSONStorage(() => localStorage),
  // The mirror shown and its tab; not the new-mirror form (its fields are not kept) nor the filters.
  partialize: (state) => ({ screen: state.screen?.kind === 'mirror' ? state.screen : null, tab: state.tab }),
  // Only well-formed kept values are taken back (a hand-edited entry must not break the UI).
  merge: (kept, current) => {
    const k = (typeof kept === 'object' && kept !== null ? kept : {}) as { screen?: unknown; tab?: unknown };
    const screen = k.screen as { kind?: unknown; path?: unknown } | null | undefined;
    return {
      ...current,
      ...(screen && screen.kind === 'mirror' && typeof screen.path === 'string' && screen.path !== '' ? { screen: { kind: 'mirror', path: screen.path } } : {}),
      ...(TABS.includes(k.tab as MirrorTab) ? { tab: k.tab as MirrorTab } : {}),
    };
  },
}));

// Selecting a document (the one already selected too) or a Source elsewhere brings the document panes back; the
// Check report and the mirror views take turns in the main pane.
useUi.subscribe((state, previous) => {
  if (state.node !== previous.node || state.sourceId !== previous.sourceId || state.selections !== previous.selections) useMirrorUi.getState().close();
});
useCheck.subscribe((state, previous) => {
  if (state.visible && (!previous.visible || state.run !== previous.run)) useMirrorUi.getState().close();
});
useLive.subscribe((state, previous) => {
  if (state.visible && !previous.visible) useMirrorUi.getState().close();
});
useMirrorUi.subscribe((state, previous) => {
  if (state.screen !== null && state.screen !== previous.screen) {
    useCheck.getState().hide();
    useLive.getState().hide();
  }
});
