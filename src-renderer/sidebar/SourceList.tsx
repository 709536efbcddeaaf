import { errorMessage } from '../bridge/index.ts';
import { useRemoveSource, useSources } from '../data/queries.ts';
import { useUi } from '../state/ui.ts';
import { Spinner } from '../common/Spinner.tsx';

export function SourceList() {
  const sources = useSources();
  const remove = useRemoveSource();
  const selectedId = useUi((s) => s.sourceId);
  const selectSource = useUi((s) => s.selectSource);

  if (sources.isPending) return <div className="empty"><Spinner /> Loading Sources…</div>;
  if (sources.isError) {
    return (
      <div className="alert alert-error" role="alert">
        Could not list the saved Sources: {errorMessage(sources.error)}
      </div>
    );
  }
  if (sources.data.length === 0) {
    return <p className="empty">No Sources yet. Paste the URL of a ResourceSync Source above.</p>;
  }
  return (
    <ul className="source-list" aria-label="Saved Sources">
      {sources.data.map((source) => (
        <li key={source.id} className={`source${source.id === selectedId ? ' selected' : ''}`}>
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
            title="Remove this Source"
            disabled={remove.isPending}
            onClick={() => {
              if (source.id === selectedId) selectSource(null);
              remove.mutate(source.id);
            }}
          >
            ×
          </button>
        </li>
      ))}
    </ul>
  );
}
