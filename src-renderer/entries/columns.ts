// Which columns the entries table shows for a document, and how wide they start: the document's capability says
// which fields mean something (change/datetime for change documents, path for Manifests, capability for Source
// Descriptions and Capability Lists), its entries' shape says which are there at all; no column is always empty.
import type { EntryShape, EntrySortKey } from '../../src-main/contract/types.ts';
import type { Entry } from '../../src-main/engine/documents/model.ts';
import { formatLength } from '../lib/format.ts';
import { isChangeDocument, isManifest, isNavigational } from '../lib/capabilities.ts';

export type ColumnId = 'index' | 'loc' | 'capability' | 'lastmod' | 'change' | 'datetime' | 'length' | 'type' | 'hash' | 'path';

export interface Column {
  id: ColumnId;
  title: string;
  sort?: EntrySortKey;
  numeric?: boolean;
  /** Shown whole, never cut: the column is at least as wide as the widest value on screen. */
  whole?: boolean;
  /** Monospace (URIs, paths, datetimes, hashes): widths follow from a character count. */
  mono?: boolean;
  /** Default width in characters of the cell's font (loc and path size themselves from their values). */
  chars: number;
  /** The cell's text, for width measuring and the title. */
  text(entry: Entry): string;
}

const ALL: Record<ColumnId, Column> = {
  index: { id: 'index', title: '#', sort: 'index', numeric: true, chars: 5, text: (e) => String(e.index + 1) },
  loc: { id: 'loc', title: 'loc', sort: 'loc', mono: true, chars: 40, text: (e) => e.loc },
  capability: { id: 'capability', title: 'capability', chars: 16, text: (e) => e.md.capability ?? '' },
  lastmod: { id: 'lastmod', title: 'lastmod', sort: 'lastmod', whole: true, mono: true, chars: 20, text: (e) => e.lastmod ?? '' },
  change: { id: 'change', title: 'change', chars: 8, text: (e) => e.md.change ?? '' },
  datetime: { id: 'datetime', title: 'datetime', sort: 'datetime', whole: true, mono: true, chars: 20, text: (e) => e.md.datetime ?? '' },
  length: { id: 'length', title: 'length', sort: 'length', numeric: true, chars: 10, text: (e) => formatLength(e.md.length) },
  type: { id: 'type', title: 'type', chars: 16, text: (e) => e.md.type ?? '' },
  hash: { id: 'hash', title: 'hash', mono: true, chars: 24, text: (e) => e.md.hash ?? '' },
  path: { id: 'path', title: 'path', mono: true, chars: 28, text: (e) => e.md.path ?? '' },
};

export function columnsFor(capability: string | undefined, shape: EntryShape): Column[] {
  const has = (field: string) => (shape.fields as string[]).includes(field);
  const ids: ColumnId[] = ['index', 'loc'];
  if (isNavigational(capability) && has('capability')) ids.push('capability');
  if (isManifest(capability) && has('path')) ids.push('path');
  if (isChangeDocument(capability) && has('change')) ids.push('change');
  if (isChangeDocument(capability) && has('datetime')) ids.push('datetime');
  if (has('lastmod')) ids.push('lastmod');
  for (const id of ['length', 'type', 'hash'] as const) if (has(id)) ids.push(id);
  return ids.map((id) => ALL[id]);
}

/** What a `loc` shows in the table: the part after the document's common prefix (the full URI is in the title). */
export function relativeLoc(loc: string, prefix: string): string {
  return prefix !== '' && loc.startsWith(prefix) && loc.length > prefix.length ? loc.slice(prefix.length) : loc;
}
