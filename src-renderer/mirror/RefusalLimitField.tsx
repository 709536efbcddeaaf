// How long the Source may refuse every request of a run before the run pauses (the Options tab). Kept in the mirror's
// folder, where `rsdesk sync --pause-after-refusals` keeps it: both change the one value. Empty: the default.
import { REFUSAL_SECONDS } from '../../src-main/contract/limits.ts';

export function RefusalLimitField(props: {
  id: string;
  /** Whole seconds as typed; '' for the default. */
  value: string;
  onChange: (value: string) => void;
  invalid: boolean;
  /** The `aria-describedby`: its hint, and its error when it has one. */
  describedBy: (hint: string) => string;
}) {
  const { id } = props;
  return (
    <div className="field">
      <label htmlFor={id}>Pause the run when the Source refuses everything for (seconds)</label>
      <input
        id={id}
        type="number"
        className="input-number"
        min={REFUSAL_SECONDS.min}
        max={REFUSAL_SECONDS.max}
        step={1}
        placeholder={String(REFUSAL_SECONDS.default)}
        value={props.value}
        onChange={(e) => props.onChange(e.target.value)}
        aria-invalid={props.invalid || undefined}
        aria-describedby={props.describedBy(`${id}-hint`)}
      />
      <p id={`${id}-hint`} className="field-hint">
        When every request is answered "busy, come back later" (HTTP 503 or 429) or not at all for this long in a row, the
        run pauses instead of waiting on: what it verified is kept, and Resume or the next sync goes on from there. Empty:{' '}
        {REFUSAL_SECONDS.default.toLocaleString('en')} (30 minutes); at most {REFUSAL_SECONDS.max.toLocaleString('en')} (a week).
      </p>
    </div>
  );
}
