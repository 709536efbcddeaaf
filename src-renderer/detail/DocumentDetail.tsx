import { useEffect, useRef, useState } from 'react';
import { errorMessage } from '../bridge/index.ts';
import { signInNeeded } from '../bridge/errors.ts';
import { SignInForm } from '../signin/SignInForm.tsx';
import { useRefreshDocument, useSummary } from '../data/queries.ts';
import { capabilityLabel, isChangeCapability } from '../lib/capabilities.ts';
import { formatBytes, formatCount } from '../lib/format.ts';
import { useUi } from '../state/ui.ts';
import { countFindings, FindingsBadge } from '../common/FindingsBadge.tsx';
import { Spinner } from '../common/Spinner.tsx';
import { FindingsList } from './FindingsList.tsx';
import { LinksTable, MdTable } from './MdTable.tsx';
import { RawXml } from './RawXml.tsx';
import { Tabs } from './Tabs.tsx';
import { DetailHeader } from './DetailHeader.tsx';
import { MirrorButton } from '../mirror/MirrorButton.tsx';
import { formatInstant } from '../mirror/format.ts';

export function DocumentDetail({ url, capability }: { url: string; capability?: string }) {
  const summary = useSummary(url);
  const refresh = useRefreshDocument();
  const rawTarget = useUi((s) => (s.rawTarget?.url === url ? s.rawTarget : null));
  const view = summary.data;
  const signIn = summary.isError ? signInNeeded(summary.error) : null;
  // After a sign-in from here the form goes away when the document arrives: focus moves to its title, not the page.
  const [signedIn, setSignedIn] = useState(false);
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!signedIn || !view) return;
    setSignedIn(false);
    box.current?.querySelector<HTMLElement>('.detail-title')?.focus();
  }, [signedIn, view]);

  const title = capabilityLabel(view?.capability ?? capability, view?.isIndex ?? false);
  const header = (
    <DetailHeader
      kind="Document"
      title={title}
      url={url}
      actions={
        <>
        <MirrorButton url={url} capability={view?.capability ?? capability} />
        <button
          type="button"
          className="btn-small"
          disabled={refresh.isPending}
          onClick={() => refresh.mutate(url)}
          title="Fetch this document again from the Source"
        >
          {refresh.isPending ? 'Refreshing…' : 'Refresh'}
        </button>
        </>
      }
    />
  );

  if (!view) {
    return (
      <div className="detail" ref={box}>
        {header}
        {signIn ? (
          <div className="detail-sign-in">
            <div className="alert alert-warning" role="alert">
              <strong>{signIn.refused ? 'The Source refused the sign-in.' : 'This Source asks for a sign-in.'}</strong> <span>{errorMessage(summary.error)}</span>
            </div>
            <SignInForm url={url} origin={signIn.origin} onSignedIn={() => setSignedIn(true)} />
          </div>
        ) : summary.isError ? (
          <div className="alert alert-error" role="alert">
            <strong>Could not load this document.</strong> {errorMessage(summary.error)}
            <button type="button" className="btn-small" onClick={() => void summary.refetch()}>Retry</button>
          </div>
        ) : (
          <div className="empty"><Spinner /> Fetching and checking the document…</div>
        )}
      </div>
    );
  }

  const { errors, warnings } = countFindings(view.findings);
  const md = view.md;
  return (
    <div className="detail" ref={box}>
      {header}
      <dl className="facts">
        <div><dt>root</dt><dd className="mono">&lt;{view.root}&gt;</dd></div>
        <div><dt>entries</dt><dd>{formatCount(view.entries)}</dd></div>
        <div><dt>size</dt><dd>{formatBytes(view.bytes)}</dd></div>
        {md.at && <div><dt>at</dt><dd className="mono">{md.at}</dd></div>}
        {md.completed && <div><dt>completed</dt><dd className="mono">{md.completed}</dd></div>}
        {md.from && <div><dt>from</dt><dd className="mono">{md.from}</dd></div>}
        {md.until && <div><dt>until</dt><dd className="mono">{md.until}</dd></div>}
        {view.open !== null && isChangeCapability(view.capability) && (
          <div><dt>state</dt><dd>{view.open ? 'open (no until: still growing)' : 'closed'}</dd></div>
        )}
        {/* The app's own time, in the app's date style (the Source's values above stay as the Source wrote them). */}
        <div><dt>fetched</dt><dd title={view.fetchedAt}>{formatInstant(view.fetchedAt)}</dd></div>
        <div><dt>findings</dt><dd>{view.findings.length === 0 ? <span className="ok-text">✓ none</span> : <FindingsBadge findings={view.findings} />}</dd></div>
      </dl>
      <Tabs
        tabs={[
          { id: 'meta', label: 'Metadata' },
          {
            id: 'findings',
            label: (
              <>
                Findings <span className={`tab-count${errors ? ' tab-count-error' : warnings ? ' tab-count-warning' : ''}`}>{view.findings.length}</span>
              </>
            ),
          },
          { id: 'raw', label: 'Raw XML' },
        ]}
      >
        {(tab) =>
          tab === 'meta' ? (
            <div className="detail-scroll meta-grid">
              <MdTable md={view.md} />
              <LinksTable links={view.links} />
            </div>
          ) : tab === 'findings' ? (
            <div className="detail-scroll">
              <FindingsList url={url} findings={view.findings} />
            </div>
          ) : (
            <RawXml url={url} target={rawTarget} />
          )
        }
      </Tabs>
    </div>
  );
}
