// A server that answers only with informational responses (103 Early Hints, one every 100 ms, never the final
// answer). undici restarts its headers timer at each, so such a request was held until the overall deadline (10 min
// for a mirrored resource) whatever the timeout; now the timeout counts from the first one.
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fetcher } from '../mirror/fetcher.ts';
import { Http } from './client.ts';

let server: Server;
let base: string;
const sockets = new Set<Socket>();

beforeAll(async () => {
  server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('data', () => {
      const timer = setInterval(() => {
        if (socket.destroyed) return clearInterval(timer);
        socket.write('HTTP/1.1 103 Early Hints\r\nlink: </x.css>; rel=preload\r\n\r\n');
      }, 100);
      socket.on('close', () => clearInterval(timer));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => server.close(r));
});

describe('endless 103 Early Hints', () => {
  it('end a mirrored resource at its timeout, not at its deadline', async () => {
    const fetcher = new Fetcher({ timeoutMs: 600, retries: 0, proxy: 'none' });
    const t0 = Date.now();
    try {
      await expect(fetcher.get(`${base}/hint.txt`, {}, AbortSignal.timeout(20_000))).rejects.toThrow(
        `Timed out after 0.6 s waiting for ${base}/hint.txt: it sent only informational responses (103), never its answer`,
      );
    } finally {
      await fetcher.close();
    }
    expect(Date.now() - t0).toBeLessThan(3000);
  });

  it('end a document fetch (discovery, lists) at its timeout, not at its deadline', async () => {
    const http = new Http({ timeoutMs: 600, deadlineMs: 20_000, proxy: 'none' });
    const t0 = Date.now();
    try {
      await expect(http.get(`${base}/cap.xml`)).rejects.toMatchObject({ code: 'timeout' });
    } finally {
      await http.close();
    }
    expect(Date.now() - t0).toBeLessThan(3000);
  });
});
