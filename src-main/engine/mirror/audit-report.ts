// The audit report as rows (one per URI or file that is not in sync) and as files: JSON (the shape `rsdesk audit
// --json` prints) and CSV. No Node or DOM imports: the renderer's Export buttons use the same code.
import { csvField } from '../check/report.ts';
import type { AuditReport } from './audit.ts';

export type AuditStatus = 'missing' | 'extra' | 'changed' | 'unverifiable' | 'kept';

export interface AuditRow {
  status: AuditStatus;
  /** The URI, or for an extra file its path inside the mirror. */
  item: string;
  reason: string;
}

export function auditRows(report: Pick<AuditReport, 'missing' | 'extra' | 'changed' | 'unverifiable' | 'kept'>): AuditRow[] {
  return [
    ...report.missing.map((uri) => ({ status: 'missing' as const, item: uri, reason: 'listed by the Source, not in the mirror' })),
    ...report.changed.map((c) => ({ status: 'changed' as const, item: c.uri, reason: c.reason })),
    ...report.unverifiable.map((c) => ({ status: 'unverifiable' as const, item: c.uri, reason: c.reason })),
    ...report.extra.map((path) => ({ status: 'extra' as const, item: path, reason: 'in the mirror, listed by no one' })),
    ...(report.kept ?? []).map((uri) => ({ status: 'kept' as const, item: uri, reason: 'no longer listed by the Source; its file is still in the mirror (the deletion policy keep keeps it, delete and quarantine take it away at the next sync)' })),
  ];
}

export function auditJson(report: AuditReport): string {
  const { inSync, inSyncCount, missing, extra, changed, unverifiable, kept = [] } = report;
  return `${JSON.stringify({ inSync, inSyncCount, missing, extra, changed, unverifiable, kept }, null, 2)}\n`;
}

export function auditCsv(report: Pick<AuditReport, 'missing' | 'extra' | 'changed' | 'unverifiable' | 'kept'>): string {
  const lines = ['status,item,reason'];
  for (const row of auditRows(report)) lines.push([row.status, row.item, row.reason].map(csvField).join(','));
  return `${lines.join('\r\n')}\r\n`;
}
