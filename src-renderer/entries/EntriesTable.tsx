import { useEffect, useMemo, useRef } from 'react';
import type { KeyboardEvent } from 'react';
import { keepPreviousData, useQueries, useQuery } from '@tanstack/react-query';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { EntrySortKey } from '../../src-main/contract/types.ts';
import type { Entry } from '../../src-main/engine/documents/model.ts';
import { errorMessage } from '../bridge/index.ts';
import { entryPageQuery, PAGE_SIZE, useSummary } from '../data/queries.ts';
import { isChangeCapability } from '../lib/capabilities.ts';
import { formatCount, formatLength } from '../lib/format.ts';
import { useDebounced } from '../lib/hooks.ts';
import { useUi } from '../state/ui.ts';
import { EntriesToolbar } from './EntriesToolbar.tsx';

const ROW_HEIGHT = 26;
const HEADER_HEIGHT = 28;
const TOOLBAR_HEIGHT = 41;
/** Snapshot lists leave change and datetime empty; their width goes to loc there. */
const COLUMNS_CHANGE = '58px minmax(240px, 1fr) 162px 72px 162px 78px 118px 128px';
const COLUMNS_SNAPSHOT = '58px minmax(240px, 1fr) 162px 72px 98px 78px 118px 128px';

interface Column {
  id: string;
  title: string;
  sort?: EntrySortKey;
  numeric?: boolean;
}

const COLUMNS: Column[] = [
  { id: 'index', title: '#', sort: 'index', numeric: true },
  { id: 'loc', title: 'loc', sort: 'loc' },
  { id: 'lastmod', title: 'lastmod', sort: 'lastmod' },
  { id: 'change', title: 'change' },
  { id: 'datetime', title: 'datetime', sort: 'datetime' },
  { id: 'length', title: 'length', sort: 'length', numeric: true },
  { id: 'type', title: 'type' },
  { id: 'hash', title: 'hash' },
];

function Cells({ entry }: { entry: Entry }) {
  const md = entry.md;
  return (
    <>
      <span role="cell" className="c-num">{entry.index + 1}</span>
      <span role="cell" className="c-loc" title={entry.loc}>{entry.loc}</span>
      <span role="cell" className="c-date" title={entry.lastmod}>{entry.lastmod ?? ''}</span>
      <span role="cell">{md.change ? <span className={`chg chg-${md.change}`}>{md.change}</span> : ''}</span>
      <span role="cell" className="c-date" title={md.datetime}>{md.datetime ?? ''}</span>
      <span role="cell" className="c-num" title={md.length}>{formatLength(md.length)}</span>
      <span role="cell" title={md.type}>{md.type ?? ''}</span>
      <span role="cell" className="c-hash" title={md.hash}>{md.hash ?? ''}</span>
    </>
  );
}

/** Entries of one document: virtualized rows, pages of PAGE_SIZE fetched only for what the viewport shows. */
export function EntriesTable({ url }: { url: string }) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const view = useUi((s) => s.view);
  const selected = useUi((s) => (s.entry?.url === url ? s.entry : null));
  const { selectEntry, toggleSort } = useUi.getState();
  const capability = useSummary(url).data?.capability;
  const columns = isChangeCapability(capability) ? COLUMNS_CHANGE : COLUMNS_SNAPSHOT;

  // Page 0 gives the counts; keeping the previous answer while a new filter loads avoids a jumping layout.
  const head = useQuery({ ...entryPageQuery(url, view, 0), placeholderData: keepPreviousData });
  const matched = head.data?.matched ?? 0;

  const virtualizer = useVirtualizer({
    count: matched,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 16,
    paddingStart: HEADER_HEIGHT,
    scrollPaddingStart: HEADER_HEIGHT,
  });
  const items = virtualizer.getVirtualItems();

  useEffect(() => {
    scrollRef.current?.scrollTo({ top: 0 });
  }, [url, view.uri, view.change, view.sort, view.descending]);

  const firstPage = items.length ? Math.floor(items[0].index / PAGE_SIZE) : 0;
  const lastPage = items.length ? Math.floor(items[items.length - 1].index / PAGE_SIZE) : 0;
  // A fast scroll crosses many pages; only the ones the viewport settles on are fetched.
  const wantedKey = `${firstPage}:${lastPage}`;
  const settledKey = useDebounced(wantedKey, 90);
  const pages = useMemo(() => {
    const list: number[] = [];
    for (let p = firstPage; p <= lastPage; p++) list.push(p);
    return list;
  }, [firstPage, lastPage]);
  const settled = useMemo(() => {
    const [a, b] = settledKey.split(':').map(Number);
    return { first: a, last: b };
  }, [settledKey]);

  const pageData = useQueries({
    queries: pages.map((page) => ({
      ...entryPageQuery(url, view, page),
      enabled: page === 0 || (page >= settled.first && page <= settled.last),
    })),
  });
  const rowsByPage = new Map<number, Entry[]>();
  pages.forEach((page, i) => {
    const data = pageData[i]?.data ?? (page === 0 && !head.isPlaceholderData ? head.data : undefined);
    if (data) rowsByPage.set(page, data.rows);
  });
  const rowAt = (row: number): Entry | undefined => rowsByPage.get(Math.floor(row / PAGE_SIZE))?.[row % PAGE_SIZE];
  const pageError = pageData.find((q) => q.isError)?.error ?? null;

  function onKeyDown(event: KeyboardEvent<HTMLDivElement>) {
    const moves: Record<string, number> = { ArrowDown: 1, ArrowUp: -1, PageDown: 20, PageUp: -20 };
    let row: number;
    if (event.key in moves) row = (selected?.row ?? -1) + moves[event.key];
    else if (event.key === 'Home') row = 0;
    else if (event.key === 'End') row = matched - 1;
    else return;
    event.preventDefault();
    row = Math.max(0, Math.min(matched - 1, row));
    virtualizer.scrollToIndex(row, { align: 'auto' });
    const entry = rowAt(row);
    if (entry) selectEntry({ url, index: entry.index, row });
  }

  const empty = head.isSuccess && !head.isPlaceholderData && matched === 0;
  // A short list takes only the room its rows need; the detail pane gets the rest.
  const maxHeight = head.data ? Math.max(180, TOOLBAR_HEIGHT + HEADER_HEIGHT + matched * ROW_HEIGHT + 2) : undefined;
  return (
    <div className="entries" style={{ maxHeight }}>
      <EntriesToolbar
        matched={head.data ? head.data.matched : null}
        total={head.data ? head.data.total : null}
        busy={head.isFetching || pageData.some((q) => q.isFetching)}
      />
      {head.isError ? (
        <div className="alert alert-error" role="alert">Could not read the entries: {errorMessage(head.error)}</div>
      ) : (
        <div
          ref={scrollRef}
          className="table-scroll"
          role="table"
          aria-label="Entries"
          aria-rowcount={matched + 1}
          tabIndex={0}
          onKeyDown={onKeyDown}
        >
          <div className="table-inner" style={{ height: virtualizer.getTotalSize(), ['--columns' as string]: columns }}>
            <div role="rowgroup" className="thead">
              <div role="row" aria-rowindex={1} className="tr th-row">
                {COLUMNS.map((col) => {
                  const sorted = col.sort !== undefined && view.sort === col.sort;
                  return (
                    <span
                      key={col.id}
                      role="columnheader"
                      aria-sort={col.sort ? (sorted ? (view.descending ? 'descending' : 'ascending') : 'none') : undefined}
                      className={col.numeric ? 'c-num' : undefined}
                    >
                      {col.sort ? (
                        <button type="button" className="th-button" onClick={() => toggleSort(col.sort!)}>
                          {col.title}
                          <span className={`sort-mark${sorted ? '' : ' unsorted'}`} aria-hidden="true">
                            {sorted && view.descending ? '▼' : '▲'}
                          </span>
                        </button>
                      ) : (
                        col.title
                      )}
                    </span>
                  );
                })}
              </div>
            </div>
            <div role="rowgroup">
              {items.map((item) => {
                const entry = rowAt(item.index);
                const isSelected = selected !== null && entry !== undefined && selected.index === entry.index;
                return (
                  <div
                    key={item.key}
                    role="row"
                    aria-rowindex={item.index + 2}
                    aria-selected={isSelected}
                    className={`tr${isSelected ? ' selected' : ''}${item.index % 2 ? ' odd' : ''}${entry ? '' : ' pending'}`}
                    style={{ transform: `translateY(${item.start}px)`, height: ROW_HEIGHT }}
                    onClick={entry ? () => selectEntry({ url, index: entry.index, row: item.index }) : undefined}
                  >
                    {entry ? (
                      <Cells entry={entry} />
                    ) : (
                      <span role="cell" className="c-pending">{formatCount(item.index + 1)} …</span>
                    )}
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
    </div>
  );
}
