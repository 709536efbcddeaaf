import type { Bridge } from '../../src-main/contract/bridge.ts';
import { useConnection } from './connection.ts';
import { createHttpBridge, type HttpBridge } from './http.ts';
import { takeHashToken, takeToken } from './token.ts';

let bridge: Bridge | null = null;
let http: HttpBridge | null = null;

/** The Electron preload's bridge when present, else the HTTP + SSE one of `rsdesk serve`. */
export function getBridge(): Bridge {
  if (bridge) return bridge;
  if (window.rs) return (bridge = window.rs);
  http = createHttpBridge(takeToken(), {
    onReachable: (reachable) => (reachable ? useConnection.getState().back() : useConnection.getState().lost()),
  });
  return (bridge = http);
}

/**
 * A new `#token=…` address pasted into this tab (rsdesk serve started again) changes only the fragment, so the page
 * is not loaded again: the bridge takes the new token, then `onToken` reads again what failed without it.
 */
export function followNewTokens(onToken: () => void): () => void {
  const listener = () => {
    const token = takeHashToken();
    if (token === null || http === null) return;
    http.setToken(token);
    onToken();
  };
  window.addEventListener('hashchange', listener);
  return () => window.removeEventListener('hashchange', listener);
}

export { BridgeError, errorCode, errorField, errorMessage } from './errors.ts';
