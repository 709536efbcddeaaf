// What a baseline does with the resources the mirror holds and the Source no longer lists: the deletion policy
// decides, but a baseline that would delete (or quarantine) more resources than the Source lists keeps them all
// unless allowed, and says why: a Resource List or Dump served empty or cut short by mistake would otherwise empty
// the mirror. Judged against what the Source lists (not against the inventory, whose count moves as the run's
// batches are committed), the same in a dry run as in the run it previews.
import type { Applier } from './apply.ts';
import type { MirrorState } from './state.ts';

/** A baseline that would remove at least this many resources, and more than the Source lists, asks first. */
export const MASS_DELETE_FROM = 10;

export interface UnlistedOptions {
  /** How many resources the Source lists now (those read in this run). */
  listed: number;
  /** true: remove however many; a number: at most that many (what the person was shown and confirmed). */
  allowMassDelete?: boolean | number;
  onNote?: (note: string) => void;
  /** Told of each URI given to the deletion policy (the metadata a resource links goes with it). */
  onDelete?: (uri: string) => void;
}

export function applyToUnlisted(applier: Applier, state: MirrorState, unlisted: string[], o: UnlistedOptions): void {
  const policy = applier.deletePolicy;
  // Rows of resources gone already (deleted, quarantined) are not the mirror's to lose again.
  const held = policy === 'keep' ? unlisted : unlisted.filter((uri) => isHeld(state, uri));
  const allowed = o.allowMassDelete === true ? Infinity : typeof o.allowMassDelete === 'number' ? o.allowMassDelete : 0;
  if (policy !== 'keep' && held.length >= MASS_DELETE_FROM && held.length > o.listed && held.length > allowed) {
    // Kept, as the policy keep keeps them: listed as would-delete. One by one: spread into push(), a mirror of some
    // 120,000 resources or more overflowed the stack, and a Source serving an empty list failed the run with that.
    for (const uri of held) applier.wouldDelete.push(uri);
    const count = held.length.toLocaleString('en');
    o.onNote?.(
      `The Source no longer lists ${count} resources this mirror holds, more than the ${o.listed.toLocaleString('en')} it lists now: none was ` +
        `${policy === 'delete' ? 'deleted' : 'quarantined'}, in case the list was served empty or cut short by mistake` +
        `${allowed > 0 ? ` (${allowed.toLocaleString('en')} were allowed)` : ''}. If they are really gone, sync again allowing it: ` +
        `rsdesk sync --allow-mass-delete, or in the app the button under this run's end.`,
    );
    return;
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
