import { useId, useState } from 'react';
import type { FormEvent } from 'react';
import type { MirrorDeletePolicy, MirrorDetail } from '../../src-main/contract/types.ts';
import { errorField, errorMessage } from '../bridge/index.ts';
import { PolitenessFields } from './PolitenessFields.tsx';
import { RefusalLimitField } from './RefusalLimitField.tsx';
import { ScheduleField } from './ScheduleField.tsx';
import { useUpdateMirror } from './queries.ts';

type Field = 'deletePolicy' | 'concurrency' | 'delaySeconds' | 'syncEveryHours' | 'pauseAfterRefusalsSeconds';

/**
 * What the new-mirror form chose, changed later: what happens to the files the Source deletes, how politely the
 * mirror asks (connections, a pause between requests), and whether it syncs by itself. The next run uses what is
 * saved here.
 */
export function OptionsPanel({ m, canChange }: { m: MirrorDetail; canChange: boolean }) {
  const ids = useId();
  const save = useUpdateMirror();
  const [policy, setPolicy] = useState<MirrorDeletePolicy>(m.options.deletePolicy);
  const [concurrency, setConcurrency] = useState(String(m.options.concurrency));
  const [delay, setDelay] = useState(String(m.options.delaySeconds));
  const [every, setEvery] = useState(m.options.syncEveryHours);
  const [atMinute, setAtMinute] = useState(m.options.syncAtMinute);
  const [refusals, setRefusals] = useState(m.pauseAfterRefusalsSeconds === null ? '' : String(m.pauseAfterRefusalsSeconds));
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
      {
        path: m.path,
        deletePolicy: policy,
        concurrency: concurrency.trim() === '' ? Number.NaN : Number(concurrency),
        delaySeconds: delay.trim() === '' ? 0 : Number(delay),
        syncEveryHours: every,
        syncAtMinute: atMinute,
        pauseAfterRefusalsSeconds: refusals.trim() === '' ? null : Number(refusals),
      },
      { onSuccess: () => setDone('Saved. The next run uses them.') },
    );
  }

  const describedBy = (f: Field, hint: string) => (field === f ? `${hint} ${errorId}` : hint);
  return (
    <form className="mirror-form mirror-options" onSubmit={submit} noValidate aria-label="Options of this mirror">
      <PolitenessFields
        ids={ids}
        policy={policy}
        concurrency={concurrency}
        delay={delay}
        onPolicy={edit(setPolicy)}
        onConcurrency={edit(setConcurrency)}
        onDelay={edit(setDelay)}
        invalid={field}
        describedBy={describedBy}
      />
      <ScheduleField id={`${ids}-schedule`} value={every} atMinute={atMinute} onChange={edit(setEvery)} onAtMinute={edit(setAtMinute)} />
      <RefusalLimitField
        id={`${ids}-refusals`}
        value={refusals}
        onChange={edit(setRefusals)}
        invalid={field === 'pauseAfterRefusalsSeconds'}
        describedBy={(hint) => describedBy('pauseAfterRefusalsSeconds', hint)}
      />
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
