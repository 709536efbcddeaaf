// What to unfold after a Source is added: its Source Description and Capability Lists (so their capabilities
// show), and the path to the pasted URL when that is itself a document of the Source (a list, an index part, a
// manifest…). Documents are fetched as the tree would fetch them when unfolded, within a small budget.
import type { DocumentView, SavedSource } from '../../src-main/contract/types.ts';
import type { NodeRef } from '../state/ui.ts';
import { childNodes, sourceRoots } from './nodes.ts';

export interface RevealPlan {
  /** Node ids to expand. */
  expand: string[];
  /** The pasted document's node, when it was found in the tree. */
  node: NodeRef | null;
}

/** Most documents fetched while looking for the pasted one. */
export const REVEAL_BUDGET = 25;

/**
 * target: the pasted URL and its capability, when it is a ResourceSync document. Only nodes that can lead to it
 * are opened: navigational documents, and children of the target's capability (an index of it) or its dump (a
 * manifest's).
 */
export async function planReveal(
  source: SavedSource,
  target: { url: string; capability: string } | null,
  viewOf: (url: string) => Promise<DocumentView | null>,
  budget = REVEAL_BUDGET,
): Promise<RevealPlan> {
  const expand: string[] = [];
  let node: NodeRef | null = null;
  let fetched = 0;
  const view = async (url: string): Promise<DocumentView | null> => {
    if (fetched >= budget) return null;
    fetched++;
    return viewOf(url);
  };
  const leadsToTarget = (capability: string | undefined) =>
    target !== null &&
    capability !== undefined &&
    (capability === target.capability || `${capability}-manifest` === target.capability);

  const queue = sourceRoots(source).map((n) => ({ node: n, ancestors: [] as string[] }));
  const seen = new Set<string>();
  while (queue.length > 0) {
    const item = queue.shift()!;
    if (target !== null && node === null && item.node.url === target.url) {
      node = item.node;
      expand.push(...item.ancestors);
    }
    const navigational = item.node.capability === 'description' || item.node.capability === 'capabilitylist';
    if (item.node.channel || seen.has(item.node.url) || (!navigational && (node !== null || !leadsToTarget(item.node.capability)))) continue;
    seen.add(item.node.url);
    const fetchedView = await view(item.node.url);
    if (fetchedView === null) continue;
    const children = childNodes(item.node, fetchedView);
    // Source Descriptions and Capability Lists unfold so every capability shows.
    if (navigational && children.length > 0) expand.push(item.node.id);
    for (const child of children) queue.push({ node: child, ancestors: [...item.ancestors, item.node.id] });
  }
  return { expand: [...new Set(expand)], node };
}
