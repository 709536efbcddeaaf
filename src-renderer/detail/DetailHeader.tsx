import type { ReactNode } from 'react';
import { useUi } from '../state/ui.ts';
import { openExternal } from '../tree/navigate.ts';
import { focusDetailTitle } from './title-focus.ts';

interface Props {
  kind: string;
  title: ReactNode;
  url: string;
  /** Shown before the title, e.g. the document an entry belongs to. */
  crumb?: ReactNode;
  actions?: ReactNode;
}

export function DetailHeader({ kind, title, url, crumb, actions }: Props) {
  const canGoBack = useUi((s) => s.history.length > 0);
  const back = useUi((s) => s.back);
  return (
    <header className="detail-header">
      <div className="detail-title-row">
        {canGoBack && (
          <button type="button" className="btn-small" onClick={() => {
              back();
              // Once no place is left to go back to, the button goes: focus goes to the title, not the page.
              focusDetailTitle();
            }}
            title="Back to where the link was followed from (Alt+←)">
            ← Back
          </button>
        )}
        {crumb}
        {/* Focusable from code only: where focus goes when the view it heads replaces a form (a sign-in). */}
        <h2 className="detail-title" tabIndex={-1}>
          <span className="detail-kind">{kind}</span> {title}
        </h2>
        <span className="toolbar-spacer" />
        {actions}
        <button type="button" className="btn-small" onClick={() => void openExternal(url)} title="Open in the system browser">
          Open ↗
        </button>
      </div>
      <div className="detail-url mono" title={url}>{url}</div>
    </header>
  );
}
