// What a baseline does with the resources the mirror holds and the Source no longer lists: the deletion policy
// decides, but a baseline that would delete (or quarantine) more than half of the mirror keeps them all unless
// allowed, and says why: a Resource List or Dump served empty or cut short by mistake would otherwise empty it.
import type { Applier } from './apply.ts';
import type { MirrorState } from './state.ts';

/** A baseline that would remove at least this many resources, and more than half the mirror, asks first. */
export const MASS_DELETE_FROM = 10;

export interface UnlistedOptions {
  allowMassDelete?: boolean;
  onNote?: (note: string) => void;
  /** Told of each URI given to the deletion policy (the metadata a resource links goes with it). */
  onDelete?: (uri: string) => void;
}

export function applyToUnlisted(applier: Applier, state: MirrorState, unlisted: string[], o: UnlistedOptions): void {
  const policy = applier.deletePolicy;
  if (policy !== 'keep' && !applier.dryRun && o.allowMassDelete !== true && unlisted.length >= MASS_DELETE_FROM) {
    const held = state.resourceCount();
    if (unlisted.length * 2 > held) {
      // Kept, as the policy keep keeps them: listed as would-delete.
      for (const uri of unlisted) if (isHeld(state, uri)) applier.wouldDelete.push(uri);
      o.onNote?.(
        `The Source no longer lists ${unlisted.length.toLocaleString('en')} of the ${held.toLocaleString('en')} resources this mirror holds, more than half: none was ` +
          `${policy === 'delete' ? 'deleted' : 'quarantined'}, in case the list was served empty or cut short by mistake. If they are really gone, ` +
          `sync again allowing it: rsdesk sync --allow-mass-delete, or in the app the button under this run's end.`,
      );
      return;
    }
  }
  for (const uri of unlisted) {
    applier.delete(uri);
    o.onDelete?.(uri);
  }
}

function isHeld(state: MirrorState, uri: string): boolean {
  const status = state.get(uri)?.status;
  return status !== undefined && status !== 'deleted' && status !== 'quarantined';
}
