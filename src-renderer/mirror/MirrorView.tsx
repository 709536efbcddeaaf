import { useEffect, useRef, type KeyboardEvent, type ReactNode } from 'react';
import { flushSync } from 'react-dom';
import type { MirrorDetail } from '../../src-main/contract/types.ts';
import { UNREACHABLE_RUN, useConnection } from '../bridge/connection.ts';
import { errorMessage } from '../bridge/index.ts';
import { Spinner } from '../common/Spinner.tsx';
import { useAppInfo } from '../data/queries.ts';
import { formatCount } from '../lib/format.ts';
import { useMirrorUi, type MirrorTab } from '../state/mirror.ts';
import { AccessPanel } from './AccessPanel.tsx';
import { OptionsPanel } from './OptionsPanel.tsx';
import { AuditReport } from './AuditReport.tsx';
import { FailuresTable } from './FailuresTable.tsx';
import { focusLost, focusWhenReady } from './focus.ts';
import { countsLine, formatInstant, lastRunLine, mirroredList, scheduleText, STATUS_LABEL } from './format.ts';
import { useFailures, useForgetMirror, useMirror, useMirrorEnded, useMirrorProgress, useOpenFolder, useRunAction } from './queries.ts';
import { Counters, RunProgress } from './RunProgress.tsx';
import { LiveHoldNote } from '../live/LiveHoldNote.tsx';
import { RunHistory } from './RunHistory.tsx';
import { runEndWords } from './run-end.ts';

const BUSY = new Set(['running', 'pausing', 'cancelling', 'auditing']);

/**
 * Where focus goes after an action whose button goes away: `run` (Sync now, Resume, Retry, Pause, Cancel run) to
 * Pause while the run goes on, then to how it ended; `audit` to Cancel audit while it runs, then to its verdict.
 */
type FocusGoal = 'run' | 'audit';

/** The badge while the app server cannot be reached during a run. */
export const UNKNOWN_LABEL = 'State unknown';

// "kept" promises what the app does: a run's end counts what the Source deleted, an audit lists them (it said "listed
// in each run", which none does, as the form's words for the policy had said before them).
const POLICY_TEXT = { keep: 'kept (an audit lists them)', quarantine: 'moved to quarantine', delete: 'deleted' } as const;

/** How far a paused or interrupted run came, by what it recorded: "after 1 resource", not "after 1 resources". */
function resumedAfter(done: number): string {
  if (done === 0) return 'before any resource was recorded';
  return `after ${formatCount(done)} ${done === 1 ? 'resource' : 'resources'}`;
}

/** One mirror: what it mirrors, its run (progress, Pause / Resume / Cancel), its history, failures and audit. */
export function MirrorView({ path }: { path: string }) {
  const mirror = useMirror(path);
  const m = mirror.data;
  if (!m) {
    return (
      <section className="mirror-view" aria-label="Mirror">
        {mirror.isError ? (
          <div className="alert alert-error" role="alert">Could not open the mirror: {errorMessage(mirror.error)}</div>
        ) : (
          <div className="empty"><Spinner /> Opening the mirror…</div>
        )}
      </section>
    );
  }
  return <Loaded m={m} />;
}

function Loaded({ m }: { m: MirrorDetail }) {
  const electron = useAppInfo().data?.adapter === 'electron';
  const busy = BUSY.has(m.status);
  // The app server out of reach (the browser's bridge): what was last heard of a run going on may no longer hold.
  const reachable = useConnection((s) => s.reachable);
  const unknown = busy && !reachable;
  const progress = useMirrorProgress(m.path, busy) ?? m.progress;
  const ended = useMirrorEnded(m.path);
  const action = useRunAction(m.path);
  const forget = useForgetMirror();
  const open = useOpenFolder();
  const close = useMirrorUi((s) => s.close);
  const setRemoved = useMirrorUi((s) => s.setRemoved);
  const tab = useMirrorUi((s) => s.tab);
  const setTab = useMirrorUi((s) => s.setTab);
  const showFailures = useMirrorUi((s) => s.showFailures);
  const usable = m.status !== 'missing' && m.status !== 'busy';
  const syncing = busy && m.status !== 'auditing';
  // The failures of the latest run that had any (runs come newest first; the one going on as soon as one of its resources failed): the number
  // its counters show, and the run the Failures tab opens on.
  const failedOf = (r: (typeof m.runs)[number]) => (r.status === 'running' && busy ? Math.max(r.failed, progress?.failed ?? 0) : r.failed);
  const lastFailed = m.runs.find((r) => r.kind !== 'audit' && failedOf(r) > 0);
  // Once that run has ended, those of its failures still standing: a later run may have mirrored them since, and the
  // tab then counts as its "Retry all failed (N)" does, not a red count of what is no longer wrong.
  const lastFailedRunning = lastFailed?.status === 'running' && busy;
  const standing = useFailures(m.path, lastFailed && !lastFailedRunning ? lastFailed.id : null).data;
  const failures = !lastFailed ? 0 : lastFailedRunning ? failedOf(lastFailed) : standing?.runId === lastFailed.id ? standing.open : lastFailed.failed;
  const list = mirroredList(m);
  // A run resumed after a pause: what it ran before counts, the pause does not (the engine records how long it stood).
  const current = busy ? m.runs.find((r) => r.status === 'running' && r.kind !== 'audit') : undefined;
  const pausedBefore = current?.pausedSeconds ?? 0;
  const ranSoFar = current && pausedBefore > 0 ? (Date.now() - Date.parse(current.startedAt)) / 1000 - pausedBefore : null;

  // An audit's end is said here only away from the Audit tab, whose verdict (or error) says it already: shown in
  // both, a screen reader read it out twice.
  const endShown = !unknown && !busy && ended !== null && !(ended.kind === 'audit' && tab === 'audit');
  const endWords = endShown ? runEndWords(ended) : null;

  const sectionRef = useRef<HTMLElement>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const goal = useRef<FocusGoal | null>(null);
  /** The element the goal started from (the button pressed), or the one focus was last put on for it. */
  const placed = useRef<Element | null>(null);
  /** Whether the person's last click or focus was inside this view: focus lost after a click elsewhere stays lost. */
  const inside = useRef(true);
  const shownTab = useRef(tab);
  /** Set by "Audit…" while the Audit tab's button is not there yet: where focus waits for it. */
  const auditFocusFrom = useRef<HTMLElement | null>(null);

  function aim(next: FocusGoal) {
    goal.current = next;
    placed.current = document.activeElement;
  }

  useEffect(() => {
    const track = (event: Event) => {
      inside.current = event.target instanceof Node && sectionRef.current !== null && sectionRef.current.contains(event.target);
    };
    document.addEventListener('pointerdown', track, true);
    document.addEventListener('focusin', track, true);
    // Coming from the new-mirror form, or from Undo in the sidebar: the button pressed is gone with its view.
    if (focusLost()) headingRef.current?.focus();
    return () => {
      document.removeEventListener('pointerdown', track, true);
      document.removeEventListener('focusin', track, true);
    };
  }, []);

  // After each render: a button pressed here may have gone (or turned disabled) with the state it changed.
  useEffect(() => {
    const tabChanged = shownTab.current !== tab;
    shownTab.current = tab;
    const lost = focusLost();
    if (!lost && document.activeElement !== placed.current) {
      goal.current = null;
      return;
    }
    if (!lost && goal.current === null) return;
    if (lost && !inside.current) {
      goal.current = null;
      return;
    }
    const section = sectionRef.current;
    const find = (selector: string) => section?.querySelector<HTMLElement>(selector) ?? null;
    let target: HTMLElement | null = null;
    let done = false;
    if (goal.current === 'run') {
      if (action.isError) [target, done] = [find('.mirror-action-error'), true];
      else if (m.status === 'running') target = find('.mirror-pause:not(:disabled)');
      else if (!busy && !action.isPending && ended) [target, done] = [find('.run-end-sentence'), true];
    } else if (goal.current === 'audit') {
      const error = find('.mirror-audit [role=alert]');
      const summary = find('.audit-verdict');
      if (error) [target, done] = [error, true];
      else if (m.status === 'auditing') target = find('.mirror-cancel-audit');
      else if (summary && ended?.kind === 'audit') [target, done] = [summary, true];
    }
    // The tab's panel was replaced (a link in the run history opens the Failures tab): its tab is where one is.
    if (target === null && lost) target = tabChanged ? find(`#mirror-tab-${tab}`) : goal.current === null ? headingRef.current : null;
    if (target !== null && target !== document.activeElement) {
      target.focus();
      placed.current = target;
    }
    if (done) goal.current = null;
  });

  const tabs: { id: MirrorTab; label: ReactNode }[] = [
    { id: 'runs', label: <>Runs <span className="tab-count">{formatCount(m.runs.length)}</span></> },
    { id: 'failures', label: <>Failures <span className={`tab-count${failures ? ' tab-count-error' : ''}`}>{formatCount(failures)}</span></> },
    { id: 'audit', label: 'Audit' },
    { id: 'options', label: 'Options' },
    { id: 'access', label: 'Access' },
  ];

  /**
   * "Audit…": the Audit tab, with focus on its button that starts an audit (on the tab itself while the last report is
   * read), not left behind on a button that did nothing visible where it is.
   */
  function openAudit() {
    flushSync(() => setTab('audit'));
    const section = sectionRef.current;
    const start = section?.querySelector<HTMLElement>('#mirror-panel-audit .mirror-audit button:not(:disabled)');
    if (start) return start.focus();
    // The last report is still being read: its button takes focus from the tab once it shows.
    const tabButton = section?.querySelector<HTMLElement>('#mirror-tab-audit') ?? null;
    tabButton?.focus();
    auditFocusFrom.current = tabButton;
  }

  /**
   * "Show the failures" where a run's end says some failed ("Retry fetches what failed again"): the Retry it speaks of
   * is on the Failures tab, which nothing near the message led to. Focus goes to "Retry all failed" once it shows.
   */
  function openFailures(from: HTMLElement, runId?: number) {
    flushSync(() => (runId === undefined ? setTab('failures') : showFailures(runId)));
    focusWhenReady(() => sectionRef.current?.querySelector<HTMLElement>('#mirror-panel-failures .failures-retry-all') ?? null, from);
  }

  function onTabKey(event: KeyboardEvent<HTMLDivElement>) {
    const at = tabs.findIndex((t) => t.id === tab);
    const next = event.key === 'ArrowRight' ? (at + 1) % tabs.length : event.key === 'ArrowLeft' ? (at - 1 + tabs.length) % tabs.length : -1;
    if (next < 0) return;
    event.preventDefault();
    setTab(tabs[next]!.id);
    event.currentTarget.querySelector<HTMLElement>(`#mirror-tab-${tabs[next]!.id}`)?.focus();
  }

  return (
    <section className="mirror-view" aria-labelledby="mirror-title" ref={sectionRef}>
      <header className="mirror-header">
        <h2 id="mirror-title" className="mirror-title" tabIndex={-1} ref={headingRef}>
          Mirror {m.name}{' '}
          <span className={`mirror-badge status-${unknown ? 'unknown' : m.status}`}>{unknown ? UNKNOWN_LABEL : STATUS_LABEL[m.status]}</span>
        </h2>
        <span className="mirror-sub mono">{m.path}</span>
        <span className="mirror-actions">
          {syncing ? (
            <>
              {/* Not `disabled` while the run pauses: a disabled button loses focus, which fell to <body> for as long as the
                  downloads under way took to finish; it stays on the button until the run's end takes it. */}
              <button
                type="button"
                className="btn-secondary mirror-pause"
                aria-disabled={m.status !== 'running' || action.isPending || unknown || undefined}
                onClick={() => {
                  if (m.status !== 'running' || action.isPending || unknown) return;
                  aim('run');
                  action.mutate({ action: 'pause' });
                }}
              >
                {m.status === 'pausing' ? 'Pausing…' : 'Pause'}
              </button>
              <button
                type="button"
                className="btn-secondary mirror-cancel-run"
                disabled={m.status === 'cancelling' || unknown}
                onClick={() => {
                  aim('run');
                  action.mutate({ action: 'cancel' });
                }}
              >
                {m.status === 'cancelling' ? 'Cancelling…' : 'Cancel run'}
              </button>
            </>
          ) : m.status === 'auditing' ? (
            <button type="button" className="btn-secondary mirror-cancel-audit" disabled={unknown} onClick={() => action.mutate({ action: 'cancel' })}>
              Cancel audit
            </button>
          ) : (
            <>
              {/* While the request is under way these are aria-disabled, not disabled: a disabled button drops focus to
                  <body> (for as long as the run took to start, ~100-300 ms), and Pause takes it once the run is on. */}
              {m.resumable && (
                <button type="button" className="btn-primary" disabled={!usable} aria-disabled={action.isPending || undefined} onClick={() => {
                    if (action.isPending) return;
                    aim('run');
                    action.mutate({ action: 'resume' });
                  }}
                >
                  Resume
                </button>
              )}
              {/* A run waiting to be resumed is what the next sync does: "Sync now" beside Resume did the same, and
                  left one wondering whether it would start over. */}
              {!m.resumable && (
                <button type="button" className="btn-primary" disabled={!usable} aria-disabled={action.isPending || undefined} onClick={() => {
                    if (action.isPending) return;
                    aim('run');
                    action.mutate({ action: 'start' });
                  }}
                >
                  Sync now
                </button>
              )}
              <button type="button" className="btn-secondary" disabled={!usable} onClick={openAudit}>
                Audit…
              </button>
            </>
          )}
          {electron && (
            <button type="button" className="btn-secondary" disabled={m.status === 'missing'} onClick={() => open.mutate(m.path)}>
              Open folder
            </button>
          )}
          {!busy && (
            <button
              type="button"
              className="btn-secondary"
              onClick={() =>
                forget.mutate(m.path, {
                  // The sidebar says what became of it and offers Undo, which takes focus.
                  onSuccess: () => {
                    setRemoved({ path: m.path, name: m.name, options: m.options });
                    close();
                  },
                })
              }
              title="The app stops listing this mirror; its folder and files stay where they are (it can be undone)"
            >
              Remove from list
            </button>
          )}
        </span>
      </header>
      <dl className="facts mirror-facts">
        <div>
          <dt>mirrors</dt>
          <dd title={list.kind && m.capabilityListUrl ? `In the Capability List ${m.capabilityListUrl}` : undefined}>
            <span className="mono">{list.url ?? '—'}</span>
            {list.kind && <span className="muted"> ({list.kind === 'Resource List' ? 'this Resource List alone' : 'this Change List'})</span>}
          </dd>
        </div>
        <div><dt>in sync up to</dt><dd title={m.checkpoint ?? undefined}>{m.checkpoint ? formatInstant(m.checkpoint) : 'not yet (no complete baseline)'}{m.liveHold && <span className="muted"> (held by live failures, below)</span>}</dd></div>
        <div><dt>resources</dt><dd>{formatCount(progress?.resources ?? m.resources)}</dd></div>
        <div><dt>deletions</dt><dd>{POLICY_TEXT[m.options.deletePolicy]}</dd></div>
        <div><dt>connections</dt><dd>{m.options.concurrency}{m.options.delaySeconds > 0 ? `, ${m.options.delaySeconds} s pause` : ''}</dd></div>
        <div><dt>syncs by itself</dt><dd>{scheduleText(m)}</dd></div>
      </dl>
      {m.needsSync && (
        <div className="alert alert-warning mirror-alert" role="status">
          <span>
            Live notifications showed that the changes made from {formatInstant(m.needsSync.from)} to {formatInstant(m.needsSync.until)} did not
            reach this mirror, and no Change List could give them (found {formatInstant(m.needsSync.since)}). Sync now brings the mirror up to date.
          </span>
        </div>
      )}
      {m.liveHold && (
        <LiveHoldNote
          hold={m.liveHold}
          onShowFailures={(runId, from) => openFailures(from, runId)}
          onRetryAll={
            usable && !busy
              ? () => {
                  if (action.isPending) return;
                  aim('run');
                  action.mutate({ action: 'retryStanding' });
                }
              : undefined
          }
        />
      )}
      {m.problem && (
        <div className="alert alert-error mirror-alert" role="alert">
          <span>{m.problem}</span>
        </div>
      )}
      {action.isError && (
        <div className="alert alert-error mirror-alert mirror-action-error" role="alert" tabIndex={-1}>
          <span>{errorMessage(action.error)}</span>
        </div>
      )}
      {(open.isError || forget.isError) && (
        <div className="alert alert-error mirror-alert" role="alert">
          <span>{errorMessage(open.error ?? forget.error)}</span>
        </div>
      )}
      {m.resumable && !busy && !ended && (
        <div className="alert alert-warning mirror-alert" role="status">
          <span>
            {m.status === 'paused' ? 'The last run was paused' : 'The last run was interrupted (the app or the computer stopped)'}{' '}
            {resumedAfter((m.lastRun?.created ?? 0) + (m.lastRun?.updated ?? 0) + (m.lastRun?.unchanged ?? 0))}. Resume takes it up:
            nothing already verified is fetched again.
          </span>
        </div>
      )}
      <div className="mirror-run" aria-label="Current run" role="region">
        {/* Always in the page, empty while nothing has ended: a status region added with its words already in it is
            not announced by every screen reader. It holds one short sentence (the counters are beside it, not in it),
            and takes focus when a run pressed here ends. */}
        <p
          className={`run-end-sentence${endShown ? ` run-end-${ended.kind === 'audit' && ended.failed > 0 ? 'failed' : ended.status}` : ''}`}
          role="status"
          tabIndex={endShown ? -1 : undefined}
        >
          {endShown ? endWords!.sentence : ''}
        </p>
        {unknown ? (
          <div className="alert alert-warning run-unknown" role="alert">
            <span>{UNREACHABLE_RUN}</span>
          </div>
        ) : busy && progress ? (
          <RunProgress progress={progress} pausedSeconds={pausedBefore} ranSeconds={ranSoFar} />
        ) : busy ? (
          <p className="run-phase"><Spinner /> Starting…</p>
        ) : endShown ? (
          <div className="run-end">
            {endWords!.rest && <p className="run-end-rest">{endWords!.rest}</p>}
            {ended.kind === 'sync' && ended.status !== 'error' && <Counters counts={ended} />}
            {ended.kind === 'sync' && ended.failed > 0 && (
              <div className="run-end-actions">
                <button type="button" className="btn-secondary" onClick={(event) => openFailures(event.currentTarget)}>
                  Show the failures
                </button>
              </div>
            )}
            {ended.notes !== undefined && ended.notes.length > 0 && (
              <details className="run-notes" open={ended.heldBack === true || ended.notes.length <= 3}>
                <summary>What the run noted ({ended.notes.length})</summary>
                <ul>
                  {ended.notes.map((note, i) => (
                    <li key={i}>{note}</li>
                  ))}
                </ul>
              </details>
            )}
            {ended.heldBack === true && m.options.deletePolicy !== 'keep' && (
              <div className="run-held-back">
                {/* aria-disabled, not disabled, while the request is under way: a disabled button drops focus to <body>. */}
                <button type="button" className="btn-secondary" disabled={!usable} aria-disabled={action.isPending || undefined} onClick={() => {
                    if (action.isPending) return;
                    aim('run');
                    // As many as were shown: should the Source list even less by now, they are held back again.
                    action.mutate({ action: 'start', mode: 'baseline', allowMassDelete: ended.kept ?? 0 });
                  }}
                >
                  {m.options.deletePolicy === 'delete' ? 'Delete' : 'Quarantine'} the {formatCount(ended.kept ?? 0)} anyway
                </button>
                <span className="muted"> A baseline that removes them, now that you know.</span>
              </div>
            )}
          </div>
        ) : m.lastRun ? (
          <p className="run-last">
            {/* How it ended first (cancelled, interrupted, with failures): after a restart nothing else here says so. */}
            Last run: {lastRunLine(m.lastRun)} · {countsLine(m.lastRun)}
          </p>
        ) : (
          <p className="run-last">No run yet: “Sync now” makes the first baseline.</p>
        )}
      </div>
      <div role="tablist" className="tabs" aria-label="Mirror" onKeyDown={onTabKey}>
        {tabs.map((t) => (
          <button
            key={t.id}
            id={`mirror-tab-${t.id}`}
            type="button"
            role="tab"
            aria-selected={t.id === tab}
            aria-controls={`mirror-panel-${t.id}`}
            tabIndex={t.id === tab ? 0 : -1}
            className="tab"
            onClick={() => setTab(t.id)}
          >
            {t.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`mirror-panel-${tab}`} aria-labelledby={`mirror-tab-${tab}`} className="mirror-panel">
        {tab === 'runs' ? (
          <RunHistory runs={m.runs} live={busy ? progress : null} />
        ) : tab === 'failures' ? (
          <FailuresTable
            path={m.path}
            runs={m.runs.filter((r) => r.kind !== 'audit')}
            live={busy ? progress : null}
            canRetry={usable && !busy}
            onRetry={(runId, uris) => {
              aim('run');
              action.mutate({ action: 'retry', retry: { runId, uris } });
            }}
          />
        ) : tab === 'audit' ? (
          <AuditReport
            path={m.path}
            canStart={usable && !busy}
            auditing={m.status === 'auditing'}
            onStart={() => aim('audit')}
            focusFrom={auditFocusFrom}
            deletePolicy={m.options.deletePolicy}
            onMend={() => {
              aim('run');
              action.mutate({ action: 'start', mode: 'baseline' });
            }}
          />
        ) : tab === 'access' ? (
          <AccessPanel key={m.path} m={m} canChange={usable && !busy} />
        ) : (
          <OptionsPanel key={m.path} m={m} canChange={usable && !busy} />
        )}
      </div>
    </section>
  );
}
