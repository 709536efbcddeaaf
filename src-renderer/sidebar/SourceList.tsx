import { useEffect, useRef, useState } from 'react';
import type { SavedSource } from '../../src-main/contract/types.ts';
import { errorMessage } from '../bridge/index.ts';
import { useRemoveSource, useRestoreSource, useSources } from '../data/queries.ts';
import { useUi } from '../state/ui.ts';
import { Spinner } from '../common/Spinner.tsx';
import { SOURCE_URL_ID } from './source-url.ts';

/** A Source just removed, which Undo brings back (with its id) until the next remove or a dismiss. */
interface Removed {
  source: SavedSource;
  wasSelected: boolean;
}

export function SourceList() {
  const sources = useSources();
  const remove = useRemoveSource();
  const restore = useRestoreSource();
  const selectedId = useUi((s) => s.sourceId);
  const selectSource = useUi((s) => s.selectSource);
  const [removed, setRemoved] = useState<Removed | null>(null);
  const undoRef = useRef<HTMLButtonElement>(null);

  // The remove button is gone with its row: focus goes to Undo, which is what one may want next.
  useEffect(() => {
    if (removed) undoRef.current?.focus();
  }, [removed]);

  function onRemove(source: SavedSource) {
    const wasSelected = source.id === selectedId;
    restore.reset();
    remove.mutate(source.id, {
      onSuccess: () => {
        if (wasSelected) selectSource(null);
        setRemoved({ source, wasSelected });
      },
    });
  }

  function onUndo() {
    if (!removed) return;
    restore.mutate(removed.source.id, {
      onSuccess: ({ source }) => {
        setRemoved(null);
        if (removed.wasSelected) selectSource(source.id);
        // Focus goes back to the restored Source.
        requestAnimationFrame(() =>
          document.querySelector<HTMLElement>(`.source[data-source-id="${source.id}"] .source-select`)?.focus(),
        );
      },
    });
  }

  const notice = removed && (
    <div className="undo-bar" role="status">
      <span>
        Removed <strong>{removed.source.name}</strong>.
      </span>
      <button ref={undoRef} type="button" className="btn-small" onClick={onUndo} aria-disabled={restore.isPending || undefined}>
        Undo
      </button>
      <button
        type="button"
        className="btn-icon"
        aria-label="Dismiss"
        onClick={() => {
          // The bar goes away with this button, which left focus on <body>: the list it was about, else the URL field.
          setRemoved(null);
          requestAnimationFrame(() => (document.querySelector<HTMLElement>('.source-list .source-select') ?? document.getElementById(SOURCE_URL_ID))?.focus());
        }}
      >
        ×
      </button>
    </div>
  );
  const failure = (remove.isError || restore.isError) && (
    <div className="alert alert-error" role="alert">
      <strong>{remove.isError ? 'Could not remove the Source' : 'Could not restore the Source'}</strong>
      <span>{errorMessage(remove.error ?? restore.error)}</span>
    </div>
  );

  if (sources.isPending) return <div className="empty"><Spinner /> Loading Sources…</div>;
  if (sources.isError) {
    return (
      <div className="alert alert-error" role="alert">
        Could not list the saved Sources: {errorMessage(sources.error)}
      </div>
    );
  }
  if (sources.data.length === 0) {
    return (
      <>
        {notice}
        {failure}
        <p className="empty">No Sources yet. Paste the URL of a ResourceSync Source above.</p>
      </>
    );
  }
  return (
    <>
      {notice}
      {failure}
      <ul className="source-list" aria-label="Saved Sources">
        {sources.data.map((source) => (
          <li key={source.id} className={`source${source.id === selectedId ? ' selected' : ''}`} data-source-id={source.id}>
            <button
              type="button"
              className="source-select"
              aria-current={source.id === selectedId ? 'true' : undefined}
              onClick={() => selectSource(source.id)}
              title={`${source.startUrl}\nadded ${source.addedAt}`}
            >
              <span className="source-name">{source.name}</span>
              <span className="source-url">{source.startUrl}</span>
            </button>
            <button
              type="button"
              className="btn-icon"
              aria-label={`Remove Source ${source.name}`}
              title="Remove this Source (it can be undone)"
              disabled={remove.isPending}
              onClick={() => onRemove(source)}
            >
              ×
            </button>
          </li>
        ))}
      </ul>
    </>
  );
}
