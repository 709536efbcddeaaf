import { ROUTE_PHRASES } from '../../src-main/contract/routes.ts';
import type { SavedSource } from '../../src-main/contract/types.ts';
import type { Run } from './AddSource.tsx';

export type Outcome =
  | { kind: 'running'; cancelling?: boolean }
  | { kind: 'added' | 'already-saved'; source: SavedSource; refused: string | null }
  | { kind: 'cancelled' }
  | { kind: 'error'; message: string };

/** What came of a discovery, in words, whole (never in a clipped box): success, already saved, a warning, an error. */
export function DiscoveryOutcome({ run }: { run: Run }) {
  const outcome = run.outcome;
  switch (outcome.kind) {
    case 'running':
      return null;
    case 'cancelled':
      return (
        <p className="discovery-note" role="status">
          Cancelled. Nothing was saved.
        </p>
      );
    case 'error':
      return (
        <div className="alert alert-error" role="alert">
          <strong>Could not add {run.url}</strong>
          <span>{outcome.message}</span>
        </div>
      );
    default: {
      const saved =
        outcome.kind === 'added'
          ? `Saved ${outcome.source.name}; its documents are shown below.`
          : `${outcome.source.name} was already saved, so nothing was added; it is selected below.`;
      if (!outcome.refused) {
        return (
          <p className="discovery-note" role="status">
            {saved}
          </p>
        );
      }
      const other = run.steps.find((s) => s.found && s.route !== 'document');
      return (
        <div className="alert alert-warning" role="alert">
          <strong>The pasted URL was refused</strong>
          <span>{outcome.refused}</span>
          <span>
            {other ? `The Source was found through ${ROUTE_PHRASES[other.route]} instead. ` : ''}
            {saved}
          </span>
        </div>
      );
    }
  }
}
