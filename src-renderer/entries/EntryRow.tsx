// The entries table's header (sortable, resizable columns) and the cells of one row.
import { useRef } from 'react';
import type { KeyboardEvent, PointerEvent, RefObject } from 'react';
import type { EntrySortKey } from '../../src-main/contract/types.ts';
import type { Entry } from '../../src-main/engine/documents/model.ts';
import { formatLength } from '../lib/format.ts';
import { middleEllipsis, monoFont } from '../lib/measure.ts';
import { COLUMN_MAX, useUi, type EntryView } from '../state/ui.ts';
import { relativeLoc, type Column } from './columns.ts';
import { CELL_PADDING, useObservedWidth, type ColumnWidths } from './widths.ts';
/** One arrow-key press of a column separator; with Shift, four. */
const KEY_STEP = 16;

export function HeaderRow({
  columns,
  view,
  widths,
  onSort,
}: {
  columns: Column[];
  view: EntryView;
  widths: ColumnWidths;
  onSort(key: EntrySortKey): void;
}) {
  return (
    <div role="rowgroup" className="thead">
      <div role="row" aria-rowindex={1} className="tr th-row">
        {columns.map((col) => (
          <ColumnHeader key={col.id} column={col} view={view} widths={widths} onSort={onSort} />
        ))}
      </div>
    </div>
  );
}

function ColumnHeader({
  column: col,
  view,
  widths,
  onSort,
}: {
  column: Column;
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
      className={`th th-${col.id}${col.numeric ? ' c-num' : ''}`}
    >
      {col.sort ? (
        <button type="button" className="th-button" onClick={() => onSort(col.sort!)}>
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

/**
 * The edge of a column header: dragged with the mouse, or focused and moved with Left/Right (Shift: bigger steps);
 * a double click or Enter gives the column its default width back. What it sets is kept across restarts.
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
      tabIndex={0}
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

export function Cells({
  entry,
  columns,
  prefix,
  widths,
}: {
  entry: Entry;
  columns: Column[];
  prefix: string;
  widths: ColumnWidths;
}) {
  const md = entry.md;
  return (
    <>
      {columns.map((col) => {
        switch (col.id) {
          case 'index':
            return <span key={col.id} role="gridcell" className="c-index c-num">{entry.index + 1}</span>;
          case 'loc': {
            const rel = relativeLoc(entry.loc, prefix);
            return (
              <span key={col.id} role="gridcell" className="c-loc" title={entry.loc}>
                <Middle text={rel} full={rel} width={widths.rendered.loc} />
              </span>
            );
          }
          case 'path':
            return (
              <span key={col.id} role="gridcell" className="c-path" title={md.path}>
                {md.path ? <Middle text={md.path} full={md.path} width={widths.rendered.path} /> : ''}
              </span>
            );
          case 'change':
            return (
              <span key={col.id} role="gridcell" className="c-change">
                {md.change ? <span className={`chg chg-${md.change}`}>{md.change}</span> : ''}
              </span>
            );
          case 'length':
            return <span key={col.id} role="gridcell" className="c-length c-num" title={md.length}>{formatLength(md.length)}</span>;
          case 'lastmod':
          case 'datetime':
            return <span key={col.id} role="gridcell" className={`c-${col.id} c-date`}>{col.text(entry)}</span>;
          case 'capability':
            return (
              <span key={col.id} role="gridcell" className="c-capability">
                {md.capability ? <><span className={`cap-dot cap-${md.capability}`} aria-hidden="true" /> {md.capability}</> : ''}
              </span>
            );
          default: {
            const text = col.text(entry);
            return <span key={col.id} role="gridcell" className={`c-${col.id}`} title={text || undefined}>{text}</span>;
          }
        }
      })}
    </>
  );
}
