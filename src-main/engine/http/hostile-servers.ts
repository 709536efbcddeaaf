// Hostile HTTP servers on 127.0.0.1 for tests: they trickle, stall, send huge headers, loop redirects or do not
// speak HTTP at all. Raw sockets, so nothing in Node's HTTP server smooths their behaviour over.
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface HostileServer {
  url: string;
  /** Requests seen, as their request lines ("GET /x HTTP/1.1"). */
  requests: string[];
  close(): Promise<void>;
}

export type HostileBehaviour = (socket: Socket, requestLine: string, path: string) => void;

export async function hostileServer(behaviour: HostileBehaviour): Promise<HostileServer> {
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffered = '';
    const onData = (data: Buffer) => {
      buffered += data.toString('latin1');
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      const requestLine = buffered.slice(0, buffered.indexOf('\r\n'));
      requests.push(requestLine);
      behaviour(socket, requestLine, requestLine.split(' ')[1] ?? '/');
    };
    socket.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Sends valid headers, then the body one byte every `everyMs`, forever (each byte well within any idle timeout). */
export function trickle(everyMs: number, contentType = 'application/xml'): HostileBehaviour {
  return (socket) => {
    socket.write(`HTTP/1.1 200 OK\r\ncontent-type: ${contentType}\r\ntransfer-encoding: chunked\r\n\r\n`);
    const body = '<?xml version="1.0"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' + ' '.repeat(1 << 20);
    let i = 0;
    const timer = setInterval(() => {
      if (socket.destroyed) return void clearInterval(timer);
      socket.write(`1\r\n${body[i++ % body.length]}\r\n`);
    }, everyMs);
    socket.on('close', () => clearInterval(timer));
  };
}

/** Sends the status line and headers one byte every `everyMs`, never finishing them. */
export function trickleHeaders(everyMs: number): HostileBehaviour {
  return (socket) => {
    const head = `HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nx-slow: ${'s'.repeat(10_000)}`;
    let i = 0;
    const timer = setInterval(() => {
      if (socket.destroyed || i >= head.length) return void clearInterval(timer);
      socket.write(head[i++]!);
    }, everyMs);
    socket.on('close', () => clearInterval(timer));
  };
}

/** Accepts the request and never answers. */
export const stall: HostileBehaviour = () => undefined;

/** A status line, then headers of `bytes` bytes (one long header). */
export function hugeHeaders(bytes: number): HostileBehaviour {
  return (socket) => {
    socket.write(`HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nx-padding: ${'a'.repeat(bytes)}\r\ncontent-length: 2\r\n\r\nok`);
  };
}

/** Redirects every path to the next number, forever. */
export const redirectForever: HostileBehaviour = (socket, _line, path) => {
  const n = Number(/\d+/.exec(path)?.[0] ?? 0) + 1;
  socket.end(`HTTP/1.1 302 Found\r\nlocation: /hop/${n}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
};

/** Answers with something that is not HTTP. */
export const notHttp: HostileBehaviour = (socket) => {
  socket.end('SSH-2.0-OpenSSH_9.2\r\n');
};

/** Two Content-Length headers that disagree, then a body of the second's length. */
export const twoLengths: HostileBehaviour = (socket) => {
  socket.end('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\ncontent-length: 20\r\n\r\n' + 'x'.repeat(20));
};

/**
 * A Source that is also the proxy it is reached through (requests come in absolute form): `/start` redirects to
 * `target`. A request for `target` reaches this server as the proxy, so a test sees whether it was made without any
 * packet leaving 127.0.0.1.
 */
export function redirectInside(target: string): HostileBehaviour {
  return (socket, _line, path) => {
    if (new URL(path, 'http://x').pathname === '/start') {
      socket.end(`HTTP/1.1 302 Found\r\nlocation: ${target}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
    } else socket.end('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 6\r\nconnection: close\r\n\r\nsecret');
  };
}
