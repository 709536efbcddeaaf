import { memo, useLayoutEffect, useRef, useState } from 'react';
import type { MouseEvent } from 'react';
import { useBridgeEvent, useSummary } from '../data/queries.ts';
import { errorMessage } from '../bridge/index.ts';
import { isChangeCapability } from '../lib/capabilities.ts';
import { formatCount, hostOf, urlPath } from '../lib/format.ts';
import { useUi } from '../state/ui.ts';
import { FindingsBadge } from '../common/FindingsBadge.tsx';
import { Spinner } from '../common/Spinner.tsx';
import { timeSpan } from '../common/timeSpan.ts';
import { isPending } from './children.ts';
import { isExpandable, nodeLabel } from './rows.ts';
import type { ItemRow } from './rows.ts';

interface Props {
  row: ItemRow;
  /** Position in the tree's rows, for the virtualizer's measuring. */
  index: number;
  /** Offset from the top of the tree, in px. */
  start: number;
  tabStop: boolean;
  /** Chosen while its page is on its way: it is selected once read (SourceTree). */
  wanted: boolean;
  onWant: (id: string) => void;
  expanded: boolean;
  /** False while the tree scrolls fast: rows only passing by do not fetch their documents. */
  fetch: boolean;
  measure: (element: Element | null) => void;
}

/**
 * One item of the tree, on its own line (the tree is flat in the DOM: level, position and set size say where the
 * item sits, as the WAI-ARIA tree pattern allows when not every item is in the DOM). Keys are the tree's.
 */
export const TreeNode = memo(function TreeNode({ row, index, start, tabStop, wanted, onWant, expanded, fetch, measure }: Props) {
  const { node, level } = row;
  const selected = useUi((s) => s.node?.id === node.id);
  const { setExpanded, setFocused, selectNode } = useUi.getState();
  const pending = isPending(node);
  const summary = useSummary(node.channel || pending ? null : node.url, fetch || expanded || selected);
  const [progress, setProgress] = useState<number | null>(null);
  // Measured again when the element stands at another position (rows above it came or went).
  const itemRef = useRef<HTMLLIElement>(null);
  useLayoutEffect(() => measure(itemRef.current), [index, measure]);

  useBridgeEvent(
    'document.progress',
    (p) => {
      if (p.url === node.url) setProgress(p.entries);
    },
    summary.isFetching,
  );

  const view = summary.data;
  const expandable = isExpandable(node, view);
  const labelId = `tn-${node.id.replaceAll('/', '-')}`;
  const label = nodeLabel(node, view);
  const span = view ? timeSpan(view) : null;

  function select(event: MouseEvent) {
    // A child not read yet has no document to show: it is selected once it is there.
    if (pending) onWant(node.id);
    else selectNode(node);
    setFocused(node.id);
    (event.currentTarget.parentElement as HTMLElement | null)?.focus({ preventScroll: true });
  }

  function toggle(event: MouseEvent) {
    event.stopPropagation();
    setExpanded(node.id, !expanded);
    setFocused(node.id);
    (event.currentTarget.closest('[role=treeitem]') as HTMLElement | null)?.focus({ preventScroll: true });
  }

  // The treeitem holds only its own row, so its name (from its content) is exactly what the row shows.
  return (
    <li role="none" className="tree-node" data-index={index} ref={itemRef} style={{ position: 'absolute', top: 0, left: 0, width: '100%', transform: `translateY(${start}px)` }}>
      <div
        role="treeitem"
        aria-level={level}
        aria-posinset={row.posinset}
        aria-setsize={row.setsize}
        aria-selected={selected}
        aria-expanded={expandable ? expanded : undefined}
        aria-busy={summary.isFetching || pending || undefined}
        tabIndex={tabStop ? 0 : -1}
        data-node-id={node.id}
        className="tree-item"
        onFocus={(e) => {
          if (e.target === e.currentTarget) setFocused(node.id);
        }}
      >
        <div
          className={`tree-row${selected ? ' selected' : ''}${wanted ? ' wanted' : ''}`}
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
              {pending ? (
                <span className="muted">{wanted ? 'Loading… it opens once read' : 'Loading…'}</span>
              ) : node.channel ? (
                <>hub {node.hub ? hostOf(node.hub) : 'missing'} · not fetched</>
              ) : summary.isError ? (
                <span className="error-text">✗ {errorMessage(summary.error)}</span>
              ) : (
                <>
                  <span className="tree-url">{urlPath(node.url)}</span>
                  {/* Each fact kept whole ("at 2025-01-01 00:00Z"): the line breaks between them, not inside a date. */}
                  {span?.text
                    ? span.text.split(' · ').map((part, i) => (
                        <span key={i} className="muted">
                          {' · '}
                          <span className="tree-fact">{part}</span>
                        </span>
                      ))
                    : null}
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
    </li>
  );
});
