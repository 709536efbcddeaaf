import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createBridge, type IpcLike } from './bridge.ts';
import { IPC_EVENT, IPC_INVOKE } from '../src-main/contract/names.ts';

function fakeIpc(reply: (command: string, args: unknown) => unknown) {
  const emitter = new EventEmitter();
  const calls: unknown[][] = [];
  const ipc: IpcLike = {
    async invoke(channel, ...args) {
      calls.push([channel, ...args]);
      return reply(args[0] as string, args[1]);
    },
    on: (channel, listener) => emitter.on(channel, listener),
    removeListener: (channel, listener) => emitter.removeListener(channel, listener),
  };
  const send = (name: string, payload: unknown) => emitter.emit(IPC_EVENT, {}, name, payload);
  return { ipc, emitter, calls, send };
}

describe('preload bridge', () => {
  it('invokes allowed commands on the invoke channel and unwraps the envelope', async () => {
    const { ipc, calls } = fakeIpc(() => ({ ok: true, result: [] }));
    const bridge = createBridge(ipc);
    await expect(bridge.invoke('sources.list', {})).resolves.toEqual([]);
    expect(calls).toEqual([[IPC_INVOKE, 'sources.list', {}]]);
  });

  it('turns an error envelope into a rejected promise with its code', async () => {
    const { ipc } = fakeIpc(() => ({ ok: false, error: { code: 'invalid-arguments', message: 'url: required' } }));
    await expect(createBridge(ipc).invoke('documents.summary', { url: 'x' })).rejects.toMatchObject({
      code: 'invalid-arguments',
      message: 'url: required',
    });
  });

  it('refuses names outside the allow-list without touching IPC', async () => {
    const { ipc, calls, emitter } = fakeIpc(() => ({ ok: true, result: null }));
    const bridge = createBridge(ipc);
    await expect(bridge.invoke('fs.readFile' as never, {} as never)).rejects.toThrow(/Unknown command/);
    expect(() => bridge.on('secret' as never, () => {})).toThrow(/Unknown event/);
    expect(calls).toHaveLength(0);
    expect(emitter.listenerCount(IPC_EVENT)).toBe(0);
  });

  it('delivers events by name and the unsubscribe really removes the listener', () => {
    const { ipc, emitter, send } = fakeIpc(() => null);
    const bridge = createBridge(ipc);
    const got: unknown[] = [];
    const other: unknown[] = [];
    const off = bridge.on('sources.changed', (p) => got.push(p));
    const offOther = bridge.on('discovery.step', (p) => other.push(p));
    send('sources.changed', { sources: [] });
    send('discovery.step', { runId: 'r', step: {} });
    expect(got).toEqual([{ sources: [] }]);
    expect(other).toHaveLength(1);
    off();
    send('sources.changed', { sources: [1] });
    expect(got).toHaveLength(1);
    expect(emitter.listenerCount(IPC_EVENT)).toBe(1);
    offOther();
    expect(emitter.listenerCount(IPC_EVENT)).toBe(0);
    off(); // idempotent
    expect(emitter.listenerCount(IPC_EVENT)).toBe(0);
  });
});
