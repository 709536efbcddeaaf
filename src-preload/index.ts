// The whole preload: `window.rs` = invoke/on over the contract's allow-list. Nothing else is exposed.
import { contextBridge, ipcRenderer } from 'electron';
import type { Bridge } from '../src-main/contract/bridge.ts';
import { BridgeError, createBridge } from './bridge.ts';

/**
 * contextBridge copies an Error with its message only (custom properties are lost), so a failed command crosses
 * as a plain object: the page still tells "cancelled" from "network" and knows which field was invalid.
 */
function forPage(bridge: Bridge): Bridge {
  return {
    async invoke(command, args) {
      try {
        return await bridge.invoke(command, args);
      } catch (error) {
        if (error instanceof BridgeError) {
          throw { name: 'BridgeError', code: error.code, message: error.message, ...(error.field !== undefined ? { field: error.field } : {}) };
        }
        throw error;
      }
    },
    on: (event, listener) => bridge.on(event, listener),
  };
}

contextBridge.exposeInMainWorld('rs', forPage(createBridge(ipcRenderer)));
