import { useMemo } from 'react';
import type { CheckFinding, CheckReport } from '../../src-main/contract/types.ts';
import { useCheck } from '../state/check.ts';
import { useFollowDocument } from '../tree/navigate.ts';

/** Rows drawn at once; the filter narrows the rest down. */
export const MAX_ROWS = 1000;

function matches(f: CheckFinding, text: string): boolean {
  if (text === '') return true;
  return (
    f.document.toLowerCase().includes(text) ||
    f.code.toLowerCase().includes(text) ||
    f.message.toLowerCase().includes(text)
  );
}

/** Every finding of the check: filter by severity and by text; a document opens in the tree and detail. */
export function CheckTable({ report }: { report: CheckReport }) {
  const severity = useCheck((s) => s.severity);
  const text = useCheck((s) => s.text);
  const setSeverity = useCheck((s) => s.setSeverity);
  const setText = useCheck((s) => s.setText);
  const follow = useFollowDocument();
  const capabilityOf = useMemo(() => new Map(report.documents.map((d) => [d.url, d.capability ?? undefined])), [report]);
  const shown = useMemo(() => {
    const needle = text.trim().toLowerCase();
    return report.findings.filter((f) => (severity === 'all' || f.severity === severity) && matches(f, needle));
  }, [report, severity, text]);

  return (
    <div className="check-findings">
      <div className="check-filters" role="search" aria-label="Filter findings">
        <label>
          Show{' '}
          <select value={severity} onChange={(e) => setSeverity(e.target.value as typeof severity)}>
            <option value="all">errors and warnings</option>
            <option value="error">errors only</option>
            <option value="warning">warnings only</option>
          </select>
        </label>
        <input
          type="search"
          aria-label="Filter findings by text"
          placeholder="Filter by document, code or message"
          value={text}
          onChange={(e) => setText(e.target.value)}
        />
        <span className="muted" aria-live="polite">
          {shown.length === report.findings.length
            ? `${report.findings.length.toLocaleString('en')} findings`
            : `${shown.length.toLocaleString('en')} of ${report.findings.length.toLocaleString('en')} findings`}
        </span>
      </div>
      {report.findings.length === 0 ? (
        <p className="empty ok-text">✓ No findings: every document checked conforms.</p>
      ) : shown.length === 0 ? (
        <p className="empty">No finding matches the filter.</p>
      ) : (
        <div className="check-table-box">
          <table className="grid-table check-table" aria-label="Findings of the check">
            <thead>
              <tr>
                <th scope="col">document</th>
                <th scope="col">severity</th>
                <th scope="col">code</th>
                <th scope="col">line</th>
                <th scope="col">message</th>
              </tr>
            </thead>
            <tbody>
              {shown.slice(0, MAX_ROWS).map((f, i) => (
                <tr key={i} className={`finding finding-${f.severity}`}>
                  <td>
                    <button
                      type="button"
                      className="check-doc"
                      title="Open this document"
                      onClick={() => follow(f.document, capabilityOf.get(f.document))}
                    >
                      {f.document}
                    </button>
                  </td>
                  <td className="check-sev">
                    <span className={`sev sev-${f.severity}`} aria-hidden="true">
                      {f.severity === 'error' ? '✖' : '▲'}
                    </span>{' '}
                    {f.severity}
                  </td>
                  <td className="mono">{f.code}</td>
                  <td>{f.line ?? <span className="muted">—</span>}</td>
                  <td className="wrap">{f.message}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {shown.length > MAX_ROWS && (
            <p className="empty">
              Showing the first {MAX_ROWS.toLocaleString('en')} of {shown.length.toLocaleString('en')} findings: narrow them with
              the filter, or export the whole report.
            </p>
          )}
        </div>
      )}
    </div>
  );
}
