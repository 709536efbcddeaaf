import { TokenField } from '../settings/TokenField.tsx';

export interface SignInValues {
  scheme: 'basic' | 'bearer';
  user: string;
  password: string;
  token: string;
}

export const EMPTY_SIGN_IN: SignInValues = { scheme: 'basic', user: '', password: '', token: '' };

export type SignInField = 'user' | 'password' | 'token';

/** The arguments sources.signIn and sources.add take, or null when nothing was typed. */
export function signInArgs(v: SignInValues): { user: string; password: string } | { token: string } | null {
  if (v.scheme === 'bearer') return v.token === '' ? null : { token: v.token };
  return v.user === '' && v.password === '' ? null : { user: v.user, password: v.password };
}

/** What is missing before a round trip (main checks everything again). */
export function missing(v: SignInValues): { field: SignInField; message: string } | null {
  if (v.scheme === 'bearer') return v.token === '' ? { field: 'token', message: 'Enter the token.' } : null;
  if (v.user === '') return { field: 'user', message: 'Enter the user name.' };
  if (v.password === '') return { field: 'password', message: 'Enter the password.' };
  return null;
}

/**
 * A user name and password (HTTP basic) or a bearer token for one Source. Secrets are only ever typed here: the app
 * never sends one back.
 */
export function SignInFields({
  id,
  values,
  onChange,
  invalid,
  hint,
}: {
  id: string;
  values: SignInValues;
  onChange(values: SignInValues): void;
  invalid: SignInField | null;
  hint: string;
}) {
  const hintId = `${id}-hint`;
  return (
    <div className="sign-in-fields">
      <fieldset className="sign-in-scheme">
        <legend>Sign in with</legend>
        <label className="radio">
          <input type="radio" name={`${id}-scheme`} checked={values.scheme === 'basic'} onChange={() => onChange({ ...values, scheme: 'basic' })} />
          A user name and password
        </label>
        <label className="radio">
          <input type="radio" name={`${id}-scheme`} checked={values.scheme === 'bearer'} onChange={() => onChange({ ...values, scheme: 'bearer' })} />
          A token
        </label>
      </fieldset>
      {values.scheme === 'basic' ? (
        <>
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
              aria-describedby={hintId}
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
              describedBy={hintId}
            />
          </div>
        </>
      ) : (
        <div className="field">
          <label htmlFor={`${id}-token`}>Token</label>
          <TokenField id={`${id}-token`} value={values.token} onChange={(token) => onChange({ ...values, token })} invalid={invalid === 'token'} describedBy={hintId} />
        </div>
      )}
      <p id={hintId} className="field-hint">
        {hint}
      </p>
    </div>
  );
}
