import type { Finding } from '../../src-main/engine/documents/model.ts';
import { SeverityIcon } from '../common/FindingsBadge.tsx';
import { useUi } from '../state/ui.ts';

export function FindingsList({ url, findings }: { url: string; findings: Finding[] }) {
  const showRawLine = useUi((s) => s.showRawLine);
  if (findings.length === 0) return <p className="empty ok-text">✓ No findings: the document conforms.</p>;
  const sorted = [...findings].sort(
    (a, b) => (a.severity === b.severity ? 0 : a.severity === 'error' ? -1 : 1) || (a.line ?? 0) - (b.line ?? 0),
  );
  return (
    <table className="grid-table findings" aria-label="Findings">
      <thead>
        <tr>
          <th scope="col" className="c-sev"><span className="sr-only">severity</span></th>
          <th scope="col">line</th>
          <th scope="col">code</th>
          <th scope="col">message</th>
        </tr>
      </thead>
      <tbody>
        {sorted.map((f, i) => (
          <tr key={i} className={`finding finding-${f.severity}`}>
            <td className="c-sev"><SeverityIcon severity={f.severity} /></td>
            <td>
              {f.line !== undefined ? (
                <button type="button" className="line-link" onClick={() => showRawLine(url, f.line!)} title="Show in raw XML">
                  {f.line}
                </button>
              ) : (
                <span className="muted">—</span>
              )}
            </td>
            <td className="mono">{f.code}</td>
            <td className="wrap">{f.message}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
