import { useId, useState } from 'react';
import type { FormEvent } from 'react';
import { TIMEOUT_RANGE, TIMEOUT_SECONDS } from '../../src-main/contract/limits.ts';
import type { Settings } from '../../src-main/contract/types.ts';
import { keptNote } from './kept-note.ts';
import { errorCode, errorField, errorMessage } from '../bridge/index.ts';
import { useAppInfo, useSaveSettings } from '../data/queries.ts';
import { TokenField } from './TokenField.tsx';
import { fieldOf, toPatch, toValues, unchanged } from './values.ts';
import type { Field, FormValues } from './values.ts';

interface Props {
  /** What the engine holds now; the form starts from it and compares against it. */
  stored: Settings;
}

export function SettingsForm({ stored }: Props) {
  const ids = useId();
  const save = useSaveSettings();
  const info = useAppInfo().data;
  const kept = keptNote(info);
  const [values, setValues] = useState<FormValues>(() => toValues(stored));
  const [local, setLocal] = useState<{ field: Field; message: string } | null>(null);
  const dirty = !unchanged(values, stored);
  // A token kept by an earlier version, for every host: sent nowhere until its Source is named.
  const unbound = stored.bearerToken !== null && stored.tokenOrigin === null;
  const savedNow = save.isSuccess && !dirty;

  const engineError = save.isError
    ? { code: errorCode(save.error), message: errorMessage(save.error), field: errorField(save.error) }
    : null;
  const invalidField = local?.field ?? (engineError?.code === 'invalid-arguments' ? fieldOf(engineError.field) : null);

  function edit(patch: Partial<FormValues>) {
    setValues((v) => ({ ...v, ...patch }));
    setLocal(null);
    // An old error or confirmation no longer describes what the form holds.
    if (!save.isPending) save.reset();
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    if (save.isPending) return;
    const result = toPatch(values);
    if ('field' in result) {
      setLocal(result);
      document.getElementById(`${ids}-${result.field}`)?.focus();
      return;
    }
    save.mutate(result.patch, { onSuccess: (settings) => setValues(toValues(settings)) });
  }

  return (
    <form className="settings-section" onSubmit={submit} noValidate aria-labelledby={`${ids}-title`}>
      <h3 id={`${ids}-title`} className="settings-h">Requests to Sources</h3>
      <div className="settings-fields">
        <div className="field">
          <label htmlFor={`${ids}-token`}>Bearer token</label>
          <TokenField
            id={`${ids}-token`}
            value={values.token}
            onChange={(token) => edit({ token })}
            invalid={invalidField === 'token'}
            describedBy={`${ids}-token-note ${ids}-token-kept${unbound ? ` ${ids}-token-unbound` : ''}`}
            // The form appears once the settings are read, after the dialog took focus: it moves here.
            autoFocus
          />
          <p id={`${ids}-token-note`} className="field-hint">
            Sent as <code>Authorization: Bearer …</code> to the Source named below, and to no other host: not to
            another host its documents link to, not after a redirect elsewhere, not to a page you open from it. Leave
            empty for none. A mirror of that Source keeps a copy of the token it last ran with, and goes on using it
            when this field is emptied. A sign-in kept for a Source, or a mirror&apos;s own user name and password or
            token, is sent instead.
          </p>
          <p id={`${ids}-token-kept`} className={kept.warn ? 'settings-warning' : 'field-hint'}>
            {kept.text}
          </p>
          {unbound && (
            <p id={`${ids}-token-unbound`} className="settings-warning">
              This token was kept from an earlier version, which sent it to every host the app reached. It is now sent
              to no Source until you give the address of the Source it is for below and save (or empty the field).
            </p>
          )}
        </div>
        <div className="field">
          <label htmlFor={`${ids}-origin`}>Source the token is for</label>
          <input
            id={`${ids}-origin`}
            type="text"
            inputMode="url"
            autoComplete="off"
            spellCheck={false}
            placeholder="https://example.org"
            value={values.origin}
            onChange={(e) => edit({ origin: e.target.value })}
            aria-invalid={invalidField === 'origin' || undefined}
            aria-describedby={`${ids}-origin-note`}
          />
          <p id={`${ids}-origin-note`} className={`field-hint${invalidField === 'origin' ? ' error-text' : ''}`}>
            {local?.field === 'origin'
              ? local.message
              : 'Any address of the Source, or its host name: the token goes to its scheme, host and port only.'}
          </p>
        </div>
        <div className="field">
          <label htmlFor={`${ids}-timeout`}>Timeout (seconds)</label>
          <input
            id={`${ids}-timeout`}
            type="number"
            inputMode="numeric"
            min={TIMEOUT_SECONDS.min}
            max={TIMEOUT_SECONDS.max}
            step={1}
            value={values.seconds}
            onChange={(e) => edit({ seconds: e.target.value })}
            aria-invalid={invalidField === 'timeout' || undefined}
            aria-describedby={`${ids}-timeout-note`}
            className="input-number"
          />
          <p id={`${ids}-timeout-note`} className={`field-hint${invalidField === 'timeout' ? ' error-text' : ''}`}>
            {local?.field === 'timeout'
              ? local.message
              : invalidField === 'timeout'
                ? `Must be ${TIMEOUT_RANGE}.`
                : `How long to wait for each request to a Source: ${TIMEOUT_RANGE}.`}
          </p>
        </div>
        {engineError && (
          <div className="alert alert-error dialog-alert" role="alert">
            <strong>Not saved</strong>
            <span>{engineError.message}</span>
          </div>
        )}
      </div>
      <div className="settings-actions">
        {/* aria-disabled, not disabled: a disabled button would drop the focus out of the dialog. */}
        <button type="submit" className="btn-primary" aria-disabled={save.isPending || undefined}>
          {save.isPending ? 'Saving…' : 'Save'}
        </button>
        <span className="ok-text" role="status">
          {savedNow ? '✓ Saved. Used from the next request on.' : dirty ? 'Not saved yet.' : ''}
        </span>
      </div>
    </form>
  );
}
