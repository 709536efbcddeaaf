// The browser's event stream across a drop: the renderer's HTTP bridge (undici's EventSource standing in for the
// browser's) against the real HTTP + SSE adapter and service, through a proxy that breaks the stream like a network
// drop and refuses it while down. Events emitted meanwhile arrive once it is back, in order, once each; when more
// happened than the server keeps, the bridge says so and every query is read again.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueryClient, QueryObserver } from '@tanstack/react-query';
import { EventSource as UndiciEventSource } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createService, type Service } from '../src-main/app/service.ts';
import { startHttpAdapter, type HttpAdapter } from '../src-main/server/http-adapter.ts';
import { openStore } from '../src-main/store/store.ts';
import type { Bridge } from '../src-main/contract/bridge.ts';
import type { Events } from '../src-main/contract/types.ts';
import { createHttpBridge } from '../src-renderer/bridge/http.ts';
import { readAllWhenEventsMissed } from '../src-renderer/data/missed.ts';
import { startStreamCutter, type StreamCutter } from './stream-cutter.ts';

/** Records every stream the bridge opens, to see it open. */
const opened: EventSource[] = [];
class RecordingEventSource extends UndiciEventSource {
  constructor(url: string | URL, init?: EventSourceInit) {
    super(url, init);
    opened.push(this as unknown as EventSource);
  }
}
const Source = RecordingEventSource as unknown as typeof EventSource;
/** The replay buffer of this test's server: small, so a drop can outrun it. */
const KEPT = 20;

let dir: string;
let service: Service;
let adapter: HttpAdapter;
let cutter: StreamCutter;
const offs: Array<() => void> = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rsdesk-stream-'));
  const rendererDir = join(dir, 'renderer');
  mkdirSync(rendererDir);
  writeFileSync(join(rendererDir, 'index.html'), '<!doctype html><title>t</title>');
  service = createService({ store: openStore(join(dir, 'db.sqlite')), adapter: 'http', version: '0.0.0-test' });
  adapter = await startHttpAdapter({ dispatch: service.dispatch, events: service.events, rendererDir, replay: { maxEvents: KEPT } });
  cutter = await startStreamCutter(adapter.origin);
});

afterEach(() => {
  for (const off of offs.splice(0)) off();
  cutter.down = false;
  cutter.refuse = 'reset';
});

afterAll(async () => {
  await cutter?.close();
  await adapter?.close();
  await service?.close();
  rmSync(dir, { recursive: true, force: true });
});

function until(check: () => boolean, what: string, ms = 15_000): Promise<void> {
  const start = Date.now();
  return new Promise((resolve, reject) => {
    const tick = () => {
      if (check()) resolve();
      else if (Date.now() - start > ms) reject(new Error(`timed out waiting for ${what}`));
      else setTimeout(tick, 10);
    };
    tick();
  });
}

const progress = (entries: number): Events['document.progress'] => ({ url: 'http://127.0.0.1/list.xml', entries, bytes: entries * 10 });

/** A bridge through the cutter, listening to document.progress (entries numbered) and events.missed. */
async function connected(): Promise<{ bridge: Bridge; seen: number[]; missed: Array<Events['events.missed']> }> {
  const bridge = createHttpBridge(adapter.token, { base: cutter.origin, EventSource: Source });
  const seen: number[] = [];
  const missed: Array<Events['events.missed']> = [];
  offs.push(bridge.on('document.progress', (p) => seen.push(p.entries)));
  offs.push(bridge.on('events.missed', (m) => missed.push(m)));
  const stream = opened.at(-1)!;
  await until(() => stream.readyState === 1, 'the stream');
  service.events.emit('document.progress', progress(0));
  await until(() => seen.includes(0), 'the first event');
  return { bridge, seen, missed };
}

/** Breaks the stream and keeps it down until `up()`. */
async function drop(): Promise<{ up: () => void; opened: number }> {
  cutter.down = true;
  const opened = cutter.streamsOpened;
  cutter.cut();
  await until(() => cutter.streamsOpen === 0, 'the stream to be cut');
  return { up: () => (cutter.down = false), opened };
}

describe('the event stream across a drop', () => {
  it('gives the events emitted while it was down once it is back, in order, once each', async () => {
    const { seen, missed } = await connected();
    const { up, opened } = await drop();
    for (let i = 1; i <= 5; i++) service.events.emit('document.progress', progress(i));
    expect(seen).toEqual([0]);
    up();
    await until(() => seen.length >= 6, 'the missed events');
    // A new stream really was opened (the old one was cut), and nothing was lost nor given twice.
    expect(cutter.streamsOpened).toBeGreaterThan(opened);
    expect(seen).toEqual([0, 1, 2, 3, 4, 5]);
    service.events.emit('document.progress', progress(6));
    await until(() => seen.length === 7, 'an event after the drop');
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(missed).toEqual([]);
  });

  it('opens a new stream from the last event read when the browser gave up on its own (the server answered 503)', async () => {
    const { seen, missed } = await connected();
    cutter.refuse = 503;
    const { up } = await drop();
    service.events.emit('document.progress', progress(1));
    service.events.emit('document.progress', progress(2));
    // The EventSource is CLOSED for good after the 503: the bridge opens another, later, from where it was.
    await until(() => opened.at(-1)!.readyState === 2, 'the browser to give up');
    const streams = opened.length;
    up();
    await until(() => seen.length >= 3, 'the missed events');
    expect(opened.length).toBeGreaterThan(streams);
    expect(seen).toEqual([0, 1, 2]);
    expect(missed).toEqual([]);
  });

  it('says so when more happened than the server keeps, and every query is read again', async () => {
    const { bridge, seen, missed } = await connected();
    const client = new QueryClient();
    const observer = new QueryObserver(client, { queryKey: ['settings'], queryFn: () => bridge.invoke('settings.get', {}), staleTime: Infinity });
    offs.push(observer.subscribe(() => undefined));
    offs.push(readAllWhenEventsMissed(bridge, client));
    await until(() => observer.getCurrentResult().data !== undefined, 'the settings');
    expect(observer.getCurrentResult().data?.timeoutMs).not.toBe(12_000);

    const { up } = await drop();
    // The engine's state changes while the page cannot hear of it, and more events go by than the server keeps.
    expect(await service.dispatch('settings.set', { timeoutMs: 12_000 })).toMatchObject({ ok: true });
    for (let i = 1; i <= KEPT + 5; i++) service.events.emit('document.progress', progress(i));
    up();
    await until(() => missed.length === 1, 'events.missed');
    expect(missed[0]).toMatchObject({ reason: 'overrun' });
    expect(missed[0]!.message).toMatch(/^More happened while the page was disconnected than the app server keeps \(\d+ events were dropped\)/);
    // None of a partial replay is given: a view would take it for the whole.
    expect(seen).toEqual([0]);
    await until(() => observer.getCurrentResult().data?.timeoutMs === 12_000, 'the settings read again');

    // From there on the stream goes on as before, and a later drop is replayed again.
    service.events.emit('document.progress', progress(100));
    await until(() => seen.includes(100), 'an event after the re-read');
    const again = await drop();
    service.events.emit('document.progress', progress(101));
    again.up();
    await until(() => seen.includes(101), 'the event missed in the second drop');
    expect(seen).toEqual([0, 100, 101]);
    expect(missed).toHaveLength(1);
  });
});
