// UI state only (what is selected, expanded, filtered, how big the panes are). Engine data lives in react-query.
import { create } from 'zustand';
import { createJSONStorage, persist } from 'zustand/middleware';
import { ENTRY_SORT_KEYS, type EntrySortKey } from '../../src-main/contract/types.ts';
import { CHANGE_TYPES, type ChangeType } from '../../src-main/engine/documents/model.ts';

/** A node of the tree (or a document opened by following a link, which may not be in the tree). */
export interface NodeRef {
  /** Path of child positions from the Source ("3/0/2"), or "link:<url>" for a followed document. */
  id: string;
  url: string;
  /** Capability as the parent named it, before the document itself is fetched. */
  capability?: string;
  /** A change-notification channel: a WebSub topic, never fetched. */
  channel?: boolean;
  hub?: string;
  /** A channel's Capability List: the mirrors bound to it are offered first when subscribing. */
  list?: string;
}

export interface EntryRef {
  url: string;
  /** 0-based position of the entry in the document. */
  index: number;
  /** Row in the current (filtered, sorted) table view. */
  row: number;
}

export type DetailTab = 'meta' | 'findings' | 'raw';

interface Place {
  node: NodeRef | null;
  entry: EntryRef | null;
}

export interface EntryView {
  uri: string;
  change: ChangeType | '';
  sort: EntrySortKey;
  descending: boolean;
}

export const DEFAULT_VIEW: EntryView = { uri: '', change: '', sort: 'index', descending: false };

interface UiState {
  sourceId: number | null;
  node: NodeRef | null;
  entry: EntryRef | null;
  /**
   * Counts selections, of the document already selected too: choosing it again in the tree brings its panes back
   * over a view that hides them (a mirror's), though `node` does not change.
   */
  selections: number;
  expanded: Record<string, boolean>;
  focusedId: string | null;
  view: EntryView;
  detailTab: DetailTab;
  /** A line the raw view should scroll to; `seq` makes repeated clicks on the same line count. */
  rawTarget: { url: string; line: number; seq: number } | null;
  history: Place[];
  sidebarWidth: number;
  detailHeight: number;
  /** Widths (px) of the entries table's columns the person has set, by column id; the others take their default. */
  columnWidths: Record<string, number>;

  selectSource(id: number | null): void;
  selectNode(node: NodeRef | null): void;
  selectEntry(entry: EntryRef | null): void;
  /** Opens a place and remembers the current one, so "Back" can return to it. */
  follow(node: NodeRef, expand?: string[]): void;
  back(): void;
  /**
   * Shows a place of a Source's tree: selects the Source, expands the given nodes, and selects `node` (when
   * given) as if it had been clicked, so its entries show. Used after adding a Source.
   */
  reveal(sourceId: number, expand: string[], node?: NodeRef | null): void;
  setExpanded(id: string, expanded: boolean): void;
  setFocused(id: string | null): void;
  setView(patch: Partial<EntryView>): void;
  toggleSort(key: EntrySortKey): void;
  setDetailTab(tab: DetailTab): void;
  showRawLine(url: string, line: number): void;
  setSidebarWidth(px: number): void;
  setDetailHeight(px: number): void;
  /** `null` goes back to the column's default width. */
  setColumnWidth(id: string, px: number | null): void;
}

/** The bounds of a column width the person sets. */
export const COLUMN_MIN = 40;
export const COLUMN_MAX = 2000;

const HISTORY_LIMIT = 50;

/** What survives a reload or a restart: where the person was and how they arranged the panes. */
const PERSISTED = [
  'sourceId',
  'node',
  'entry',
  'expanded',
  'focusedId',
  'view',
  'detailTab',
  'sidebarWidth',
  'detailHeight',
  'columnWidths',
] as const satisfies readonly (keyof UiState)[];
type Persisted = Pick<UiState, (typeof PERSISTED)[number]>;

/** localStorage key; the version below changes when the shape of what is kept does. */
export const UI_STORAGE_KEY = 'rsdesk.ui';

export const useUi = create<UiState>()(persist((set, get) => ({
  sourceId: null,
  node: null,
  entry: null,
  selections: 0,
  expanded: {},
  focusedId: null,
  view: DEFAULT_VIEW,
  detailTab: 'meta',
  rawTarget: null,
  history: [],
  sidebarWidth: 370,
  columnWidths: {},
  // About half the window: with an entry selected, its detail is what the person reads.
  detailHeight: typeof window === 'undefined' ? 400 : Math.round(window.innerHeight * 0.47),

  selectSource(id) {
    if (get().sourceId === id) return;
    set({ sourceId: id, node: null, entry: null, focusedId: null, history: [], view: DEFAULT_VIEW });
  },
  selectNode(node) {
    const current = get().node;
    const selections = get().selections + 1;
    if (current?.id === node?.id && current?.url === node?.url) {
      set({ entry: null, selections });
      return;
    }
    set({ node, entry: null, selections, view: DEFAULT_VIEW, detailTab: 'meta', rawTarget: null });
  },
  selectEntry(entry) {
    set((s) => ({ entry, detailTab: s.detailTab === 'findings' ? 'meta' : s.detailTab }));
  },
  follow(node, expand = []) {
    const { node: current, entry, history, expanded } = get();
    const next = { ...expanded };
    for (const id of expand) next[id] = true;
    set({
      history: [...history, { node: current, entry }].slice(-HISTORY_LIMIT),
      node,
      entry: null,
      expanded: next,
      focusedId: node.id.startsWith('link:') ? get().focusedId : node.id,
      view: DEFAULT_VIEW,
      detailTab: 'meta',
      rawTarget: null,
    });
  },
  back() {
    const history = get().history;
    const place = history.at(-1);
    if (!place) return;
    set({ history: history.slice(0, -1), node: place.node, entry: place.entry, view: DEFAULT_VIEW, rawTarget: null });
  },
  reveal(sourceId, expand, node = null) {
    if (get().sourceId !== sourceId) get().selectSource(sourceId);
    const expanded = { ...get().expanded };
    for (const id of expand) expanded[id] = true;
    if (node === null) {
      set({ expanded });
      return;
    }
    set({ expanded, node, entry: null, focusedId: node.id, view: DEFAULT_VIEW, detailTab: 'meta', rawTarget: null });
  },
  setExpanded(id, value) {
    set((s) => {
      const expanded = { ...s.expanded };
      if (value) expanded[id] = true;
      else delete expanded[id];
      // Focus must not stay on a node that collapsing just hid.
      const focusedId = !value && s.focusedId?.startsWith(`${id}/`) ? id : s.focusedId;
      return { expanded, focusedId };
    });
  },
  setFocused(id) {
    if (get().focusedId !== id) set({ focusedId: id });
  },
  setView(patch) {
    set((s) => ({ view: { ...s.view, ...patch }, entry: null }));
  },
  toggleSort(key) {
    set((s) => ({
      view: { ...s.view, sort: key, descending: s.view.sort === key ? !s.view.descending : false },
      entry: null,
    }));
  },
  setDetailTab(tab) {
    set({ detailTab: tab });
  },
  showRawLine(url, line) {
    set((s) => ({ detailTab: 'raw', rawTarget: { url, line, seq: (s.rawTarget?.seq ?? 0) + 1 } }));
  },
  setSidebarWidth(px) {
    set({ sidebarWidth: Math.round(Math.min(Math.max(px, 260), 720)) });
  },
  setDetailHeight(px) {
    set({ detailHeight: Math.round(Math.min(Math.max(px, 120), 2000)) });
  },
  setColumnWidth(id, px) {
    set((s) => {
      const columnWidths = { ...s.columnWidths };
      if (px === null) delete columnWidths[id];
      else columnWidths[id] = Math.round(Math.min(Math.max(px, COLUMN_MIN), COLUMN_MAX));
      return { columnWidths };
    });
  },
}), {
  name: UI_STORAGE_KEY,
  version: 1,
  // A storage that cannot be read (private mode, quota) leaves the defaults: nothing else depends on it.
  storage: createJSONStorage(() => localStorage),
  partialize: (state): Persisted => Object.fromEntries(PERSISTED.map((key) => [key, state[key]])) as Persisted,
  // Kept values are merged over the defaults one by one, so a key added later keeps its default.
  merge: (kept, current) => ({ ...current, ...sanitize(kept) }),
}));

/** Only well-formed kept values are taken back: a hand-edited or older entry must not break the UI. */
function sanitize(kept: unknown): Partial<Persisted> {
  if (typeof kept !== 'object' || kept === null) return {};
  const k = kept as Record<string, unknown>;
  const out: Partial<Persisted> = {};
  const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (typeof k.sourceId === 'number' || k.sourceId === null) out.sourceId = k.sourceId;
  if (k.node === null || (isRecord(k.node) && typeof k.node.id === 'string' && typeof k.node.url === 'string')) {
    out.node = k.node as NodeRef | null;
  }
  if (k.entry === null || (isRecord(k.entry) && typeof k.entry.url === 'string' && typeof k.entry.index === 'number' && typeof k.entry.row === 'number')) {
    out.entry = k.entry as EntryRef | null;
  }
  if (isRecord(k.expanded)) {
    out.expanded = Object.fromEntries(Object.entries(k.expanded).filter(([, v]) => v === true).map(([id]) => [id, true]));
  }
  if (typeof k.focusedId === 'string' || k.focusedId === null) out.focusedId = k.focusedId;
  const view = k.view;
  if (
    isRecord(view) &&
    typeof view.uri === 'string' &&
    (ENTRY_SORT_KEYS as readonly unknown[]).includes(view.sort) &&
    (view.change === '' || (CHANGE_TYPES as readonly unknown[]).includes(view.change)) &&
    typeof view.descending === 'boolean'
  ) {
    out.view = { uri: view.uri, change: view.change as EntryView['change'], sort: view.sort as EntrySortKey, descending: view.descending };
  }
  if (k.detailTab === 'meta' || k.detailTab === 'findings' || k.detailTab === 'raw') out.detailTab = k.detailTab;
  if (typeof k.sidebarWidth === 'number') out.sidebarWidth = k.sidebarWidth;
  if (typeof k.detailHeight === 'number') out.detailHeight = k.detailHeight;
  if (isRecord(k.columnWidths)) {
    out.columnWidths = Object.fromEntries(Object.entries(k.columnWidths).filter((e): e is [string, number] => typeof e[1] === 'number'));
  }
  return out;
}
