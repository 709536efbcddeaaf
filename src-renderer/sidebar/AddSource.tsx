import { useState } from 'react';
import type { FormEvent } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { DiscoveryStep, SavedSource } from '../../src-main/contract/types.ts';
import { errorCode, errorMessage, getBridge } from '../bridge/index.ts';
import { keys } from '../data/queries.ts';
import { useUi } from '../state/ui.ts';
import { DiscoverySteps } from './DiscoverySteps.tsx';

function newRunId(): string {
  return typeof crypto.randomUUID === 'function'
    ? crypto.randomUUID()
    : Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

interface Run {
  url: string;
  steps: DiscoveryStep[];
  running: boolean;
  error: { code: string | null; message: string } | null;
  added: SavedSource | null;
}

export function AddSource() {
  const client = useQueryClient();
  const [url, setUrl] = useState('');
  const [run, setRun] = useState<Run | null>(null);
  // Steps show while discovery runs and when it fails; after a success they fold into one line.
  const [stepsOpen, setStepsOpen] = useState<boolean | null>(null);
  const stepsShown = stepsOpen ?? (run !== null && (run.running || run.error !== null));

  async function submit(event: FormEvent) {
    event.preventDefault();
    const target = url.trim();
    if (!target || run?.running) return;
    const runId = newRunId();
    setRun({ url: target, steps: [], running: true, error: null, added: null });
    setStepsOpen(null);
    // Subscribe before invoking, so no step of this run is missed.
    const off = getBridge().on('discovery.step', (payload) => {
      if (payload.runId !== runId) return;
      setRun((r) => (r && r.running ? { ...r, steps: [...r.steps, payload.step] } : r));
    });
    try {
      const { source, discovery } = await getBridge().invoke('sources.add', { url: target, runId });
      client.setQueryData<SavedSource[]>(keys.sources, (list) =>
        list ? [...list.filter((s) => s.id !== source.id), source] : [source],
      );
      void client.invalidateQueries({ queryKey: keys.sources });
      // The result is the complete record; live events may have been dropped by a reconnecting stream.
      setRun({ url: target, steps: discovery.routes, running: false, error: null, added: source });
      useUi.getState().selectSource(source.id);
      setUrl('');
    } catch (error) {
      setRun((r) => (r ? { ...r, running: false, error: { code: errorCode(error), message: errorMessage(error) } } : r));
    } finally {
      off();
    }
  }

  return (
    <section className="add-source" aria-label="Add a Source">
      <form onSubmit={submit} className="add-form">
        <input
          type="url"
          inputMode="url"
          required
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          placeholder="https://example.org/ or a ResourceSync document URL"
          aria-label="Source URL"
          spellCheck={false}
          autoComplete="off"
        />
        <button type="submit" className="btn-primary" disabled={run?.running === true || url.trim() === ''}>
          {run?.running ? 'Discovering…' : 'Add Source'}
        </button>
      </form>
      {run && (
        <div className="discovery" aria-label="Discovery">
          <div className="discovery-head">
            <button
              type="button"
              className="discovery-title"
              aria-expanded={stepsShown}
              aria-controls="discovery-steps"
              title={run.url}
              onClick={() => setStepsOpen(!stepsShown)}
            >
              {run.running ? (
                <span>Discovering {run.url}</span>
              ) : run.error ? (
                <span className="discovery-failed">Discovery failed</span>
              ) : (
                <span className="discovery-ok">✓ Added {run.added?.name ?? ''}</span>
              )}
              <span className="discovery-stats">
                {run.steps.filter((s) => s.found).length}/{run.steps.length} routes found
              </span>
            </button>
            {!run.running && (
              <button type="button" className="btn-icon" aria-label="Dismiss discovery" onClick={() => setRun(null)}>
                ×
              </button>
            )}
          </div>
          {stepsShown && (
            <div id="discovery-steps">
              <DiscoverySteps steps={run.steps} running={run.running} />
            </div>
          )}
          {run.error && (
            <div className="alert alert-error" role="alert">
              <strong>Could not add {run.url}</strong>
              <span>{run.error.message}</span>
              {run.error.code && <span className="muted">({run.error.code})</span>}
            </div>
          )}
        </div>
      )}
    </section>
  );
}
