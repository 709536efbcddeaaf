// How an entry of an index, a Source Description or a Capability List becomes a child in the tree: one rule for
// main (a view's first children) and the window (the rest, read page by page through documents.entries).
import type { ChildRef, DocumentSummary, Entry } from './types.ts';

export function childOf(entry: Entry, parent: Pick<DocumentSummary, 'isIndex' | 'capability'>): ChildRef {
  const child: ChildRef = { url: entry.loc, md: entry.md, links: entry.links };
  // The parts of an index are of the index's own kind unless they say otherwise.
  const capability = entry.md.capability ?? (parent.isIndex ? parent.capability : undefined);
  if (capability !== undefined) child.capability = capability;
  const hub = entry.links.find((link) => link.rel === 'hub')?.href;
  if (hub !== undefined) child.hub = hub;
  return child;
}
