// How Sources and fetched documents become tree nodes.
import type { ChildRef, DocumentView, SavedSource } from '../../src-main/contract/types.ts';
import { isDump, isNavigational } from '../lib/capabilities.ts';
import type { NodeRef } from '../state/ui.ts';

/** A Source's tree starts at its Source Description, or at its Capability Lists when it has none. */
export function sourceRoots(source: SavedSource): NodeRef[] {
  if (source.sourceDescriptionUrl) {
    return [{ id: `${source.id}/0`, url: source.sourceDescriptionUrl, capability: 'description' }];
  }
  return source.capabilityListUrls.map((url, i) => ({ id: `${source.id}/${i}`, url, capability: 'capabilitylist' }));
}

/**
 * Source Descriptions, Capability Lists and indexes have children; a dump has its Manifests as children besides its
 * entries (the packages); other lists have entries only (the table).
 */
export function hasTreeChildren(view: DocumentView): boolean {
  return view.children.length > 0 && (view.isIndex || isNavigational(view.capability) || isDump(view.capability));
}

export function childNodes(parent: NodeRef, view: DocumentView): NodeRef[] {
  if (!hasTreeChildren(view)) return [];
  return view.children.map((child, i) => childNode(parent, view, child, i));
}

/** The node of the parent's child at position `i` (its id is its path of positions from the root). */
export function childNode(parent: NodeRef, view: DocumentView, child: ChildRef, i: number): NodeRef {
  const capability = child.capability ?? child.md.capability;
  const hub = child.hub ?? child.links.find((l) => l.rel === 'hub')?.href;
  const channel = capability === 'change-notification' && view.capability === 'capabilitylist';
  return { id: `${parent.id}/${i}`, url: child.url, capability, channel, ...(hub ? { hub } : {}), ...(channel ? { list: view.url } : {}) };
}

/**
 * A view carries its first 10,000 children at most; an index's or a navigational document's other children are
 * its other entries, one each, which the tree reads page by page. A dump's children (its Manifests) are not its
 * entries: those left out stay counted only.
 */
export function pagedChildren(view: DocumentView): number {
  if (view.childrenLeftOut === undefined || !hasTreeChildren(view) || (!view.isIndex && isDump(view.capability))) return 0;
  return view.entries - view.children.length;
}

export function levelOf(id: string): number {
  return id.split('/').length - 1;
}

/**
 * Where a URL sits in the already-fetched part of the tree: the node and the ids to expand to show it.
 * Only cached documents are searched, so following a link never triggers a crawl.
 */
export function findInTree(
  url: string,
  roots: NodeRef[],
  viewOf: (url: string) => DocumentView | undefined,
): { node: NodeRef; ancestors: string[] } | null {
  const queue = roots.map((node) => ({ node, ancestors: [] as string[] }));
  const seen = new Set<string>();
  while (queue.length > 0) {
    const item = queue.shift()!;
    if (item.node.url === url) return item;
    if (seen.has(item.node.url) || item.node.channel) continue;
    seen.add(item.node.url);
    const view = viewOf(item.node.url);
    if (!view) continue;
    for (const child of childNodes(item.node, view)) {
      queue.push({ node: child, ancestors: [...item.ancestors, item.node.id] });
    }
  }
  return null;
}
