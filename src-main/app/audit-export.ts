// Writes a saved audit report to a file, every item of it, as JSON (the shape `rsdesk audit --json` prints, with what
// a file found later needs to be understood on its own) or CSV. The report may hold a million items: they are read a
// page at a time from the mirror's state and written in chunks, never held whole in memory or sent to the window.
import { randomBytes } from 'node:crypto';
import { open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { FOUND_ORDER, readSavedAudit, type SavedAuditReader } from '../engine/mirror/audit.ts';
import { auditJson } from '../engine/mirror/audit-json.ts';
import { AUDIT_CSV_HEADER, auditCsvLine, auditRow, ROW_ORDER, rowMatches, type AuditFilter, type AuditStatus, type KeptPolicy } from '../engine/mirror/audit-report.ts';
import { CancelledError, InvalidArgumentsError, MirrorError, NotFoundError } from './errors.ts';

export interface AuditExportOptions {
  /** The mirror's folder (absolute). */
  mirror: string;
  /** The audit's run: the report the window shows. */
  runId: number;
  format: 'json' | 'csv';
  /** The file to write (absolute). */
  file: string;
  /** Write only the rows that pass it (null: every row). */
  filter: AuditFilter | null;
  /** A file already there is replaced only when the person said so (the desktop app's save dialog asks). */
  replace: boolean;
  /** The mirror's deletion policy: the reason its kept rows give. */
  deletePolicy: KeptPolicy;
  /** What the mirror follows, named in the JSON. */
  source: string | null;
  /** Cancel: the partial file is removed, the file named is left as it was. */
  signal?: AbortSignal;
  /** Items read so far of all there are to read; called a few times a second at most, and once at the end. */
  onProgress?(read: number, total: number): void;
  progressIntervalMs?: number;
}

export interface AuditExportResult {
  /** Rows written (items, in the JSON). */
  rows: number;
  /** Items of the report read to find them (all of it, or all of one kind). */
  read: number;
}

const CHUNK = 1 << 16;
const REPLACED = 'This audit report is no longer kept in the mirror: newer audits have replaced it (a mirror keeps its newest five). The newest report is shown now; export that one.';

export async function exportAudit(o: AuditExportOptions): Promise<AuditExportResult> {
  await checkTarget(o.file, o.replace);
  let reader: SavedAuditReader | null;
  try {
    reader = readSavedAudit(o.mirror, o.runId);
  } catch (error) {
    // The folder is gone, or its state cannot be read: said as such, not as a failure inside the app.
    throw new MirrorError(`The audit report kept in ${o.mirror} cannot be read: ${(error as Error).message}`);
  }
  if (reader === null) throw new NotFoundError(REPLACED);
  // Written beside the file under another name and renamed at the end: a failed or half-written export leaves no
  // file that looks whole.
  const temp = join(dirname(o.file), `.${basename(o.file)}.${randomBytes(4).toString('hex')}.partial`);
  let handle: FileHandle | null;
  try {
    handle = await open(temp, 'wx');
  } catch (error) {
    reader.close();
    throw writeError(o.file, error);
  }
  try {
    const counts = reader.audit.report.counts ?? { missing: 0, extra: 0, changed: 0, unverifiable: 0, kept: 0 };
    const kinds = (order: readonly AuditStatus[]) => order.filter((s) => o.filter === null || o.filter.status === 'all' || o.filter.status === s);
    const total = kinds(ROW_ORDER).reduce((n, s) => n + counts[s], 0);
    let read = 0;
    let rows = 0;
    let buffer = '';
    let lastProgress = 0;
    const interval = o.progressIntervalMs ?? 250;
    const stopped = () => {
      if (o.signal?.aborted) throw new CancelledError(`Export cancelled. Nothing was written to ${o.file}.`);
    };
    // At once: the window knows the file is being written (in the desktop app, that the save dialog was answered).
    o.onProgress?.(0, total);
    const write = async (text: string) => {
      buffer += text;
      if (buffer.length >= CHUNK) await flush();
    };
    const flush = async () => {
      if (buffer === '') return;
      const bytes = Buffer.from(buffer, 'utf8');
      buffer = '';
      await handle!.write(bytes);
    };
    /** The rows of one kind that pass the filter, counted; gives the event loop a turn now and then (a filter may match nothing). */
    async function* rowsOf(status: AuditStatus) {
      for (const f of reader!.items(status)) {
        read++;
        if (read % 1_000 === 0) {
          await nextTurn();
          stopped();
          if (o.onProgress && Date.now() - lastProgress >= interval) {
            lastProgress = Date.now();
            o.onProgress(read, total);
          }
        }
        const row = auditRow(status, f.item, f.reason, o.deletePolicy);
        if (!rowMatches(row, o.filter)) continue;
        rows++;
        yield row;
      }
    }

    if (o.format === 'csv') {
      // A byte order mark, as the other CSV exports: else Excel reads UTF-8 as the system's legacy code page.
      await write(`\ufeff${AUDIT_CSV_HEADER}\r\n`);
      for (const status of kinds(ROW_ORDER)) {
        for await (const row of rowsOf(status)) {
          await write(`${auditCsvLine(row)}\r\n`);
        }
      }
    } else {
      const { audit } = reader;
      // Only the kinds the filter takes are read; the others are written empty.
      const report = {
        head: { mirror: o.mirror, source: o.source, at: audit.at, rehash: audit.rehash, filter: o.filter },
        inSync: audit.report.inSync,
        inSyncCount: audit.report.inSyncCount,
        items: (status: AuditStatus) => (kinds(FOUND_ORDER).includes(status) ? rowsOf(status) : []),
        notes: reader.notes,
      };
      for await (const text of auditJson(report, 2)) await write(text);
    }
    await flush();
    stopped();
    await handle!.sync();
    await handle!.close();
    handle = null;
    reader.close();
    await checkTarget(o.file, o.replace);
    await rename(temp, o.file);
    o.onProgress?.(read, total);
    return { rows, read };
  } catch (error) {
    reader.close();
    await handle?.close().catch(() => undefined);
    await rm(temp, { force: true }).catch(() => undefined);
    throw error instanceof NotFoundError || error instanceof InvalidArgumentsError || error instanceof CancelledError ? error : writeError(o.file, error);
  }
}

/** A folder, or a file the person did not say to replace, is not written over. */
async function checkTarget(file: string, replace: boolean): Promise<void> {
  const found = await stat(file).catch(() => null);
  if (found === null) return;
  if (found.isDirectory()) throw new InvalidArgumentsError(`${file} is a folder: give the full path of a file to write, with its name.`);
  if (!replace) throw new InvalidArgumentsError(`A file ${file} is there already: give another name, or remove it first.`);
}

function writeError(file: string, error: unknown): Error {
  const code = (error as NodeJS.ErrnoException).code;
  const why =
    code === 'ENOENT' || code === 'ENOTDIR'
      ? `the folder ${dirname(file)} does not exist`
      : code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
        ? 'this app may not write there'
        : code === 'ENOSPC' || code === 'EDQUOT'
          ? 'the disk is full'
          : (error as Error).message;
  return new MirrorError(`The audit report could not be written to ${file}: ${why}. Nothing was written there.`);
}
