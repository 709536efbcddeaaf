import type { SavedSource } from '../../src-main/contract/types.ts';
import { useCheck } from '../state/check.ts';
import { focusWhenReady } from '../mirror/focus.ts';
import { CHECK_TITLE_ID } from './CheckView.tsx';
import { CHECK_SOURCE_ID, openedFrom, SHOW_LAST_CHECK_ID } from './opener.ts';
import { useStartCheck } from './queries.ts';

/** The report opens in the main pane, ten sidebar stops away: focus goes to its heading, from the button pressed. */
function focusReport(from: Element): void {
  focusWhenReady(() => document.getElementById(CHECK_TITLE_ID), from);
}

/** Starts a check of the selected Source, or brings back the report of the last one. */
export function CheckButton({ source }: { source: SavedSource }) {
  const run = useCheck((s) => s.run);
  const visible = useCheck((s) => s.visible);
  const start = useStartCheck();
  const show = useCheck((s) => s.show);
  const url = source.sourceDescriptionUrl ?? source.startUrl;
  const last = run !== null && run.url === url && !visible;
  return (
    <div className="check-bar">
      <button
        id={CHECK_SOURCE_ID}
        type="button"
        className="btn-small"
        onClick={(event) => {
          openedFrom(CHECK_SOURCE_ID);
          start(url, source.name);
          focusReport(event.currentTarget);
        }}
        title="Read every document of this Source and list everything it gets wrong"
      >
        Check Source
      </button>
      {last && (
        <button
          id={SHOW_LAST_CHECK_ID}
          type="button"
          className="btn-small"
          onClick={(event) => {
            openedFrom(SHOW_LAST_CHECK_ID);
            show();
            // This button goes away with the report shown: focus is then lost, which focusReport also takes over.
            focusReport(event.currentTarget);
          }}
        >
          Show last check
        </button>
      )}
    </div>
  );
}
