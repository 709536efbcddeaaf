// The child nodes of each expanded item, kept from one build of the rows to the next (the same objects, so memoized
// rows do not render again), with the children a view does not carry read page by page from the entries.
import type { DocumentView, EntryPage } from '../../src-main/contract/types.ts';
import { childOf } from '../../src-main/contract/children.ts';
import { PAGE_SIZE } from '../data/queries.ts';
import type { NodeRef } from '../state/ui.ts';
import { childNode, childNodes, pagedChildren } from './nodes.ts';

/** A child whose entry has not been read yet: its row is in place (position, level, kind), its URL comes later. */
export interface PendingNode extends NodeRef {
  pending: { url: string; page: number };
}

export function isPending(node: NodeRef): node is PendingNode {
  return 'pending' in node;
}

/**
 * The row of a child whose page has not been read, made when asked (one object per row for 40,000 of them took
 * longer than the rest of expanding the index). It has the index's own kind, as its parts do unless they say.
 */
export function pendingChild(parentId: string, view: DocumentView, position: number): PendingNode {
  const pending: PendingNode = { id: `${parentId}/${position}`, url: '', pending: { url: view.url, page: Math.floor(position / PAGE_SIZE) } };
  if (view.isIndex) pending.capability = view.capability;
  return pending;
}

interface Kept {
  nodes: NodeRef[];
  /** Entry pages already read into `nodes`. */
  read: Set<number>;
}

export class ChildNodes {
  #kept = new WeakMap<DocumentView, Map<string, Kept>>();
  #pageOf: (url: string, page: number) => EntryPage | undefined;

  /** `pageOf`: a page of the document's entries in document order, when it has been read. */
  constructor(pageOf: (url: string, page: number) => EntryPage | undefined) {
    this.#pageOf = pageOf;
  }

  of(parent: NodeRef, view: DocumentView): NodeRef[] {
    let byParent = this.#kept.get(view);
    if (!byParent) this.#kept.set(view, (byParent = new Map()));
    let kept = byParent.get(parent.id);
    if (!kept) byParent.set(parent.id, (kept = { nodes: this.#initial(parent, view), read: new Set() }));
    const paged = pagedChildren(view);
    if (paged > 0) this.#fill(kept, parent, view);
    return kept.nodes;
  }

  /** The view's children, and room for the paged ones: holes, until their page is read (see pendingChild). */
  #initial(parent: NodeRef, view: DocumentView): NodeRef[] {
    const nodes = childNodes(parent, view);
    nodes.length += pagedChildren(view);
    return nodes;
  }

  #fill(kept: Kept, parent: NodeRef, view: DocumentView) {
    const first = view.children.length;
    for (let page = Math.floor(first / PAGE_SIZE); page * PAGE_SIZE < kept.nodes.length; page++) {
      if (kept.read.has(page)) continue;
      const data = this.#pageOf(view.url, page);
      if (!data) continue;
      kept.read.add(page);
      data.rows.forEach((entry) => {
        const i = entry.index;
        if (i >= first && i < kept.nodes.length) kept.nodes[i] = childNode(parent, view, childOf(entry, view), i);
      });
    }
  }
}
