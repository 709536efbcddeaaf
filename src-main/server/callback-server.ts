// The live engine's HTTP server (never imports electron): WebSub callbacks (`/websub/<token>`, one unguessable
// token per subscription, matched at the end of the path so a reverse proxy may keep a prefix), RSS Ping (`/ping`,
// GET for 1.0 and POST for 2.0), XML-RPC pings (`/RPC2`), and the public URL's self-test. Bodies are read up to a
// limit (413 past it) within a deadline; what they mean is the handlers' business.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

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
}

export interface CallbackServerOptions {
  host: string;
  port: number;
  /** Largest request body read. */
  maxBodyBytes: number;
  /** Deadline for a whole request (headers and body). Default 30 s. */
  requestTimeoutMs?: number;
}

export interface CallbackServer {
  /** http://host:port as bound (the real port when 0 was asked for). */
  url: string;
  host: string;
  port: number;
  close(): Promise<void>;
}

const TOKEN_PATH = /\/websub\/([A-Za-z0-9_-]{16,128})$/;
const SELF_TEST = /\/\.rsdesk-selftest\/([A-Za-z0-9_-]{8,128})$/;

export async function startCallbackServer(handlers: CallbackHandlers, options: CallbackServerOptions): Promise<CallbackServer> {
  const server: Server = createServer((req, res) => {
    route(req, res, handlers, options).catch((err: unknown) => {
      if (!res.headersSent) answer(res, { status: 500, body: `Internal error: ${err instanceof Error ? err.message : String(err)}\n` });
      else res.destroy();
    });
  });
  server.requestTimeout = options.requestTimeoutMs ?? 30_000;
  server.headersTimeout = Math.min(server.requestTimeout, 20_000);
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
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
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function route(req: IncomingMessage, res: ServerResponse, h: CallbackHandlers, o: CallbackServerOptions): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://callback.invalid');
  const path = url.pathname;
  const method = req.method ?? 'GET';
  const headers = flatten(req.headers);
  const token = TOKEN_PATH.exec(path)?.[1];
  if (token !== undefined) {
    if (method === 'GET') return answer(res, h.verification(token, url.searchParams));
    if (method === 'POST') {
      const body = await readBody(req, res, o.maxBodyBytes, h, path);
      if (body !== null) answer(res, await h.delivery(token, headers, body));
      return;
    }
    return answer(res, { status: 405, body: 'GET or POST only\n', headers: { allow: 'GET, POST' } });
  }
  if (path === '/ping' || path.endsWith('/ping')) {
    if (method === 'GET') return answer(res, await h.pingGet(url.searchParams));
    if (method === 'POST') {
      const body = await readBody(req, res, o.maxBodyBytes, h, path);
      if (body !== null) answer(res, await h.pingPost(headers, body));
      return;
    }
    return answer(res, { status: 405, body: 'GET or POST only\n', headers: { allow: 'GET, POST' } });
  }
  if (path === '/RPC2' || path.endsWith('/RPC2')) {
    if (method !== 'POST') return answer(res, { status: 405, body: 'XML-RPC calls are POSTed\n', headers: { allow: 'POST' } });
    const body = await readBody(req, res, o.maxBodyBytes, h, path);
    if (body !== null) answer(res, await h.xmlRpc(headers, body));
    return;
  }
  const nonce = SELF_TEST.exec(path)?.[1];
  if (nonce !== undefined && method === 'GET') return answer(res, h.selfTest(nonce));
  h.refused(method, path, 404, 'no such path');
  answer(res, { status: 404, body: 'Not found\n' });
}

/** The body, or null when it was too large (answered 413 here). */
async function readBody(req: IncomingMessage, res: ServerResponse, max: number, h: CallbackHandlers, path: string): Promise<Buffer | null> {
  const declared = Number(req.headers['content-length']);
  const tooLarge = () => {
    const reason = `a body over the limit of ${max.toLocaleString('en')} bytes`;
    h.refused(req.method ?? 'POST', path, 413, reason);
    answer(res, { status: 413, body: `Refused: ${reason}\n`, headers: { connection: 'close' } });
    req.resume();
    return null;
  };
  if (Number.isFinite(declared) && declared > max) return tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) return tooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
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
