import { useEffect, useRef } from 'react';
import { errorMessage } from '../bridge/index.ts';
import { Spinner } from '../common/Spinner.tsx';
import { useMirrorUi } from '../state/mirror.ts';
import { useConnection } from '../bridge/connection.ts';
import { lastRunLine, STATUS_LABEL } from './format.ts';
import type { MirrorSummary } from '../../src-main/contract/types.ts';
import { useNow } from '../lib/hooks.ts';
import { nextSyncLine } from './next-sync.ts';
import { SOURCE_URL_ID } from '../sidebar/source-url.ts';
import { useCreateMirror, useMirrorProgress, useMirrors } from './queries.ts';

/** The mirrors the app remembers: each with its state and last run; one opens its run view. */
export function MirrorList() {
  const mirrors = useMirrors();
  const screen = useMirrorUi((s) => s.screen);
  const openMirror = useMirrorUi((s) => s.openMirror);
  const shown = screen?.kind === 'mirror' ? screen.path : null;
  const notice = <RemovedNotice />;

  if (mirrors.isPending) return <div className="empty"><Spinner /> Loading mirrors…</div>;
  if (mirrors.isError) return <div className="alert alert-error" role="alert">Could not list the mirrors: {errorMessage(mirrors.error)}</div>;
  if (mirrors.data.length === 0) {
    return (
      <>
        {notice}
        <p className="empty">No mirrors yet. Open a Capability List, Resource List or Change List and choose “Mirror this…”.</p>
      </>
    );
  }
  return (
    <>
      {notice}
      <ul className="mirror-list" aria-label="Mirrors">
        {mirrors.data.map((m) => (
          <MirrorItem key={m.path} mirror={m} selected={m.path === shown} onOpen={() => openMirror(m.path)} />
        ))}
      </ul>
    </>
  );
}

/**
 * After "Remove from list": what became of the mirror (only the app's list changed), how to open it again, and Undo,
 * which adds the folder again through mirrors.create (a folder that is a mirror already needs no URL).
 */
function RemovedNotice() {
  const removed = useMirrorUi((s) => s.removed);
  const setRemoved = useMirrorUi((s) => s.setRemoved);
  const openMirror = useMirrorUi((s) => s.openMirror);
  const restore = useCreateMirror();
  const undoRef = useRef<HTMLButtonElement>(null);

  // The Remove button went with the mirror's view: focus goes to Undo, what one may want next.
  useEffect(() => {
    restore.reset();
    if (removed) undoRef.current?.focus();
    // Only a new removal resets and focuses (restore is a new object at each render).
  }, [removed]);

  if (!removed) return null;
  function undo() {
    if (!removed || restore.isPending) return;
    const { path, options } = removed;
    restore.mutate(
      { path, deletePolicy: options.deletePolicy, concurrency: options.concurrency, delaySeconds: options.delaySeconds },
      {
        onSuccess: () => {
          setRemoved(null);
          openMirror(path);
        },
      },
    );
  }
  return (
    <div className="undo-bar mirror-removed" role="status">
      <span>
        Removed <strong>{removed.name}</strong> from the list. Its folder and files stay in <span className="mono">{removed.path}</span>. To open it
        again later, choose “Mirror this…” on the list it mirrors and give this folder.
        {restore.isError && <span className="error-text"> Could not add it again: {errorMessage(restore.error)}</span>}
      </span>
      <button ref={undoRef} type="button" className="btn-small" onClick={undo} aria-disabled={restore.isPending || undefined}>
        Undo
      </button>
      <button
        type="button"
        className="btn-icon"
        aria-label="Dismiss"
        onClick={(event) => {
          // The bar goes away: focus goes to the list it was about, not to the page; with no mirror left (it went to
          // <body>), to the URL field.
          const box = event.currentTarget.closest('.mirrors-box');
          setRemoved(null);
          requestAnimationFrame(() => (box?.querySelector<HTMLElement>('.mirror-select') ?? document.getElementById(SOURCE_URL_ID))?.focus());
        }}
      >
        ×
      </button>
    </div>
  );
}

function MirrorItem({ mirror: m, selected, onOpen }: { mirror: MirrorSummary; selected: boolean; onOpen(): void }) {
  const live = useMirrorProgress(m.path, m.status === 'running') ?? m.progress;
  const reachable = useConnection((s) => s.reachable);
  const unknown = !reachable && (m.status === 'running' || m.status === 'pausing' || m.status === 'cancelling' || m.status === 'auditing');
  const next = nextSyncLine(m, useNow(30_000));
  const share = live && live.kind === 'sync' && live.totalKnown && live.total > 0 ? Math.floor((100 * live.done) / live.total) : null;
  return (
    <li className={`mirror-item${selected ? ' selected' : ''}`}>
      <button type="button" className="mirror-select" aria-current={selected ? 'true' : undefined} onClick={onOpen} title={m.path}>
        <span className="mirror-name">{m.name}</span>
        <span className={`mirror-status status-${unknown ? 'unknown' : m.status}`} title={unknown ? 'The app cannot be reached: the state of this run is unknown until it is reached again' : undefined}>
          {unknown ? 'State unknown' : m.status === 'running' && share !== null ? `${STATUS_LABEL[m.status]} ${share} %` : STATUS_LABEL[m.status]}
        </span>
        <span className="mirror-last">{lastRunLine(m.lastRun)}</span>
        {next && (
          <span className="mirror-next" title={next.title}>
            {next.text}
          </span>
        )}
      </button>
    </li>
  );
}
