import { useEffect, useMemo, useRef, useState, type RefObject } from 'react';
import type { AuditStatus, AuditView, MirrorDeletePolicy } from '../../src-main/contract/types.ts';
import { csvField } from '../../src-main/engine/check/report.ts';
import { auditRows, type AuditRow } from '../../src-main/engine/mirror/audit-report.ts';
import { errorMessage } from '../bridge/index.ts';
import { download } from '../check/download.ts';
import { Spinner } from '../common/Spinner.tsx';
import { formatCount } from '../lib/format.ts';
import { useMirrorUi } from '../state/mirror.ts';
import { formatWhen } from './format.ts';
import { useAuditReport, useStartAudit } from './queries.ts';
import { ScrollBox } from './ScrollBox.tsx';

const MAX_ROWS = 1000;
const STATUS_TEXT: Record<AuditStatus, string> = {
  missing: 'missing',
  changed: 'changed',
  unverifiable: 'unverifiable',
  extra: 'extra',
  kept: 'kept',
};

/**
 * Why a kept row is there, for this mirror's deletion policy (the engine's rows say it for every policy at once).
 * The sync that follows a deletion is what applies the policy: until then a quarantine or delete mirror keeps it too.
 */
const KEPT_REASON: Record<MirrorDeletePolicy, string> = {
  keep: 'no longer listed by the Source; its file stays in the mirror, as this mirror keeps the files the Source deletes',
  quarantine: 'no longer listed by the Source; its file is still in the mirror, and the next sync moves it to quarantine (.resourcesync/quarantine/)',
  delete: 'no longer listed by the Source; its file is still in the mirror, and the next sync deletes it',
};

/** Named after the mirror's folder and the day of the audit (not of the export). */
function fileName(view: AuditView, extension: string): string {
  const name = view.path.split(/[\\/]/).filter(Boolean).at(-1)?.replace(/[^A-Za-z0-9._-]+/g, '_') ?? 'mirror';
  return `audit-${name}-${view.at.slice(0, 10)}.${extension}`;
}

function rowsCsv(rows: AuditRow[]): string {
  const lines = ['status,item,reason', ...rows.map((row) => [row.status, row.item, row.reason].map(csvField).join(','))];
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * The shape `rsdesk audit --json` prints, with the rows shown, and what a file found later needs to be understood on
 * its own: which folder, which Source, when, and the filter when one narrowed the rows.
 */
function rowsJson(view: AuditView, source: string | null, rows: AuditRow[], filter: { status: string; text: string } | null): string {
  const of = (status: AuditStatus) => rows.filter((r) => r.status === status);
  const r = view.report;
  const report = {
    mirror: view.path,
    source,
    auditedAt: view.at,
    rehash: view.rehash,
    filter,
    inSync: r.inSync,
    inSyncCount: r.inSyncCount,
    missing: of('missing').map((row) => row.item),
    extra: of('extra').map((row) => row.item),
    changed: of('changed').map((row) => ({ uri: row.item, reason: row.reason })),
    unverifiable: of('unverifiable').map((row) => ({ uri: row.item, reason: row.reason })),
    kept: of('kept').map((row) => row.item),
    // As `rsdesk audit --json` has them: what the audit had to do without.
    ...(r.notes ? { notes: r.notes } : {}),
  };
  return `${JSON.stringify(report, null, 2)}\n`;
}

/** The last audit of the mirror: its verdict, every difference as a filterable table, export as JSON or CSV. */
export function AuditReport({
  path,
  canStart,
  auditing,
  onStart,
  deletePolicy,
  source,
  focusFrom,
}: {
  path: string;
  /** The mirror's: what becomes of a file the Source no longer lists. */
  deletePolicy: MirrorDeletePolicy;
  /** What the mirror follows (its Capability List, or its list), named in the JSON export. */
  source: string | null;
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
        <AuditTable view={view} deletePolicy={deletePolicy} source={source} />
      ) : (
        <p className="empty">No audit yet. An audit compares every file of the mirror with what the Source lists now.</p>
      )}
    </div>
  );
}

function AuditTable({ view, deletePolicy, source }: { view: AuditView; deletePolicy: MirrorDeletePolicy; source: string | null }) {
  const status = useMirrorUi((s) => s.auditStatus);
  const text = useMirrorUi((s) => s.auditText);
  const setStatus = useMirrorUi((s) => s.setAuditStatus);
  const setText = useMirrorUi((s) => s.setAuditText);
  const rows = useMemo(
    () => auditRows(view.report).map((row) => (row.status === 'kept' ? { ...row, reason: KEPT_REASON[deletePolicy] } : row)),
    [view, deletePolicy],
  );
  const shown = useMemo(() => {
    const needle = text.trim().toLowerCase();
    return rows.filter((r) => (status === 'all' || r.status === status) && (needle === '' || r.item.toLowerCase().includes(needle) || r.reason.toLowerCase().includes(needle)));
  }, [rows, status, text]);
  const r = view.report;
  // Export is of what the table shows: the buttons say so when a filter narrows it.
  const filtered = status !== 'all' || text.trim() !== '';
  const exported = filtered ? `${formatCount(shown.length)} shown` : null;
  // What the deletion policy keep kept is shown, but is no difference.
  const kept = r.kept?.length ?? 0;
  const differences = rows.length - kept;
  return (
    <>
      <div className={`audit-summary${r.inSync ? ' in-sync' : ' not-in-sync'}`} role="status" tabIndex={-1}>
        <strong>
          {r.inSync ? `✓ In sync: ${formatCount(r.inSyncCount)} resources match the Source.` : `Not in sync: ${formatCount(differences)} ${differences === 1 ? 'difference' : 'differences'}.`}
        </strong>
        <span className="muted">
          {' '}
          {formatCount(r.inSyncCount)} in sync, {formatCount(r.missing.length)} missing, {formatCount(r.changed.length)} changed,{' '}
          {formatCount(r.unverifiable.length)} unverifiable, {formatCount(r.extra.length)} extra{kept > 0 ? `, ${formatCount(kept)} kept (no longer listed)` : ''} · {view.rehash ? 'every file read again' : 'each file checked by its size and the hashes recorded when it was mirrored, not read again'} ·{' '}
          {formatWhen(view.at)}
        </span>
        <span className="check-export">
          <button
            type="button"
            className="btn-secondary"
            onClick={() => download(rowsJson(view, source, shown, filtered ? { status, text: text.trim() } : null), fileName(view, 'json'), 'application/json')}
          >
            {exported ? `Export ${exported} as JSON` : 'Export JSON'}
          </button>
          <button type="button" className="btn-secondary" onClick={() => download(rowsCsv(shown), fileName(view, 'csv'), 'text/csv')}>
            {exported ? `Export ${exported} as CSV` : 'Export CSV'}
          </button>
        </span>
      </div>
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
              {shown.length === rows.length ? `${formatCount(rows.length)} ${kept > 0 ? (rows.length === 1 ? 'row' : 'rows') : rows.length === 1 ? 'difference' : 'differences'}` : `${formatCount(shown.length)} of ${formatCount(rows.length)}`}
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
            {shown.length === 0 && <p className="empty">Nothing matches the filter.</p>}
            {shown.length > MAX_ROWS && (
              <p className="empty">Showing the first {formatCount(MAX_ROWS)} of {formatCount(shown.length)}: narrow them with the filter, or export them (the export holds every row shown).</p>
            )}
          </ScrollBox>
        </>
      )}
    </>
  );
}
