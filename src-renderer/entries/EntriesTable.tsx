import { useEffect, useId, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { KeyboardEvent } from 'react';
import { keepPreviousData, useQueries, useQuery } from '@tanstack/react-query';
import { defaultRangeExtractor, useVirtualizer } from '@tanstack/react-virtual';
import type { DocumentView } from '../../src-main/contract/types.ts';
import type { Entry } from '../../src-main/engine/documents/model.ts';
import { errorMessage } from '../bridge/index.ts';
import { entryPageQuery, PAGE_SIZE, useSummary } from '../data/queries.ts';
import { isChangeDocument } from '../lib/capabilities.ts';
import { useDebounced } from '../lib/hooks.ts';
import { useUi } from '../state/ui.ts';
import { EntriesToolbar } from './EntriesToolbar.tsx';
import { columnsFor } from './columns.ts';
import { focusDetailTitle } from '../detail/title-focus.ts';
import { cellKey, Cells, HEADER_KEYS_ID, HeaderRow } from './EntryRow.tsx';
import { useColumnWidths } from './widths.ts';

const ROW_HEIGHT = 26;
const HEADER_HEIGHT = 28;
const TOOLBAR_HEIGHT = 41;
const CAPTION_HEIGHT = 22;

/** Entries of one document: virtualized rows, pages of PAGE_SIZE fetched only for what the viewport shows. */
export function EntriesTable({ url }: { url: string }) {
  const summary = useSummary(url).data;
  // The table needs the document's shape to pick its columns; MainPane shows it only once the summary is there.
  if (!summary) return null;
  return <Table url={url} doc={summary} />;
}

function Table({ url, doc }: { url: string; doc: DocumentView }) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const gridId = useId();
  const view = useUi((s) => s.view);
  const selected = useUi((s) => (s.entry?.url === url ? s.entry : null));
  const columnWidths = useUi((s) => s.columnWidths);
  const { selectEntry, toggleSort } = useUi.getState();
  const shape = doc.shape ?? { prefix: '', fields: [] };
  const columns = useMemo(() => columnsFor(doc.capability, shape), [doc.capability, shape]);
  /** A row the keyboard moved to whose page is still on its way: selected as soon as it arrives. */
  const [pendingRow, setPendingRow] = useState<number | null>(null);
  const [focused, setFocused] = useState(false);
  /** The column of the grid's one Tab stop, and whether it is in the header row (else in the active row). */
  const [column, setColumn] = useState(0);
  const [inHeader, setInHeader] = useState(false);
  /** A key moved the Tab stop: focus follows it once its cell is rendered. */
  const focusWanted = useRef(false);

  // Page 0 gives the counts; keeping the previous answer while a new filter loads avoids a jumping layout.
  const head = useQuery({ ...entryPageQuery(url, view, 0), placeholderData: keepPreviousData });
  const matched = head.data?.matched ?? 0;
  const activeRow = pendingRow ?? selected?.row ?? (matched > 0 ? 0 : null);
  const activeCol = Math.min(column, columns.length - 1);
  // Without rows, the header holds the Tab stop.
  const headerStop = inHeader || activeRow === null;

  const virtualizer = useVirtualizer({
    count: matched,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 16,
    paddingStart: HEADER_HEIGHT,
    scrollPaddingStart: HEADER_HEIGHT,
    // The active row stays rendered even when scrolled away, so the grid's Tab stop is always there.
    rangeExtractor: (range) => {
      const rows = defaultRangeExtractor(range);
      if (activeRow !== null && activeRow < matched && !rows.includes(activeRow)) {
        rows.push(activeRow);
        rows.sort((a, b) => a - b);
      }
      return rows;
    },
  });
  const items = virtualizer.getVirtualItems();

  // A new document or view starts at the top, except where the person was before a reload (the kept selection).
  const restored = useRef(selected !== null);
  useEffect(() => {
    if (restored.current) {
      restored.current = false;
      return;
    }
    scrollRef.current?.scrollTo({ top: 0 });
  }, [url, view.uri, view.change, view.sort, view.descending]);
  useEffect(() => {
    if (selected !== null && head.data && !head.isPlaceholderData && selected.row < matched) {
      virtualizer.scrollToIndex(selected.row, { align: 'center' });
    }
    // Only once the first page is there after opening: later moves scroll themselves.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [head.isSuccess && !head.isPlaceholderData]);

  const firstPage = items.length ? Math.floor(items[0].index / PAGE_SIZE) : 0;
  const lastPage = items.length ? Math.floor(items[items.length - 1].index / PAGE_SIZE) : 0;
  // A fast scroll crosses many pages; only the ones the viewport settles on are fetched.
  const wantedKey = `${firstPage}:${lastPage}`;
  const settledKey = useDebounced(wantedKey, 90);
  const pages = useMemo(() => {
    const list = new Set<number>();
    for (let p = firstPage; p <= lastPage; p++) list.add(p);
    if (activeRow !== null) list.add(Math.floor(activeRow / PAGE_SIZE));
    return [...list].sort((a, b) => a - b);
  }, [firstPage, lastPage, activeRow]);
  const settled = useMemo(() => {
    const [a, b] = settledKey.split(':').map(Number);
    return { first: a, last: b };
  }, [settledKey]);

  const pageData = useQueries({
    queries: pages.map((page) => ({
      ...entryPageQuery(url, view, page),
      enabled:
        page === 0 ||
        (page >= settled.first && page <= settled.last) ||
        (pendingRow !== null && page === Math.floor(pendingRow / PAGE_SIZE)),
    })),
  });
  const rowsByPage = new Map<number, Entry[]>();
  pages.forEach((page, i) => {
    const data = pageData[i]?.data ?? (page === 0 && !head.isPlaceholderData ? head.data : undefined);
    if (data) rowsByPage.set(page, data.rows);
  });
  const rowAt = (row: number): Entry | undefined => rowsByPage.get(Math.floor(row / PAGE_SIZE))?.[row % PAGE_SIZE];
  const pageError = pageData.find((q) => q.isError)?.error ?? null;

  // The keyboard's target row arrived: select it.
  const pendingEntry = pendingRow !== null ? rowAt(pendingRow) : undefined;
  useEffect(() => {
    if (pendingRow !== null && pendingEntry) {
      selectEntry({ url, index: pendingEntry.index, row: pendingRow });
      setPendingRow(null);
    }
  }, [pendingRow, pendingEntry, selectEntry, url]);
  // A new filter or sort drops a pending move.
  useEffect(() => setPendingRow(null), [view]);

  const widths = useColumnWidths(columns, columnWidths, head.data?.rows ?? [], rowsByPage, shape.prefix, doc.entries);

  function moveTo(row: number) {
    row = Math.max(0, Math.min(matched - 1, row));
    virtualizer.scrollToIndex(row, { align: 'auto' });
    setInHeader(false);
    focusWanted.current = true;
    const entry = rowAt(row);
    if (entry) {
      setPendingRow(null);
      selectEntry({ url, index: entry.index, row });
    } else {
      setPendingRow(row);
    }
  }

  function moveToColumn(col: number) {
    col = Math.max(0, Math.min(columns.length - 1, col));
    if (col === activeCol) return;
    setColumn(col);
    focusWanted.current = true;
  }

  /** Focus on the grid itself (the skip link, a click on its empty part) goes to its Tab stop. */
  function focusTabStop() {
    if (!headerStop && activeRow !== null) virtualizer.scrollToIndex(activeRow, { align: 'auto' });
    const cell = scrollRef.current?.querySelector<HTMLElement>(`[data-cell="${cellKey(headerStop ? -1 : (activeRow ?? -1), activeCol)}"]`);
    // The active row is always rendered; were it not yet, the layout effect below moves focus once it is.
    if (cell) cell.focus({ preventScroll: true });
    else focusWanted.current = true;
  }

  // Focus follows the Tab stop once its cell is rendered (a row far away is rendered by the key's own render).
  useLayoutEffect(() => {
    if (!focusWanted.current) return;
    // Focus that went elsewhere meanwhile (Tab, a click in the detail pane) stays there.
    const now = document.activeElement;
    if (now !== null && now !== document.body && !scrollRef.current?.contains(now)) {
      focusWanted.current = false;
      return;
    }
    const cell = scrollRef.current?.querySelector<HTMLElement>(`[data-cell="${cellKey(headerStop ? -1 : (activeRow ?? -1), activeCol)}"]`);
    if (cell) {
      focusWanted.current = false;
      cell.focus({ preventScroll: true });
      // A cell of a wide table may be off to the side: brought into view sideways only (rows scroll by the virtualizer).
      const box = scrollRef.current!;
      const left = cell.offsetLeft;
      if (left < box.scrollLeft) box.scrollLeft = left;
      else if (left + cell.offsetWidth > box.scrollLeft + box.clientWidth) box.scrollLeft = left + cell.offsetWidth - box.clientWidth;
    }
  });

  function onKeyDown(event: KeyboardEvent<HTMLDivElement>) {
    const target = event.target as HTMLElement;
    // Keys in a column's resizer are the resizer's; the grid's are those of its cells.
    if (target.dataset.cell === undefined || event.altKey || event.metaKey) return;
    const ctrl = event.ctrlKey;
    if (event.key === 'ArrowLeft' && !ctrl) moveToColumn(activeCol - 1);
    else if (event.key === 'ArrowRight' && !ctrl) moveToColumn(activeCol + 1);
    else if (event.key === 'Home' && !ctrl) moveToColumn(0);
    else if (event.key === 'End' && !ctrl) moveToColumn(columns.length - 1);
    else if (headerStop) {
      const col = columns[activeCol];
      if ((event.key === 'Enter' || event.key === ' ') && !ctrl && col?.sort) toggleSort(col.sort);
      // F2: to the column's resizer, where Left/Right resize it and Escape comes back.
      else if (event.key === 'F2') target.querySelector<HTMLElement>('.col-resizer')?.focus();
      else if (matched > 0 && (event.key === 'ArrowDown' || event.key === 'PageDown' || (ctrl && event.key === 'Home'))) {
        // Down from the header goes back to the active row, which stays selected; Ctrl+Home to the first.
        if (ctrl) moveTo(0);
        else {
          setInHeader(false);
          focusWanted.current = true;
          virtualizer.scrollToIndex(activeRow!, { align: 'auto' });
        }
      } else if (matched > 0 && ctrl && event.key === 'End') moveTo(matched - 1);
      else return;
    } else {
      if (matched === 0) return;
      const visibleRows = Math.max(1, Math.floor(((scrollRef.current?.clientHeight ?? 0) - HEADER_HEIGHT) / ROW_HEIGHT) - 1);
      const from = pendingRow ?? selected?.row ?? -1;
      const moves: Record<string, number> = { ArrowDown: 1, ArrowUp: -1, PageDown: visibleRows, PageUp: -visibleRows };
      if (event.key === 'ArrowUp' && !ctrl && from <= 0) {
        // Up from the first row: the header, where the columns are sorted.
        setInHeader(true);
        focusWanted.current = true;
      } else if (event.key in moves && !ctrl) moveTo(from === -1 && moves[event.key] < 0 ? 0 : from + moves[event.key]);
      else if (event.key === 'Home' && ctrl) moveTo(0);
      else if (event.key === 'End' && ctrl) moveTo(matched - 1);
      else if (event.key === ' ' && !ctrl) moveTo(from === -1 ? 0 : from);
      else if (event.key === 'Enter' && !ctrl) {
        // Enter opens the entry and takes the focus to its title in the detail pane (Shift+Tab comes back).
        const row = from === -1 ? 0 : from;
        moveTo(row);
        focusWanted.current = false;
        focusDetailTitle(target);
      } else return;
    }
    event.preventDefault();
  }

  const empty = head.isSuccess && !head.isPlaceholderData && matched === 0;
  const caption = shape.prefix !== '';
  // A short list takes only the room its rows need; the detail pane gets the rest.
  const maxHeight = head.data
    ? Math.max(180, TOOLBAR_HEIGHT + (caption ? CAPTION_HEIGHT : 0) + HEADER_HEIGHT + matched * ROW_HEIGHT + 2 + 16)
    : undefined;
  const rowId = (row: number) => `${gridId}-row-${row}`;
  const captionId = `${gridId}-caption`;

  return (
    <section className="entries" style={{ maxHeight }} aria-label="Entries">
      <EntriesToolbar
        matched={head.data ? head.data.matched : null}
        total={head.data ? head.data.total : null}
        busy={head.isFetching || pageData.some((q) => q.isFetching)}
        changes={isChangeDocument(doc.capability) && (shape.fields as string[]).includes('change')}
      />
      {caption && (
        <p className="entries-caption" id={captionId}>
          <span className="muted">loc relative to</span> <span className="mono entries-prefix">{shape.prefix}</span>
        </p>
      )}
      <p id={HEADER_KEYS_ID} hidden>
        Enter sorts by this column; F2 resizes it.
      </p>
      {head.isError ? (
        <div className="alert alert-error" role="alert">Could not read the entries: {errorMessage(head.error)}</div>
      ) : (
        <div
          ref={scrollRef}
          id={gridId}
          className={`table-scroll${focused ? ' grid-focused' : ''}`}
          role="grid"
          aria-label="Entries"
          aria-describedby={caption ? captionId : undefined}
          aria-readonly="true"
          aria-rowcount={matched + 1}
          aria-colcount={columns.length}
          // Not a Tab stop itself (its active cell is): focus given to it goes on to that cell.
          tabIndex={-1}
          onKeyDown={onKeyDown}
          onFocus={(e) => {
            setFocused(true);
            if (e.target === e.currentTarget) focusTabStop();
          }}
          onBlur={(e) => {
            if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setFocused(false);
          }}
        >
          <div
            className="table-inner"
            style={{ height: virtualizer.getTotalSize(), minWidth: widths.total, ['--columns' as string]: widths.template }}
          >
            <HeaderRow columns={columns} view={view} widths={widths} activeCol={headerStop ? activeCol : null} onSort={toggleSort} />
            <div role="rowgroup">
              {items.map((item) => {
                const entry = rowAt(item.index);
                const isSelected = selected !== null && entry !== undefined && selected.index === entry.index && pendingRow === null;
                const isActive = item.index === activeRow;
                return (
                  <div
                    key={item.key}
                    id={rowId(item.index)}
                    role="row"
                    aria-rowindex={item.index + 2}
                    aria-selected={isSelected}
                    className={`tr${isSelected ? ' selected' : ''}${isActive ? ' active' : ''}${item.index % 2 ? ' odd' : ''}${entry ? '' : ' pending'}`}
                    style={{ transform: `translateY(${item.start}px)`, height: ROW_HEIGHT }}
                    aria-busy={entry ? undefined : true}
                    onMouseDown={(event) => {
                      // A press on the row past its last cell would focus the grid itself, which sends the focus,
                      // and the scroll, back to the row active before: the row's cell in the active column takes it.
                      if ((event.target as HTMLElement).closest('[data-cell]')) return;
                      event.preventDefault();
                      event.currentTarget.querySelector<HTMLElement>(`[data-cell="${cellKey(item.index, activeCol)}"]`)?.focus({ preventScroll: true });
                    }}
                    onClick={(event) => {
                      // The clicked cell becomes the Tab stop (the click gave it the focus already).
                      const cell = (event.target as HTMLElement).closest<HTMLElement>('[data-cell]');
                      if (cell) setColumn(Number(cell.dataset.cell!.split(':')[1]));
                      setInHeader(false);
                      // A row whose page is on its way is selected when it arrives, as a key's move is: before,
                      // the click was lost and the detail kept showing the entry selected earlier.
                      if (!entry) return setPendingRow(item.index);
                      setPendingRow(null);
                      selectEntry({ url, index: entry.index, row: item.index });
                    }}
                  >
                    <Cells
                      row={item.index}
                      entry={entry}
                      columns={columns}
                      prefix={shape.prefix}
                      widths={widths}
                      activeCol={!headerStop && isActive ? activeCol : null}
                    />
                  </div>
                );
              })}
            </div>
          </div>
          {empty && (
            <p className="empty table-empty">
              {view.uri || view.change ? 'No entry matches the filter.' : 'This document lists no entries.'}
            </p>
          )}
          {pageError !== null && (
            <div className="alert alert-error table-error" role="alert">
              Could not read a page of entries: {errorMessage(pageError)}
            </div>
          )}
        </div>
      )}
    </section>
  );
}
