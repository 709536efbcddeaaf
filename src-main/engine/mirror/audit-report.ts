// The audit report as rows (one per URI or file that is not in sync), as the window's table shows them and the app's
// CSV export writes them (src-main/app/audit-export.ts). No Node or DOM imports: the renderer's table uses the same code.
import { csvField } from '../check/report.ts';
import type { AuditReport } from './audit.ts';

export type AuditStatus = 'missing' | 'extra' | 'changed' | 'unverifiable' | 'kept';

export interface AuditRow {
  status: AuditStatus;
  /** The URI, or for an extra file its path inside the mirror. */
  item: string;
  reason: string;
}

/** What becomes of a file the Source no longer lists (the mirror's deletion policy). */
export type KeptPolicy = 'keep' | 'delete' | 'quarantine';

/**
 * Why a kept row is there, for the mirror's deletion policy; without one, for every policy at once. The sync that
 * follows a deletion is what applies the policy: until then a quarantine or delete mirror keeps the file too.
 */
export function keptReason(policy?: KeptPolicy): string {
  switch (policy) {
    case 'keep':
      return 'no longer listed by the Source; its file stays in the mirror, as this mirror keeps the files the Source deletes';
    case 'quarantine':
      return 'no longer listed by the Source; its file is still in the mirror, and the next sync moves it to quarantine (.resourcesync/quarantine/)';
    case 'delete':
      return 'no longer listed by the Source; its file is still in the mirror, and the next sync deletes it';
    default:
      return 'no longer listed by the Source; its file is still in the mirror (the deletion policy keep keeps it, delete and quarantine take it away at the next sync)';
  }
}

/** One row as the table and the exports show it; `reason` is the audit's own for changed and unverifiable. */
export function auditRow(status: AuditStatus, item: string, reason: string | null, policy?: KeptPolicy): AuditRow {
  switch (status) {
    case 'missing':
      return { status, item, reason: 'listed by the Source, not in the mirror' };
    case 'extra':
      return { status, item, reason: 'in the mirror, listed by no one' };
    case 'kept':
      return { status, item, reason: keptReason(policy) };
    default:
      return { status, item, reason: reason ?? '' };
  }
}

/**
 * An item as the audit's JSON lists it (`rsdesk audit --json`, the app's export): a URI or path for missing, extra
 * and kept; `{uri, reason}` for changed and unverifiable.
 */
export function auditJsonValue(status: AuditStatus, item: string, reason: string | null): string | { uri: string; reason: string } {
  return status === 'changed' || status === 'unverifiable' ? { uri: item, reason: reason ?? '' } : item;
}

export function auditRows(report: Pick<AuditReport, 'missing' | 'extra' | 'changed' | 'unverifiable' | 'kept'>, policy?: KeptPolicy): AuditRow[] {
  return [
    ...report.missing.map((uri) => auditRow('missing', uri, null, policy)),
    ...report.changed.map((c) => auditRow('changed', c.uri, c.reason, policy)),
    ...report.unverifiable.map((c) => auditRow('unverifiable', c.uri, c.reason, policy)),
    ...report.extra.map((path) => auditRow('extra', path, null, policy)),
    ...(report.kept ?? []).map((uri) => auditRow('kept', uri, null, policy)),
  ];
}

/** The order of the table and of the CSV export (the JSON export has one list per kind). */
export const ROW_ORDER: readonly AuditStatus[] = ['missing', 'changed', 'unverifiable', 'extra', 'kept'];

/** The table's filter: one kind or all, and text found in the item or its reason (any case). */
export interface AuditFilter {
  status: AuditStatus | 'all';
  text: string;
}

/** Whether a row passes the filter: the same rule for the table (in the window) and the export (in main). */
export function rowMatches(row: AuditRow, filter: AuditFilter | null): boolean {
  if (filter === null) return true;
  if (filter.status !== 'all' && row.status !== filter.status) return false;
  const needle = filter.text.trim().toLowerCase();
  return needle === '' || row.item.toLowerCase().includes(needle) || row.reason.toLowerCase().includes(needle);
}

/** The CSV export's first line. */
export const AUDIT_CSV_HEADER = 'status,item,reason';

/** One row as a CSV line, without its line end (CRLF, as the check report's CSV). */
export function auditCsvLine(row: AuditRow): string {
  return [row.status, row.item, row.reason].map(csvField).join(',');
}

/** "audit-mirror-2026-11-27.csv": named after the mirror's folder and the day of the audit (not of the export). */
export function auditFileName(mirrorPath: string, at: string, extension: 'json' | 'csv'): string {
  const name = mirrorPath.split(/[\\/]/).filter(Boolean).at(-1)?.replace(/[^A-Za-z0-9._-]+/g, '_') ?? 'mirror';
  return `audit-${name}-${at.slice(0, 10)}.${extension}`;
}
