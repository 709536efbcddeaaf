import { useEffect, useMemo, useRef, useState, type RefObject } from 'react';
import type { AuditStatus, AuditView, MirrorDeletePolicy } from '../../src-main/contract/types.ts';
import { auditRows, rowMatches } from '../../src-main/engine/mirror/audit-report.ts';
import { errorMessage } from '../bridge/index.ts';
import { Spinner } from '../common/Spinner.tsx';
import { formatCount } from '../lib/format.ts';
import { useMirrorUi } from '../state/mirror.ts';
import { formatWhen } from './format.ts';
import { useAuditReport, useStartAudit } from './queries.ts';
import { ScrollBox } from './ScrollBox.tsx';
import { ExportButtons, ExportPanel, useAuditExport } from './AuditExport.tsx';

const MAX_ROWS = 1000;
const STATUS_TEXT: Record<AuditStatus, string> = {
  missing: 'missing',
  changed: 'changed',
  unverifiable: 'unverifiable',
  extra: 'extra',
  kept: 'kept',
};

/** The last audit of the mirror: its verdict, every difference as a filterable table, export as JSON or CSV. */
export function AuditReport({
  path,
  canStart,
  auditing,
  onStart,
  deletePolicy,
  focusFrom,
  onMend,
}: {
  path: string;
  /**
   * Starts a baseline, which fetches what the audit found missing or changed (an incremental sync fetches only what
   * the mirror had and lost, not what it never had); absent where no run can start now.
   */
  onMend?(): void;
  /** The mirror's: what becomes of a file the Source no longer lists. */
  deletePolicy: MirrorDeletePolicy;
  canStart: boolean;
  auditing: boolean;
  /** Told before an audit starts (the view then moves focus along with it). */
  onStart?(): void;
  /**
   * Where focus waits for the button that starts an audit ("Audit…" pressed before the last report was read): the
   * button takes it when it shows, unless focus went elsewhere meanwhile.
   */
  focusFrom?: RefObject<HTMLElement | null>;
}) {
  const report = useAuditReport(path);
  const start = useStartAudit(path);
  const [rehash, setRehash] = useState(false);
  const view = report.data ?? null;
  const startRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const from = focusFrom?.current;
    if (!focusFrom || !from || !startRef.current) return;
    focusFrom.current = null;
    if (document.activeElement === from && !startRef.current.disabled) startRef.current.focus();
  });

  const controls = (
    <div className="mirror-filters">
      <button
        ref={startRef}
        type="button"
        className="btn-secondary"
        disabled={!canStart || start.isPending}
        onClick={() => {
          onStart?.();
          start.mutate(rehash);
        }}
      >
        {view ? 'Audit again' : 'Audit now'}
      </button>
      <label className="radio">
        <input type="checkbox" checked={rehash} onChange={(e) => setRehash(e.target.checked)} />
        Read every file again (slower; finds files changed on disk)
      </label>
    </div>
  );

  if (report.isPending) return <div className="empty"><Spinner /> Reading the last audit…</div>;
  return (
    <div className="mirror-audit">
      {controls}
      {start.isError && (
        <div className="alert alert-error" role="alert" tabIndex={-1}>
          <strong>The audit could not run.</strong> <span>{errorMessage(start.error)}</span>
        </div>
      )}
      {auditing || start.isPending ? (
        <p className="empty"><Spinner /> Comparing the mirror with the Source…</p>
      ) : view ? (
        <AuditTable view={view} deletePolicy={deletePolicy} onMend={canStart ? onMend : undefined} />
      ) : (
        <p className="empty">No audit yet. An audit compares every file of the mirror with what the Source lists now.</p>
      )}
    </div>
  );
}

function AuditTable({ view, deletePolicy, onMend }: { view: AuditView; deletePolicy: MirrorDeletePolicy; onMend?: () => void }) {
  const status = useMirrorUi((s) => s.auditStatus);
  const text = useMirrorUi((s) => s.auditText);
  const setStatus = useMirrorUi((s) => s.setAuditStatus);
  const setText = useMirrorUi((s) => s.setAuditText);
  const rows = useMemo(() => auditRows(view.report, deletePolicy), [view, deletePolicy]);
  const shown = useMemo(() => rows.filter((r) => rowMatches(r, { status, text })), [rows, status, text]);
  const r = view.report;
  const filtered = status !== 'all' || text.trim() !== '';
  // The whole report's numbers: its lists hold only the first 10,000 of each kind (a note says so), its counts all.
  const counts = r.counts ?? { missing: r.missing.length, extra: r.extra.length, changed: r.changed.length, unverifiable: r.unverifiable.length, kept: r.kept?.length ?? 0 };
  // What the deletion policy keep kept is shown, but is no difference.
  const kept = counts.kept;
  // Export writes the whole report kept in the mirror (or all of it the filter lets through), not only the rows held
  // here: the window holds the first 10,000 of each kind.
  const exporting = useAuditExport({ view, filter: filtered ? { status, text: text.trim() } : null, shown: shown.length });
  const differences = counts.missing + counts.extra + counts.changed + counts.unverifiable;
  const held = rows.length;
  const noun = kept > 0 ? (rows.length === 1 ? 'row' : 'rows') : rows.length === 1 ? 'difference' : 'differences';
  const total = differences + kept;
  return (
    <>
      {/* Only the verdict is the status, and takes focus when an audit started here ends: the whole block read out
          every count, the checking method, the time and the export buttons' names too. */}
      <div className={`audit-summary${r.inSync ? ' in-sync' : ' not-in-sync'}`}>
        <strong className="audit-verdict" role="status" tabIndex={-1}>
          {r.inSync ? `✓ In sync: ${formatCount(r.inSyncCount)} resources match the Source.` : `Not in sync: ${formatCount(differences)} ${differences === 1 ? 'difference' : 'differences'}.`}
        </strong>
        <span className="muted">
          {' '}
          {formatCount(r.inSyncCount)} in sync, {formatCount(counts.missing)} missing, {formatCount(counts.changed)} changed,{' '}
          {formatCount(counts.unverifiable)} unverifiable, {formatCount(counts.extra)} extra{kept > 0 ? `, ${formatCount(kept)} kept (no longer listed)` : ''} · {view.rehash ? 'every file read again' : 'each file checked by its size and the hashes recorded when it was mirrored, not read again'} ·{' '}
          {formatWhen(view.at)}
        </span>
        <ExportButtons state={exporting} />
      </div>
      <ExportPanel state={exporting} />
      {counts.missing + counts.changed > 0 && (
        <div className="audit-mend">
          <button type="button" className="btn-secondary" disabled={!onMend} onClick={() => onMend?.()} aria-describedby="audit-mend-hint">
            Fetch the {formatCount(counts.missing + counts.changed)} missing or changed
          </button>
          <span id="audit-mend-hint" className="muted">
            {' '}
            A baseline run: it compares every resource the Source lists with the mirror and fetches only what is missing
            or differs; nothing verified is fetched again. Extra files are left as they are. Audit again afterwards.
            {!onMend && ' It can start when the run going on has ended.'}
          </span>
        </div>
      )}
      {r.notes?.map((note) => (
        <p key={note} className="muted audit-note">
          Note: {note}
        </p>
      ))}
      {rows.length > 0 && (
        <>
          <div className="mirror-filters" role="search" aria-label="Filter the audit">
            <label>
              Show{' '}
              <select value={status} onChange={(e) => setStatus(e.target.value as AuditStatus | 'all')}>
                <option value="all">{kept > 0 ? 'every row' : 'every difference'}</option>
                <option value="missing">missing only</option>
                <option value="changed">changed only</option>
                <option value="unverifiable">unverifiable only</option>
                <option value="extra">extra only</option>
                {kept > 0 && <option value="kept">kept only</option>}
              </select>
            </label>
            <input type="search" aria-label="Filter the audit by text" placeholder="Filter by URI, path or reason" value={text} onChange={(e) => setText(e.target.value)} />
            <span className="muted" aria-live="polite">
              {held < total
                ? // Cut: the filter searches the rows held here; the export searches the whole report.
                  `${formatCount(shown.length)} of the ${formatCount(held)} rows held here (the report has ${formatCount(total)})`
                : shown.length === rows.length
                  ? `${formatCount(rows.length)} ${noun}`
                  : // Read out as the filter is typed: "2 of 5" alone did not say of what.
                    `${formatCount(shown.length)} of ${formatCount(rows.length)} ${noun}`}
            </span>
          </div>
          <ScrollBox label="Audit report">
            <table className="grid-table mirror-table" aria-label="Audit report">
              <thead>
                <tr>
                  <th scope="col">status</th>
                  <th scope="col">resource or file</th>
                  <th scope="col">why</th>
                </tr>
              </thead>
              <tbody>
                {shown.slice(0, MAX_ROWS).map((row, i) => (
                  <tr key={i} className={`audit-${row.status}`}>
                    <td>{STATUS_TEXT[row.status]}</td>
                    <td className="mono wrap audit-item">{row.item}</td>
                    <td className="wrap">{row.reason}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {shown.length === 0 && (
              <p className="empty">
                {held < total
                  ? `Nothing among the ${formatCount(held)} rows held here matches the filter. The export searches the whole report: it may find more.`
                  : 'Nothing matches the filter.'}
              </p>
            )}
            {shown.length > MAX_ROWS && (
              <p className="empty">Showing the first {formatCount(MAX_ROWS)} of {formatCount(shown.length)}: narrow them with the filter, or export them (the export holds every one).</p>
            )}
          </ScrollBox>
        </>
      )}
    </>
  );
}
