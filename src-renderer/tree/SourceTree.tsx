import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { KeyboardEvent } from 'react';
import { useQueries, useQueryClient } from '@tanstack/react-query';
import { defaultRangeExtractor, useVirtualizer } from '@tanstack/react-virtual';
import type { DocumentView, EntryPage, SavedSource } from '../../src-main/contract/types.ts';
import { getBridge } from '../bridge/index.ts';
import { entryPageQuery, keys } from '../data/queries.ts';
import { DEFAULT_VIEW, useUi } from '../state/ui.ts';
import { ChildNodes, isPending } from './children.ts';
import { sourceRoots } from './nodes.ts';
import { findByName, flattenTree, isExpandable, nextItem, nodeLabel } from './rows.ts';
import type { ItemRow, TreeRows } from './rows.ts';
import { pageTarget } from './page.ts';
import { TreeNode } from './TreeNode.tsx';

/** What was typed for type-ahead, and when: keys typed within TYPE_AHEAD_MS of each other make one search. */
const typed = { text: '', at: 0 };
const TYPE_AHEAD_MS = 700;
/** A row of two lines, until it is measured: rows differ (a time span that wraps, an error shown whole, the font). */
const ROW_HEIGHT = 40;

/**
 * The Source's documents as a WAI-ARIA tree. Only the rows near the viewport are in the DOM, and the focused one
 * (so focus is never lost when it scrolls away): an index of 10,000 parts took 1–4 s per slice of 500 as DOM. Every
 * key works on the list of rows, so End, type-ahead and the rest reach items that are not rendered.
 */
export function SourceTree({ source }: { source: SavedSource }) {
  const treeRef = useRef<HTMLUListElement>(null);
  const client = useQueryClient();
  const roots = useMemo(() => sourceRoots(source), [source]);
  const expanded = useUi((s) => s.expanded);
  const focusedId = useUi((s) => s.focusedId);
  const selectedId = useUi((s) => s.node?.id ?? null);

  // The views of the expanded items make the rows: they stay fetched (and cached) while their item is expanded,
  // though the item's own row may be far out of view.
  const [watched, setWatched] = useState<string[]>([]);
  const versions = useQueries({
    queries: watched.map((url) => ({
      queryKey: keys.summary(url),
      queryFn: () => getBridge().invoke('documents.summary', { url }),
      staleTime: Infinity,
    })),
    // The latest change among them: a view already cached when it came to be watched was read by the last build.
    combine: (results) => results.reduce((latest, r) => Math.max(latest, r.dataUpdatedAt, r.errorUpdatedAt), 0),
  });
  const children = useMemo(
    () => new ChildNodes((url, page) => client.getQueryData<EntryPage>(entryPageQuery(url, DEFAULT_VIEW, page).queryKey)),
    [client],
  );
  // Children a view does not carry (past its first 10,000) are read a page of entries at a time, for the rows in
  // view once the scrolling stops.
  const [wanted, setWanted] = useState<{ url: string; page: number }[]>([]);
  const pagesRead = useQueries({
    queries: wanted.map(({ url, page }) => entryPageQuery(url, DEFAULT_VIEW, page)),
    combine: (results) => results.reduce((latest, r) => Math.max(latest, r.dataUpdatedAt), 0),
  });
  const rows = useMemo(
    () => flattenTree(roots, expanded, (url) => viewState(client, url), (node, view) => children.of(node, view)),
    // `versions` changes when an expanded item's view arrives or fails, `pagesRead` when children arrive.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [roots, expanded, client, children, versions, pagesRead],
  );
  useEffect(() => {
    if (rows.expandedUrls.join('\n') !== watched.join('\n')) setWatched(rows.expandedUrls);
  }, [rows, watched]);

  const selectedIndex = rows.indexOf(selectedId ?? '');

  // An item chosen (a click, Enter) while its page of entries is on its way: selected once it is read. Its id is its
  // position, the same before and after. Before, the choice was dropped and the previous document stayed on show.
  const [wantedId, setWantedId] = useState<string | null>(null);
  const wantedIndex = wantedId === null ? undefined : rows.indexOf(wantedId);
  const wantedRow = wantedIndex === undefined ? undefined : rows.at(wantedIndex);
  useEffect(() => {
    if (wantedRow?.kind === 'item' && !isPending(wantedRow.node)) {
      setWantedId(null);
      useUi.getState().selectNode(wantedRow.node);
    }
  }, [wantedRow]);
  // Another item selected meanwhile wins.
  useEffect(() => setWantedId(null), [selectedId]);
  const tabStop = rows.indexOf(focusedId ?? '') ?? selectedIndex ?? 0;
  const virtualizer = useVirtualizer({
    count: rows.count,
    getScrollElement: () => treeRef.current?.parentElement ?? null,
    estimateSize: () => ROW_HEIGHT,
    overscan: 8,
    // The tab stop stays rendered when scrolled away: it keeps the focus, and Tab still reaches the tree. So does the
    // selected item, where focus returns from the views that leave (a mirror's form).
    rangeExtractor: (range) => {
      const list = defaultRangeExtractor(range);
      for (const keep of [tabStop, selectedIndex, wantedIndex]) {
        if (keep !== undefined && keep < rows.count && !list.includes(keep)) list.push(keep);
      }
      return list.sort((a, b) => a - b);
    },
  });

  // Focus moves to an item once it is rendered (the key's render brings it into the window).
  const pendingFocus = useRef<string | null>(null);
  useLayoutEffect(() => {
    const id = pendingFocus.current;
    if (id === null) return;
    const element = treeRef.current?.querySelector<HTMLElement>(`[data-node-id="${CSS.escape(id)}"]`);
    if (element) {
      pendingFocus.current = null;
      element.focus({ preventScroll: true });
    }
  });

  // A node selected from elsewhere (a link followed, a reveal) is scrolled to once its row exists.
  useEffect(() => {
    if (selectedIndex !== undefined) virtualizer.scrollToIndex(selectedIndex, { align: 'auto' });
    // Only when the selection changes or its row appears, not on every change of the rows above it.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [selectedId, selectedIndex === undefined]);

  function moveTo(index: number) {
    if (index < 0 || index >= rows.count) return;
    const row = rows.at(index);
    if (row.kind !== 'item') return;
    useUi.getState().setFocused(row.node.id);
    virtualizer.scrollToIndex(index, { align: 'auto' });
    const element = treeRef.current?.querySelector<HTMLElement>(`[data-node-id="${CSS.escape(row.node.id)}"]`);
    if (element) element.focus({ preventScroll: true });
    else pendingFocus.current = row.node.id;
  }

  function onKeyDown(event: KeyboardEvent<HTMLUListElement>) {
    // Alt+Left is "Back" (app-wide), not a tree move; keys in the Retry button are the button's.
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const item = (event.target as HTMLElement).closest<HTMLElement>('[role=treeitem]');
    if (item !== event.target) return;
    const at = rows.indexOf(item.dataset.nodeId ?? '') ?? -1;
    if (at < 0) return;
    const row = rows.at(at);
    if (row.kind !== 'item') return;
    const { setExpanded, selectNode } = useUi.getState();
    const view = viewState(client, row.node.url).view;
    // The virtualizer knows rows by position (getKey is the index), each measured once rendered.
    const page = (step: 1 | -1) =>
      pageTarget(at, step, treeRef.current?.parentElement?.clientHeight ?? ROW_HEIGHT, rows.count, (i) => virtualizer.itemSizeCache.get(i));
    switch (event.key) {
      case 'ArrowDown':
        moveTo(nextItem(rows, at, 1));
        break;
      case 'ArrowUp':
        moveTo(nextItem(rows, at, -1));
        break;
      case 'PageDown':
        moveTo(itemNear(rows, page(1), -1));
        break;
      case 'PageUp':
        moveTo(itemNear(rows, page(-1), 1));
        break;
      case 'Home':
        moveTo(nextItem(rows, -1, 1));
        break;
      case 'End':
        moveTo(nextItem(rows, rows.count, -1));
        break;
      case 'ArrowRight':
        if (!isExpandable(row.node, view)) break;
        if (expanded[row.node.id] !== true) setExpanded(row.node.id, true);
        else if (at + 1 < rows.count && rows.at(at + 1).parent === at && rows.at(at + 1).kind === 'item') moveTo(at + 1);
        break;
      case 'ArrowLeft':
        if (isExpandable(row.node, view) && expanded[row.node.id] === true) setExpanded(row.node.id, false);
        else if (row.parent >= 0) moveTo(row.parent);
        break;
      case 'Enter':
      case ' ':
        // Space selects, as Enter does: it is not typed ahead.
        if (isPending(row.node)) setWantedId(row.node.id);
        else selectNode(row.node);
        break;
      default: {
        if (event.key.length !== 1) return;
        typed.text = event.timeStamp - typed.at > TYPE_AHEAD_MS ? event.key.toLowerCase() : typed.text + event.key.toLowerCase();
        typed.at = event.timeStamp;
        const views = cachedViews(client);
        const found = findByName(rows, at, typed.text, (r: ItemRow) => nodeLabel(r.node, views.get(r.node.url)));
        if (found >= 0) moveTo(found);
      }
    }
    event.preventDefault();
  }

  const fetch = !virtualizer.isScrolling;
  const items = virtualizer.getVirtualItems();
  const wantedNow = fetch ? pendingPages(rows, items.map((v) => v.index)) : wanted;
  useEffect(() => {
    if (!samePages(wantedNow, wanted)) setWanted(wantedNow);
  });

  // The virtualizer knows rows by position (its bookkeeping of 50,000 rows took ~90 ms a rebuild when keyed by node
  // id), React by node id (a focused item keeps its element when rows above it come and go): a row is measured again
  // when its element comes to stand at another position (TreeNode).
  const measure = virtualizer.measureElement;

  if (roots.length === 0) {
    return <p className="empty">Discovery found no Source Description or Capability List for this Source.</p>;
  }
  return (
    <ul
      ref={treeRef}
      role="tree"
      aria-label={`Documents of ${source.name}`}
      className="tree"
      style={{ position: 'relative', height: virtualizer.getTotalSize() }}
      onKeyDown={onKeyDown}
    >
      {items.map((v) => {
        const row = rows.at(v.index);
        if (row.kind === 'note') {
          return (
            <li
              key={rows.keyAt(v.index)}
              role="none"
              className="tree-note"
              data-index={v.index}
              ref={measure}
              style={{ position: 'absolute', top: 0, left: 0, width: '100%', transform: `translateY(${v.start}px)`, paddingLeft: 22 + (row.level - 1) * 16 }}
            >
              {row.text}
            </li>
          );
        }
        return (
          <TreeNode
            key={rows.keyAt(v.index)}
            row={row}
            index={v.index}
            start={v.start}
            tabStop={v.index === tabStop}
            wanted={row.node.id === wantedId}
            onWant={setWantedId}
            expanded={expanded[row.node.id] === true}
            fetch={fetch}
            measure={measure}
          />
        );
      })}
    </ul>
  );
}

function viewState(client: ReturnType<typeof useQueryClient>, url: string) {
  const state = client.getQueryState<DocumentView>(keys.summary(url));
  return { view: state?.data, failed: state?.status === 'error' };
}

/** The cached views by URL, read once for a type-ahead search over every row. */
function cachedViews(client: ReturnType<typeof useQueryClient>): Map<string, DocumentView> {
  const views = new Map<string, DocumentView>();
  for (const query of client.getQueryCache().findAll({ queryKey: ['summary'] })) {
    const data = query.state.data as DocumentView | undefined;
    if (data) views.set(query.queryKey[1] as string, data);
  }
  return views;
}

/** The pages of entries the pending rows among `indexes` wait for. */
function pendingPages(rows: TreeRows, indexes: number[]): { url: string; page: number }[] {
  const pages = new Map<string, { url: string; page: number }>();
  for (const i of indexes) {
    const row = rows.at(i);
    if (row.kind === 'item' && isPending(row.node)) pages.set(`${row.node.pending.page} ${row.node.pending.url}`, row.node.pending);
  }
  return [...pages.values()];
}

function samePages(a: { url: string; page: number }[], b: { url: string; page: number }[]): boolean {
  return a.length === b.length && a.every((p, i) => p.url === b[i]!.url && p.page === b[i]!.page);
}

/** The item at `index`, or the nearest one from there in direction `step` (a note is no place for the focus). */
function itemNear(rows: TreeRows, index: number, step: 1 | -1): number {
  return rows.at(index).kind === 'item' ? index : nextItem(rows, index, step);
}
