import { useSources, useSummary } from '../data/queries.ts';
import { useUi } from '../state/ui.ts';
import { Spinner } from '../common/Spinner.tsx';
import { ChannelDetail } from '../detail/ChannelDetail.tsx';
import { DocumentDetail } from '../detail/DocumentDetail.tsx';
import { EntryDetail } from '../detail/EntryDetail.tsx';
import { EntriesTable } from '../entries/EntriesTable.tsx';
import { Splitter } from './Splitter.tsx';
import { CheckView } from '../check/CheckView.tsx';
import { useCheck } from '../state/check.ts';
import { useMirrorUi } from '../state/mirror.ts';
import { CreateMirror } from '../mirror/CreateMirror.tsx';
import { MirrorView } from '../mirror/MirrorView.tsx';
import { LiveView } from '../live/LiveView.tsx';
import { useLive } from '../live/state.ts';

/** The skip link's target. */
export const MAIN_ID = 'main';

/** The selected document: its entries on top (when it has any), the detail of it or of an entry below. */
export function MainPane() {
  const node = useUi((s) => s.node);
  const entry = useUi((s) => s.entry);
  const detailHeight = useUi((s) => s.detailHeight);
  const setDetailHeight = useUi((s) => s.setDetailHeight);
  const summary = useSummary(node && !node.channel ? node.url : null);
  const check = useCheck((s) => (s.visible ? s.run : null));
  const screen = useMirrorUi((s) => s.screen);
  const live = useLive((s) => s.visible);
  const noSources = useSources().data?.length === 0;

  if (screen) {
    return (
      <main id={MAIN_ID} tabIndex={-1} className="main" aria-label={screen.kind === 'create' ? 'New mirror' : 'Mirror'}>
        {screen.kind === 'create' ? (
          <CreateMirror key={screen.url} url={screen.url} capability={screen.capability} sourceName={screen.sourceName} />
        ) : (
          <MirrorView key={screen.path} path={screen.path} />
        )}
      </main>
    );
  }

  if (live) {
    return (
      <main id={MAIN_ID} tabIndex={-1} className="main" aria-label="Live">
        <LiveView />
      </main>
    );
  }

  if (check) {
    return (
      <main id={MAIN_ID} tabIndex={-1} className="main" aria-label="Check report">
        <CheckView key={check.runId} run={check} />
      </main>
    );
  }

  if (!node) {
    return (
      <main id={MAIN_ID} tabIndex={-1} className="main main-empty">
        {/* With no Source yet there is no tree to select in: the first step, said where a newcomer looks. */}
        <p className="empty">
          {noSources
            ? 'Paste the URL of a ResourceSync Source in the sidebar and choose Add Source: its documents show as a tree, and the one you select shows here.'
            : 'Select a document in the tree to see its entries and details.'}
        </p>
      </main>
    );
  }
  if (node.channel) {
    return (
      <main id={MAIN_ID} tabIndex={-1} className="main" aria-label="Change Notification channel">
        <ChannelDetail node={node} />
      </main>
    );
  }

  const hasEntries = (summary.data?.entries ?? 0) > 0;
  const detail =
    entry && entry.url === node.url ? (
      <EntryDetail key={`${entry.url}#${entry.index}`} url={entry.url} index={entry.index} />
    ) : (
      <DocumentDetail key={node.url} url={node.url} capability={node.capability} />
    );

  return (
    <main id={MAIN_ID} tabIndex={-1} className="main" aria-label="Document">
      {summary.isPending && !summary.isError ? (
        <div className="entries entries-loading">
          <div className="empty"><Spinner /> Fetching {node.url}…</div>
        </div>
      ) : hasEntries ? (
        <EntriesTable key={node.url} url={node.url} />
      ) : null}
      {(hasEntries || summary.isPending) && (
        <Splitter
          orientation="horizontal"
          value={detailHeight}
          onChange={setDetailHeight}
          direction={-1}
          label="Resize the detail pane"
        />
      )}
      <section
        className="detail-pane"
        aria-label="Detail"
        style={hasEntries || summary.isPending ? { height: detailHeight } : { flex: '1 1 0' }}
      >
        {detail}
      </section>
    </main>
  );
}
