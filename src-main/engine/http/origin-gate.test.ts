// Requests cancelled while every connection to a Source is held: none of them is left for undici to find later.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { Fetcher } from '../mirror/fetcher.ts';
import { abortableRequest } from './abortable-request.ts';
import { makeDispatcher } from './dispatcher.ts';
import { OriginGate } from './origin-gate.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A Source whose /stall answers only when told, counting the connections made to it. */
async function stallingSource() {
  const held: ServerResponse[] = [];
  let connections = 0;
  const server = createServer((req, res) => (req.url === '/stall' ? held.push(res) : res.end('ok')));
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    answer: () => held.splice(0).forEach((res) => res.end('late')),
  };
}

it('keeps no cancelled request, so the connections freed after a stall go on serving the next ones', async () => {
  const source = await stallingSource();
  const fetcher = new Fetcher({ concurrency: 2, retries: 0, proxy: 'none' });
  cleanups.push(() => fetcher.close());
  const stalled = [fetcher.get(`${source.url}/stall`, {}, new AbortController().signal), fetcher.get(`${source.url}/stall`, {}, new AbortController().signal)];
  await expect.poll(() => source.connections()).toBe(2);
  for (let i = 0; i < 300; i++) {
    const cancel = new AbortController();
    const fetching = fetcher.get(`${source.url}/r${i}`, {}, cancel.signal);
    cancel.abort();
    await expect(fetching).rejects.toThrow();
  }
  source.answer();
  for (const response of await Promise.all(stalled)) await response.body.resume();
  for (let i = 0; i < 4; i++) {
    const response = await fetcher.get(`${source.url}/after${i}`, {}, new AbortController().signal);
    expect(response.status).toBe(200);
    response.body.resume();
  }
  // undici kept each cancelled request and, at its turn, closed the connection it was given: 300 cancelled
  // requests made the next four wait behind dozens of new connections.
  expect(source.connections()).toBe(2);
});

it('drops a waiting request the moment it is cancelled, and sends the others in order as connections free', async () => {
  const source = await stallingSource();
  const gate = makeDispatcher({ connections: 1 }, 'none');
  cleanups.push(() => gate.close());
  expect(gate).toBeInstanceOf(OriginGate);
  const first = abortableRequest(gate, { origin: source.url, path: '/stall', method: 'GET', signal: new AbortController().signal });
  const cancel = new AbortController();
  const cancelled = abortableRequest(gate, { origin: source.url, path: '/a', method: 'GET', signal: cancel.signal });
  const next = abortableRequest(gate, { origin: source.url, path: '/b', method: 'GET', signal: new AbortController().signal });
  expect((gate as OriginGate).waiting).toBe(2);
  cancel.abort();
  await expect(cancelled).rejects.toThrow();
  expect((gate as OriginGate).waiting).toBe(1);
  await expect.poll(() => source.connections()).toBe(1);
  source.answer();
  expect(await (await first).body.text()).toBe('late');
  expect(await (await next).body.text()).toBe('ok');
  expect((gate as OriginGate).waiting).toBe(0);
  expect(source.connections()).toBe(1);
});
