// The whole preload: `window.rs` = invoke/on over the contract's allow-list. Nothing else is exposed.
import { contextBridge, ipcRenderer } from 'electron';
import { createBridge } from './bridge.ts';

contextBridge.exposeInMainWorld('rs', createBridge(ipcRenderer));
