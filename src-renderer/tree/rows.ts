// The tree as the rows it shows, in document order. Only rows near the viewport are rendered (an index may name
// 50,000 parts), so the keyboard, type-ahead and the scroll position all work on this list, not on the DOM. The
// list is built per expanded item, not per row: the siblings between two expanded items are one run, read row by
// row only when asked, so a rebuild (an item expanded, a view or a page of children arriving) costs the same for
// 50,000 children as for 5.
import type { DocumentView } from '../../src-main/contract/types.ts';
import { capabilityLabel } from '../lib/capabilities.ts';
import type { NodeRef } from '../state/ui.ts';
import { pendingChild } from './children.ts';
import { childNodes, hasTreeChildren } from './nodes.ts';

/** A tree item: a document (or a channel) of the Source. */
export interface ItemRow {
  kind: 'item';
  node: NodeRef;
  level: number;
  posinset: number;
  setsize: number;
  /** The row of the item's parent, -1 at the top. */
  parent: number;
}

/** A line under an expanded item that is not an item itself: loading, an error, nothing listed, children left out. */
export interface NoteRow {
  kind: 'note';
  key: string;
  level: number;
  text: string;
  parent: number;
}

export type TreeRow = ItemRow | NoteRow;

/** What the tree knows of a document: its view, or that fetching it failed, or neither yet. */
export type ViewState = { view: DocumentView | undefined; failed: boolean };

/** One row, or siblings `nodes[from..to)` (none of them expanded) on consecutive rows. */
type Segment =
  | { kind: 'row'; start: number; row: TreeRow }
  | { kind: 'run'; start: number; parentId: string; nodes: NodeRef[]; from: number; to: number; level: number; parent: number; view?: DocumentView };

export function isExpandable(node: NodeRef, view: DocumentView | undefined): boolean {
  if (node.channel) return false;
  return view ? hasTreeChildren(view) : node.capability === 'description' || node.capability === 'capabilitylist';
}

/** The item's name as its row begins: what type-ahead compares. */
export function nodeLabel(node: NodeRef, view: DocumentView | undefined): string {
  return node.channel ? 'Change Notification channel' : capabilityLabel(view?.capability ?? node.capability, view?.isIndex ?? false);
}

function parentIdOf(id: string): string {
  return id.slice(0, id.lastIndexOf('/'));
}

function positionOf(id: string): number {
  return Number(id.slice(id.lastIndexOf('/') + 1));
}

export class TreeRows {
  readonly count: number;
  /** URLs of the expanded items that are shown: their views make the rows, so the tree keeps them fetched and watched. */
  readonly expandedUrls: string[];
  #segments: Segment[];
  /** Rows of the items that are rows of their own (roots, expanded items and their neighbours' runs aside). */
  #rowOf: Map<string, number>;
  #runsOf: Map<string, Extract<Segment, { kind: 'run' }>[]>;

  constructor(segments: Segment[], count: number, expandedUrls: string[], rowOf: Map<string, number>) {
    this.#segments = segments;
    this.count = count;
    this.expandedUrls = expandedUrls;
    this.#rowOf = rowOf;
    this.#runsOf = new Map();
    for (const segment of segments) {
      if (segment.kind !== 'run') continue;
      const runs = this.#runsOf.get(segment.parentId) ?? [];
      runs.push(segment);
      this.#runsOf.set(segment.parentId, runs);
    }
  }

  #segmentAt(i: number): Segment {
    let low = 0;
    let high = this.#segments.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (this.#segments[mid]!.start <= i) low = mid;
      else high = mid - 1;
    }
    return this.#segments[low]!;
  }

  /** Rows made from runs, kept: the same row object at each render while scrolling, so memoized rows stay put. */
  #made = new Map<number, TreeRow>();

  at(i: number): TreeRow {
    const segment = this.#segmentAt(i);
    if (segment.kind === 'row') return segment.row;
    const made = this.#made.get(i);
    if (made) return made;
    const position = segment.from + i - segment.start;
    const { nodes, level, parent, view } = segment;
    const node = nodes[position] ?? pendingChild(segment.parentId, view!, position);
    const row: ItemRow = { kind: 'item', node, level, posinset: position + 1, setsize: nodes.length, parent };
    // A search over every row must not keep them all.
    if (this.#made.size >= 2_000) this.#made.clear();
    this.#made.set(i, row);
    return row;
  }

  /** The row's React key: the node id of an item (so a focused item keeps its element), the note's key. */
  keyAt(i: number): string {
    const segment = this.#segmentAt(i);
    if (segment.kind === 'row') return segment.row.kind === 'item' ? segment.row.node.id : segment.row.key;
    return `${segment.parentId}/${segment.from + i - segment.start}`;
  }

  /** The row of the item with this node id, when it is shown. */
  indexOf(id: string): number | undefined {
    const own = this.#rowOf.get(id);
    if (own !== undefined) return own;
    const position = positionOf(id);
    for (const run of this.#runsOf.get(parentIdOf(id)) ?? []) {
      if (position >= run.from && position < run.to) return run.start + position - run.from;
    }
    return undefined;
  }
}

/**
 * Depth first over the expanded items. `stateOf` reads what is cached; `childrenOf` keeps one array of child nodes
 * per view, so that rows keep their node objects (and memoized rows do not render again) across rebuilds.
 */
export function flattenTree(
  roots: NodeRef[],
  expanded: Record<string, boolean>,
  stateOf: (url: string) => ViewState,
  childrenOf: (node: NodeRef, view: DocumentView) => NodeRef[] = childNodes,
): TreeRows {
  // The expanded positions under each parent id: only those break a run of siblings.
  const expandedUnder = new Map<string, number[]>();
  for (const id of Object.keys(expanded)) {
    if (expanded[id] !== true) continue;
    const list = expandedUnder.get(parentIdOf(id)) ?? [];
    list.push(positionOf(id));
    expandedUnder.set(parentIdOf(id), list);
  }
  for (const list of expandedUnder.values()) list.sort((a, b) => a - b);

  const segments: Segment[] = [];
  const rowOf = new Map<string, number>();
  const expandedUrls: string[] = [];
  let count = 0;
  const push = (row: TreeRow) => {
    segments.push({ kind: 'row', start: count, row });
    if (row.kind === 'item') rowOf.set(row.node.id, count);
    return count++;
  };
  // `view`: the parent's, for the rows of children not read yet (holes in `nodes`).
  const add = (parentId: string, nodes: NodeRef[], level: number, parent: number, view?: DocumentView) => {
    let from = 0;
    const run = (to: number) => {
      if (to <= from) return;
      segments.push({ kind: 'run', start: count, parentId, nodes, from, to, level, parent, ...(view ? { view } : {}) });
      count += to - from;
    };
    for (const position of expandedUnder.get(parentId) ?? []) {
      const node = nodes[position];
      if (!node || node.channel || position < from) continue;
      const { view: own, failed } = stateOf(node.url);
      // Watched even when it cannot be told yet whether it has children (an index looks like a list until read):
      // its view arriving rebuilds the rows.
      expandedUrls.push(node.url);
      if (!isExpandable(node, own)) continue;
      run(position);
      const at = push({ kind: 'item', node, level, posinset: position + 1, setsize: nodes.length, parent });
      from = position + 1;
      const note = (suffix: string, text: string) => push({ kind: 'note', key: `${node.id}#${suffix}`, level: level + 1, text, parent: at });
      if (!own) note('state', failed ? 'Could not load this document' : 'Loading…');
      else {
        const children = childrenOf(node, own);
        if (children.length === 0) note('state', 'No documents listed');
        else add(node.id, children, level + 1, at, own);
        const left = own.children.length + (own.childrenLeftOut ?? 0) - children.length;
        if (left > 0) note('left-out', `${left.toLocaleString('en-US')} more not shown in the tree; the entries table lists them all`);
      }
    }
    run(nodes.length);
  };
  if (roots.length > 0) add(parentIdOf(roots[0]!.id), roots, 1, -1);
  return new TreeRows(segments, count, expandedUrls, rowOf);
}

/** The next item row from `from` in direction `step` (notes are skipped); `from` itself when there is none. */
export function nextItem(rows: TreeRows, from: number, step: 1 | -1): number {
  for (let i = from + step; i >= 0 && i < rows.count; i += step) if (rows.at(i).kind === 'item') return i;
  return from;
}

/**
 * Type-ahead (WAI-ARIA tree pattern): the next item after `from` whose name starts with `typed`, round to the
 * top; with more than one character typed, the current item counts too. The same character typed again and again
 * ("ccc") goes on to the next item starting with it each time, as the pattern's examples do: among parts of one name
 * ("Resource List" × 500) a search for "cc" found nothing and focus stayed on the first. -1 when no name starts with it.
 */
export function findByName(rows: TreeRows, from: number, typed: string, nameOf: (row: ItemRow) => string): number {
  if (typed.length > 1 && [...typed].every((c) => c === typed[0])) typed = typed[0]!;
  const start = typed.length === 1 ? from + 1 : Math.max(from, 0);
  for (let i = 0; i < rows.count; i++) {
    const at = (start + i) % rows.count;
    const row = rows.at(at);
    if (row.kind === 'item' && nameOf(row).toLowerCase().startsWith(typed)) return at;
  }
  return -1;
}
