import type { Bridge } from '../src-main/contract/bridge.ts';

declare global {
  interface Window {
    /** Exposed by the Electron preload; absent in a plain browser, where the HTTP bridge is used. */
    rs?: Bridge;
  }
}
