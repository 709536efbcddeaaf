// rsdesk check <url>: checks every document of a Source (from any URL of it) and prints all findings.
import { InvalidArgumentsError } from '../app/errors.ts';
import { normalizeStartUrl } from '../app/start-url.ts';
import type { CheckReport } from '../engine/check/model.ts';
import { reportJsonPieces } from '../engine/check/report.ts';
import { checkSource } from '../engine/check/walk.ts';
import { capabilityName } from '../engine/documents/model.ts';
import { bearerFor, Http } from '../engine/http/index.ts';
import { formatFinding } from './format.ts';
import type { Io } from './io.ts';
import { UsageError } from './usage.ts';

export interface CheckOptions {
  url: string;
  json: boolean;
  maxDocuments?: number;
  token?: string;
  timeoutMs?: number;
  userAgent: string;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en')} ${n === 1 ? one : many}`;
}

export function formatCheck(report: CheckReport): string {
  const { summary } = report;
  const lines = [
    `Checked ${report.start}: ${plural(summary.documents, 'document')}, ${plural(summary.entries, 'entry', 'entries')}, ` +
      `${plural(summary.errors, 'error')}, ${plural(summary.warnings, 'warning')}${summary.cancelled ? ' (cancelled)' : summary.truncated ? ' (stopped early)' : ''}`,
  ];
  let clean = 0;
  for (const doc of report.documents) {
    if (doc.findings.length === 0) {
      clean++;
      continue;
    }
    const what = doc.capability === null ? 'not read' : capabilityName(doc.capability, doc.isIndex);
    lines.push('', `${doc.url}  (${what})`);
    for (const f of doc.findings) lines.push(formatFinding(f));
  }
  const elsewhere = report.findings.filter((f) => !report.documents.some((d) => d.url === f.document));
  for (const f of elsewhere) lines.push('', `${f.document}`, `  ${f.severity === 'error' ? 'error  ' : 'warning'} ${f.code}: ${f.message}`);
  if (clean > 0) lines.push('', `${plural(clean, 'document')} without findings.`);
  return `${lines.join('\n')}\n`;
}

export async function checkCommand(options: CheckOptions, io: Io): Promise<number> {
  let start: string;
  try {
    start = normalizeStartUrl(options.url, 'with --token (a bearer token)');
  } catch (error) {
    if (error instanceof InvalidArgumentsError) throw new UsageError(error.message);
    throw error;
  }
  const http = new Http({ sourceHeaders: bearerFor(start, options.token), timeoutMs: options.timeoutMs, userAgent: options.userAgent });
  try {
    const report = await checkSource(start, { http, maxDocuments: options.maxDocuments });
    if (options.json) {
      // A piece at a time, each let out before the next: a pipe read slowly would hold it all in memory.
      let buffer = '';
      for (const piece of reportJsonPieces(report)) {
        buffer += piece;
        if (buffer.length < 1 << 16) continue;
        io.out(buffer);
        buffer = '';
        await io.drained?.();
      }
      io.out(buffer);
    } else io.out(formatCheck(report));
    return report.summary.errors > 0 ? 1 : 0;
  } finally {
    await http.close();
  }
}
