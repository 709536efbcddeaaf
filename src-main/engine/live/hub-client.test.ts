// Requests to a hub go through the environment's proxy, as every other request does.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { askHub } from './hub-client.ts';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('a hub that never answers', () => {
  it('is given up on at the deadline, said in words', async () => {
    const hub = await listen(() => undefined);
    const started = Date.now();
    const answer = await askHub({ hub: `http://${hub}/hub`, mode: 'subscribe', topic: 't', callback: 'http://127.0.0.1:1/c', timeoutMs: 500 });
    expect(Date.now() - started).toBeLessThan(3_000);
    // Before: "Network error for http://…/hub: The operation was aborted due to timeout".
    expect(answer).toEqual({ ok: false, status: null, reason: `the hub ${hub} did not answer within 0.5 s (http://${hub}/hub)`, retryAfterMs: null });
  });
});

describe('a hub behind a proxy', () => {
  it('is asked through HTTP_PROXY, not straight', async () => {
    // Nothing listens where the hub is said to be: only the proxy can answer for it.
    const closed = await listen(() => undefined);
    await new Promise((r) => servers.pop()!.close(r));
    const asked: string[] = [];
    const proxy = await listen((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        asked.push(`${req.method} ${req.url} ${new URLSearchParams(body).get('hub.mode')}`);
        res.writeHead(202).end();
      });
    });
    const answer = await askHub({
      hub: `http://${closed}/hub`,
      mode: 'subscribe',
      topic: 'http://source.invalid/changelist.xml',
      callback: 'http://127.0.0.1:1/callback',
      timeoutMs: 5000,
      proxyEnv: { HTTP_PROXY: `http://${proxy}` },
    });
    expect(answer).toEqual({ ok: true, status: 202 });
    expect(asked).toEqual([`POST http://${closed}/hub subscribe`]);

    const direct = await askHub({ hub: `http://${closed}/hub`, mode: 'unsubscribe', topic: 't', callback: 'http://127.0.0.1:1/c', timeoutMs: 5000, proxyEnv: { HTTP_PROXY: `http://${proxy}`, NO_PROXY: '127.0.0.1' } });
    expect(direct).toMatchObject({ ok: false, status: null, reason: `Connection refused by ${closed} (http://${closed}/hub)` });
  });
});
