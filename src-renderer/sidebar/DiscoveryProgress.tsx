import { useEffect, useState } from 'react';
import type { Run } from './AddSource.tsx';

/** Seconds as people say them: "4 s", "1 min 05 s". */
export function formatElapsed(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, '0')} s`;
}

function useNow(intervalMs: number): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs]);
  return now;
}

/** While discovery runs: what it is fetching, for how long, and a way out. */
export function DiscoveryProgress({ run, onCancel }: { run: Run; onCancel(): void }) {
  const now = useNow(1000);
  const cancelling = run.outcome.kind === 'running' && run.outcome.cancelling === true;
  return (
    <div className="discovery-progress">
      <p className="discovery-fetching">
        <span className="spinner" aria-hidden="true" />
        {run.fetching ? (
          <>
            <span>Fetching </span>
            <span className="discovery-fetching-url">{run.fetching.url}</span>
            {now - run.fetching.since >= 2000 && <span className="muted"> for {formatElapsed(now - run.fetching.since)}</span>}
          </>
        ) : (
          <span>Starting…</span>
        )}
      </p>
      <div className="discovery-progress-foot">
        <span role="timer" aria-label="Time elapsed" className="muted">
          {formatElapsed(now - run.startedAt)} elapsed
        </span>
        <button type="button" className="btn-small" data-cancel="discovery" onClick={onCancel} aria-disabled={cancelling || undefined}>
          {cancelling ? 'Cancelling…' : 'Cancel'}
        </button>
      </div>
    </div>
  );
}
