import { useId, useState } from 'react';
import type { FormEvent } from 'react';
import { MIRROR_LIMITS } from '../../src-main/contract/commands.ts';
import type { MirrorDeletePolicy, MirrorDetail } from '../../src-main/contract/types.ts';
import { errorField, errorMessage } from '../bridge/index.ts';
import { POLICIES } from './CreateMirror.tsx';
import { useUpdateMirror } from './queries.ts';

type Field = 'deletePolicy' | 'concurrency' | 'delaySeconds';

/**
 * What the new-mirror form chose, changed later: what happens to the files the Source deletes, and how politely the
 * mirror asks (connections, a pause between requests). The next run uses what is saved here.
 */
export function OptionsPanel({ m, canChange }: { m: MirrorDetail; canChange: boolean }) {
  const ids = useId();
  const save = useUpdateMirror();
  const [policy, setPolicy] = useState<MirrorDeletePolicy>(m.options.deletePolicy);
  const [concurrency, setConcurrency] = useState(String(m.options.concurrency));
  const [delay, setDelay] = useState(String(m.options.delaySeconds));
  const [done, setDone] = useState<string | null>(null);
  const field = save.isError ? (errorField(save.error) as Field | null) : null;
  const errorId = `${ids}-error`;

  function edit<T>(set: (value: T) => void) {
    return (value: T) => {
      set(value);
      setDone(null);
      if (!save.isPending) save.reset();
    };
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    if (save.isPending || !canChange) return;
    save.mutate(
      { path: m.path, deletePolicy: policy, concurrency: concurrency.trim() === '' ? Number.NaN : Number(concurrency), delaySeconds: delay.trim() === '' ? 0 : Number(delay) },
      { onSuccess: () => setDone('Saved. The next run uses them.') },
    );
  }

  const describedBy = (f: Field, hint: string) => (field === f ? `${hint} ${errorId}` : hint);
  return (
    <form className="mirror-form mirror-options" onSubmit={submit} noValidate aria-label="Options of this mirror">
      <fieldset className="field">
        <legend>When the Source deletes a resource</legend>
        {POLICIES.map((p) => (
          <label key={p.value} className="radio">
            <input
              type="radio"
              name={`${ids}-policy`}
              value={p.value}
              checked={policy === p.value}
              onChange={() => edit(setPolicy)(p.value)}
              aria-invalid={field === 'deletePolicy' || undefined}
            />
            <span>
              {p.label} <span className="muted">— {p.hint}</span>
            </span>
          </label>
        ))}
      </fieldset>
      <div className="field-pair">
        <div className="field">
          <label htmlFor={`${ids}-concurrency`}>Connections</label>
          <input
            id={`${ids}-concurrency`}
            type="number"
            className="input-number"
            min={MIRROR_LIMITS.concurrency.min}
            max={MIRROR_LIMITS.concurrency.max}
            step={1}
            value={concurrency}
            onChange={(e) => edit(setConcurrency)(e.target.value)}
            aria-invalid={field === 'concurrency' || undefined}
            aria-describedby={describedBy('concurrency', `${ids}-concurrency-hint`)}
          />
          <p id={`${ids}-concurrency-hint`} className="field-hint">
            Requests at a time to the Source: {MIRROR_LIMITS.concurrency.min} to {MIRROR_LIMITS.concurrency.max}.
          </p>
        </div>
        <div className="field">
          <label htmlFor={`${ids}-delay`}>Pause between requests (seconds)</label>
          <input
            id={`${ids}-delay`}
            type="number"
            className="input-number"
            min={MIRROR_LIMITS.delaySeconds.min}
            max={MIRROR_LIMITS.delaySeconds.max}
            step={0.1}
            value={delay}
            onChange={(e) => edit(setDelay)(e.target.value)}
            aria-invalid={field === 'delaySeconds' || undefined}
            aria-describedby={describedBy('delaySeconds', `${ids}-delay-hint`)}
          />
          <p id={`${ids}-delay-hint`} className="field-hint">
            Between any two requests, across all connections: {MIRROR_LIMITS.delaySeconds.min} to {MIRROR_LIMITS.delaySeconds.max}.
          </p>
        </div>
      </div>
      {save.isError && (
        <div className="alert alert-error" role="alert">
          <strong>Not saved.</strong> <span id={errorId}>{errorMessage(save.error)}</span>
        </div>
      )}
      <div className="settings-actions">
        <button type="submit" className="btn-primary" aria-disabled={save.isPending || !canChange || undefined}>
          {save.isPending ? 'Saving…' : 'Save options'}
        </button>
        <span className="ok-text" role="status">
          {done ?? (canChange ? '' : 'Can be changed when the run has ended.')}
        </span>
      </div>
    </form>
  );
}
