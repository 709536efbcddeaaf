// The renderer's HTTP bridge against the real HTTP + SSE adapter and service (a real SQLite store in a temp dir).
// Runs under Node: undici's EventSource stands in for the browser's, everything else is the shipped code.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventSource as UndiciEventSource } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createService, type Service } from '../src-main/app/service.ts';
import { startHttpAdapter, type HttpAdapter } from '../src-main/server/http-adapter.ts';
import { openStore } from '../src-main/store/store.ts';
import type { SavedSource } from '../src-main/contract/types.ts';
import { createHttpBridge } from '../src-renderer/bridge/http.ts';

/** Records every stream the bridge opens, so a test can see it closed. */
const opened: EventSource[] = [];
class RecordingEventSource extends UndiciEventSource {
  constructor(url: string | URL, init?: EventSourceInit) {
    super(url, init);
    opened.push(this as unknown as EventSource);
  }
}
const Source = RecordingEventSource as unknown as typeof EventSource;

let dir: string;
let service: Service;
let adapter: HttpAdapter;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rsdesk-bridge-'));
  const rendererDir = join(dir, 'renderer');
  mkdirSync(rendererDir);
  writeFileSync(join(rendererDir, 'index.html'), '<!doctype html><title>t</title>');
  service = createService({ store: openStore(join(dir, 'db.sqlite')), adapter: 'http', version: '0.0.0-test' });
  adapter = await startHttpAdapter({ dispatch: service.dispatch, events: service.events, rendererDir });
});

afterAll(async () => {
  await adapter?.close();
  await service?.close();
  rmSync(dir, { recursive: true, force: true });
});

function until(check: () => boolean, ms = 5000): Promise<void> {
  const start = Date.now();
  return new Promise((resolve, reject) => {
    const tick = () => {
      if (check()) resolve();
      else if (Date.now() - start > ms) reject(new Error('timed out'));
      else setTimeout(tick, 10);
    };
    tick();
  });
}

describe('HTTP bridge', () => {
  it('invokes a command with the bearer token and unwraps the result', async () => {
    const bridge = createHttpBridge(adapter.token, { base: adapter.origin, EventSource: Source });
    const info = await bridge.invoke('app.info', {});
    expect(info).toMatchObject({ name: 'ResourceSync Desktop', version: '0.0.0-test', adapter: 'http' });
    expect(await bridge.invoke('sources.list', {})).toEqual([]);
  });

  it('opens the event stream before sending a command (and closes it after, when nobody listens)', async () => {
    const bridge = createHttpBridge(adapter.token, { base: adapter.origin, EventSource: Source });
    const before = opened.length;
    let streamAtSend: number | null = null;
    const watching = createHttpBridge(adapter.token, {
      base: adapter.origin,
      EventSource: Source,
      fetch: (input, init) => {
        streamAtSend = opened.at(-1)!.readyState;
        return fetch(input, init);
      },
    });
    await watching.invoke('app.info', {});
    // Open (1) when the command went: a change after its answer is on the stream, not lost before it connects.
    expect(streamAtSend).toBe(1);
    expect(opened.length).toBe(before + 1);
    expect(opened.at(-1)!.readyState).toBe(2);
    await bridge.invoke('app.info', {});
    expect(opened.at(-1)!.readyState).toBe(2);
  });

  it('turns an error envelope into a thrown Error with the code and message', async () => {
    const bridge = createHttpBridge(adapter.token, { base: adapter.origin, EventSource: Source });
    const error = await bridge.invoke('sources.remove', { id: -1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ code: 'invalid-arguments' });
    expect((error as Error).message).not.toBe('');
  });

  it('says so when the token is wrong', async () => {
    const bridge = createHttpBridge('0'.repeat(64), { base: adapter.origin, EventSource: Source });
    await expect(bridge.invoke('app.info', {})).rejects.toMatchObject({ code: 'unauthorized' });
  });

  it('delivers events, and an unsubscribe really removes the listener and closes the stream', async () => {
    const bridge = createHttpBridge(adapter.token, { base: adapter.origin, EventSource: Source });
    const before = opened.length;
    const a: SavedSource[][] = [];
    const b: SavedSource[][] = [];
    const offA = bridge.on('sources.changed', (p) => a.push(p.sources));
    const offB = bridge.on('sources.changed', (p) => b.push(p.sources));
    expect(opened.length).toBe(before + 1); // one stream for every listener
    const stream = opened.at(-1)!;
    await until(() => stream.readyState === 1);

    service.events.emit('sources.changed', { sources: [] });
    await until(() => a.length === 1 && b.length === 1);

    offA();
    offA(); // a second call is harmless
    service.events.emit('sources.changed', { sources: [] });
    await until(() => b.length === 2);
    expect(a.length).toBe(1);
    expect(stream.readyState).toBe(1);

    offB();
    expect(stream.readyState).toBe(2); // CLOSED: no listener left
    const again = bridge.on('discovery.step', () => undefined);
    expect(opened.length).toBe(before + 2);
    again();
    expect(opened.at(-1)!.readyState).toBe(2);
  });
});
