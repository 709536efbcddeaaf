import { Fragment } from 'react';
import type { MirrorProgress, MirrorRun } from '../../src-main/contract/types.ts';
import { formatBytes, formatCount } from '../lib/format.ts';
import { useMirrorUi } from '../state/mirror.ts';
import { formatWhen, runKind, runSeconds, runStatus, tookText } from './format.ts';
import { ScrollBox } from './ScrollBox.tsx';

/**
 * Every run of the mirror's journal, newest first. A number column each where the pane is wide; where it is not (a
 * 1024 px window) the numbers share one column, each with its word ("19 created, 1 failed"), so the table fits
 * without scrolling sideways (styles.css picks by the box's width; the other set is display:none, out of the
 * accessibility tree too).
 */
export function RunHistory({ runs, live = null }: { runs: MirrorRun[]; live?: MirrorProgress | null }) {
  const showFailures = useMirrorUi((s) => s.showFailures);
  // `word` when the number is not under its column's name: the button then says what it counts.
  const failed = (run: MirrorRun, word = '') =>
    run.failed > 0 ? (
      <button type="button" className="link-button" onClick={() => showFailures(run.id)} aria-label={`${formatCount(run.failed)} failed: show the failures of run ${run.id}`}>
        {formatCount(run.failed)}
        {word}
      </button>
    ) : (
      `0${word}`
    );
  if (runs.length === 0) return <p className="empty">No runs yet.</p>;
  // The run under way counts what its progress says: its recorded counts lag behind, batch by batch.
  const runningId = live !== null && live.kind === 'sync' ? runs.findLast((r) => r.status === 'running' && r.kind !== 'audit')?.id : undefined;
  return (
    <ScrollBox label="Run history" className="run-history-box">
      <table className="grid-table mirror-table" aria-label="Run history">
        <thead>
          <tr>
            <th scope="col">run</th>
            <th scope="col">started</th>
            <th scope="col">took</th>
            <th scope="col">outcome</th>
            <th scope="col" className="num run-wide">created</th>
            <th scope="col" className="num run-wide">updated</th>
            <th scope="col" className="num run-wide">deleted</th>
            <th scope="col" className="num run-wide">unchanged</th>
            <th scope="col" className="num run-wide">failed</th>
            <th scope="col" className="num run-wide">downloaded</th>
            <th scope="col" className="run-narrow">resources</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((recorded) => {
            // The larger of each: a resumed run's record holds its earlier sessions too, the progress only this one.
            const run: MirrorRun =
              recorded.id === runningId && live !== null
                ? {
                    ...recorded,
                    created: Math.max(recorded.created, live.created),
                    updated: Math.max(recorded.updated, live.updated),
                    deleted: Math.max(recorded.deleted, live.deleted),
                    unchanged: Math.max(recorded.unchanged, live.unchanged),
                    failed: Math.max(recorded.failed, live.failed),
                    bytes: Math.max(recorded.bytes, live.bytesDone),
                  }
                : recorded;
            // The run under way: how long it has run so far (its pauses before this session apart), not a dash.
            const sofar =
              run.id === runningId && live !== null
                ? Math.max(live.elapsedSeconds, (Date.now() - Date.parse(run.startedAt)) / 1000 - (run.pausedSeconds ?? 0))
                : null;
            const took = sofar !== null ? `${tookText(run, sofar)} so far` : tookText(run, runSeconds(run));
            // "ran 10 s (stopped 12 s)" may take two lines, between its parts, not in the middle of one.
            const tookParts = took === null ? null : took.split(/ (?=\()/);
            return (
              <tr key={run.id} className={`run run-${run.status}`}>
                <td className="run-name">
                  #{run.id} {runKind(run)}
                </td>
                <td className="run-when" title={run.startedAt}>{formatWhen(run.startedAt)}</td>
                <td className="run-took">
                  {tookParts === null
                    ? '—'
                    : tookParts.map((part, i) => (
                        // The space between the parts is the cell's own: where the line may break.
                        <Fragment key={i}>
                          {i > 0 ? ' ' : ''}
                          <span>{part}</span>
                        </Fragment>
                      ))}
                </td>
                <td className="wrap run-outcome">
                  {runStatus(run)}
                  {/* An audit's "failed" are the differences it found, not failures: there is nothing to retry. */}
                  {run.kind === 'audit' && run.failed > 0 ? `: ${formatCount(run.failed)} ${run.failed === 1 ? 'difference' : 'differences'}` : null}
                  {run.message && (run.kind !== 'audit' || run.status === 'failed') && run.message !== 'Paused' ? <span className="muted"> · {run.message}</span> : null}
                </td>
                <td className="num run-wide">{run.kind === 'audit' ? '' : formatCount(run.created)}</td>
                <td className="num run-wide">{run.kind === 'audit' ? '' : formatCount(run.updated)}</td>
                <td className="num run-wide">{run.kind === 'audit' ? '' : formatCount(run.deleted)}</td>
                <td className="num run-wide">{formatCount(run.unchanged)}</td>
                <td className="num run-wide">{run.kind === 'audit' ? '' : failed(run)}</td>
                <td className="num run-wide">{run.kind === 'audit' ? '' : formatBytes(run.bytes)}</td>
                <td className="run-narrow run-counts">
                  {run.kind === 'audit' ? (
                    <span>{formatCount(run.unchanged)} unchanged</span>
                  ) : (
                    <>
                      <span>{formatCount(run.created)} created</span>, <span>{formatCount(run.updated)} updated</span>,{' '}
                      <span>{formatCount(run.deleted)} deleted</span>, <span>{formatCount(run.unchanged)} unchanged</span>,{' '}
                      <span>{failed(run, ' failed')}</span>, <span>{formatBytes(run.bytes)} downloaded</span>
                    </>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </ScrollBox>
  );
}
