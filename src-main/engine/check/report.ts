// The check report as files: JSON (the shape `rsdesk check --json` prints) and CSV (one row per finding, RFC 4180
// quoting). No Node or DOM imports: the renderer's Export buttons use the same code.
import type { CheckReport } from './model.ts';

export const CSV_COLUMNS = ['document', 'severity', 'code', 'line', 'message'] as const;

/** The report as `rsdesk check --json` prints it. */
export function reportJson(report: CheckReport): string {
  const shaped = {
    start: report.start,
    sourceDescription: report.sourceDescription,
    documents: report.documents.map((d) => ({
      url: d.url,
      capability: d.capability,
      isIndex: d.isIndex,
      parent: d.parent,
      entries: d.entries,
      findings: d.findings,
    })),
    findings: report.findings.map((f) => ({ document: f.document, severity: f.severity, code: f.code, line: f.line ?? null, message: f.message })),
    summary: report.summary,
  };
  return `${JSON.stringify(shaped, null, 2)}\n`;
}

/**
 * A field quoted when it must be (comma, quote, line break) and also when it starts with = + - @ or a tab: a
 * spreadsheet would run such a cell as a formula, and the text comes from the Source (hostile by default).
 */
export function csvField(value: string | number | undefined | null): string {
  if (value === undefined || value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) || text !== String(value) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One line per finding, CRLF line ends (RFC 4180), header first. */
export function reportCsv(report: Pick<CheckReport, 'findings'>): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const f of report.findings) {
    lines.push([f.document, f.severity, f.code, f.line, f.message].map(csvField).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}
