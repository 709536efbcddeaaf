import { memo, useEffect, useMemo, useRef, useState } from 'react';
import type { KeyboardEvent, MouseEvent } from 'react';
import { useBridgeEvent, useSummary } from '../data/queries.ts';
import { errorMessage } from '../bridge/index.ts';
import { capabilityLabel, isChangeCapability } from '../lib/capabilities.ts';
import { formatCount, hostOf, urlPath } from '../lib/format.ts';
import { useSeen } from '../lib/hooks.ts';
import { useUi } from '../state/ui.ts';
import type { NodeRef } from '../state/ui.ts';
import { FindingsBadge } from '../common/FindingsBadge.tsx';
import { Spinner } from '../common/Spinner.tsx';
import { timeSpan } from '../common/timeSpan.ts';
import { childNodes, hasTreeChildren, levelOf } from './nodes.ts';

/** Indexes may name thousands of parts; the tree shows them in slices. */
const CHILD_SLICE = 500;

interface Props {
  node: NodeRef;
  posinset: number;
  setsize: number;
  /** The tree's first item: its tab stop while no item is focused or selected. */
  first?: boolean;
}

/**
 * Memoized, with each node watching only whether it is the tab stop: an index of 10,000 parts re-rendered all
 * 10,000 items on every move of the focus (seconds per key press) while the tab stop was a prop of every node.
 */
export const TreeNode = memo(function TreeNode({ node, posinset, setsize, first = false }: Props) {
  const itemRef = useRef<HTMLDivElement>(null);
  const rowRef = useRef<HTMLDivElement>(null);
  const seen = useSeen(rowRef);
  const expanded = useUi((s) => s.expanded[node.id] === true);
  const selected = useUi((s) => s.node?.id === node.id);
  const tabStop = useUi((s) => {
    const id = s.focusedId ?? s.node?.id ?? null;
    return id === null ? first : id === node.id;
  });
  const { setExpanded, setFocused, selectNode } = useUi.getState();
  const summary = useSummary(node.channel ? null : node.url, seen || expanded || selected);
  const [progress, setProgress] = useState<number | null>(null);
  const [shown, setShown] = useState(CHILD_SLICE);
  /** The index of the child to focus once the next slice is shown (see showMore). */
  const focusAfterShowRef = useRef<number | null>(null);

  useBridgeEvent(
    'document.progress',
    (p) => {
      if (p.url === node.url) setProgress(p.entries);
    },
    summary.isFetching,
  );

  useEffect(() => {
    if (selected) rowRef.current?.scrollIntoView({ block: 'nearest' });
  }, [selected]);

  const view = summary.data;
  const expandable = node.channel ? false : view ? hasTreeChildren(view) : node.capability === 'description' || node.capability === 'capabilitylist';
  const level = levelOf(node.id);
  const labelId = `tn-${node.id.replaceAll('/', '-')}`;
  const groupId = `${labelId}-group`;

  useEffect(() => {
    const index = focusAfterShowRef.current;
    if (index === null) return;
    focusAfterShowRef.current = null;
    document.getElementById(groupId)?.querySelectorAll<HTMLElement>(':scope > li > [role=treeitem]')[index]?.focus();
  }, [shown, groupId]);
  const label = node.channel
    ? 'Change Notification channel'
    : capabilityLabel(view?.capability ?? node.capability, view?.isIndex ?? false);

  function select() {
    selectNode(node);
    setFocused(node.id);
    itemRef.current?.focus();
  }

  function toggle(event: MouseEvent) {
    event.stopPropagation();
    setExpanded(node.id, !expanded);
    setFocused(node.id);
    itemRef.current?.focus();
  }

  function onKeyDown(event: KeyboardEvent<HTMLDivElement>) {
    // Alt+Left is "Back" (app-wide), not a tree move.
    if (event.target !== event.currentTarget || event.altKey) return;
    const item = event.currentTarget;
    switch (event.key) {
      case 'Enter':
      case ' ':
        selectNode(node);
        break;
      case 'ArrowRight':
        if (!expandable) break;
        if (!expanded) setExpanded(node.id, true);
        else document.getElementById(groupId)?.querySelector<HTMLElement>(':scope > li > [role=treeitem]')?.focus();
        break;
      case 'ArrowLeft':
        if (expandable && expanded) setExpanded(node.id, false);
        else item.parentElement?.parentElement?.closest('li')?.querySelector<HTMLElement>(':scope > [role=treeitem]')?.focus();
        break;
      default:
        return;
    }
    event.preventDefault();
    event.stopPropagation();
  }

  // The same objects from render to render, so that the memoized children do not render again.
  const children = useMemo(() => (view && expanded ? childNodes(node, view) : []), [node, view, expanded]);

  function showMore() {
    // Focus goes to the first child the slice shows (the item that showed it is gone after the last slice).
    focusAfterShowRef.current = shown;
    setShown((n) => n + CHILD_SLICE);
  }
  const span = view ? timeSpan(view) : null;

  // The treeitem holds only its own row, so its name (from its content) is exactly what the row shows; its
  // children's group is a sibling it owns (aria-owns), not part of its text.
  return (
    <li role="none" className="tree-node">
    <div
      ref={itemRef}
      role="treeitem"
      aria-level={level}
      aria-posinset={posinset}
      aria-setsize={setsize}
      aria-selected={selected}
      aria-expanded={expandable ? expanded : undefined}
      aria-owns={expandable && expanded ? groupId : undefined}
      aria-busy={summary.isFetching || undefined}
      tabIndex={tabStop ? 0 : -1}
      data-node-id={node.id}
      className="tree-item"
      onFocus={(e) => {
        if (e.target === e.currentTarget) setFocused(node.id);
      }}
      onKeyDown={onKeyDown}
    >
      <div
        ref={rowRef}
        className={`tree-row${selected ? ' selected' : ''}`}
        style={{ paddingLeft: 6 + (level - 1) * 16 }}
        onClick={select}
        onDoubleClick={(e) => expandable && toggle(e)}
      >
        <span className="twisty" aria-hidden="true" onClick={expandable ? toggle : undefined}>
          {expandable ? (expanded ? '▾' : '▸') : ''}
        </span>
        <span className="tree-main">
          <span className="tree-line1">
            <span className={`cap-dot cap-${node.channel ? 'channel' : (view?.capability ?? node.capability ?? 'unknown')}`} aria-hidden="true" />
            <span id={labelId} className="tree-label">{label}</span>
            {view && <FindingsBadge findings={view.findings} />}
            {view && view.open !== null && isChangeCapability(view.capability) && (
              <span className={`pill ${view.open ? 'pill-open' : 'pill-closed'}`}>{view.open ? 'open' : 'closed'}</span>
            )}
            <span className="tree-count">
              {summary.isFetching && !view ? (
                <>
                  <Spinner />
                  {progress !== null && <span className="muted"> {formatCount(progress)}</span>}
                </>
              ) : view ? (
                <span title={`${formatCount(view.entries)} entries`}>{formatCount(view.entries)}</span>
              ) : null}
            </span>
          </span>
          <span className={`tree-line2${summary.isError ? ' tree-line2-error' : ''}`} title={span?.title ? `${node.url}\n${span.title}` : node.url}>
            {node.channel ? (
              <>hub {node.hub ? hostOf(node.hub) : 'missing'} · not fetched</>
            ) : summary.isError ? (
              <span className="error-text">✗ {errorMessage(summary.error)}</span>
            ) : (
              <>
                <span className="tree-url">{urlPath(node.url)}</span>
                {span?.text ? <span className="muted"> · {span.text}</span> : null}
              </>
            )}
          </span>
        </span>
        {summary.isError && (
          <button
            type="button"
            className="btn-small"
            onClick={(e) => {
              e.stopPropagation();
              void summary.refetch();
            }}
          >
            Retry
          </button>
        )}
      </div>
    </div>
      {expandable && expanded && (
        <ul role="group" id={groupId}>
          {!view ? (
            <li role="none" className="tree-note" style={{ paddingLeft: 22 + level * 16 }}>
              {summary.isError ? 'Could not load this document' : 'Loading…'}
            </li>
          ) : children.length === 0 ? (
            <li role="none" className="tree-note" style={{ paddingLeft: 22 + level * 16 }}>
              No documents listed
            </li>
          ) : (
            <>
              {children.slice(0, shown).map((child, i) => (
                <TreeNode key={child.id} node={child} posinset={i + 1} setsize={children.length} />
              ))}
              {children.length > shown && (
                <li role="none" className="tree-note" style={{ paddingLeft: 22 + level * 16 }}>
                  {/* A tree holds tree items only (a button inside is lost to a screen reader's tree navigation): the
                      next slice is an item of its own, reached with the arrows like the children, opened with Enter. */}
                  <div
                    role="treeitem"
                    aria-level={level + 1}
                    aria-selected={false}
                    tabIndex={-1}
                    className="btn-small tree-more"
                    onClick={showMore}
                    onKeyDown={(e) => {
                      if (e.key === 'Enter' || e.key === ' ') showMore();
                      else if (e.key === 'ArrowLeft') itemRef.current?.focus();
                      else return;
                      e.preventDefault();
                      e.stopPropagation();
                    }}
                  >
                    Show {formatCount(Math.min(CHILD_SLICE, children.length - shown))} more of {formatCount(children.length - shown)}
                    {view.childrenLeftOut !== undefined && ` (${formatCount(view.childrenLeftOut)} more only in the entries table)`}
                  </div>
                </li>
              )}
              {children.length <= shown && view.childrenLeftOut !== undefined && (
                <li role="none" className="tree-note" style={{ paddingLeft: 22 + level * 16 }}>
                  {formatCount(view.childrenLeftOut)} more not shown in the tree; the entries table lists them all
                </li>
              )}
            </>
          )}
        </ul>
      )}
    </li>
  );
});
