import type { Finding } from '../../src-main/engine/documents/model.ts';

export function countFindings(findings: Finding[]): { errors: number; warnings: number } {
  let errors = 0;
  for (const f of findings) if (f.severity === 'error') errors++;
  return { errors, warnings: findings.length - errors };
}

/** Red pill for errors, amber for warnings, nothing when the document is clean. */
export function FindingsBadge({ findings }: { findings: Finding[] }) {
  const { errors, warnings } = countFindings(findings);
  return (
    <>
      {errors > 0 && (
        <span className="badge badge-error" title={`${errors} error${errors === 1 ? '' : 's'}`}>
          <span aria-hidden="true">✖</span> {errors}
          <span className="sr-only"> error{errors === 1 ? '' : 's'}</span>
        </span>
      )}
      {warnings > 0 && (
        <span className="badge badge-warning" title={`${warnings} warning${warnings === 1 ? '' : 's'}`}>
          <span aria-hidden="true">▲</span> {warnings}
          <span className="sr-only"> warning{warnings === 1 ? '' : 's'}</span>
        </span>
      )}
    </>
  );
}

export function SeverityIcon({ severity }: { severity: Finding['severity'] }) {
  return severity === 'error' ? (
    <span className="sev sev-error" role="img" aria-label="error">✖</span>
  ) : (
    <span className="sev sev-warning" role="img" aria-label="warning">▲</span>
  );
}
