import type { SavedSource } from '../../src-main/contract/types.ts';
import { useCheck } from '../state/check.ts';
import { useStartCheck } from './queries.ts';

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
        type="button"
        className="btn-small"
        onClick={() => start(url, source.name)}
        title="Read every document of this Source and list everything it gets wrong"
      >
        Check Source
      </button>
      {last && (
        <button type="button" className="btn-small" onClick={show}>
          Show last check
        </button>
      )}
    </div>
  );
}
