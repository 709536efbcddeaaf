// The callback server against many senders at once: anyone may POST to it, so what bodies hold together is bounded.
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startCallbackServer, type CallbackHandlers, type CallbackServer } from './callback-server.ts';

let server: CallbackServer | null = null;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await server?.close();
  server = null;
});

const refusals: { status: number; reason: string }[] = [];
const handlers: CallbackHandlers = {
  verification: () => ({ status: 404, body: '' }),
  delivery: async (_token, _headers, body) => ({ status: 202, body: `got ${body.length}\n` }),
  pingGet: async () => ({ status: 200, body: '' }),
  pingPost: async (_headers, body) => ({ status: 200, body: `got ${body.length}\n` }),
  xmlRpc: async () => ({ status: 200, body: '' }),
  selfTest: () => ({ status: 404, body: '' }),
  refused: (_method, _path, status, reason) => void refusals.push({ status, reason }),
};

/** A POST that sends `sent` of its `length` bytes and waits; returns the socket and what it is answered. */
async function post(path: string, length: number, sent: number): Promise<{ socket: Socket; answer: Promise<string> }> {
  const { port } = server!;
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  let text = '';
  const answer = new Promise<string>((resolve) => {
    socket.on('data', (d) => {
      text += d.toString('latin1');
      if (text.includes('\r\n\r\n')) resolve(text);
    });
    socket.on('close', () => resolve(text));
  });
  socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: ${length}\r\n\r\n${'x'.repeat(sent)}`);
  return { socket, answer };
}

describe('the callback server against many bodies at once', () => {
  it('answers 503 to a request whose body would make those being read hold more than the limit, and serves the rest', async () => {
    server = await startCallbackServer(handlers, { host: '127.0.0.1', port: 0, maxBodyBytes: 1_000, maxBufferedBytes: 1_500 });
    refusals.length = 0;
    const first = await post('/ping', 900, 800);
    await new Promise((r) => setTimeout(r, 100));
    const second = await post('/ping', 900, 800);
    const refused = await second.answer;
    expect(refused).toMatch(/^HTTP\/1\.1 503 /);
    expect(refused).toMatch(/retry-after: 30/i);
    expect(refusals).toEqual([{ status: 503, reason: 'too many requests at once: their bodies would hold more than 1,500 bytes together' }]);
    // The first one, whose bytes were held within the limit, is read to its end and answered.
    first.socket.write('x'.repeat(100));
    expect(await first.answer).toMatch(/^HTTP\/1\.1 200 /);
    // What they held is given back: another body of the same size is read.
    const third = await post('/ping', 900, 900);
    expect(await third.answer).toMatch(/^HTTP\/1\.1 200 /);
  });
});
