import { useState } from 'react';
import { errorMessage } from '../bridge/index.ts';
import { Spinner } from '../common/Spinner.tsx';
import type { MirrorProgress, MirrorRun } from '../../src-main/contract/types.ts';
import { formatCount } from '../lib/format.ts';
import { useMirrorUi } from '../state/mirror.ts';
import { failureReason, runKind } from './format.ts';
import { useFailures } from './queries.ts';
import { ScrollBox } from './ScrollBox.tsx';

/** The folder as a shell takes it, whatever it holds (spaces, quotes). */
function shellQuote(path: string): string {
  return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}

/**
 * The failures of one run (by default the last one that had any). Retry fetches again just that resource, Retry all
 * failed just the run's failures: each is a run of its own (mode retry), the rest of the mirror is not touched.
 */
export function FailuresTable({
  path,
  runs,
  live = null,
  onRetry,
  canRetry,
}: {
  path: string;
  runs: MirrorRun[];
  /** The progress of the run going on: its failures show while it runs, not only once its batches are recorded. */
  live?: MirrorProgress | null;
  onRetry(runId: number, uris?: string[]): void;
  canRetry: boolean;
}) {
  const chosen = useMirrorUi((s) => s.failuresRun);
  const showFailures = useMirrorUi((s) => s.showFailures);
  const runningId = live !== null && live.kind === 'sync' ? runs.findLast((r) => r.status === 'running')?.id : undefined;
  const counted = runs.map((r) => (r.id === runningId ? { ...r, failed: Math.max(r.failed, live!.failed) } : r));
  const withFailures = counted.filter((r) => r.failed > 0);
  const runId = chosen ?? withFailures[0]?.id ?? null;
  const failures = useFailures(path, runId, runId !== null && runId === runningId);
  // A text to find one resource (or one kind of failure) among a thousand.
  const [text, setText] = useState('');
  if (withFailures.length === 0) return <p className="empty ok-text">✓ No run of this mirror has failures.</p>;
  const run = counted.find((r) => r.id === runId);
  const open = failures.data?.open ?? run?.failed ?? 0;
  const listed = failures.data?.failures ?? [];
  const needle = text.trim().toLowerCase();
  const shown = needle === '' ? listed : listed.filter((f) => f.uri.toLowerCase().includes(needle) || failureReason(f.uri, f.reason).toLowerCase().includes(needle));
  const total = failures.data?.total ?? 0;
  const of = total > listed.length ? `the first ${formatCount(listed.length)} of ${formatCount(total)} failures` : `${formatCount(listed.length)} ${listed.length === 1 ? 'failure' : 'failures'}`;
  return (
    <div className="mirror-failures">
      <div className="mirror-filters">
        <label>
          Run{' '}
          <select value={runId ?? ''} onChange={(e) => showFailures(Number(e.target.value))}>
            {withFailures.map((r) => (
              <option key={r.id} value={r.id}>
                #{r.id} {runKind(r)}: {formatCount(r.failed)} failed
              </option>
            ))}
          </select>
        </label>
        {run && run.kind !== 'audit' && (
          <button
            type="button"
            className="btn-secondary failures-retry-all"
            onClick={() => onRetry(run.id)}
            disabled={!canRetry || open === 0}
            title={open === 0 ? 'Every resource that failed in this run has been mirrored since' : 'Fetch again only the resources that failed in this run and have not been mirrored since'}
          >
            Retry all failed ({formatCount(open)})
          </button>
        )}
        {listed.length > 1 && (
          <span className="mirror-filter-text" role="search" aria-label="Filter the failures">
            <input type="search" aria-label="Filter the failures by text" placeholder="Filter by URI or reason" value={text} onChange={(e) => setText(e.target.value)} />
            <span className="muted" aria-live="polite">
              {needle === '' ? '' : `${formatCount(shown.length)} of ${of}`}
            </span>
          </span>
        )}
      </div>
      {failures.isPending ? (
        <div className="empty"><Spinner /> Reading the failures…</div>
      ) : failures.isError ? (
        <div className="alert alert-error" role="alert">Could not read the failures: {errorMessage(failures.error)}</div>
      ) : (
        <ScrollBox label={`Failures of run ${runId}`}>
          <table className="grid-table mirror-table" aria-label={`Failures of run ${runId}`}>
            <thead>
              <tr>
                <th scope="col">resource</th>
                <th scope="col">why</th>
                {run && run.kind !== 'audit' && <th scope="col"><span className="sr-only">action</span></th>}
              </tr>
            </thead>
            <tbody>
              {shown.map((f, i) => (
                <tr key={i} className={f.fixedBy !== null ? 'fixed' : undefined}>
                  <td className="mono wrap">{f.uri}</td>
                  <td className="wrap">
                    {failureReason(f.uri, f.reason)}
                    {f.fixedBy !== null && (
                      <span className="ok-text">{f.gone ? ` — deleted at the Source since (found by run #${f.fixedBy})` : ` — mirrored since, by run #${f.fixedBy}`}</span>
                    )}
                  </td>
                  {run && run.kind !== 'audit' && (
                    <td className="cell-action">
                      {f.fixedBy === null && <button
                        type="button"
                        className="btn-small"
                        onClick={() => onRetry(run.id, [f.uri])}
                        disabled={!canRetry || f.uri === ''}
                        aria-label={`Retry ${f.uri}`}
                      >
                        Retry
                      </button>}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
          {shown.length === 0 && <p className="empty">Nothing matches the filter.</p>}
          {failures.data.total > failures.data.failures.length && (
            <p className="empty">
              {/* One run of text: the paragraph's flex layout put each part in a column of its own. */}
              <span>
                Showing the first {formatCount(failures.data.failures.length)} of {formatCount(failures.data.total)} failures;{' '}
                <code className="wrap">rsdesk runs --dest {shellQuote(path)} --json</code> lists them all.
              </span>
            </p>
          )}
        </ScrollBox>
      )}
    </div>
  );
}
