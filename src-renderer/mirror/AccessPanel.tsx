import { useId, useState } from 'react';
import type { FormEvent } from 'react';
import type { MirrorDetail } from '../../src-main/contract/types.ts';
import { errorField, errorMessage } from '../bridge/index.ts';
import { useAppInfo } from '../data/queries.ts';
import type { AppInfo } from '../../src-main/contract/types.ts';
import { BasicFields, type BasicValues } from './BasicFields.tsx';
import { useSetCredentials } from './queries.ts';
import { HeadersForm } from './HeadersForm.tsx';
import { TokenForm } from './TokenForm.tsx';

/**
 * How the mirror signs in to its Source: the bearer token of Settings, or a user name and password (HTTP basic) or a
 * token of its own, sent to the Source's origin only and kept sealed on this computer; and its extra request headers.
 * The next run and the next batch of live notifications use what is saved here.
 */
export function AccessPanel({ m, canChange }: { m: MirrorDetail; canChange: boolean }) {
  const ids = useId();
  const save = useSetCredentials(m.path);
  const kept = passwordKept(useAppInfo().data);
  const [values, setValues] = useState<BasicValues>({ user: m.access.scheme === 'basic' ? m.access.user : '', password: '' });
  const [local, setLocal] = useState<{ field: 'user' | 'password'; message: string } | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const access = m.access;
  const origin = access.origin ?? 'the Source';
  const engineField = save.isError ? errorField(save.error) : null;
  const invalid = local?.field ?? (engineField === 'user' || engineField === 'password' ? engineField : null);

  function edit(next: BasicValues) {
    setValues(next);
    setLocal(null);
    setDone(null);
    if (!save.isPending) save.reset();
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    if (save.isPending || !canChange) return;
    // The same checks main makes, said before the round trip; main checks again whatever comes.
    const problem: typeof local =
      values.user === '' ? { field: 'user', message: 'Enter the user name.' } : values.password === '' ? { field: 'password', message: 'Enter the password.' } : null;
    if (problem) {
      setLocal(problem);
      document.getElementById(`${ids}-${problem.field}`)?.focus();
      return;
    }
    save.mutate(
      { user: values.user, password: values.password },
      {
        onSuccess: () => {
          setValues({ user: values.user, password: '' });
          setDone('Saved. The next run and the next live notifications sign in with them.');
        },
      },
    );
  }

  function remove() {
    if (save.isPending || !canChange) return;
    save.mutate(null, {
      onSuccess: () => {
        setValues({ user: '', password: '' });
        setDone('Removed. The mirror signs in with the bearer token of Settings again, if one is set for this Source.');
      },
    });
  }

  return (
    <div className="mirror-access">
      <p className="access-now">
        {access.scheme === 'basic' ? (
          <>
            Signs in to <span className="mono">{origin}</span> as <strong>{access.user}</strong> with a password
            {access.kept ? ' kept on this computer.' : ', but this computer does not have it: enter it again below.'}
          </>
        ) : access.scheme === 'bearer' ? (
          <>
            Signs in to <span className="mono">{origin}</span> with a token of its own
            {access.kept ? ' kept on this computer.' : ', but this computer does not have it: enter it again below.'}
          </>
        ) : (
          <>
            Sends the bearer token of Settings (if one is set) to <span className="mono">{origin}</span>. Only a
            token set there for this Source is sent. A Source that asks for a user name and password, or a token of this mirror's own, gets them from here.
          </>
        )}
      </p>
      {(access.scheme === 'basic' || access.scheme === 'bearer') && !access.kept && (
        <div className="alert alert-warning" role="status">
          <span>The {access.scheme === 'basic' ? 'password' : 'token'} of this mirror is not kept on this computer: runs stop before any request until it is given.</span>
        </div>
      )}
      <form className="access-form" onSubmit={submit} noValidate aria-labelledby={`${ids}-title`}>
        <h3 id={`${ids}-title`} className="settings-h">User name and password (HTTP basic)</h3>
        <BasicFields
          id={ids}
          values={values}
          onChange={edit}
          invalid={invalid}
          hint={`Sent to ${origin} only: never to another host, nor after a redirect elsewhere. The password is never shown again. ${kept}`}
        />
        {local && (
          <p className="error-text" role="alert">{local.message}</p>
        )}
        {save.isError && (
          <div className="alert alert-error" role="alert">
            <strong>Not saved.</strong> <span>{errorMessage(save.error)}</span>
          </div>
        )}
        <div className="settings-actions">
          <button type="submit" className="btn-primary" aria-disabled={save.isPending || !canChange || undefined}>
            {save.isPending ? 'Saving…' : access.scheme === 'basic' ? 'Save new password' : 'Save'}
          </button>
          {access.scheme === 'basic' && (
            <button type="button" className="btn-secondary" onClick={remove} aria-disabled={save.isPending || !canChange || undefined}>
              Remove user name and password
            </button>
          )}
          <span className="ok-text" role="status">
            {done ?? (canChange ? '' : 'Can be changed when the run has ended.')}
          </span>
        </div>
      </form>
      <TokenForm m={m} canChange={canChange} kept={kept} />
      <HeadersForm m={m} canChange={canChange} />
    </div>
  );
}

/** Where the password is kept at rest, in plain words. */
export function passwordKept(info: Pick<AppInfo, 'adapter' | 'secrets'> | undefined): string {
  if (info?.adapter === 'electron') {
    return info.secrets?.sealed
      ? 'It is kept sealed with the system keychain.'
      : "This computer offers the app no keychain, so it is kept unencrypted in the app's data folder, in a file only your user account can read.";
  }
  return 'rsdesk serve keeps it unencrypted in its data folder, in a file only your user account can read.';
}
