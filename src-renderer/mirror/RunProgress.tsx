import type { MirrorProgress } from '../../src-main/contract/types.ts';
import { Spinner } from '../common/Spinner.tsx';
import { formatBytes, formatCount } from '../lib/format.ts';
import { failureReason, formatDuration } from './format.ts';

const PHASE: Record<MirrorProgress['phase'], string> = {
  discovery: 'Finding the lists',
  lists: 'Reading the list and fetching',
  fetch: 'Fetching',
  finishing: 'Writing the last files to disk',
  audit: 'Comparing the mirror with the Source',
};

function percent(done: number, total: number): number {
  return total <= 0 ? 0 : Math.min(100, Math.floor((100 * done) / total));
}

/** A running sync: real progress bars (resources, and bytes when the list gives lengths), rate, time left, counters. */
export function RunProgress({ progress, pausedSeconds = 0, ranSeconds = null }: {
  progress: MirrorProgress;
  /** How long the run stood paused before this session (a resumed run), and how long it ran in all, when known. */
  pausedSeconds?: number;
  ranSeconds?: number | null;
}) {
  const p = progress;
  if (p.kind === 'audit') {
    return (
      <div className="run-progress" aria-live="polite">
        <p className="run-phase"><Spinner /> {PHASE.audit}…</p>
      </div>
    );
  }
  const state = p.cancelling ? 'Cancelling: stopping the downloads' : p.pausing ? 'Pausing: the downloads under way finish first' : PHASE[p.phase];
  // Until the list is read whole its total is not known: the bars say what is done, not a share of a guess.
  const known = p.totalKnown;
  const listing = known ? '' : `; ${formatCount(p.total)} listed so far, the list is still being read`;
  return (
    <div className="run-progress">
      <div className="run-bar-row">
        <span className="run-bar-label" id="run-bar-resources">Resources</span>
        <div
          className="run-bar"
          role="progressbar"
          aria-labelledby="run-bar-resources"
          aria-valuemin={0}
          aria-valuemax={known ? Math.max(p.total, 1) : undefined}
          aria-valuenow={known ? p.done : undefined}
          aria-valuetext={known ? `${formatCount(p.done)} of ${formatCount(p.total)} resources (${percent(p.done, p.total)} %)` : `${formatCount(p.done)} resources done${listing}`}
        >
          <div className={`run-bar-fill${known ? '' : ' indeterminate'}`} style={known ? { width: `${percent(p.done, p.total)}%` } : undefined} />
        </div>
        <span className="run-bar-value">{known ? `${formatCount(p.done)} of ${formatCount(p.total)}` : `${formatCount(p.done)} done, ${formatCount(p.total)} listed so far`}</span>
      </div>
      {p.bytesTotal > 0 && (
        <div className="run-bar-row">
          <span className="run-bar-label" id="run-bar-bytes">Bytes</span>
          <div
            className="run-bar"
            role="progressbar"
            aria-labelledby="run-bar-bytes"
            aria-valuemin={0}
            aria-valuemax={known ? p.bytesTotal : undefined}
            aria-valuenow={known ? Math.min(p.bytesDone, p.bytesTotal) : undefined}
            aria-valuetext={known ? `${formatBytes(p.bytesDone)} of ${formatBytes(p.bytesTotal)}` : `${formatBytes(p.bytesDone)} done; ${formatBytes(p.bytesTotal)} listed so far`}
          >
            <div className={`run-bar-fill${known ? '' : ' indeterminate'}`} style={known ? { width: `${percent(p.bytesDone, p.bytesTotal)}%` } : undefined} />
          </div>
          <span className="run-bar-value">{known ? `${formatBytes(p.bytesDone)} of ${formatBytes(p.bytesTotal)}` : `${formatBytes(p.bytesDone)} done`}</span>
        </div>
      )}
      {/* Only what the run is doing is announced, when it changes (Fetching, Pausing…): the rate, time left and time so
          far change with every progress event, several times a second, and a screen reader would read them on and on. */}
      <p className="run-phase">
        <Spinner />{' '}
        <span aria-live="polite">
          {state}
          {p.dryRun ? ' (dry run: nothing is written)' : ''}
        </span>
        {' · '}
        {p.rate > 0 ? `${p.rate.toLocaleString('en', { maximumFractionDigits: 1 })} resources/s, ${formatBytes(p.byteRate)}/s` : 'measuring the rate…'}
        {p.etaSeconds !== null && p.rate > 0 ? ` · about ${formatDuration(p.etaSeconds)} left` : ''}
        {` · ran ${formatDuration(Math.max(ranSeconds ?? 0, p.elapsedSeconds))} so far`}
        {pausedSeconds >= 1 ? ` (stopped ${formatDuration(pausedSeconds)})` : ''}
      </p>
      <Counters counts={p} />
      {p.failed > 0 && p.latestFailure !== null && (
        <p className="run-latest-failure">
          <span className="c-failed">Latest failure:</span> <span className="mono wrap">{p.latestFailure.uri}</span> — {failureReason(p.latestFailure.uri, p.latestFailure.reason)}
        </p>
      )}
    </div>
  );
}

export function Counters({ counts }: { counts: Pick<MirrorProgress, 'created' | 'updated' | 'deleted' | 'unchanged' | 'skipped' | 'failed'> }) {
  const items: [string, number, string][] = [
    ['created', counts.created, 'c-created'],
    ['updated', counts.updated, 'c-updated'],
    ['unchanged', counts.unchanged, ''],
    ['deleted', counts.deleted, 'c-deleted'],
    ['skipped', counts.skipped, ''],
    ['failed', counts.failed, counts.failed > 0 ? 'c-failed' : ''],
  ];
  return (
    <dl className="run-counters" aria-label="Counts of this run">
      {items.map(([label, n, cls]) => (
        <div key={label} className={cls}>
          <dt>{label}</dt>
          <dd>{formatCount(n)}</dd>
        </div>
      ))}
    </dl>
  );
}
