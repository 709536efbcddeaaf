import { useEffect, useId, useRef, useState } from 'react';
import type { FormEvent, KeyboardEvent } from 'react';
import type { MirrorDeletePolicy, MirrorMode } from '../../src-main/contract/types.ts';
import { errorField, errorMessage, getBridge } from '../bridge/index.ts';
import { useAppInfo } from '../data/queries.ts';
import { capabilityLabel } from '../lib/capabilities.ts';
import { useMirrorUi } from '../state/mirror.ts';
import { BasicFields, type BasicValues } from './BasicFields.tsx';
import { focusWhenReady } from './focus.ts';
import { PolitenessFields } from './PolitenessFields.tsx';
import { useCreateMirror } from './queries.ts';

type Field = 'path' | 'concurrency' | 'delaySeconds' | 'maps' | 'user' | 'password';
const FIELDS = new Set<string>(['path', 'concurrency', 'delaySeconds', 'maps', 'user', 'password']);

/**
 * The field an error is about. Main names one only for the arguments' schema; what it finds later (a relative or
 * non-empty folder, a mapping it cannot read) it says in words, naming the folder or the mapping.
 */
function fieldOf(error: unknown, path: string): Field | null {
  const named = errorField(error);
  if (named !== null) return FIELDS.has(named) ? (named as Field) : null;
  const message = errorMessage(error);
  if (message.startsWith('Folder mapping')) return 'maps';
  const folder = path.trim().replace(/[\\/]+$/, '');
  if (message.includes("folder's full path") || (folder !== '' && message.includes(folder))) return 'path';
  return null;
}

const MODES: { value: MirrorMode; label: string }[] = [
  { value: 'auto', label: 'Automatic: a baseline now, only the changes afterwards' },
  { value: 'baseline', label: 'Baseline: compare with the whole Resource List every time' },
];

/** The form that makes a local mirror of a list: folder, first run, deletions, politeness, folder mappings. */
export function CreateMirror({ url, capability, sourceName }: { url: string; capability: string | undefined; sourceName: string | null }) {
  const ids = useId();
  const electron = useAppInfo().data?.adapter === 'electron';
  const create = useCreateMirror();
  const openMirror = useMirrorUi((s) => s.openMirror);
  const close = useMirrorUi((s) => s.close);
  const [folder, setFolder] = useState('');
  const [mode, setMode] = useState<MirrorMode>('auto');
  const [policy, setPolicy] = useState<MirrorDeletePolicy>('keep');
  const [concurrency, setConcurrency] = useState('8');
  const [delay, setDelay] = useState('0');
  const [maps, setMaps] = useState('');
  const [basic, setBasic] = useState<BasicValues>({ user: '', password: '' });
  const [startNow, setStartNow] = useState(true);
  const [choosing, setChoosing] = useState(false);
  const [chooseError, setChooseError] = useState<string | null>(null);
  const [startError, setStartError] = useState<string | null>(null);
  const invalid = create.isError ? fieldOf(create.error, create.variables?.path ?? folder) : null;
  // Said beside its field; an error about no field (or about the user name or password) in the alert at the end.
  const inline = invalid === 'path' || invalid === 'maps' || invalid === 'concurrency' || invalid === 'delaySeconds' ? invalid : null;
  const errorId = (field: Field) => `${ids}-${field}-error`;
  const alertId = `${ids}-error`;
  const formRef = useRef<HTMLFormElement>(null);
  const mapsRef = useRef<HTMLDetailsElement>(null);

  // The error may be out of sight (below open mappings): the invalid field, else the alert, is brought into view and
  // focused, so the person (and a screen reader, by the field's description) knows at once what to change.
  useEffect(() => {
    if (!create.isError && startError === null) return;
    const form = formRef.current;
    if (!form) return;
    if (invalid === 'maps' && mapsRef.current) mapsRef.current.open = true;
    const target =
      (invalid !== null ? form.querySelector<HTMLElement>(`[aria-invalid=true]`) : null) ?? form.querySelector<HTMLElement>('.mirror-form-error');
    target?.scrollIntoView({ block: 'center' });
    target?.focus({ preventScroll: true });
  }, [create.isError, create.error, startError, invalid]);

  /** What a field is described by: its hint, and what is wrong with it when it is. */
  const describedBy = (field: Field, hint: string) => (inline === field ? `${hint} ${errorId(field)}` : hint);
  const fieldError = (field: Field) =>
    inline === field ? (
      <p id={errorId(field)} className="field-hint error-text">
        {errorMessage(create.error)}
      </p>
    ) : null;

  /** Back to the document: focus returns to its "Mirror this…" (else the document in the tree), as a dialog's would. */
  function cancel() {
    const from = document.activeElement;
    close();
    focusWhenReady(
      () =>
        document.querySelector<HTMLElement>(`button[data-mirror-url="${CSS.escape(url)}"]`) ??
        document.querySelector<HTMLElement>('[role=treeitem][aria-selected=true]'),
      from,
    );
  }

  // Escape leaves the form as it leaves a dialog; a field that uses Escape itself (an open list) has taken it first.
  function onKeyDown(event: KeyboardEvent<HTMLElement>) {
    if (event.key !== 'Escape' || event.defaultPrevented || event.nativeEvent.isComposing) return;
    event.preventDefault();
    cancel();
  }

  async function choose() {
    setChoosing(true);
    setChooseError(null);
    try {
      const chosen = await getBridge().invoke('mirrors.chooseFolder', {});
      if (chosen.path) setFolder(chosen.path);
    } catch (error) {
      setChooseError(errorMessage(error));
    } finally {
      setChoosing(false);
    }
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    if (create.isPending) return;
    create.mutate(
      {
        url,
        path: folder,
        deletePolicy: policy,
        concurrency: Number(concurrency),
        delaySeconds: Number(delay),
        maps: maps.split('\n').map((m) => m.trim()).filter((m) => m !== ''),
        // Either part given: both go, and main says which one is missing.
        ...(basic.user !== '' || basic.password !== '' ? { user: basic.user || undefined, password: basic.password || undefined } : {}),
      },
      {
        onSuccess: (mirror) => {
          if (!startNow) return openMirror(mirror.path);
          getBridge()
            .invoke('runs.start', { path: mirror.path, mode })
            .then(() => openMirror(mirror.path))
            .catch((error: unknown) => setStartError(`The mirror was created, but its first run did not start: ${errorMessage(error)}`));
        },
      },
    );
  }

  return (
    <section className="mirror-view" aria-labelledby={`${ids}-title`} onKeyDown={onKeyDown}>
      <header className="mirror-header">
        <h2 id={`${ids}-title`} className="mirror-title">Mirror {capabilityLabel(capability)}{sourceName ? ` of ${sourceName}` : ''}</h2>
        <span className="mirror-sub mono">{url}</span>
        <span className="mirror-actions">
          <button type="button" className="btn-secondary" onClick={cancel}>Cancel</button>
        </span>
      </header>
      <form className="mirror-form" onSubmit={submit} noValidate ref={formRef}>
        <p className="field-hint">
          {capability === 'capabilitylist'
            ? 'The folder is kept in step with this Capability List: a baseline from its Resource List, then the changes from its Change List.'
            : 'The folder is kept in step with this list.'}{' '}
          Every file is checked against the hashes and lengths the Source gives before it is put in place.
        </p>
        <div className="field">
          <label htmlFor={`${ids}-folder`}>Folder</label>
          <div className="field-row">
            <input
              id={`${ids}-folder`}
              type="text"
              className="mono"
              value={folder}
              onChange={(e) => setFolder(e.target.value)}
              placeholder={electron ? 'Choose a folder' : '/full/path/to/a/new/folder'}
              aria-describedby={describedBy('path', `${ids}-folder-hint`)}
              aria-invalid={invalid === 'path' || undefined}
              spellCheck={false}
              autoFocus
            />
            {electron && (
              <button type="button" className="btn-secondary" onClick={() => void choose()} disabled={choosing}>
                {choosing ? 'Choosing…' : 'Choose…'}
              </button>
            )}
          </div>
          <p id={`${ids}-folder-hint`} className="field-hint">
            A new or empty folder (its full path; ~/ stands for your home folder), or one that is this list's mirror already. Its state is kept inside it, in
            .resourcesync/, so the folder can be moved and opened again.
          </p>
          {fieldError('path')}
          {chooseError && <p className="error-text" role="alert">{chooseError}</p>}
        </div>
        <fieldset className="field">
          <legend>First run</legend>
          {MODES.map((m) => (
            <label key={m.value} className="radio">
              <input type="radio" name={`${ids}-mode`} value={m.value} checked={mode === m.value} onChange={() => setMode(m.value)} />
              {m.label}
            </label>
          ))}
          <label className="radio">
            <input type="checkbox" checked={startNow} onChange={(e) => setStartNow(e.target.checked)} />
            Start it now
          </label>
        </fieldset>
        <PolitenessFields
          ids={ids}
          policy={policy}
          concurrency={concurrency}
          delay={delay}
          onPolicy={setPolicy}
          onConcurrency={setConcurrency}
          onDelay={setDelay}
          invalid={invalid}
          describedBy={describedBy}
          errorOf={fieldError}
        />
        <details className="field" ref={mapsRef}>
          <summary>Folder mappings</summary>
          <label htmlFor={`${ids}-maps`}>Mappings, one per line</label>
          {/* The same words as main's error about a mapping ("takes PREFIX=DIR"). */}
          <p id={`${ids}-maps-hint`} className="field-hint">
            <code>PREFIX=DIR</code>: resources whose URI starts with PREFIX go into the folder DIR inside the mirror, for
            example <code>https://example.org/data/=data</code>. A PREFIX not ending in / matches whole path segments:
            <code>https://example.org/data</code> takes <code>…/data/x</code>, not <code>…/database</code>. Without one,
            each resource goes to host/path.
          </p>
          <textarea
            id={`${ids}-maps`}
            aria-describedby={describedBy('maps', `${ids}-maps-hint`)}
            className="mono"
            rows={3}
            value={maps}
            onChange={(e) => setMaps(e.target.value)}
            aria-invalid={invalid === 'maps' || undefined}
            spellCheck={false}
          />
          {fieldError('maps')}
        </details>
        <details className="field" open={invalid === 'user' || invalid === 'password' || undefined}>
          <summary>User name and password</summary>
          <BasicFields
            id={`${ids}-basic`}
            values={basic}
            onChange={setBasic}
            invalid={invalid === 'user' || invalid === 'password' ? invalid : null}
            errorId={alertId}
            hint="Only when the Source asks for them (HTTP basic authentication). They are sent to the Source's own origin only, from the first request on; the password is kept on this computer, never in the mirror folder, and never shown again. Otherwise the sign-in kept for this Source is used, if there is one, else the bearer token of Settings, if one is set for this Source."
          />
        </details>
        {startError && (
          <div className="alert alert-error mirror-form-error" role="alert" tabIndex={-1}>
            <span>{startError}</span>
          </div>
        )}
        {create.isError && inline === null && (
          <div className="alert alert-error mirror-form-error" role="alert" tabIndex={-1}>
            <strong>The mirror was not created.</strong> <span id={alertId}>{errorMessage(create.error)}</span>
          </div>
        )}
        <div className="mirror-form-foot">
          <button type="submit" className="btn-primary" aria-disabled={create.isPending || undefined}>
            {create.isPending ? 'Creating…' : 'Create mirror'}
          </button>
        </div>
      </form>
    </section>
  );
}
