// What people read for each discovery route, in the app's steps and in `rsdesk discover` alike. The route ids
// (`document`, `link-header`…) stay the machine names: they are what `--json` and the contract carry.
import type { DiscoveryRoute } from './types.ts';

/** A route's short name, for a column of steps. */
export const ROUTE_LABELS: Record<DiscoveryRoute, string> = {
  document: 'URL itself',
  'link-header': 'Link header',
  'html-link': 'HTML link',
  'well-known': '.well-known',
  robots: 'robots.txt',
  up: 'up link',
  index: 'index link',
};

/** A route in a sentence: "The Source was found through …". */
export const ROUTE_PHRASES: Record<DiscoveryRoute, string> = {
  document: 'the URL itself',
  'link-header': 'a Link header',
  'html-link': 'an HTML <link>',
  'well-known': 'its /.well-known/resourcesync',
  robots: 'robots.txt',
  up: 'an up link',
  index: 'an index link',
};

export function routeLabel(route: string): string {
  return (ROUTE_LABELS as Record<string, string>)[route] ?? route;
}
