import type { Bridge } from '../../src-main/contract/bridge.ts';
import { createHttpBridge } from './http.ts';
import { takeToken } from './token.ts';

let bridge: Bridge | null = null;

/** The Electron preload's bridge when present, else the HTTP + SSE one of `rsdesk serve`. */
export function getBridge(): Bridge {
  bridge ??= window.rs ?? createHttpBridge(takeToken());
  return bridge;
}

export { BridgeError, errorCode, errorField, errorMessage } from './errors.ts';
