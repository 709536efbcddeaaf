// When events were lost for good (the browser's event stream came back after more happened than the app server
// keeps, or the server restarted), nothing in the cache can be trusted to be current: every query is read again.
import type { QueryClient } from '@tanstack/react-query';
import type { Bridge } from '../../src-main/contract/bridge.ts';
import { readAgain } from './fresh.ts';

/** Returns the unsubscribe. */
export function readAllWhenEventsMissed(bridge: Bridge, client: QueryClient): () => void {
  return bridge.on('events.missed', () => readAgain(client));
}
