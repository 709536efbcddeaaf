// The check report as files: JSON (the shape `rsdesk check --json` prints) and CSV (one row per finding, RFC 4180
// quoting). No Node or DOM imports: the renderer's Export buttons use the same code.
import type { CheckReport } from './model.ts';

export const CSV_COLUMNS = ['document', 'severity', 'code', 'line', 'message'] as const;

/** The report as `rsdesk check --json` prints it. */
export function reportJson(report: CheckReport): string {
  return [...reportJsonPieces(report)].join('');
}

/**
 * The same JSON text, a document or finding at a time: a check of 100,000 documents prints ~130 MB of JSON, which
 * built as one string (and an object shaped for it) cost several times that in memory.
 */
export function* reportJsonPieces(report: CheckReport): Generator<string> {
  yield `{\n  "start": ${JSON.stringify(report.start)},\n  "sourceDescription": ${JSON.stringify(report.sourceDescription)},\n`;
  yield* array(
    'documents',
    report.documents,
    (d) => ({ url: d.url, capability: d.capability, isIndex: d.isIndex, parent: d.parent, entries: d.entries, findings: d.findings }),
  );
  yield ',\n';
  yield* array('findings', report.findings, (f) => ({ document: f.document, severity: f.severity, code: f.code, line: f.line ?? null, message: f.message }));
  yield `,\n  "summary": ${indent(JSON.stringify(report.summary, null, 2), '  ')}\n}\n`;
}

/** `"name": [...]` as JSON.stringify(…, null, 2) writes it one level down. */
function* array<T>(name: string, items: readonly T[], shape: (item: T) => unknown): Generator<string> {
  if (items.length === 0) {
    yield `  ${JSON.stringify(name)}: []`;
    return;
  }
  yield `  ${JSON.stringify(name)}: [\n`;
  for (let i = 0; i < items.length; i++) yield `    ${indent(JSON.stringify(shape(items[i]!), null, 2), '    ')}${i < items.length - 1 ? ',' : ''}\n`;
  yield '  ]';
}

function indent(json: string, by: string): string {
  return json.replaceAll('\n', `\n${by}`);
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
