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
  dropped: (max) => void refusals.push({ status: 0, reason: `dropped past ${max}` }),
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

/** A connection that writes `request` and then never reads what it is answered (its socket paused) nor closes. */
async function writeAndStall(request: string): Promise<Socket> {
  const socket = connect(server!.port, '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.pause();
  socket.write(request);
  return socket;
}

async function until(what: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await what()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return what();
}

describe('the callback server against slow senders (slow loris)', () => {
  it('lets go of a connection whose request was never finished once its deadline passes, even when the sender reads nothing and never closes', async () => {
    server = await startCallbackServer(handlers, { host: '127.0.0.1', port: 0, maxBodyBytes: 1_000, requestTimeoutMs: 300, checkIntervalMs: 100 });
    for (let i = 0; i < 5; i++) await writeAndStall('GET /ping?site_name=a HTTP/1.1\r\nHost: x\r\n');
    // Garbage that is no HTTP at all is answered 400 the same way: the sender need not read it.
    for (let i = 0; i < 3; i++) await writeAndStall('\x00\x01 not http\r\n\r\n');
    expect(await server.connections()).toBe(8);
    // Before, the server answered 408/400 and half-closed, then kept every such socket open for as long as the
    // sender did: anyone could hold as many of the process's file descriptors as they liked.
    expect(await until(async () => (await server!.connections()) === 0, 5_000)).toBe(true);
  });

  it('holds at most maxConnections at once: one more is closed at once, and said so', async () => {
    server = await startCallbackServer(handlers, { host: '127.0.0.1', port: 0, maxBodyBytes: 1_000, maxConnections: 3 });
    refusals.length = 0;
    for (let i = 0; i < 3; i++) await writeAndStall('GET /ping HTTP/1.1\r\nHost: x\r\n');
    expect(await until(async () => (await server!.connections()) === 3, 2_000)).toBe(true);
    const fourth = connect(server.port, '127.0.0.1');
    sockets.push(fourth);
    const closed = new Promise<void>((resolve) => fourth.once('close', () => resolve()));
    fourth.on('error', () => undefined);
    fourth.resume();
    await closed;
    expect(refusals).toEqual([{ status: 0, reason: 'dropped past 3' }]);
    // Once the held ones go, requests are served again.
    for (const s of sockets.splice(0, 3)) s.destroy();
    expect(await until(async () => (await server!.connections()) === 0, 2_000)).toBe(true);
    const again = await post('/ping', 3, 3);
    expect(await again.answer).toMatch(/^HTTP\/1\.1 200 /);
  });
});

describe('the callback server against request targets that are no URL', () => {
  it('answers 400 saying so, not 500 "Internal error", and the refusal is heard', async () => {
    server = await startCallbackServer(handlers, { host: '127.0.0.1', port: 0, maxBodyBytes: 1_000 });
    refusals.length = 0;
    for (const target of ['http://[::1/ping', 'http://a:99999/ping', 'http://%zz/ping']) {
      const socket = connect(server.port, '127.0.0.1');
      sockets.push(socket);
      const answer = await new Promise<string>((resolve) => {
        let text = '';
        socket.on('data', (d) => (text += d.toString('latin1')));
        socket.on('close', () => resolve(text));
        socket.write(`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      });
      expect(answer, target).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).toMatch(/\r\n\r\nRefused: the request target is not a URL\n$/);
    }
    expect(refusals).toEqual(Array.from({ length: 3 }, () => ({ status: 400, reason: 'the request target is not a URL' })));
  });
});
