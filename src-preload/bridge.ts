// The preload's bridge, kept apart from `electron` so it can be tested under plain Node with a fake ipcRenderer.
import type { Bridge } from '../src-main/contract/bridge.ts';
import { IPC_EVENT, IPC_INVOKE, isCommandName, isEventName } from '../src-main/contract/names.ts';
import type { CommandError } from '../src-main/contract/types.ts';

/** The part of Electron's ipcRenderer the bridge needs. */
export interface IpcLike {
  invoke(channel: string, ...args: unknown[]): Promise<unknown>;
  on(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
  removeListener(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
}

type Envelope = { ok: true; result: unknown } | { ok: false; error: CommandError };

export class BridgeError extends Error {
  code: CommandError['code'];
  field?: string;
  origin?: string;
  refusedSignIn?: boolean;
  constructor(error: CommandError) {
    super(error.message);
    this.name = 'BridgeError';
    this.code = error.code;
    if (error.field !== undefined) this.field = error.field;
    if (error.origin !== undefined) this.origin = error.origin;
    if (error.refusedSignIn !== undefined) this.refusedSignIn = error.refusedSignIn;
  }
}

export function createBridge(ipc: IpcLike): Bridge {
  const listeners = new Map<string, Set<(payload: unknown) => void>>();
  // One IPC listener for all events, attached only while someone listens: no listener leaks into ipcRenderer.
  const onIpcEvent = (_event: unknown, name: unknown, payload: unknown) => {
    if (typeof name !== 'string') return;
    for (const listener of [...(listeners.get(name) ?? [])]) listener(payload);
  };
  let attached = false;
  const listenerCount = () => [...listeners.values()].reduce((n, set) => n + set.size, 0);

  return {
    async invoke(command, args) {
      if (!isCommandName(command)) throw new BridgeError({ code: 'unknown-command', message: `Unknown command ${String(command)}` });
      const envelope = (await ipc.invoke(IPC_INVOKE, command, args)) as Envelope;
      if (!envelope.ok) throw new BridgeError(envelope.error);
      return envelope.result as never;
    },
    on(event, listener) {
      if (!isEventName(event)) throw new BridgeError({ code: 'unknown-command', message: `Unknown event ${String(event)}` });
      if (typeof listener !== 'function') throw new TypeError('listener must be a function');
      let set = listeners.get(event);
      if (!set) listeners.set(event, (set = new Set()));
      // Wrap so the same function registered twice gets two independent subscriptions.
      const entry = (payload: unknown) => listener(payload as never);
      set.add(entry);
      if (!attached) {
        ipc.on(IPC_EVENT, onIpcEvent);
        attached = true;
      }
      return () => {
        set.delete(entry);
        if (attached && listenerCount() === 0) {
          ipc.removeListener(IPC_EVENT, onIpcEvent);
          attached = false;
        }
      };
    },
  };
}
