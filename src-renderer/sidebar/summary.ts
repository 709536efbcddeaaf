// One plain sentence for what discovery tried and what it found there, for the discovery's folded title (the
// steps beside it list each attempt). Before, the title read "2/4 routes found", which says nothing to an
// archivist who does not know what a "route" is.
import type { DiscoveryRoute, DiscoveryStep } from '../../src-main/contract/types.ts';

/** Where a document was found, after its name: "a Capability List at the URL itself". */
const WHERE: Record<DiscoveryRoute, string> = {
  document: 'at the URL itself',
  'link-header': "through the page's Link header",
  'html-link': "through a link in the page's HTML",
  'well-known': 'at /.well-known/resourcesync',
  robots: 'through robots.txt',
  up: 'through an "up" link',
  index: 'through an "index" link',
};

function withArticle(name: string): string {
  return /^[aeiou]/i.test(name) ? `an ${name}` : `a ${name}`;
}

/** "a Capability List at the URL itself"; the step's message names the document it found ("Capability List"). */
function foundThere(step: DiscoveryStep): string {
  // A redirect is in the step's own line; the sentence keeps to what and where.
  const name = step.message.replace(/ \(redirected to .*\)$/, '') || 'document';
  const where = (WHERE as Record<string, string>)[step.route] ?? `through ${step.route}`;
  return `${withArticle(name)} ${where}`;
}

function list(parts: string[]): string {
  if (parts.length <= 1) return parts.join('');
  return `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
}

/**
 * "Tried 4 ways: found a Capability List at the URL itself and a Source Description at /.well-known/resourcesync."
 * Null before the first attempt is known.
 */
export function discoverySummary(steps: DiscoveryStep[], running: boolean): string | null {
  if (steps.length === 0) return null;
  const tried = `Tried ${steps.length} ${steps.length === 1 ? 'way' : 'ways'}${running ? ' so far' : ''}`;
  const found = steps.filter((s) => s.found).map(foundThere);
  if (found.length === 0) return `${tried}: found nothing${running ? ' yet' : ''}.`;
  return `${tried}: found ${list(found)}.`;
}
