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
  const held = applier.deletePolicy === 'keep' ? unlisted : unlisted.filter((uri) => isHeld(state, uri));
  if (holdBack(applier, held.length, o)) {
    // Kept, as the policy keep keeps them: listed as would-delete.
    for (const uri of held) applier.keptBack(uri);
    return;
  }
  for (const uri of unlisted) {
    applier.delete(uri);
    o.onDelete?.(uri);
  }
}

/**
 * The same for a baseline read from lists, whose inventory may hold millions of rows: `unlisted` gives the URIs anew
 * each time it is called (read from the inventory a page at a time), so neither they nor the inventory are held
 * whole, and the deletions go through the durable batches as they are staged instead of all piling up first.
 */
export async function sweepUnlisted(applier: Applier, state: MirrorState, unlisted: () => Iterable<string>, o: UnlistedOptions): Promise<void> {
  const held = applier.deletePolicy === 'keep' ? unlisted : () => heldOf(state, unlisted());
  let count = 0;
  if (applier.deletePolicy !== 'keep') for (const _ of held()) count++;
  if (holdBack(applier, count, o)) {
    for (const uri of held()) applier.keptBack(uri);
    return;
  }
  let n = 0;
  for (const uri of unlisted()) {
    applier.delete(uri);
    o.onDelete?.(uri);
    if (++n % 1000 === 0) await applier.settle();
  }
}

/**
 * Whether removing `held` resources (by a policy that removes) is more than the Source lists, and not allowed: then
 * none is removed, and that is said.
 */
function holdBack(applier: Applier, held: number, o: UnlistedOptions): boolean {
  const policy = applier.deletePolicy;
  const allowed = o.allowMassDelete === true ? Infinity : typeof o.allowMassDelete === 'number' ? o.allowMassDelete : 0;
  if (policy === 'keep' || held < MASS_DELETE_FROM || held <= o.listed || held <= allowed) return false;
  const count = held.toLocaleString('en');
  o.onNote?.(
    `The Source no longer lists ${count} resources this mirror holds, more than the ${o.listed.toLocaleString('en')} it lists now: none was ` +
      `${policy === 'delete' ? 'deleted' : 'quarantined'}, in case the list was served empty or cut short by mistake` +
      `${allowed > 0 ? ` (${allowed.toLocaleString('en')} were allowed)` : ''}. If they are really gone, sync again allowing it: ` +
      `rsdesk sync --allow-mass-delete, or in the app the button under this run's end.`,
  );
  return true;
}

function* heldOf(state: MirrorState, uris: Iterable<string>): Generator<string> {
  for (const uri of uris) if (isHeld(state, uri)) yield uri;
}

function isHeld(state: MirrorState, uri: string): boolean {
  const status = state.get(uri)?.status;
  return status !== undefined && status !== 'deleted' && status !== 'quarantined';
}
