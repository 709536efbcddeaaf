import { useAppInfo, useSources } from '../data/queries.ts';
import { useUi } from '../state/ui.ts';
import { AddSource } from '../sidebar/AddSource.tsx';
import { SourceList } from '../sidebar/SourceList.tsx';
import { SettingsButton } from '../settings/SettingsButton.tsx';
import { SourceTree } from '../tree/SourceTree.tsx';
import { CheckButton } from '../check/CheckButton.tsx';
import { MirrorList } from '../mirror/MirrorList.tsx';
import { LiveButton } from '../live/LiveButton.tsx';
import { Splitter } from './Splitter.tsx';
import { useShownWidth } from './shown-width.ts';

export function Sidebar() {
  const info = useAppInfo().data;
  const sources = useSources().data;
  const sourceId = useUi((s) => s.sourceId);
  const width = useUi((s) => s.sidebarWidth);
  const setWidth = useUi((s) => s.setSidebarWidth);
  const source = sources?.find((s) => s.id === sourceId) ?? null;
  // The saved width is what the person chose; a narrow window caps it (45 % of its width), and the handle reports
  // and moves from the width shown: from the saved one, it said 370 px while 315 showed, and a step left did nothing.
  const [ref, shown] = useShownWidth<HTMLElement>();

  return (
    <aside ref={ref} className="sidebar" style={{ width }} aria-label="Sources">
      <header className="brand">
        <h1 className="brand-name">ResourceSync Desktop</h1>
        {info && <span className="muted brand-version">v{info.version} · {info.adapter}</span>}
        <LiveButton />
        <SettingsButton />
      </header>
      <AddSource />
      <h2 className="pane-title">Sources</h2>
      <div className="sources-box">
        <SourceList />
      </div>
      <h2 className="pane-title">Mirrors</h2>
      <div className="mirrors-box">
        <MirrorList />
      </div>
      <h2 className="pane-title">{source ? `Documents · ${source.name}` : 'Documents'}</h2>
      {source && <CheckButton source={source} />}
      <div className="tree-box">
        {source ? <SourceTree key={source.id} source={source} /> : <p className="empty">Select or add a Source.</p>}
      </div>
      {/* Inside the sidebar's landmark, on its right edge: between the landmarks it was content outside any. */}
      <Splitter orientation="vertical" value={shown ?? width} onChange={setWidth} direction={1} label="Resize the sidebar" />
    </aside>
  );
}
