import { useState } from 'react';
import type { CheckProgress, CheckReport } from '../../src-main/contract/types.ts';
import { reportCsv, reportJson } from '../../src-main/engine/check/report.ts';
import { errorMessage } from '../bridge/index.ts';
import { Spinner } from '../common/Spinner.tsx';
import { useCheck, type CheckRunRef } from '../state/check.ts';
import { CheckTable } from './CheckTable.tsx';
import { download, reportFileName } from './download.ts';
import { focusOpener } from './opener.ts';
import { cancelCheck, useCheckProgress, useCheckRun, useStartCheck } from './queries.ts';

function count(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en')} ${n === 1 ? one : many}`;
}

/** The report's heading, which takes focus when a button in the sidebar opens the report. */
export const CHECK_TITLE_ID = 'check-title';

/** The Check report in the main pane: progress and Cancel while it runs, then the summary and every finding. */
export function CheckView({ run }: { run: CheckRunRef }) {
  const report = useCheckRun(run.runId, run.url);
  const progress = useCheckProgress(run.runId);
  const start = useStartCheck();
  const hide = useCheck((s) => s.hide);

  return (
    <section className="check" aria-label="Check report">
      <header className="check-header">
        <h2 id={CHECK_TITLE_ID} className="check-title" tabIndex={-1}>Check of {run.name}</h2>
        <span className="check-start mono">{run.url}</span>
        <span className="check-actions">
          {!report.isPending && (
            <button type="button" className="btn-secondary" onClick={() => start(run.url, run.name)}>
              Check again
            </button>
          )}
          <button
            type="button"
            className="btn-secondary"
            onClick={(event) => {
              hide();
              focusOpener(event.currentTarget);
            }}
          >
            Close
          </button>
        </span>
      </header>
      {report.isPending ? (
        <Running runId={run.runId} progress={progress} />
      ) : report.isError ? (
        <div className="alert alert-error" role="alert">
          The check could not run: {errorMessage(report.error)}
        </div>
      ) : (
        <Done report={report.data} />
      )}
    </section>
  );
}

function Running({ runId, progress }: { runId: string; progress: CheckProgress | undefined }) {
  const [cancelling, setCancelling] = useState(false);
  const done = progress?.done ?? 0;
  const known = Math.max(progress?.known ?? 0, done);
  return (
    <div className="check-running">
      <div className="check-progress-row">
        <div
          className="check-progress"
          role="progressbar"
          aria-label="Documents checked"
          aria-valuemin={0}
          aria-valuemax={Math.max(known, 1)}
          aria-valuenow={done}
          aria-valuetext={known === 0 ? 'Finding the Source' : `${done} of ${known} documents known so far`}
        >
          <div className="check-progress-fill" style={{ width: known === 0 ? '0%' : `${(100 * done) / known}%` }} />
        </div>
        <button
          type="button"
          className="btn-secondary"
          disabled={cancelling}
          onClick={() => {
            setCancelling(true);
            void cancelCheck(runId);
          }}
        >
          {cancelling ? 'Cancelling…' : 'Cancel'}
        </button>
      </div>
      {/* Only what the check does is announced, when it changes: the counts changed with every document read, several
          times a second, and a screen reader read them out on and on. The progress bar gives them when asked. */}
      <p className="check-status">
        <Spinner /> <span aria-live="polite">{known === 0 ? 'Finding the Source…' : 'Checking the documents:'}</span>
        {known === 0 ? '' : ` ${count(done, 'document')} checked of ${count(known, 'document')} known so far · ${count(progress?.entries ?? 0, 'entry', 'entries')} read`}
      </p>
      {progress?.current && <p className="check-current mono">Reading {progress.current}</p>}
    </div>
  );
}

function Done({ report }: { report: CheckReport }) {
  const { summary } = report;
  return (
    <>
      <div className={`check-summary${summary.errors > 0 ? ' has-errors' : ''}`} role="status">
        <strong>
          {count(summary.documents, 'document')}, {count(summary.entries, 'entry', 'entries')}:{' '}
          <span className={summary.errors > 0 ? 'sev-error' : ''}>{count(summary.errors, 'error')}</span>,{' '}
          <span className={summary.warnings > 0 ? 'sev-warning' : ''}>{count(summary.warnings, 'warning')}</span>
        </strong>
        {summary.cancelled ? (
          <span> · Cancelled: some documents were not checked.</span>
        ) : summary.truncated ? (
          <span> · Stopped early: some documents were not checked.</span>
        ) : summary.errors + summary.warnings === 0 ? (
          <span> · Every document conforms.</span>
        ) : null}
        <span className="check-export">
          <button type="button" className="btn-secondary" onClick={() => download(reportJson(report), reportFileName(report.start, 'json'), 'application/json')}>
            Export JSON
          </button>
          <button type="button" className="btn-secondary" onClick={() => download(reportCsv(report), reportFileName(report.start, 'csv'), 'text/csv')}>
            Export CSV
          </button>
        </span>
      </div>
      <CheckTable report={report} />
    </>
  );
}
