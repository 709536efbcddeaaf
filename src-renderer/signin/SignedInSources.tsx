import { useId, useState } from 'react';
import { errorMessage } from '../bridge/index.ts';
import { useSignIns, useSignOut } from './queries.ts';

/**
 * The Sources this app signs in to (kept per origin), each with Sign out. Shown only when there is one: a person who
 * never signed in to a Source is not asked about it.
 */
export function SignedInSources() {
  const id = useId();
  const list = useSignIns();
  const signOut = useSignOut();
  const [done, setDone] = useState<string | null>(null);
  const signIns = list.data ?? [];
  if (signIns.length === 0 && done === null) return null;

  function out(origin: string) {
    if (signOut.isPending) return;
    signOut.mutate(origin, {
      onSuccess: () => {
        setDone(`Signed out of ${origin}. Its documents are asked for without a sign-in from now on; its mirrors keep their own.`);
        // The button that had the focus is gone: the section's heading takes it.
        requestAnimationFrame(() => document.getElementById(`${id}-title`)?.focus());
      },
    });
  }

  return (
    <section className="settings-section" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`} className="settings-h" tabIndex={-1}>
        Sources signed in to
      </h3>
      {signIns.length > 0 && (
        <ul className="signed-in-list">
          {signIns.map((s) => (
            <li key={s.origin}>
              <span className="mono">{s.origin}</span> <span className="muted">{s.scheme === 'basic' ? `as ${s.user}` : 'with a token'}</span>
              <button type="button" className="btn-small" aria-label={`Sign out of ${s.origin}`} onClick={() => out(s.origin)} aria-disabled={signOut.isPending || undefined}>
                Sign out
              </button>
            </li>
          ))}
        </ul>
      )}
      {signOut.isError && (
        <div className="alert alert-error" role="alert">
          <span>{errorMessage(signOut.error)}</span>
        </div>
      )}
      <p className="ok-text signed-in-status" role="status">
        {done ?? ''}
      </p>
    </section>
  );
}
