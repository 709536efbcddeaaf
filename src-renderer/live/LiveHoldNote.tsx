import type { MirrorSummary } from '../../src-main/contract/types.ts';
import { holdText } from './hold.ts';

/** The mirror view's note that live failures hold its checkpoint, with the way to the failures that do. */
export function LiveHoldNote({
  hold,
  onShowFailures,
  onRetryAll,
}: {
  hold: NonNullable<MirrorSummary['liveHold']>;
  onShowFailures(runId: number, from: HTMLElement): void;
  /** Retries every failure still standing, whatever its run (absent while the mirror cannot run). */
  onRetryAll?: () => void;
}) {
  const { what, next } = holdText(hold);
  const first = hold.runIds[0];
  return (
    <div className="alert alert-warning mirror-alert live-hold" role="status">
      <span>
        {what} {next}
      </span>
      {!hold.overflow && first !== undefined && (
        <button type="button" className="btn-secondary" onClick={(event) => onShowFailures(first, event.currentTarget)}>
          Show the failures{hold.runIds.length > 1 ? ` (run #${first} first)` : ''}
        </button>
      )}
      {onRetryAll && hold.failures > 0 && (
        <button type="button" className="btn-secondary" onClick={onRetryAll}>
          Retry all failed
        </button>
      )}
    </div>
  );
}
