// The live engine's HTTP server (never imports electron): WebSub callbacks (`/websub/<token>`, one unguessable
// token per subscription, matched at the end of the path so a reverse proxy may keep a prefix), RSS Ping (`/ping`,
// GET for 1.0 and POST for 2.0), XML-RPC pings (`/RPC2`), and the public URL's self-test. Bodies are read up to a
// limit (413 past it) within a deadline; what they mean is the handlers' business.
import { createServer, maxHeaderSize, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';

export interface HttpAnswer {
  status: number;
  body: string;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface CallbackHandlers {
  verification(token: string, query: URLSearchParams): HttpAnswer;
  delivery(token: string, headers: Record<string, string>, body: Buffer): Promise<HttpAnswer>;
  pingGet(query: URLSearchParams): Promise<HttpAnswer>;
  pingPost(headers: Record<string, string>, body: Buffer): Promise<HttpAnswer>;
  xmlRpc(headers: Record<string, string>, body: Buffer): Promise<HttpAnswer>;
  selfTest(nonce: string): HttpAnswer;
  /** Something that fits no route, or a body over the limit: for the log. */
  refused(method: string, path: string, status: number, reason: string): void;
  /** A connection closed unanswered, since `max` were open already. */
  dropped?(max: number): void;
}

export interface CallbackServerOptions {
  host: string;
  port: number;
  /** Largest request body read. */
  maxBodyBytes: number;
  /**
   * Largest ping body read (/ping, /RPC2), never more than maxBodyBytes. Default 256 KiB: a ping is a few hundred bytes, and anyone may send one,
   * parsed on this thread (10 MiB of attributes in one tag took it 12 s).
   */
  maxPingBytes?: number;
  /** Deadline for a whole request (headers and body). Default 30 s. */
  requestTimeoutMs?: number;
  /**
   * Bytes the bodies being read may hold together; a request that would go past it is answered 503 (try again
   * later). Default 4 × maxBodyBytes: anyone can POST here, and a hundred slow 10 MB bodies at once held a gigabyte.
   */
  maxBufferedBytes?: number;
  /** How often request deadlines are looked at (Node's `connectionsCheckingInterval`). Default 5 s. */
  checkIntervalMs?: number;
  /** Connections held at once; one more is closed unanswered. Default 256. */
  maxConnections?: number;
}

/** What the bodies being read hold together. */
interface Buffered {
  held: number;
  max: number;
}

export interface CallbackServer {
  /** http://host:port as bound (the real port when 0 was asked for). */
  url: string;
  host: string;
  port: number;
  /** Connections open now. */
  connections(): Promise<number>;
  close(): Promise<void>;
}

const TOKEN_PATH = /\/websub\/([A-Za-z0-9_-]{16,128})$/;
const SELF_TEST = /\/\.rsdesk-selftest\/([A-Za-z0-9_-]{8,128})$/;

export async function startCallbackServer(handlers: CallbackHandlers, options: CallbackServerOptions): Promise<CallbackServer> {
  const buffered: Buffered = { held: 0, max: options.maxBufferedBytes ?? 4 * options.maxBodyBytes };
  const server: Server = createServer({ connectionsCheckingInterval: options.checkIntervalMs ?? 5_000 }, (req, res) => {
    route(req, res, handlers, options, buffered).catch((err: unknown) => {
      if (!res.headersSent) answer(res, { status: 500, body: `Internal error: ${err instanceof Error ? err.message : String(err)}\n` });
      else res.destroy();
    });
  });
  // Node answers a request whose line and headers pass its limit (a hub.challenge of megabytes to echo) with a bare
  // 431 and says nothing: here the sender is told why, and the feed hears of it.
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket) => {
    if (err.code !== 'HPE_HEADER_OVERFLOW' && err.code !== 'HPE_URI_TOO_LONG') {
      if (socket.writable && err.code !== 'ECONNRESET') endThenLetGo(socket, 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      else socket.destroy();
      return;
    }
    const head = err.rawPacket?.subarray(0, 300).toString('latin1') ?? '';
    const [method = '?', target = ''] = head.split(' ', 2);
    const reason = `the request line and headers are over the limit of ${Math.round(maxHeaderSize / 1024)} KiB; not read`;
    handlers.refused(/^[A-Z]{1,10}$/.test(method) ? method : '?', target.split('?')[0], 431, reason);
    const body = `Refused: ${reason}\n`;
    if (socket.writable) endThenLetGo(socket, `HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    else socket.destroy();
  });
  // Each connection holds a file descriptor of the whole process (the mirrors' files, SQLite): senders that open
  // connections and send nothing may take only so many, and each one refused is said (the engine counts them).
  server.maxConnections = options.maxConnections ?? 256;
  server.on('drop', () => handlers.dropped?.(server.maxConnections));
  server.requestTimeout = options.requestTimeoutMs ?? 30_000;
  server.headersTimeout = Math.min(server.requestTimeout, 20_000);
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(listenError(err, options.host, options.port)));
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    host: address.address,
    port: address.port,
    connections: () => new Promise((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n)))),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Answers and half-closes a connection whose request is refused before it reached a handler, then lets go of it:
 * `end()` alone kept the socket until the sender closed its side, and a sender that never reads nor closes (a slow
 * loris past its deadline) held it, and its file descriptor, for ever.
 */
function endThenLetGo(socket: Duplex, answer: string): void {
  socket.end(answer);
  const timer = setTimeout(() => socket.destroy(), LET_GO_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

const LET_GO_MS = 1_000;

export const MAX_PING_BYTES = 256 * 1024;

async function route(req: IncomingMessage, res: ServerResponse, h: CallbackHandlers, o: CallbackServerOptions, buffered: Buffered): Promise<void> {
  const method = req.method ?? 'GET';
  // An absolute-form target (`GET http://host/ping`) is parsed as a URL of its own, and need not be one.
  const url = URL.parse(req.url ?? '/', 'http://callback.invalid');
  if (url === null) {
    const reason = 'the request target is not a URL';
    h.refused(method, '', 400, reason);
    return answer(res, { status: 400, body: `Refused: ${reason}\n`, headers: { connection: 'close' } });
  }
  const path = url.pathname;
  const headers = flatten(req.headers);
  const token = TOKEN_PATH.exec(path)?.[1];
  if (token !== undefined) {
    if (method === 'GET') return answer(res, h.verification(token, url.searchParams));
    if (method === 'POST') {
      const body = await readBody(req, res, o.maxBodyBytes, 'a body', h, path, buffered);
      if (body !== null) answer(res, await h.delivery(token, headers, body));
      return;
    }
    return answer(res, { status: 405, body: 'GET or POST only\n', headers: { allow: 'GET, POST' } });
  }
  if (path === '/ping' || path.endsWith('/ping')) {
    if (method === 'GET') return answer(res, await h.pingGet(url.searchParams));
    if (method === 'POST') {
      const body = await readBody(req, res, Math.min(o.maxPingBytes ?? MAX_PING_BYTES, o.maxBodyBytes), 'a ping', h, path, buffered);
      if (body !== null) answer(res, await h.pingPost(headers, body));
      return;
    }
    return answer(res, { status: 405, body: 'GET or POST only\n', headers: { allow: 'GET, POST' } });
  }
  if (path === '/RPC2' || path.endsWith('/RPC2')) {
    if (method !== 'POST') return answer(res, { status: 405, body: 'XML-RPC calls are POSTed\n', headers: { allow: 'POST' } });
    const body = await readBody(req, res, Math.min(o.maxPingBytes ?? MAX_PING_BYTES, o.maxBodyBytes), 'a ping', h, path, buffered);
    if (body !== null) answer(res, await h.xmlRpc(headers, body));
    return;
  }
  const nonce = SELF_TEST.exec(path)?.[1];
  if (nonce !== undefined && method === 'GET') return answer(res, h.selfTest(nonce));
  h.refused(method, path, 404, 'no such path');
  answer(res, { status: 404, body: 'Not found\n' });
}

/** The body, or null when it was too large (answered 413 here) or could not be held now (503). */
async function readBody(req: IncomingMessage, res: ServerResponse, max: number, what: string, h: CallbackHandlers, path: string, buffered: Buffered): Promise<Buffer | null> {
  const declared = Number(req.headers['content-length']);
  const refuse = (status: number, reason: string, headers: Record<string, string>) => {
    h.refused(req.method ?? 'POST', path, status, reason);
    answer(res, { status, body: `Refused: ${reason}\n`, headers: { connection: 'close', ...headers } });
    req.resume();
    return null;
  };
  const tooLarge = () => refuse(413, `${what} over the limit of ${max.toLocaleString('en')} bytes`, {});
  const busy = () =>
    refuse(503, `too many requests at once: their bodies would hold more than ${buffered.max.toLocaleString('en')} bytes together`, { 'retry-after': '30' });
  if (Number.isFinite(declared) && declared > max) return tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req) {
      const length = (chunk as Buffer).length;
      size += length;
      if (size > max) return tooLarge();
      buffered.held += length;
      chunks.push(chunk as Buffer);
      if (buffered.held > buffered.max) return busy();
    }
    return Buffer.concat(chunks);
  } finally {
    // Counted while it is read: once read, the body is the handler's, which stores it at once.
    buffered.held -= chunks.reduce((sum, c) => sum + c.length, 0);
  }
}

function answer(res: ServerResponse, a: HttpAnswer): void {
  if (res.headersSent) return;
  const body = Buffer.from(a.body, 'utf8');
  res.writeHead(a.status, { 'content-type': a.contentType ?? 'text/plain; charset=utf-8', 'content-length': body.length, ...a.headers });
  res.end(body);
}

function flatten(headers: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/**
 * Why the server cannot listen, in words: Node's own message ("listen EADDRINUSE: address already in use …") is a
 * code, not a reason a person can act on. The code stays on the error for callers that tell the cases apart.
 */
export function listenError(err: NodeJS.ErrnoException, host: string, port: number): NodeJS.ErrnoException {
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const said =
    err.code === 'EADDRINUSE' ? `${where} is already in use by another program (another rsdesk watch, or ResourceSync Desktop, perhaps)`
    : err.code === 'EACCES' ? `this computer does not let this program listen on ${where} (ports below 1024 need special rights)`
    : err.code === 'EADDRNOTAVAIL' ? `${host} is not an address of this computer`
    : `${where} could not be listened on: ${err.message}`;
  return Object.assign(new Error(said), { code: err.code });
}
