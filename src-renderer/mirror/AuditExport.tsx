// Export of an audit report. Main writes the file, every item of the report it keeps in the mirror (the window holds
// only the first 10,000 of each kind), a page at a time: in the desktop app to a file chosen in the system's save
// dialog; in a browser, which cannot hand a file's path to the app, to the full path typed here (as the mirror's
// folder is).
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import type { AuditFilter } from '../../src-main/engine/mirror/audit-report.ts';
import { auditFileName } from '../../src-main/engine/mirror/audit-report.ts';
import type { AuditView } from '../../src-main/contract/types.ts';
import { errorCode, errorMessage, getBridge } from '../bridge/index.ts';
import { Spinner } from '../common/Spinner.tsx';
import { useAppInfo, useBridgeEvent } from '../data/queries.ts';
import { formatCount } from '../lib/format.ts';
import { focusWhenReady } from './focus.ts';
import { mirrorKeys } from './queries.ts';

type Format = 'json' | 'csv';

type Step =
  | { kind: 'idle' }
  /** Browser: the path field is open. */
  | { kind: 'asking'; format: Format }
  | { kind: 'writing'; format: Format; read: number; total: number | null }
  | { kind: 'done'; format: Format; file: string; rows: number; filtered: boolean }
  /** Cancel was pressed while it was written: main's message says nothing was written. */
  | { kind: 'cancelled'; format: Format; message: string }
  /**
   * `pathProblem`: the file's path is what is wrong (a folder that does not exist, a file there already…);
   * `replaced`: newer audits replaced the report (the newest is shown then, and the message stays to say why).
   */
  | { kind: 'failed'; format: Format; message: string; pathProblem: boolean; replaced: boolean };

export interface AuditExportState {
  view: AuditView;
  filter: AuditFilter | null;
  labels: Record<Format, string>;
  electron: boolean;
  step: Step;
  ask(format: Format): void;
  write(format: Format, file?: string): void;
  /** Stops the export under way (its partial file is removed; the file named is left as it was). */
  cancel(): void;
  close(): void;
}

/** Data rows past which Excel and LibreOffice Calc (1,048,576 rows a sheet, the header one of them) cut a CSV off. */
const SPREADSHEET_MAX_ROWS = 1_048_576;

const FORMAT_NAME: Record<Format, string> = { json: 'JSON', csv: 'CSV' };

/**
 * Back to the button that started the export, once the path field it opened is gone or the button is usable again:
 * else focus is left on <body> (unless the person put it elsewhere meanwhile).
 */
function backToButton(format: Format): void {
  focusWhenReady(() => {
    const button = document.querySelector<HTMLButtonElement>(`button[data-audit-export="${format}"]`);
    return button && !button.disabled ? button : null;
  });
}
const rowsText = (n: number) => `${formatCount(n)} ${n === 1 ? 'row' : 'rows'}`;

/**
 * `shown`: the rows the table holds that pass the filter. That is how many the export writes only when no kind of
 * difference was cut; otherwise the whole report may hold more, and the label does not give a number it cannot know.
 */
export function useAuditExport({ view, filter, shown }: { view: AuditView; filter: AuditFilter | null; shown: number }): AuditExportState {
  const client = useQueryClient();
  const electron = useAppInfo().data?.adapter === 'electron';
  const [step, setStep] = useState<Step>({ kind: 'idle' });
  const r = view.report;
  const counts = r.counts ?? { missing: r.missing.length, extra: r.extra.length, changed: r.changed.length, unverifiable: r.unverifiable.length, kept: r.kept?.length ?? 0 };
  const total = counts.missing + counts.extra + counts.changed + counts.unverifiable + counts.kept;
  const whole = counts.missing === r.missing.length && counts.extra === r.extra.length && counts.changed === r.changed.length && counts.unverifiable === r.unverifiable.length && counts.kept === (r.kept?.length ?? 0);
  const label = (format: Format) =>
    filter === null
      ? total === 0
        ? `Export the report as ${FORMAT_NAME[format]}`
        : `Export all ${rowsText(total)} as ${FORMAT_NAME[format]}`
      : whole
        ? `Export the ${rowsText(shown)} filtered as ${FORMAT_NAME[format]}`
        : `Export the filtered rows as ${FORMAT_NAME[format]}`;
  const runId = r.runId;
  const active = useRef(0);

  useBridgeEvent('audit.exportProgress', (p) => {
    if (p.path !== view.path || p.runId !== runId) return;
    setStep((s) => (s.kind === 'writing' ? { ...s, read: p.read, total: p.total } : s));
  });
  // Another report (a new audit) or another filter: what was said about the last export is about something else.
  useEffect(() => {
    setStep((s) => (s.kind === 'writing' || (s.kind === 'failed' && s.replaced) ? s : { kind: 'idle' }));
  }, [runId, filter?.status, filter?.text]);

  function write(format: Format, file?: string) {
    if (runId === undefined) return;
    const attempt = ++active.current;
    setStep({ kind: 'writing', format, read: 0, total: null });
    getBridge()
      .invoke('audit.export', { path: view.path, runId, format, ...(file !== undefined ? { file } : {}), filter })
      .then((result) => {
        if (attempt !== active.current) return;
        setStep(result.file === null ? { kind: 'idle' } : { kind: 'done', format, file: result.file, rows: result.rows, filtered: filter !== null });
        backToButton(format);
      })
      .catch((error: unknown) => {
        if (attempt !== active.current) return;
        if (errorCode(error) === 'cancelled') {
          setStep({ kind: 'cancelled', format, message: errorMessage(error) });
          backToButton(format);
          return;
        }
        // A newer audit replaced the report shown: show the newest (the message says so).
        if (errorCode(error) === 'not-found') void client.invalidateQueries({ queryKey: mirrorKeys.audit(view.path) });
        // In a browser the path field stays open, for another path.
        const code = errorCode(error);
        setStep({ kind: 'failed', format, message: errorMessage(error), pathProblem: code === 'invalid-arguments' || code === 'mirror', replaced: code === 'not-found' });
        // The path field stays open in a browser, with focus in it, for another path.
        if (electron || code === 'not-found') backToButton(format);
      });
  }

  return {
    view,
    filter,
    labels: { json: label('json'), csv: label('csv') },
    electron,
    step,
    ask: (format) => (electron ? write(format) : setStep({ kind: 'asking', format })),
    write,
    cancel: () => {
      void getBridge().invoke('audit.exportCancel', { path: view.path });
    },
    close: () => {
      if (step.kind !== 'idle') backToButton(step.format);
      setStep({ kind: 'idle' });
    },
  };
}

export function ExportButtons({ state }: { state: AuditExportState }) {
  const busy = state.step.kind === 'writing';
  return (
    <span className="check-export">
      {(['json', 'csv'] as const).map((format) => (
        <button key={format} type="button" className="btn-secondary" data-audit-export={format} disabled={busy || state.view.report.runId === undefined} onClick={() => state.ask(format)}>
          {state.labels[format]}
        </button>
      ))}
    </span>
  );
}

/** Below the verdict: the path field (browser), then what the export does or did, in words. */
export function ExportPanel({ state }: { state: AuditExportState }) {
  const { step } = state;
  const ids = useId();
  const [file, setFile] = useState('');
  const input = useRef<HTMLInputElement>(null);
  const format = step.kind === 'idle' ? null : step.format;
  // The path field opens with a name for the file in the home folder, the extension of the format chosen.
  const asking = step.kind === 'asking' || (!state.electron && step.kind === 'failed' && !step.replaced);
  useEffect(() => {
    if (step.kind !== 'asking') return;
    setFile((old) => {
      const name = auditFileName(state.view.path, state.view.at, step.format);
      if (old === '') return `~/${name}`;
      return old.replace(/\.(json|csv)$/i, `.${step.format}`);
    });
    input.current?.focus();
  }, [step, state.view.path, state.view.at]);

  function submit(event: FormEvent) {
    event.preventDefault();
    if (format !== null) state.write(format, file);
  }

  function onKeyDown(event: KeyboardEvent<HTMLFormElement>) {
    if (event.key !== 'Escape' || event.nativeEvent.isComposing) return;
    event.preventDefault();
    state.close();
  }

  return (
    <>
      {asking && format !== null && (
        <form className="audit-export-form" onSubmit={submit} onKeyDown={onKeyDown} aria-label={`Export the audit report as ${FORMAT_NAME[format]}`}>
          <label htmlFor={`${ids}-file`}>Write the {FORMAT_NAME[format]} file to</label>
          <div className="field-row">
            <input
              id={`${ids}-file`}
              ref={input}
              type="text"
              className="mono"
              value={file}
              onChange={(e) => setFile(e.target.value)}
              aria-describedby={`${ids}-hint`}
              aria-invalid={(step.kind === 'failed' && step.pathProblem) || undefined}
              spellCheck={false}
            />
            <button type="submit" className="btn-primary">
              Write {FORMAT_NAME[format]} file
            </button>
            <button type="button" className="btn-secondary" onClick={state.close}>
              Cancel
            </button>
          </div>
          <p id={`${ids}-hint`} className="field-hint">
            The full path of a new file on this computer (~/ stands for your home folder). {state.filter === null ? 'Every row of the report is written, not only those shown.' : 'Every row of the report that passes the filter is written, not only those shown.'}
          </p>
        </form>
      )}
      <div className="audit-export-status" role="status">
        {step.kind === 'writing' && (
          <p>
            <Spinner />{' '}
            {step.total === null && state.electron
              ? `Choose where to save the ${FORMAT_NAME[step.format]} file…`
              : `Writing the ${FORMAT_NAME[step.format]} file…${step.total !== null && step.total > 0 ? ` ${formatCount(step.read)} of ${rowsText(step.total)} of the report read.` : ''}`}{' '}
            {/* Not while the desktop app's save dialog is open: it has its own Cancel. */}
            {(step.total !== null || !state.electron) && (
              <button type="button" className="btn-secondary" data-audit-export-cancel onClick={state.cancel}>
                Cancel export
              </button>
            )}
          </p>
        )}
        {step.kind === 'cancelled' && <p>{step.message}</p>}
        {step.kind === 'done' && (
          <p>
            Wrote {rowsText(step.rows)}
            {step.filtered ? ' (those that pass the filter)' : ''} to <span className="mono">{step.file}</span>.
            {step.format === 'csv' && step.rows >= SPREADSHEET_MAX_ROWS && (
              <> It has more rows than a spreadsheet program shows on one sheet ({formatCount(SPREADSHEET_MAX_ROWS)} with the header in Excel and LibreOffice Calc): opened there, the rows past that are left out. The file itself holds every row.</>
            )}
          </p>
        )}
      </div>
      {step.kind === 'failed' && (
        <p className="error-text audit-export-error" role="alert">
          The export failed: {step.message}
        </p>
      )}
    </>
  );
}
