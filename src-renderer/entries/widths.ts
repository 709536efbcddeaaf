// Widths of the entries table's columns: the person's own (kept across restarts), else defaults from the values.
import { useLayoutEffect, useRef, useState } from 'react';
import type { RefObject } from 'react';
import type { Entry } from '../../src-main/engine/documents/model.ts';
import { monoFont, textWidth } from '../lib/measure.ts';
import { relativeLoc, type Column, type ColumnId } from './columns.ts';

/** Columns that take what room is left, up to their widest value. */
const GROWS = new Set<ColumnId>(['loc', 'path', 'type', 'hash']);

/** Left + right padding of a cell (styles.css `.tr > span`). */
export const CELL_PADDING = 16;

export interface ColumnWidths {
  /** The width each column has now (px), measured from the header once laid out. */
  rendered: Partial<Record<ColumnId, number>>;
  /** The narrowest each column may be made: a column shown whole is never narrower than its widest value. */
  min: Partial<Record<ColumnId, number>>;
  /** Default width of each column, for a reset. */
  defaults: Partial<Record<ColumnId, number>>;
  template: string;
  total: number;
  setRendered(id: ColumnId, px: number): void;
}

/**
 * Column widths: the person's own (kept), else a default from the values (loc and path from their first page);
 * datetimes are never cut.
 */
export function useColumnWidths(
  columns: Column[],
  kept: Record<string, number>,
  firstRows: Entry[],
  rowsByPage: Map<number, Entry[]>,
  prefix: string,
  total: number,
): ColumnWidths {
  const [rendered, setRenderedState] = useState<Partial<Record<ColumnId, number>>>({});
  const font = monoFont();
  const sans = `12px ${typeof document === 'undefined' ? 'sans-serif' : getComputedStyle(document.body).fontFamily}`;
  const charOf = (col: Column) => textWidth('0', col.mono ? font : sans);

  // Widest value of each whole column among the rows loaded now.
  let loaded: Entry[] = [];
  for (const rows of rowsByPage.values()) loaded = loaded.concat(rows);
  const min: Partial<Record<ColumnId, number>> = {};
  /** What loc and path would need to show their widest value on the first page. */
  const grows: Partial<Record<ColumnId, number>> = {};
  const defaults: Partial<Record<ColumnId, number>> = {};
  for (const col of columns) {
    const header = textWidth(col.title, `600 ${sans}`) + 14 + CELL_PADDING;
    let widestShown = header;
    if (col.whole) for (const entry of loaded) widestShown = Math.max(widestShown, textWidth(col.text(entry), font) + CELL_PADDING);
    min[col.id] = Math.ceil(col.whole ? widestShown : Math.min(header, 48));
    let base = col.chars * charOf(col) + CELL_PADDING;
    if (col.id === 'index') base = String(total).length * charOf(col) + 22 + CELL_PADDING;
    if (GROWS.has(col.id)) {
      // As wide as the widest value of the first page when there is room; the default stays within reason, and
      // below it a value is cut (loc and path in the middle, where a URI says least).
      let widest = 0;
      for (const entry of firstRows) {
        const text = col.id === 'loc' ? relativeLoc(entry.loc, prefix) : col.text(entry);
        widest = Math.max(widest, textWidth(text, col.mono ? font : sans));
      }
      grows[col.id] = Math.ceil(widest + CELL_PADDING + 2);
      if (col.id === 'loc' || col.id === 'path') base = Math.min(Math.max(grows[col.id]!, 120), col.id === 'loc' ? 480 : 320);
    }
    defaults[col.id] = Math.ceil(Math.max(base, min[col.id]!));
  }
  const widthOf = (col: Column) => Math.max(kept[col.id] ?? defaults[col.id]!, min[col.id]!);
  // Unless the person set it, a growing column takes, when there is room, what its widest value needs; the room
  // left after that goes to an empty last track.
  const tracks = columns.map((col) => {
    const grow = grows[col.id];
    const w = widthOf(col);
    return kept[col.id] === undefined && grow !== undefined && grow > w ? `minmax(${w}px, ${grow}px)` : `${w}px`;
  });
  tracks.push('minmax(0, 1fr)');
  const sum = columns.reduce((n, col) => n + widthOf(col), 0);

  return {
    rendered,
    min,
    defaults,
    template: tracks.join(' '),
    total: sum,
    setRendered: (id, px) => setRenderedState((r) => (r[id] === px ? r : { ...r, [id]: px })),
  };
}

/** Measures an element's width as it changes (the loc column grows with the pane). */
export function useObservedWidth(ref: RefObject<HTMLElement | null>, onWidth: (px: number) => void): void {
  const latest = useRef(onWidth);
  latest.current = onWidth;
  useLayoutEffect(() => {
    const element = ref.current;
    if (!element) return;
    latest.current(Math.round(element.getBoundingClientRect().width));
    if (typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(() => latest.current(Math.round(element.getBoundingClientRect().width)));
    observer.observe(element);
    return () => observer.disconnect();
  }, [ref]);
}
