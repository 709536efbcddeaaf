import { ROUTE_PHRASES } from '../../src-main/contract/routes.ts';
import type { SavedSource } from '../../src-main/contract/types.ts';
import type { Run } from './AddSource.tsx';
import { SignInForm } from '../signin/SignInForm.tsx';

export type Outcome =
  | { kind: 'running'; cancelling?: boolean }
  | { kind: 'added' | 'already-saved'; source: SavedSource; refused: string | null }
  | { kind: 'cancelled' }
  | { kind: 'error'; message: string }
  /** The Source answered 401 or 403: `origin` to sign in to, then `target` is tried again. */
  | { kind: 'sign-in'; message: string; origin: string; refused: boolean; target: string };

/** What came of a discovery, in words, whole (never in a clipped box): success, already saved, a warning, an error. */
export function DiscoveryOutcome({ run, onSignedIn }: { run: Run; onSignedIn(target: string): void }) {
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
    case 'sign-in':
      return (
        <div className="discovery-sign-in">
          <div className="alert alert-warning" role="alert">
            <strong>{outcome.refused ? 'The Source refused the sign-in' : 'This Source asks for a sign-in'}</strong>
            <span>{outcome.message}</span>
            <span>Nothing was saved. Sign in below and it is tried again.</span>
          </div>
          <SignInForm url={outcome.target} origin={outcome.origin} onSignedIn={() => onSignedIn(outcome.target)} />
        </div>
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
