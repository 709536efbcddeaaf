// The mirror view's words for the live side's hold on its checkpoint (MirrorSummary.liveHold).
import type { MirrorSummary } from '../../src-main/contract/types.ts';
import { formatCount } from '../lib/format.ts';
import { formatInstant } from '../mirror/format.ts';

type Hold = NonNullable<MirrorSummary['liveHold']>;

function runs(ids: number[]): string {
  const named = ids.slice(0, 5).map((id) => `#${id}`);
  const rest = ids.length - named.length;
  if (rest > 0) return `runs ${named.join(', ')} and ${formatCount(rest)} more`;
  return ids.length === 1 ? `run ${named[0]}` : `runs ${named.slice(0, -1).join(', ')} and ${named.at(-1)}`;
}

/** What holds the checkpoint, since when, and what lets it move on. */
export function holdText(h: Hold): { what: string; next: string } {
  const since = h.since ? ` since ${formatInstant(h.since)}` : '';
  if (h.overflow) {
    return {
      what: `Live notifications have kept this mirror's checkpoint at ${formatInstant(h.at)}${since}: more of the resources they changed failed than the app keeps track of one by one (${formatCount(h.failures)} listed).`,
      next: 'Only a sync lets it move on now: Sync now fetches what the Change List says changed since then.',
    };
  }
  const n = h.failures === 1 ? '1 resource they changed' : `${formatCount(h.failures)} resources they changed`;
  return {
    what: `Live notifications have kept this mirror's checkpoint at ${formatInstant(h.at)}${since}: ${n} could not be fetched (${runs(h.runIds)}), and “in sync up to” does not pass a change that is not in the mirror.`,
    next: `Retrying ${h.failures === 1 ? 'it' : 'them'} lets the checkpoint move on as soon as ${h.failures === 1 ? 'it is' : 'they are'} mirrored (so does Sync now).`,
  };
}
