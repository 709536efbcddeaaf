// The audit report as JSON, written a piece at a time: the one writer of `rsdesk audit --json` (compact, on stdout)
// and of the app's JSON export (indented, to a file; src-main/app/audit-export.ts). A report may hold a million items:
// they come from the mirror's state a page at a time and are never held whole. The text is what JSON.stringify would
// write of the whole report (with `indent` 2, or none), so a reader of either gets the same object, keys in one order.
import type { FoundStatus } from './audit-listed.ts';
import { FOUND_ORDER } from './audit.ts';
import { auditJsonValue } from './audit-report.ts';

export interface AuditJsonReport {
  /** What comes first, as the caller has it (when the audit ended, whether it hashed every file, …). */
  head: Record<string, unknown>;
  inSync: boolean;
  inSyncCount: number;
  /** The items of one kind, in the order found (a kind left out by a filter: none). */
  items(status: FoundStatus): Iterable<{ item: string; reason: string | null }> | AsyncIterable<{ item: string; reason: string | null }>;
  /** What the audit had to do without; the key is left out when there is none. */
  notes: string[];
}

export async function* auditJson(report: AuditJsonReport, indent: 0 | 2): AsyncGenerator<string> {
  const nl = indent === 0 ? '' : '\n';
  const pad = indent === 0 ? '' : '  ';
  const colon = indent === 0 ? ':' : ': ';
  const value = (v: unknown, at: string) => (indent === 0 ? JSON.stringify(v) : JSON.stringify(v, null, indent).replaceAll('\n', `\n${at}`));
  let first = true;
  const key = (name: string) => {
    const text = `${first ? '{' : ','}${nl}${pad}${JSON.stringify(name)}${colon}`;
    first = false;
    return text;
  };
  for (const [name, v] of Object.entries({ ...report.head, inSync: report.inSync, inSyncCount: report.inSyncCount })) yield key(name) + value(v, pad);
  for (const status of FOUND_ORDER) {
    yield `${key(status)}[`;
    let any = false;
    for await (const { item, reason } of report.items(status)) {
      yield `${any ? ',' : ''}${nl}${pad}${pad}${value(auditJsonValue(status, item, reason), pad + pad)}`;
      any = true;
    }
    yield any ? `${nl}${pad}]` : ']';
  }
  if (report.notes.length > 0) yield key('notes') + value(report.notes, pad);
  yield `${nl}}\n`;
}
