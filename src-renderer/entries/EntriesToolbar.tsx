import { useEffect, useState } from 'react';
import type { ChangeType } from '../../src-main/engine/documents/model.ts';
import { formatCount } from '../lib/format.ts';
import { useDebounced } from '../lib/hooks.ts';
import { useUi } from '../state/ui.ts';
import { Spinner } from '../common/Spinner.tsx';

interface Props {
  matched: number | null;
  total: number | null;
  busy: boolean;
  /** Whether the entries carry `change` (change documents only): the change filter is offered only then. */
  changes: boolean;
}

export function EntriesToolbar({ matched, total, busy, changes }: Props) {
  const view = useUi((s) => s.view);
  const setView = useUi((s) => s.setView);
  const [uri, setUri] = useState(view.uri);
  const debounced = useDebounced(uri, 250);

  useEffect(() => {
    if (debounced !== useUi.getState().view.uri) setView({ uri: debounced });
  }, [debounced, setView]);

  return (
    <div className="toolbar" role="search" aria-label="Filter entries">
      <input
        type="search"
        className="filter-uri"
        placeholder="Filter by URI…"
        aria-label="Filter by URI"
        value={uri}
        onChange={(e) => setUri(e.target.value)}
        spellCheck={false}
      />
      {changes && (
      <label className="filter-change">
        <span>Change</span>
        <select
          aria-label="Change type"
          value={view.change}
          onChange={(e) => setView({ change: e.target.value as ChangeType | '' })}
        >
          <option value="">all</option>
          <option value="created">created</option>
          <option value="updated">updated</option>
          <option value="deleted">deleted</option>
        </select>
      </label>
      )}
      <span className="toolbar-spacer" />
      {busy && <Spinner label="Loading entries" />}
      <span className="entry-count" aria-live="polite" data-testid="entry-count">
        {matched === null || total === null ? '…' : `${formatCount(matched)} of ${formatCount(total)} entries`}
      </span>
    </div>
  );
}
