import { errorMessage } from '../bridge/index.ts';
import { Spinner } from '../common/Spinner.tsx';
import { useMirrorUi } from '../state/mirror.ts';
import { lastRunLine, STATUS_LABEL } from './format.ts';
import type { MirrorSummary } from '../../src-main/contract/types.ts';
import { useMirrorProgress, useMirrors } from './queries.ts';

/** The mirrors the app remembers: each with its state and last run; one opens its run view. */
export function MirrorList() {
  const mirrors = useMirrors();
  const screen = useMirrorUi((s) => s.screen);
  const openMirror = useMirrorUi((s) => s.openMirror);
  const shown = screen?.kind === 'mirror' ? screen.path : null;

  if (mirrors.isPending) return <div className="empty"><Spinner /> Loading mirrors…</div>;
  if (mirrors.isError) return <div className="alert alert-error" role="alert">Could not list the mirrors: {errorMessage(mirrors.error)}</div>;
  if (mirrors.data.length === 0) {
    return <p className="empty">No mirrors yet. Open a Capability List, Resource List or Change List and choose “Mirror this…”.</p>;
  }
  return (
    <ul className="mirror-list" aria-label="Mirrors">
      {mirrors.data.map((m) => (
        <MirrorItem key={m.path} mirror={m} selected={m.path === shown} onOpen={() => openMirror(m.path)} />
      ))}
    </ul>
  );
}

function MirrorItem({ mirror: m, selected, onOpen }: { mirror: MirrorSummary; selected: boolean; onOpen(): void }) {
  const live = useMirrorProgress(m.path, m.status === 'running') ?? m.progress;
  const share = live && live.kind === 'sync' && live.totalKnown && live.total > 0 ? Math.floor((100 * live.done) / live.total) : null;
  return (
    <li className={`mirror-item${selected ? ' selected' : ''}`}>
      <button type="button" className="mirror-select" aria-current={selected ? 'true' : undefined} onClick={onOpen} title={m.path}>
        <span className="mirror-name">{m.name}</span>
        <span className={`mirror-status status-${m.status}`}>
          {m.status === 'running' && share !== null ? `${STATUS_LABEL[m.status]} ${share} %` : STATUS_LABEL[m.status]}
        </span>
        <span className="mirror-last">{lastRunLine(m.lastRun)}</span>
      </button>
    </li>
  );
}
