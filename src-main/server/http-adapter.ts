// The HTTP + SSE adapter of the contract, for running the UI in a browser (`rsdesk serve`):
// bound to 127.0.0.1 only, a random token per start, a Host check against DNS rebinding, a strict CSP.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Dispatch } from '../app/dispatch.ts';
import type { EventHub } from '../app/events.ts';
import { SSE_STREAM_START } from '../contract/names.ts';
import type { Events } from '../contract/types.ts';
import { CSP } from './csp.ts';
import { EventReplay, type EventReplayOptions, type NumberedEvent } from './event-replay.ts';
import { lookupStatic, sendFile } from './static-files.ts';

export { CSP };

export const MAX_BODY_BYTES = 1024 * 1024;
export const PING_INTERVAL_MS = 15_000;
/** An SSE client that has this much unsent data is not reading: it is dropped rather than buffered forever. */
const MAX_SSE_BACKLOG = 8 * 1024 * 1024;
/** How soon a browser's EventSource tries again after its connection dropped (its own default is about 3 s). */
export const SSE_RETRY_MS = 1_000;

export interface HttpAdapterOptions {
  dispatch: Dispatch;
  events: EventHub;
  /** The built renderer (out/renderer). */
  rendererDir: string;
  /** 0 or absent: any free port. */
  port?: number;
  pingIntervalMs?: number;
  /** How many events (and bytes of them) are kept for clients that come back; the defaults in tests only. */
  replay?: EventReplayOptions;
}

export interface HttpAdapter {
  /** `http://127.0.0.1:PORT/#token=…`: the address to open. */
  url: string;
  origin: string;
  token: string;
  port: number;
  close(): Promise<void>;
}

function sameSecret(given: string | null | undefined, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function bearer(req: IncomingMessage): string | null {
  const header = req.headers.authorization;
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match ? match[1]! : null;
}

function sendJson(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(text)),
    'Cache-Control': 'no-store',
    ...extra,
  });
  res.end(text);
}

function sendText(res: ServerResponse, status: number, text: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(text)),
    'Cache-Control': 'no-store',
    ...extra,
  });
  res.end(text);
}

type Body = { ok: true; text: string } | { ok: false; status: 413 | 400 };

function readBody(req: IncomingMessage, limit: number): Promise<Body> {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      resolve({ ok: false, status: 413 });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        done = true;
        chunks.length = 0;
        resolve({ ok: false, status: 413 });
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (done) return;
      done = true;
      resolve({ ok: true, text: Buffer.concat(chunks).toString('utf8') });
    });
    req.on('error', () => {
      if (done) return;
      done = true;
      resolve({ ok: false, status: 400 });
    });
  });
}

export async function startHttpAdapter(options: HttpAdapterOptions): Promise<HttpAdapter> {
  const token = randomBytes(32).toString('hex');
  const pingIntervalMs = options.pingIntervalMs ?? PING_INTERVAL_MS;
  const sseClients = new Set<ServerResponse>();
  let port = 0;
  // Every event is numbered and kept a while from the start, whether a client is connected or not: one that lost
  // its connection gets what happened meanwhile when it comes back.
  const replay = new EventReplay(options.replay);
  const streams = new Set<(event: NumberedEvent) => void>();
  const unsubscribeHub = options.events.subscribe((name, payload) => {
    const event = replay.record(name, payload);
    for (const stream of [...streams]) stream(event);
  });

  const allowedHosts = () => new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  const allowedOrigins = () => new Set([`http://127.0.0.1:${port}`, `http://localhost:${port}`]);

  async function invoke(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!sameSecret(bearer(req), token)) {
      req.resume();
      sendJson(res, 401, { error: 'Missing or wrong token' }, { 'WWW-Authenticate': 'Bearer' });
      return;
    }
    if (req.method !== 'POST') {
      req.resume();
      sendJson(res, 405, { error: 'Use POST' }, { Allow: 'POST' });
      return;
    }
    const body = await readBody(req, MAX_BODY_BYTES);
    if (!body.ok) {
      // The rest of an oversized body is not worth reading: answer, then close the connection.
      req.resume();
      sendJson(res, body.status, { error: body.status === 413 ? 'Body larger than 1 MiB' : 'Bad body' }, { Connection: 'close' });
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.text);
    } catch {
      sendJson(res, 400, { error: 'Body is not JSON' });
      return;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      sendJson(res, 400, { error: 'Body must be a JSON object { "command", "args" }' });
      return;
    }
    const { command, args } = parsed as { command?: unknown; args?: unknown };
    const envelope = await options.dispatch(command, args === undefined ? {} : args);
    if (!res.destroyed) sendJson(res, 200, envelope);
  }

  function events(url: URL, req: IncomingMessage, res: ServerResponse): void {
    if (!sameSecret(url.searchParams.get('token'), token)) {
      sendJson(res, 401, { error: 'Missing or wrong token' });
      return;
    }
    if (req.method !== 'GET') {
      sendJson(res, 405, { error: 'Use GET' }, { Allow: 'GET' });
      return;
    }
    // A client coming back names the last event it got: the EventSource's own header on its reconnects, or the
    // query parameter when the page opens a new stream (an EventSource cannot set headers).
    const header = req.headers['last-event-id'];
    const lastId = (typeof header === 'string' && header !== '' ? header : null) ?? url.searchParams.get('lastEventId');
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Accel-Buffering': 'no',
    });
    res.flushHeaders();
    res.write(`retry: ${SSE_RETRY_MS}\n: connected\n\n`);
    sseClients.add(res);
    const send = (event: NumberedEvent) => res.write(`id: ${event.id}\nevent: ${event.name}\ndata: ${event.data}\n\n`);
    const drop = () => {
      streams.delete(stream);
      clearInterval(ping);
      sseClients.delete(res);
      if (!res.writableEnded) res.end();
    };
    const stream = (event: NumberedEvent) => {
      if (res.writableLength > MAX_SSE_BACKLOG) {
        // It reconnects with the last id it read and gets the rest then, or is told to read everything again.
        drop();
        return;
      }
      send(event);
    };
    if (lastId === null) {
      // Where this client starts: a stream that drops before its first event still comes back with a place to
      // resume from. (An event outside the contract's names: the page's bridge only notes its id.)
      res.write(`id: ${replay.lastId}\nevent: ${SSE_STREAM_START}\ndata: {}\n\n`);
    } else {
      const resume = replay.resume(lastId);
      if (resume.kind === 'replay') for (const event of resume.events) send(event);
      else {
        // Numbered as the newest event, so coming back again later resumes from here.
        const missed: Events['events.missed'] = { reason: resume.reason, message: resume.message };
        res.write(`id: ${replay.lastId}\nevent: events.missed\ndata: ${JSON.stringify(missed)}\n\n`);
      }
    }
    // Replay and subscription in the same turn: no event can fall between them.
    streams.add(stream);
    const ping = setInterval(() => res.write(': ping\n\n'), pingIntervalMs);
    ping.unref();
    res.on('close', drop);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Every answer carries the policy, including errors and API responses.
    res.setHeader('Content-Security-Policy', CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
    res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');

    // DNS rebinding: a page on evil.example resolving to 127.0.0.1 still sends its own Host.
    const host = (req.headers.host ?? '').toLowerCase();
    if (!allowedHosts().has(host)) {
      req.resume();
      sendText(res, 403, 'Forbidden: unexpected Host header', { Connection: 'close' });
      return;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedOrigins().has(origin.toLowerCase())) {
      req.resume();
      sendText(res, 403, 'Forbidden: cross-origin request');
      return;
    }
    const rawPath = (req.url ?? '/').split('?')[0]!;
    if (rawPath === '/api/invoke') return invoke(req, res);
    if (rawPath === '/api/events') return events(new URL(req.url ?? '/', 'http://127.0.0.1'), req, res);
    if (rawPath.startsWith('/api/')) {
      req.resume();
      sendJson(res, 404, { error: 'No such endpoint' });
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      req.resume();
      sendText(res, 405, 'Method not allowed', { Allow: 'GET, HEAD' });
      return;
    }
    const found = await lookupStatic(options.rendererDir, rawPath);
    if (found.kind === 'bad-path') sendText(res, 400, 'Bad path');
    else if (found.kind === 'not-found') sendText(res, 404, 'Not found');
    else sendFile(req, res, found);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      console.error('[http-adapter] request failed:', error);
      if (!res.headersSent) sendText(res, 500, 'Internal error');
      else res.destroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: options.port ?? 0 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;

  let closing: Promise<void> | null = null;
  return {
    url: `${origin}/#token=${token}`,
    origin,
    token,
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        unsubscribeHub();
        for (const client of [...sseClients]) client.end();
        server.close(() => resolve());
        server.closeIdleConnections();
        // SSE responses just ended; whatever is still open after that is cut.
        setImmediate(() => server.closeAllConnections());
      });
      return closing;
    },
  };
}
