import type { MirrorProgress } from '../../src-main/contract/types.ts';
import { Spinner } from '../common/Spinner.tsx';
import { formatBytes, formatCount } from '../lib/format.ts';
import { formatDuration } from './format.ts';

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
export function RunProgress({ progress }: { progress: MirrorProgress }) {
  const p = progress;
  if (p.kind === 'audit') {
    return (
      <div className="run-progress" aria-live="polite">
        <p className="run-phase"><Spinner /> {PHASE.audit}…</p>
      </div>
    );
  }
  const totalText = p.totalKnown ? formatCount(p.total) : `${formatCount(p.total)} listed so far`;
  const state = p.cancelling ? 'Cancelling: stopping the downloads' : p.pausing ? 'Pausing: the downloads under way finish first' : PHASE[p.phase];
  return (
    <div className="run-progress">
      <div className="run-bar-row">
        <span className="run-bar-label" id="run-bar-resources">Resources</span>
        <div
          className="run-bar"
          role="progressbar"
          aria-labelledby="run-bar-resources"
          aria-valuemin={0}
          aria-valuemax={Math.max(p.total, 1)}
          aria-valuenow={p.done}
          aria-valuetext={`${formatCount(p.done)} of ${totalText} resources (${percent(p.done, p.total)} %)`}
        >
          <div className="run-bar-fill" style={{ width: `${percent(p.done, p.total)}%` }} />
        </div>
        <span className="run-bar-value">{formatCount(p.done)} of {totalText}</span>
      </div>
      {p.bytesTotal > 0 && (
        <div className="run-bar-row">
          <span className="run-bar-label" id="run-bar-bytes">Bytes</span>
          <div
            className="run-bar"
            role="progressbar"
            aria-labelledby="run-bar-bytes"
            aria-valuemin={0}
            aria-valuemax={p.bytesTotal}
            aria-valuenow={Math.min(p.bytesDone, p.bytesTotal)}
            aria-valuetext={`${formatBytes(p.bytesDone)} of ${formatBytes(p.bytesTotal)}${p.totalKnown ? '' : ' listed so far'}`}
          >
            <div className="run-bar-fill" style={{ width: `${percent(p.bytesDone, p.bytesTotal)}%` }} />
          </div>
          <span className="run-bar-value">{formatBytes(p.bytesDone)} of {formatBytes(p.bytesTotal)}</span>
        </div>
      )}
      <p className="run-phase" aria-live="polite">
        <Spinner /> {state}
        {p.dryRun ? ' (dry run: nothing is written)' : ''}
        {' · '}
        {p.rate > 0 ? `${p.rate.toLocaleString('en', { maximumFractionDigits: 1 })} resources/s, ${formatBytes(p.byteRate)}/s` : 'measuring the rate…'}
        {p.etaSeconds !== null && p.rate > 0 ? ` · about ${formatDuration(p.etaSeconds)} left` : ''}
        {` · ${formatDuration(p.elapsedSeconds)} so far`}
      </p>
      <Counters counts={p} />
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
