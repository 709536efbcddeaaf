import { useState } from 'react';

interface Props {
  id: string;
  value: string;
  onChange(value: string): void;
  invalid: boolean;
  describedBy: string;
  autoFocus?: boolean;
  /** What the field holds, for the toggle's name ("Show token"). */
  what?: string;
  /** Instead of the default ("None" for a token). */
  placeholder?: string;
}

/** A secret field with a show/hide toggle, so a pasted token can be checked before it is saved. */
export function TokenField({ id, value, onChange, invalid, describedBy, autoFocus = false, what = 'token', placeholder }: Props) {
  const [shown, setShown] = useState(false);
  return (
    <div className="secret">
      <input
        id={id}
        type={shown ? 'text' : 'password'}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        placeholder={placeholder ?? (what === 'token' ? 'None' : undefined)}
        autoFocus={autoFocus}
        autoComplete="off"
        autoCapitalize="off"
        spellCheck={false}
        aria-invalid={invalid || undefined}
        aria-describedby={describedBy}
        className={shown ? 'mono' : undefined}
      />
      <button
        type="button"
        className="btn-secondary"
        aria-controls={id}
        aria-label={shown ? `Hide ${what}` : `Show ${what}`}
        onClick={() => setShown(!shown)}
      >
        {shown ? 'Hide' : 'Show'}
      </button>
    </div>
  );
}
