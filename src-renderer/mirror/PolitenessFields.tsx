// The options a mirror is made with and can change later: what happens to the files the Source deletes, and how
// politely it asks (connections, a pause between requests). One set of fields for the new-mirror form
// (CreateMirror) and the Options tab (OptionsPanel), so that both say the same.
import type { ReactNode } from 'react';
import { MIRROR_LIMITS } from '../../src-main/contract/commands.ts';
import type { MirrorDeletePolicy } from '../../src-main/contract/types.ts';

export const POLICIES: { value: MirrorDeletePolicy; label: string; hint: string }[] = [
  // A run's end counts them ("3 resources the Source no longer lists were kept"); the audit names them, as kept.
  { value: 'keep', label: 'Keep the files', hint: 'Nothing is deleted; each run says how many the Source deleted, and an audit lists them.' },
  { value: 'quarantine', label: 'Move them to quarantine', hint: 'Into .resourcesync/quarantine/ inside the mirror, where they can be looked at or restored.' },
  { value: 'delete', label: 'Delete them', hint: 'The mirror follows the Source exactly.' },
];

export function PolitenessFields(props: {
  /** useId() of the form: the fields' ids start with it. */
  ids: string;
  policy: MirrorDeletePolicy;
  concurrency: string;
  delay: string;
  onPolicy: (policy: MirrorDeletePolicy) => void;
  onConcurrency: (value: string) => void;
  onDelay: (value: string) => void;
  /** The field an error is about, if any. */
  invalid: string | null;
  /** The `aria-describedby` of a field: its hint, and its error when it has one. */
  describedBy: (field: 'concurrency' | 'delaySeconds', hint: string) => string;
  /** The error shown under a field, where the form shows errors under their fields. */
  errorOf?: (field: 'concurrency' | 'delaySeconds') => ReactNode;
}) {
  const { ids, invalid, describedBy } = props;
  return (
    <>
      <fieldset className="field">
        <legend>When the Source deletes a resource</legend>
        {POLICIES.map((p) => (
          <label key={p.value} className="radio">
            <input
              type="radio"
              name={`${ids}-policy`}
              value={p.value}
              checked={props.policy === p.value}
              onChange={() => props.onPolicy(p.value)}
              aria-invalid={invalid === 'deletePolicy' || undefined}
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
            value={props.concurrency}
            onChange={(e) => props.onConcurrency(e.target.value)}
            aria-invalid={invalid === 'concurrency' || undefined}
            aria-describedby={describedBy('concurrency', `${ids}-concurrency-hint`)}
          />
          <p id={`${ids}-concurrency-hint`} className="field-hint">
            Requests at a time to the Source: {MIRROR_LIMITS.concurrency.min} to {MIRROR_LIMITS.concurrency.max}. Be polite: 8 is plenty.
          </p>
          {props.errorOf?.('concurrency')}
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
            value={props.delay}
            onChange={(e) => props.onDelay(e.target.value)}
            aria-invalid={invalid === 'delaySeconds' || undefined}
            aria-describedby={describedBy('delaySeconds', `${ids}-delay-hint`)}
          />
          <p id={`${ids}-delay-hint`} className="field-hint">
            Between any two requests, across all connections: {MIRROR_LIMITS.delaySeconds.min} to {MIRROR_LIMITS.delaySeconds.max}.
          </p>
          {props.errorOf?.('delaySeconds')}
        </div>
      </div>
    </>
  );
}
