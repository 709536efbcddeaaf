// Which mirrors a channel's notifications may go to, closest first: those bound to the channel's own Capability List,
// then those of another list of the same Source (or, without a saved Source to go by, of the same host), then the rest.
import type { MirrorSummary, SavedSource } from '../../src-main/contract/types.ts';
import { mirroredList } from '../mirror/format.ts';

/** 0: mirrors the channel's Capability List; 1: another list of its Source; 2: another Source. */
export type Closeness = 0 | 1 | 2;

export const CLOSENESS_TEXT: Record<Closeness, string> = {
  0: 'mirrors this Capability List',
  1: 'mirrors another list of this Source',
  2: 'mirrors another Source',
};

/**
 * What a mirror is to the channel, in words. One made from a single list of the channel's Capability List is bound to
 * that list alone: it was said to mirror "this Capability List", as the mirror view says it does not.
 */
export function closenessText(m: Pick<MirrorSummary, 'url' | 'capabilityListUrl' | 'resourceListUrl' | 'changeListUrl'>, c: Closeness): string {
  const alone = c === 0 ? mirroredList(m).kind : null;
  return alone === null ? CLOSENESS_TEXT[c] : `mirrors this Capability List's ${alone} alone`;
}

function originOf(url: string | null): string | null {
  if (url === null) return null;
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

export function closeness(m: Pick<MirrorSummary, 'url' | 'capabilityListUrl'>, list: string | null, source: SavedSource | null, topic: string): Closeness {
  const bound = m.capabilityListUrl ?? m.url;
  if (list !== null && bound === list) return 0;
  if (source && bound !== null && (source.capabilityListUrls.includes(bound) || bound === source.startUrl || bound === source.sourceDescriptionUrl)) return 1;
  const origin = originOf(bound);
  return origin !== null && origin === originOf(list ?? topic) ? 1 : 2;
}

/** The mirrors with their closeness, closest first, then by name and path. */
export function rankMirrors<M extends Pick<MirrorSummary, 'url' | 'capabilityListUrl' | 'name' | 'path'>>(
  mirrors: readonly M[],
  list: string | null,
  source: SavedSource | null,
  topic: string,
): { m: M; c: Closeness }[] {
  return mirrors
    .map((m) => ({ m, c: closeness(m, list, source, topic) }))
    .sort((a, b) => a.c - b.c || a.m.name.localeCompare(b.m.name) || a.m.path.localeCompare(b.m.path));
}
