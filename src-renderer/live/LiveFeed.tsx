import { useMemo, useRef } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useSources } from '../data/queries.ts';
import { ChangesChart } from './ChangesChart.tsx';
import { FeedAnnouncer } from './FeedAnnouncer.tsx';
import { matches, outcomeText, type FeedRow } from './feed.ts';
import { FEED_CAP, useLive, type ChangeFilter } from './state.ts';

const KIND_LABEL: Record<string, string> = {
  ping: 'Ping',
  gap: 'Gap',
  rejected: 'Refused',
  error: 'Error',
  note: 'Note',
  subscription: 'Subscription',
  sync: 'Sync',
};

function Row({ row }: { row: FeedRow }) {
  const at = new Date(row.at).toLocaleTimeString();
  if (row.kind === 'change') {
    const outcome = outcomeText(row.outcome);
    return (
      <>
        <span className="live-at">{at}</span>
        <span className={`live-change change-${row.change}`}>{row.change}</span>
        <span className="live-uri mono" title={row.uri}>{row.uri}</span>
        <span className="live-dt mono">{row.datetime ?? ''}</span>
        <span className={`live-outcome${row.outcome === 'failed' ? ' error-text' : ''}`} title={row.reason}>
          {outcome}
          {row.reason ? `: ${row.reason}` : ''}
        </span>
      </>
    );
  }
  return (
    <>
      <span className="live-at">{at}</span>
      <span className={`live-marker marker-${row.kind}`}>{KIND_LABEL[row.kind] ?? row.kind}</span>
      <span className="live-text">{row.text}</span>
    </>
  );
}

export function LiveFeed() {
  const rows = useLive((s) => s.rows);
  const dropped = useLive((s) => s.dropped);
  const paused = useLive((s) => s.paused);
  const held = useLive((s) => s.held.length);
  const origin = useLive((s) => s.origin);
  const change = useLive((s) => s.change);
  const { setPaused, setOrigin, setChange, clear } = useLive.getState();
  const sources = useSources().data ?? [];

  const origins = useMemo(() => {
    const seen = new Set<string>();
    for (const r of rows) if (r.origin) seen.add(r.origin);
    return [...seen].sort();
  }, [rows]);
  const nameOf = (o: string) => {
    const s = sources.find((x) => [x.startUrl, x.sourceDescriptionUrl, ...x.capabilityListUrls].some((u) => u && u.startsWith(o)));
    return s ? `${s.name} (${o})` : o;
  };
  const shown = useMemo(() => rows.filter((r) => matches(r, origin, change)), [rows, origin, change]);

  const scroller = useRef<HTMLDivElement>(null);
  // Keyed by row, not by place: a filter puts other rows at each place, and a size measured for one (a note of three
  // lines) laid the next over another.
  const virtual = useVirtualizer({ count: shown.length, getScrollElement: () => scroller.current, estimateSize: () => 30, overscan: 10, getItemKey: (i) => shown[i]!.key });

  return (
    <section className="live-section live-feed" aria-labelledby="live-feed-title">
      <h3 id="live-feed-title" className="live-h">Live feed</h3>
      <FeedAnnouncer />
      <div className="live-toolbar" role="toolbar" aria-label="Feed filters">
        <label>
          Source{' '}
          <select value={origin} onChange={(e) => setOrigin(e.target.value)}>
            <option value="">All Sources</option>
            {origins.map((o) => (
              <option key={o} value={o}>{nameOf(o)}</option>
            ))}
          </select>
        </label>
        <label>
          Show{' '}
          <select value={change} onChange={(e) => setChange(e.target.value as ChangeFilter)}>
            <option value="all">Everything</option>
            <option value="created">Created</option>
            <option value="updated">Updated</option>
            <option value="deleted">Deleted</option>
            <option value="failed">Failed changes and errors</option>
            <option value="other">Pings, gaps, refusals and errors</option>
          </select>
        </label>
        <button type="button" className="btn-small" aria-pressed={paused} onClick={() => setPaused(!paused)}>
          {paused ? 'Resume' : 'Pause'}
        </button>
        {/* aria-disabled, not disabled: once the feed is cleared, a disabled button dropped the focus to <body>. */}
        <button type="button" className="btn-small" onClick={() => rows.length > 0 && clear()} aria-disabled={rows.length === 0 || undefined}>
          Clear
        </button>
        {/* Not a live region: it changes with every batch, and read out each time it drowned the notes the
            announcer says (FeedAnnouncer). */}
        <span className="muted live-count">
          {paused ? `Paused: ${held} new event${held === 1 ? '' : 's'} waiting. ` : ''}
          {shown.length === rows.length ? `${rows.length} item${rows.length === 1 ? '' : 's'}` : `${shown.length} of ${rows.length} items`}
        </span>
      </div>
      {dropped > 0 && (
        <p className="live-dropped warning-text">
          {dropped.toLocaleString()} older item{dropped === 1 ? ' was' : 's were'} dropped: the feed keeps the newest {FEED_CAP.toLocaleString()}.
        </p>
      )}
      <ChangesChart rows={rows} />
      <div ref={scroller} className="live-scroll" tabIndex={0} role="region" aria-label="Feed items, newest first">
        {shown.length === 0 ? (
          <p className="empty">{rows.length === 0 ? 'Nothing has arrived yet. Notifications and pings show here as they come.' : 'Nothing matches the filters.'}</p>
        ) : (
          <ol className="live-list" style={{ height: virtual.getTotalSize() }}>
            {virtual.getVirtualItems().map((v) => {
              const row = shown[v.index];
              return (
                // Measured: a note wraps to as many lines as it needs, and the rows below it make room.
                <li key={row.key} ref={virtual.measureElement} data-index={v.index} className={`live-row row-${row.kind}`} style={{ transform: `translateY(${v.start}px)` }}>
                  <Row row={row} />
                </li>
              );
            })}
          </ol>
        )}
      </div>
    </section>
  );
}
