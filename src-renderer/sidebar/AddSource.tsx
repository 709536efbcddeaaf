import { useEffect, useId, useRef, useState } from 'react';
import type { FormEvent } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { AddSourceResult, DiscoveryStep, SavedSource } from '../../src-main/contract/types.ts';
import { normalizeStartUrl } from '../../src-main/engine/discovery/start-url.ts';
import { errorCode, errorField, errorMessage, getBridge } from '../bridge/index.ts';
import { signInNeeded } from '../bridge/errors.ts';
import { keys, useAppInfo } from '../data/queries.ts';
import { readAgain } from '../data/fresh.ts';
import { passwordKept } from '../mirror/AccessPanel.tsx';
import { signInHint } from '../signin/SignInForm.tsx';
import { EMPTY_SIGN_IN, missing, SignInFields, signInArgs, type SignInField, type SignInValues } from '../signin/SignInFields.tsx';
import { DiscoverySteps } from './DiscoverySteps.tsx';
import { DiscoveryOutcome, type Outcome } from './DiscoveryOutcome.tsx';
import { DiscoveryProgress } from './DiscoveryProgress.tsx';
import { discoverySummary } from './summary.ts';
import { revealAdded } from './revealAdded.ts';
import { SOURCE_URL_ID } from './source-url.ts';

function newRunId(): string {
  return typeof crypto.randomUUID === 'function'
    ? crypto.randomUUID()
    : Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

export interface Run {
  runId: string;
  /** What discovery starts from: the pasted text as a URL (a bare host gets its scheme, as in the CLI). */
  url: string;
  steps: DiscoveryStep[];
  startedAt: number;
  /** The URL being fetched now, and since when. */
  fetching: { url: string; since: number } | null;
  outcome: Outcome;
}

/** The same wording for a bare host as the engine's; the engine judges, this only shows what will be fetched. */
function shownUrl(text: string): string {
  try {
    return normalizeStartUrl(text);
  } catch {
    return text;
  }
}

export function AddSource() {
  const client = useQueryClient();
  const [url, setUrl] = useState('');
  const [run, setRun] = useState<Run | null>(null);
  // Steps show while discovery runs and when it fails; after a success they fold into one line.
  const [stepsOpen, setStepsOpen] = useState<boolean | null>(null);
  const titleRef = useRef<HTMLButtonElement>(null);
  /** The URL field when Enter in it started the discovery, until it is typed in again. */
  const submittedFrom = useRef<HTMLInputElement | null>(null);
  const signInId = useId();
  const kept = passwordKept(useAppInfo().data);
  // "This Source needs a sign-in": credentials given before the first request (optional, folded away).
  const [ahead, setAhead] = useState(false);
  const [credentials, setCredentials] = useState<SignInValues>(EMPTY_SIGN_IN);
  const [aheadProblem, setAheadProblem] = useState<{ field: SignInField; message: string } | null>(null);
  const running = run?.outcome.kind === 'running';
  const stepsShown = stepsOpen ?? (run !== null && (running || run.outcome.kind === 'error'));
  const summary = run && discoverySummary(run.steps, running);

  function update(runId: string, change: (r: Run) => Run) {
    setRun((r) => (r && r.runId === runId ? change(r) : r));
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    const target = url.trim();
    if (!target || running) return;
    const active = document.activeElement;
    submittedFrom.current = active instanceof HTMLInputElement && active.form === event.currentTarget ? active : null;
    let signIn: ReturnType<typeof signInArgs> = null;
    if (ahead && signInArgs(credentials) !== null) {
      const problem = missing(credentials);
      if (problem) {
        setAheadProblem(problem);
        document.getElementById(`${signInId}-${problem.field}`)?.focus();
        return;
      }
      signIn = signInArgs(credentials);
    }
    void discover(target, signIn);
  }

  /** Once signed in after a refusal: the same URL is tried again by itself. */
  function again(target: string) {
    void discover(target, null);
  }

  async function discover(target: string, signIn: ReturnType<typeof signInArgs>) {
    const runId = newRunId();
    const now = Date.now();
    setRun({ runId, url: shownUrl(target), steps: [], startedAt: now, fetching: null, outcome: { kind: 'running' } });
    setStepsOpen(null);
    // Subscribe before invoking, so no step of this run is missed.
    const bridge = getBridge();
    let stepsSeen = 0;
    const offStep = bridge.on('discovery.step', (payload) => {
      if (payload.runId !== runId) return;
      stepsSeen++;
      update(runId, (r) => (r.outcome.kind === 'running' ? { ...r, steps: [...r.steps, payload.step] } : r));
    });
    const offFetching = bridge.on('discovery.fetching', (payload) => {
      if (payload.runId === runId) update(runId, (r) => ({ ...r, fetching: { url: payload.url, since: Date.now() } }));
    });
    let result: AddSourceResult | null = null;
    try {
      result = await bridge.invoke('sources.add', signIn ? { url: target, runId, signIn } : { url: target, runId });
      // Over HTTP the events travel on another connection than the reply: let the live steps catch up a moment,
      // so what was tried shows as it happened rather than all at once.
      const routes = result.discovery.routes.length;
      for (let waited = 0; stepsSeen < routes && waited < 500; waited += 25) await new Promise((r) => setTimeout(r, 25));
    } catch (error) {
      const locked = signInNeeded(error);
      const outcome: Outcome =
        errorCode(error) === 'cancelled'
          ? { kind: 'cancelled' }
          : locked
            ? { kind: 'sign-in', message: errorMessage(error), origin: locked.origin, refused: locked.refused, target }
            : { kind: 'error', message: errorMessage(error) };
      // Fields main found wrong in the folded sign-in are shown there.
      const field = errorField(error);
      if (signIn && (field === 'user' || field === 'password' || field === 'token')) setAheadProblem({ field, message: errorMessage(error) });
      update(runId, (r) => ({ ...r, fetching: null, outcome }));
    } finally {
      offStep();
      offFetching();
    }
    handOverFocus();
    if (result === null) return;
    const { source, created, discovery, pasted } = result;
    client.setQueryData<SavedSource[]>(keys.sources, (list) => (list ? [...list.filter((s) => s.id !== source.id), source] : [source]));
    readAgain(client, keys.sources);
    // The result is the complete record; live events may have been dropped by a reconnecting stream.
    update(runId, (r) => ({
      ...r,
      url: pasted.url,
      steps: discovery.routes,
      fetching: null,
      outcome: { kind: created ? 'added' : 'already-saved', source, refused: pasted.refused },
    }));
    setUrl('');
    if (signIn) {
      setCredentials(EMPTY_SIGN_IN);
      setAhead(false);
    }
    await revealAdded(client, source, pasted);
  }

  /**
   * The Cancel button goes away when discovery ends: focus moves to the result rather than to the page. Enter in the
   * URL field leads to the result too, as the Add Source button does (it turns disabled while discovery runs, and
   * focus leaves it); unless the field was typed in meanwhile, for another Source.
   */
  function handOverFocus() {
    const from = submittedFrom.current;
    submittedFrom.current = null;
    if (document.activeElement === null || document.activeElement === document.body) titleRef.current?.focus();
    else if (from !== null && document.activeElement === from) titleRef.current?.focus();
    else if ((document.activeElement as HTMLElement).dataset.cancel === 'discovery') {
      requestAnimationFrame(() => titleRef.current?.focus());
    }
  }

  function cancel() {
    if (!run || !running) return;
    update(run.runId, (r) => ({ ...r, outcome: { kind: 'running', cancelling: true } }));
    void getBridge()
      .invoke('discovery.cancel', { runId: run.runId })
      .catch(() => undefined);
  }

  // Escape in the field or on the running discovery cancels it.
  useEffect(() => {
    if (!running) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape' && (e.target as HTMLElement | null)?.closest('.add-source')) {
        // Cancelled from the field: focus stays there, for the URL to be put right.
        submittedFrom.current = null;
        cancel();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  });

  return (
    <section className="add-source" aria-label="Add a Source">
      <form onSubmit={submit} className="add-form">
        {/* Text, not type="url": a bare host name ("example.org", "127.0.0.1:5399") is a fine start. The placeholder is short enough to be read whole in the sidebar. */}
        <input
          type="text"
          inputMode="url"
          value={url}
          onChange={(e) => {
            setUrl(e.target.value);
            submittedFrom.current = null;
          }}
          id={SOURCE_URL_ID}
          placeholder="example.org or any URL"
          aria-label="Source URL"
          spellCheck={false}
          autoComplete="off"
          autoCapitalize="off"
        />
        <button type="submit" className="btn-primary" disabled={running || url.trim() === ''}>
          {running ? 'Discovering…' : 'Add Source'}
        </button>
      </form>
      <details className="sign-in-ahead" open={ahead} onToggle={(e) => setAhead((e.target as HTMLDetailsElement).open)}>
        <summary>This Source needs a sign-in</summary>
        <SignInFields
          id={signInId}
          values={credentials}
          onChange={(next) => {
            setCredentials(next);
            setAheadProblem(null);
          }}
          invalid={aheadProblem?.field ?? null}
          hint={`Tried before anything is added. ${signInHint("the Source's own address", kept)}`}
        />
        {aheadProblem && (
          <p className="error-text" role="alert">
            {aheadProblem.message}
          </p>
        )}
      </details>
      {run && (
        <div className={`discovery discovery-${run.outcome.kind}`} aria-label="Discovery">
          <div className="discovery-head">
            <button
              ref={titleRef}
              type="button"
              className="discovery-title"
              aria-expanded={stepsShown}
              aria-controls="discovery-steps"
              title={run.url}
              onClick={() => setStepsOpen(!stepsShown)}
            >
              <span className="discovery-title-text">
                <DiscoveryTitle run={run} />
                {summary && <span className="discovery-stats">{summary}</span>}
              </span>
            </button>
            {!running && (
              <button
                type="button"
                className="btn-icon"
                aria-label="Dismiss discovery"
                onClick={() => {
                  // The outcome goes away with this button, which left focus on <body>: the field, for the next Source.
                  setRun(null);
                  requestAnimationFrame(() => document.getElementById(SOURCE_URL_ID)?.focus());
                }}
              >
                ×
              </button>
            )}
          </div>
          {running && <DiscoveryProgress run={run} onCancel={cancel} />}
          <DiscoveryOutcome run={run} onSignedIn={again} />
          {stepsShown && (
            <div id="discovery-steps" className="discovery-steps" tabIndex={0} aria-label="Ways tried">
              <DiscoverySteps steps={run.steps} running={running} />
            </div>
          )}
        </div>
      )}
    </section>
  );
}

function DiscoveryTitle({ run }: { run: Run }) {
  const outcome = run.outcome;
  switch (outcome.kind) {
    case 'running':
      return <span>Discovering {run.url}</span>;
    case 'cancelled':
      return <span className="discovery-cancelled">Discovery cancelled</span>;
    case 'error':
      return <span className="discovery-failed">Discovery failed</span>;
    case 'sign-in':
      return <span className="discovery-failed">{outcome.refused ? 'Sign-in refused' : 'Sign-in needed'}</span>;
    default: {
      const mark = outcome.refused ? '⚠' : '✓';
      const what = outcome.kind === 'added' ? 'Added' : 'Already saved:';
      return (
        <span className={outcome.refused ? 'discovery-warned' : 'discovery-ok'}>
          <span aria-hidden="true">{mark} </span>
          {what} {outcome.source.name}
        </span>
      );
    }
  }
}
