import { useId, useState } from 'react';
import type { FormEvent } from 'react';
import type { SignInResult } from '../../src-main/contract/types.ts';
import { errorCode, errorField, errorMessage } from '../bridge/index.ts';
import { useAppInfo } from '../data/queries.ts';
import { passwordKept } from '../mirror/AccessPanel.tsx';
import { EMPTY_SIGN_IN, missing, SignInFields, signInArgs, type SignInField, type SignInValues } from './SignInFields.tsx';
import { useSignIn } from './queries.ts';

/** The hint under the fields: where the secret goes and where it is kept, in plain words. */
export function signInHint(origin: string, kept: string): string {
  return `Sent to ${origin} only, never to another host; used to read its documents and by new mirrors of it, never shown again. Sign out in Settings. ${kept.replace(/^It is/, 'The password or token is')}`;
}

/**
 * Signs in to the Source at `origin`: main tries the credentials on `url` first and keeps them only when the Source
 * takes them; what the Source refused is then read again by itself.
 */
export function SignInForm({ url, origin, onSignedIn }: { url: string; origin: string; onSignedIn?(result: SignInResult): void }) {
  const id = useId();
  const signIn = useSignIn();
  const kept = passwordKept(useAppInfo().data);
  const [values, setValues] = useState<SignInValues>(EMPTY_SIGN_IN);
  const [local, setLocal] = useState<{ field: SignInField; message: string } | null>(null);
  const engineField = signIn.isError ? errorField(signIn.error) : null;
  const refusedHere = signIn.isError && errorCode(signIn.error) === 'sign-in';
  const invalid: SignInField | null =
    local?.field ??
    (engineField === 'user' || engineField === 'password' || engineField === 'token' ? engineField : refusedHere ? (values.scheme === 'bearer' ? 'token' : 'password') : null);

  function edit(next: SignInValues) {
    setValues(next);
    setLocal(null);
    if (!signIn.isPending) signIn.reset();
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    if (signIn.isPending) return;
    const problem = missing(values);
    if (problem) {
      setLocal(problem);
      document.getElementById(`${id}-${problem.field}`)?.focus();
      return;
    }
    signIn.mutate(
      { url, ...signInArgs(values)! },
      {
        onSuccess: (result) => {
          setValues({ ...EMPTY_SIGN_IN, scheme: values.scheme });
          onSignedIn?.(result);
        },
      },
    );
  }

  return (
    <form className="sign-in-form" onSubmit={submit} noValidate aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`} className="sign-in-title">
        Sign in to <span className="mono">{origin}</span>
      </h3>
      <SignInFields id={id} values={values} onChange={edit} invalid={invalid} hint={signInHint(origin, kept)} />
      {local && (
        <p className="error-text" role="alert">
          {local.message}
        </p>
      )}
      {signIn.isError && (
        <div className="alert alert-error" role="alert">
          <strong>Not signed in.</strong> <span>{errorMessage(signIn.error)}</span>
        </div>
      )}
      <div className="settings-actions">
        <button type="submit" className="btn-primary" aria-disabled={signIn.isPending || undefined}>
          {signIn.isPending ? 'Signing in…' : 'Sign in'}
        </button>
        <span className="ok-text" role="status">
          {signIn.isSuccess ? `Signed in. Reading the Source again…` : ''}
        </span>
      </div>
    </form>
  );
}
