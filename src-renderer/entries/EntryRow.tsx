// The entries table's header (sortable, resizable columns) and the cells of one row.
import { useRef } from 'react';
import type { KeyboardEvent, PointerEvent, ReactNode, RefObject } from 'react';
import type { EntrySortKey } from '../../src-main/contract/types.ts';
import type { Entry } from '../../src-main/engine/documents/model.ts';
import { formatLength } from '../lib/format.ts';
import { middleEllipsis, monoFont } from '../lib/measure.ts';
import { COLUMN_MAX, useUi, type EntryView } from '../state/ui.ts';
import { relativeLoc, type Column } from './columns.ts';
import { CELL_PADDING, useObservedWidth, type ColumnWidths } from './widths.ts';
/** One arrow-key press of a column separator; with Shift, four. */
const KEY_STEP = 16;

/**
 * What a cell is in the grid's keyboard model: row -1 is the header row. The grid has one Tab stop, the active cell
 * (`tabIndex` 0, every other cell -1), found again by `data-cell` when focus moves.
 */
export const cellKey = (row: number, col: number) => `${row}:${col}`;

export function HeaderRow({
  columns,
  view,
  widths,
  activeCol,
  onSort,
}: {
  columns: Column[];
  view: EntryView;
  widths: ColumnWidths;
  /** The column of the grid's Tab stop when it is in this row, else null. */
  activeCol: number | null;
  onSort(key: EntrySortKey): void;
}) {
  return (
    <div role="rowgroup" className="thead">
      <div role="row" aria-rowindex={1} className="tr th-row">
        {columns.map((col, i) => (
          <ColumnHeader key={col.id} column={col} index={i} tabStop={activeCol === i} view={view} widths={widths} onSort={onSort} />
        ))}
      </div>
    </div>
  );
}

function ColumnHeader({
  column: col,
  index,
  tabStop,
  view,
  widths,
  onSort,
}: {
  column: Column;
  index: number;
  tabStop: boolean;
  view: EntryView;
  widths: ColumnWidths;
  onSort(key: EntrySortKey): void;
}) {
  const ref = useRef<HTMLSpanElement>(null);
  useObservedWidth(ref, (px) => widths.setRendered(col.id, px));
  const sorted = col.sort !== undefined && view.sort === col.sort;
  return (
    <span
      ref={ref}
      role="columnheader"
      aria-sort={col.sort ? (sorted ? (view.descending ? 'descending' : 'ascending') : 'none') : undefined}
      aria-colindex={index + 1}
      aria-describedby={tabStop ? HEADER_KEYS_ID : undefined}
      className={`th th-${col.id}${col.numeric ? ' c-num' : ''}`}
      data-cell={cellKey(-1, index)}
      tabIndex={tabStop ? 0 : -1}
    >
      {col.sort ? (
        // The header cell has the focus and sorts on Enter (EntriesTable); the button is the mouse's.
        <button type="button" className="th-button" tabIndex={-1} onClick={() => onSort(col.sort!)}>
          {col.title}
          <span className={`sort-mark${sorted ? '' : ' unsorted'}`} aria-hidden="true">
            {sorted && view.descending ? '▼' : '▲'}
          </span>
        </button>
      ) : (
        <span className="th-text">{col.title}</span>
      )}
      <ColumnResizer column={col} widths={widths} header={ref} />
    </span>
  );
}

/** The hint a header cell carries for a screen reader: how to sort and how to resize, which no role says. */
export const HEADER_KEYS_ID = 'entries-header-keys';

/**
 * The edge of a column header: dragged with the mouse, or focused (F2 from its header cell, not a Tab stop of its
 * own) and moved with Left/Right (Shift: bigger steps); a double click or Enter gives the column its default width
 * back; Escape or F2 goes back to the header cell. What it sets is kept across restarts.
 */
function ColumnResizer({
  column: col,
  widths,
  header,
}: {
  column: Column;
  widths: ColumnWidths;
  header: RefObject<HTMLSpanElement | null>;
}) {
  const setColumnWidth = useUi((s) => s.setColumnWidth);
  const min = widths.min[col.id] ?? 40;
  const now = widths.rendered[col.id] ?? widths.defaults[col.id] ?? min;
  const current = () => Math.round(header.current?.getBoundingClientRect().width ?? now);
  const set = (px: number) => setColumnWidth(col.id, Math.max(min, Math.round(px)));

  function onPointerDown(event: PointerEvent<HTMLSpanElement>) {
    event.preventDefault();
    event.stopPropagation();
    const startX = event.clientX;
    const start = current();
    const target = event.currentTarget;
    target.setPointerCapture(event.pointerId);
    target.focus({ preventScroll: true });
    const move = (e: globalThis.PointerEvent) => set(start + e.clientX - startX);
    const up = () => {
      target.removeEventListener('pointermove', move);
      target.removeEventListener('pointerup', up);
      target.removeEventListener('pointercancel', up);
    };
    target.addEventListener('pointermove', move);
    target.addEventListener('pointerup', up);
    target.addEventListener('pointercancel', up);
  }

  function onKeyDown(event: KeyboardEvent<HTMLSpanElement>) {
    const step = event.shiftKey ? KEY_STEP * 4 : KEY_STEP;
    if (event.key === 'ArrowRight') set(current() + step);
    else if (event.key === 'ArrowLeft') set(current() - step);
    else if (event.key === 'Home') set(min);
    else if (event.key === 'Enter') setColumnWidth(col.id, null);
    else if (event.key === 'Escape' || event.key === 'F2') header.current?.focus();
    else return;
    event.preventDefault();
    event.stopPropagation();
  }

  return (
    <span
      role="separator"
      aria-orientation="vertical"
      aria-label={`Resize column ${col.title}`}
      aria-valuenow={now}
      aria-valuemin={min}
      aria-valuemax={COLUMN_MAX}
      title="Drag to resize; double-click for the default width"
      tabIndex={-1}
      className="col-resizer"
      onPointerDown={onPointerDown}
      onKeyDown={onKeyDown}
      onDoubleClick={() => setColumnWidth(col.id, null)}
      onClick={(e) => e.stopPropagation()}
    />
  );
}

/** A URI or path cut in the middle to fit its column; the whole value is in the title (and read out). */
function Middle({ text, full, width }: { text: string; full: string; width: number | undefined }) {
  const shown = width === undefined ? text : middleEllipsis(text, width - CELL_PADDING, monoFont());
  if (shown === text) return <>{text}</>;
  return (
    <>
      <span aria-hidden="true">{shown}</span>
      <span className="sr-only">{full}</span>
    </>
  );
}

/** What one cell shows; a row whose page is on its way shows its number in the first cell and nothing else. */
function cellContent(col: Column, entry: Entry, prefix: string, widths: ColumnWidths): { className: string; title?: string; content: ReactNode } {
  const md = entry.md;
  switch (col.id) {
    case 'index':
      return { className: 'c-index c-num', content: entry.index + 1 };
    case 'loc': {
      const rel = relativeLoc(entry.loc, prefix);
      return { className: 'c-loc', title: entry.loc, content: <Middle text={rel} full={rel} width={widths.rendered.loc} /> };
    }
    case 'path':
      return { className: 'c-path', title: md.path, content: md.path ? <Middle text={md.path} full={md.path} width={widths.rendered.path} /> : '' };
    case 'change':
      return { className: 'c-change', content: md.change ? <span className={`chg chg-${md.change}`}>{md.change}</span> : '' };
    case 'length':
      return { className: 'c-length c-num', title: md.length, content: formatLength(md.length) };
    case 'lastmod':
    case 'datetime':
      return { className: `c-${col.id} c-date`, content: col.text(entry) };
    case 'capability':
      return {
        className: 'c-capability',
        content: md.capability ? <><span className={`cap-dot cap-${md.capability}`} aria-hidden="true" /> {md.capability}</> : '',
      };
    default: {
      const text = col.text(entry);
      return { className: `c-${col.id}`, title: text || undefined, content: text };
    }
  }
}

/**
 * The cells of row `row`. They keep their elements when the row's entry arrives (same keys, same tags), so a cell
 * focused while its page was on its way keeps the focus.
 */
export function Cells({
  row,
  entry,
  columns,
  prefix,
  widths,
  activeCol,
}: {
  row: number;
  entry: Entry | undefined;
  columns: Column[];
  prefix: string;
  widths: ColumnWidths;
  /** The column of the grid's Tab stop when it is in this row, else null. */
  activeCol: number | null;
}) {
  return (
    <>
      {columns.map((col, i) => {
        const cell = entry ? cellContent(col, entry, prefix, widths) : { className: i === 0 ? 'c-num' : '', content: i === 0 ? row + 1 : i === 1 ? '…' : '' };
        return (
          <span
            key={col.id}
            role="gridcell"
            aria-colindex={i + 1}
            className={cell.className}
            title={cell.title}
            data-cell={cellKey(row, i)}
            tabIndex={activeCol === i ? 0 : -1}
          >
            {cell.content}
          </span>
        );
      })}
    </>
  );
}
