import { TokenField } from '../settings/TokenField.tsx';

export interface BasicValues {
  user: string;
  password: string;
}

/**
 * A user name and a password for HTTP basic authentication. The password is only ever typed here: the engine never
 * sends one back, so the field starts empty and is emptied once saved.
 */
export function BasicFields({
  id,
  values,
  onChange,
  invalid,
  hint,
  errorId,
}: {
  id: string;
  values: BasicValues;
  onChange(values: BasicValues): void;
  /** The field the engine (or the form) found wrong. */
  invalid: 'user' | 'password' | null;
  hint?: string;
  /** The element saying what is wrong with the invalid field. */
  errorId?: string;
}) {
  const describedBy = (field: 'user' | 'password') => [hint ? `${id}-hint` : '', invalid === field && errorId ? errorId : ''].filter(Boolean).join(' ');
  return (
    <div className="field-pair">
      <div className="field">
        <label htmlFor={`${id}-user`}>User name</label>
        <input
          id={`${id}-user`}
          type="text"
          value={values.user}
          onChange={(e) => onChange({ ...values, user: e.target.value })}
          autoComplete="off"
          autoCapitalize="off"
          spellCheck={false}
          aria-invalid={invalid === 'user' || undefined}
          aria-describedby={describedBy('user') || undefined}
        />
      </div>
      <div className="field">
        <label htmlFor={`${id}-password`}>Password</label>
        <TokenField
          id={`${id}-password`}
          what="password"
          value={values.password}
          onChange={(password) => onChange({ ...values, password })}
          invalid={invalid === 'password'}
          describedBy={describedBy('password')}
        />
      </div>
      {hint && (
        <p id={`${id}-hint`} className="field-hint basic-hint">
          {hint}
        </p>
      )}
    </div>
  );
}
