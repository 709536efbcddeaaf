import { useId, useState } from 'react';
import type { FormEvent } from 'react';
import type { MirrorDetail } from '../../src-main/contract/types.ts';
import { errorMessage } from '../bridge/index.ts';
import { TokenField } from '../settings/TokenField.tsx';
import { useSetToken } from './queries.ts';

/**
 * A bearer token of the mirror's own: sealed like a password, sent to its Source's origin only, and not replaced by
 * the token of Settings. The next run and the next batch of live notifications use it.
 */
export function TokenForm({ m, canChange, kept }: { m: MirrorDetail; canChange: boolean; kept: string }) {
  const id = useId();
  const save = useSetToken(m.path);
  const [token, setToken] = useState('');
  const [local, setLocal] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const own = m.access.scheme === 'bearer';
  const origin = m.access.origin ?? 'the Source';

  function submit(event: FormEvent) {
    event.preventDefault();
    if (save.isPending || !canChange) return;
    if (token === '') {
      setLocal('Enter the token.');
      document.getElementById(`${id}-token`)?.focus();
      return;
    }
    save.mutate(token, {
      onSuccess: () => {
        setToken('');
        setDone('Saved. The next run and the next live notifications send this token.');
      },
    });
  }

  function remove() {
    if (save.isPending || !canChange) return;
    save.mutate(null, { onSuccess: () => setDone('Removed. The mirror sends the bearer token of Settings again, if one is set for this Source.') });
  }

  return (
    <form className="access-form" onSubmit={submit} noValidate aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`} className="settings-h">
        A token of its own (bearer)
      </h3>
      <div className="field">
        <label htmlFor={`${id}-token`}>Token</label>
        <TokenField
          id={`${id}-token`}
          value={token}
          onChange={(value) => {
            setToken(value);
            setLocal(null);
            setDone(null);
            if (!save.isPending) save.reset();
          }}
          invalid={local !== null || save.isError}
          placeholder={own && m.access.scheme === 'bearer' && m.access.kept ? 'Kept (not shown): type a new one to replace it' : 'None'}
          describedBy={`${id}-hint`}
        />
        <p id={`${id}-hint`} className="field-hint">
          {`Sent as "Authorization: Bearer …" to ${origin} only, instead of the token of Settings and instead of a user name and password. Never shown again. ${kept}`}
        </p>
      </div>
      {local && (
        <p className="error-text" role="alert">
          {local}
        </p>
      )}
      {save.isError && (
        <div className="alert alert-error" role="alert">
          <strong>Not saved.</strong> <span>{errorMessage(save.error)}</span>
        </div>
      )}
      <div className="settings-actions">
        <button type="submit" className="btn-primary" aria-disabled={save.isPending || !canChange || undefined}>
          {save.isPending ? 'Saving…' : own ? 'Save new token' : 'Save token'}
        </button>
        {own && (
          <button type="button" className="btn-secondary" onClick={remove} aria-disabled={save.isPending || !canChange || undefined}>
            Remove token
          </button>
        )}
        <span className="ok-text" role="status">
          {done ?? ''}
        </span>
      </div>
    </form>
  );
}
