import { useEffect, useMemo, useState } from 'react';
import { perMinute, type FeedRow } from './feed.ts';

const MINUTES = 30;

/** Changes per minute over the last half hour: SVG bars, with the same numbers as text for screen readers. */
export function ChangesChart({ rows }: { rows: readonly FeedRow[] }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 15_000);
    return () => clearInterval(t);
  }, []);
  const buckets = useMemo(() => perMinute(rows, Math.max(now, Date.now()), MINUTES), [rows, now]);
  const max = Math.max(1, ...buckets.map((b) => b.count));
  const total = buckets.reduce((n, b) => n + b.count, 0);
  const last = buckets[buckets.length - 1]?.count ?? 0;
  const width = 300;
  const height = 60;
  const bar = width / MINUTES;
  const summary = `${total} change${total === 1 ? '' : 's'} in the last ${MINUTES} minutes, ${last} in this minute; the busiest minute had ${max === 1 && total === 0 ? 0 : max}.`;
  return (
    <figure className="live-chart">
      <svg viewBox={`0 0 ${width} ${height}`} width={width} height={height} role="img" aria-label={`Changes per minute. ${summary}`}>
        <line x1="0" y1={height - 0.5} x2={width} y2={height - 0.5} className="live-chart-axis" />
        {buckets.map((b, i) =>
          b.count > 0 ? (
            <rect key={b.start} x={i * bar + 1} width={bar - 2} y={height - (b.count / max) * (height - 4)} height={(b.count / max) * (height - 4)} className="live-chart-bar">
              <title>{`${new Date(b.start).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })}: ${b.count}`}</title>
            </rect>
          ) : null,
        )}
      </svg>
      <figcaption className="muted">Changes per minute (last {MINUTES} minutes): {summary}</figcaption>
    </figure>
  );
}
