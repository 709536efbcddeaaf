// An HTTP proxy on 127.0.0.1 in front of the app server (`rsdesk serve`), for tests that lose the event stream:
// `cut()` breaks every open /api/events connection the way a network drop does, and while `down` every new one is
// refused (its socket closed at once), so the page's EventSource keeps trying until it is up again. Everything else
// passes through, with Host and Origin rewritten to the app server's own (which checks them).
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StreamCutter {
  /** http://127.0.0.1:PORT: the origin to open the page at (or give the bridge). */
  origin: string;
  /** Breaks every event stream now open. */
  cut(): void;
  /** While true, new event streams are refused. */
  down: boolean;
  /**
   * How they are refused: 'reset' closes the socket (a browser keeps trying by itself), a status answers with it
   * (a browser gives up on that EventSource for good: the page has to open a new one).
   */
  refuse: 'reset' | number;
  /** How many event streams were let through so far. */
  streamsOpened: number;
  /** How many are open now. */
  readonly streamsOpen: number;
  close(): Promise<void>;
}

export async function startStreamCutter(target: string): Promise<StreamCutter> {
  const app = new URL(target);
  const open = new Set<{ res: ServerResponse; upstream: IncomingMessage | null; req: ReturnType<typeof request> }>();
  let own = '';
  const cutter: StreamCutter = {
    origin: '',
    down: false,
    refuse: 'reset',
    streamsOpened: 0,
    get streamsOpen() {
      return open.size;
    },
    cut() {
      for (const s of [...open]) {
        s.upstream?.destroy();
        s.req.destroy();
        s.res.destroy();
        open.delete(s);
      }
    },
    close: () => Promise.resolve(),
  };

  const server: Server = createServer((req, res) => {
    const isStream = (req.url ?? '').startsWith('/api/events');
    if (isStream && cutter.down) {
      if (cutter.refuse === 'reset') req.socket.destroy();
      else {
        res.writeHead(cutter.refuse, { 'Content-Type': 'text/plain' });
        res.end('down\n');
      }
      return;
    }
    const headers = { ...req.headers, host: app.host };
    if (headers.origin === own) headers.origin = app.origin;
    const upstreamReq = request({ host: app.hostname, port: app.port, method: req.method, path: req.url, headers, agent: false }, (upstream) => {
      res.writeHead(upstream.statusCode ?? 502, upstream.headers);
      if (isStream) {
        res.flushHeaders();
        entry.upstream = upstream;
      }
      upstream.pipe(res);
    });
    const entry = { res, upstream: null as IncomingMessage | null, req: upstreamReq };
    upstreamReq.on('error', () => res.destroy());
    if (isStream) {
      cutter.streamsOpened++;
      open.add(entry);
      res.on('close', () => {
        open.delete(entry);
        upstreamReq.destroy();
      });
    }
    req.pipe(upstreamReq);
  });
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  own = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  cutter.origin = own;
  cutter.close = () =>
    new Promise<void>((resolve) => {
      cutter.cut();
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return cutter;
}
