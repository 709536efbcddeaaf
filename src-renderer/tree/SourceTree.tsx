import { useLayoutEffect, useMemo, useRef } from 'react';
import type { KeyboardEvent } from 'react';
import type { SavedSource } from '../../src-main/contract/types.ts';
import { useUi } from '../state/ui.ts';
import { sourceRoots } from './nodes.ts';
import { TreeNode } from './TreeNode.tsx';

/** What was typed for type-ahead, and when: keys typed within TYPE_AHEAD_MS of each other make one search. */
const typed = { text: '', at: 0 };
const TYPE_AHEAD_MS = 700;

/** An item's name as type-ahead compares it: its label ("Resource List", "Change List Index"…), the row's first words. */
function itemName(item: HTMLElement): string {
  return (item.querySelector('.tree-label')?.textContent ?? item.textContent ?? '').trim().toLowerCase();
}

/**
 * Up/Down/Home/End move between visible items in document order; a printable character moves to the next visible
 * item whose name starts with it (characters typed in quick succession: with all of them), as the WAI-ARIA tree
 * pattern's type-ahead does; Left/Right/Enter are handled per node.
 */
function onTreeKeyDown(event: KeyboardEvent<HTMLUListElement>) {
  const keys = ['ArrowDown', 'ArrowUp', 'Home', 'End'];
  const printable = event.key.length === 1 && !event.ctrlKey && !event.metaKey && !event.altKey;
  if (!(keys.includes(event.key) && !event.altKey) && !printable) return;
  // Space selects (the item's own key, as Enter): it is not typed ahead.
  if (event.key === ' ') return;
  const items = Array.from(event.currentTarget.querySelectorAll<HTMLElement>('[role=treeitem]'));
  if (items.length === 0) return;
  const current = (event.target as HTMLElement).closest<HTMLElement>('[role=treeitem]');
  const at = current ? items.indexOf(current) : -1;
  let next: HTMLElement | undefined;
  if (printable) {
    typed.text = event.timeStamp - typed.at > TYPE_AHEAD_MS ? event.key.toLowerCase() : typed.text + event.key.toLowerCase();
    typed.at = event.timeStamp;
    // One character looks past the current item (pressing it again goes on to the next); more, from the current one.
    const from = typed.text.length === 1 ? at + 1 : Math.max(at, 0);
    for (let i = 0; i < items.length && !next; i++) {
      const item = items[(from + i) % items.length]!;
      if (itemName(item).startsWith(typed.text)) next = item;
    }
  } else if (event.key === 'ArrowDown') next = items[Math.min(at + 1, items.length - 1)];
  else if (event.key === 'ArrowUp') next = items[Math.max(at - 1, 0)];
  else if (event.key === 'Home') next = items[0];
  else next = items[items.length - 1];
  event.preventDefault();
  next?.focus();
}

export function SourceTree({ source }: { source: SavedSource }) {
  const treeRef = useRef<HTMLUListElement>(null);
  // The same node objects from render to render: the memoized nodes then render again only for what concerns them.
  const roots = useMemo(() => sourceRoots(source), [source]);
  // Watched only to look again, after each move, that some item is reachable by Tab (below).
  const focusedId = useUi((s) => s.focusedId);
  const selectedId = useUi((s) => s.node?.id ?? null);

  // The roving tab stop may name a node that is no longer shown; keep the tree reachable by Tab anyway.
  useLayoutEffect(() => {
    const tree = treeRef.current;
    if (tree && !tree.querySelector('[role=treeitem][tabindex="0"]')) {
      tree.querySelector('[role=treeitem]')?.setAttribute('tabindex', '0');
    }
  }, [focusedId, selectedId, roots]);

  if (roots.length === 0) {
    return <p className="empty">Discovery found no Source Description or Capability List for this Source.</p>;
  }
  return (
    <ul ref={treeRef} role="tree" aria-label={`Documents of ${source.name}`} className="tree" onKeyDown={onTreeKeyDown}>
      {roots.map((node, i) => (
        <TreeNode key={node.id} node={node} posinset={i + 1} setsize={roots.length} first={i === 0} />
      ))}
    </ul>
  );
}
