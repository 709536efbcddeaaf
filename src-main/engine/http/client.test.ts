import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bearerFor, Http } from './client.ts';
import { HttpStatusError, NetworkError } from './errors.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface TestServer {
  url: string;
  seen: IncomingMessage[];
  close(): Promise<void>;
}

async function serve(routes: Record<string, Handler>): Promise<TestServer> {
  const seen: IncomingMessage[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(req);
    const handler = routes[new URL(req.url ?? '/', 'http://x').pathname];
    if (handler) handler(req, res);
    else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not here');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function redirect(status: number, location: string): Handler {
  return (_req, res) => {
    res.writeHead(status, { location });
    res.end();
  };
}

let other: TestServer;
let main: TestServer;
const clients: Http[] = [];
function client(options: ConstructorParameters<typeof Http>[0] = {}): Http {
  const http = new Http(options);
  clients.push(http);
  return http;
}

beforeAll(async () => {
  other = await serve({
    '/landing': (req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`auth=${req.headers.authorization ?? 'none'}`);
    },
    '/back': redirect(302, 'PLACEHOLDER'),
  });
  main = await serve({
    '/ok': (req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', link: '<a>; rel=x' });
      res.end(`hello ${req.headers['user-agent']}`);
    },
    '/latin1': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=iso-8859-1' });
      res.end(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    },
    '/auth': (req, res) => {
      res.writeHead(200);
      res.end(`auth=${req.headers.authorization ?? 'none'}`);
    },
    '/r1': redirect(301, '/r2'),
    '/r2': redirect(302, 'r3?x=1'),
    '/r3': redirect(303, '/ok'),
    '/loop-a': redirect(302, '/loop-b'),
    '/loop-b': redirect(307, '/loop-a'),
    '/to-ftp': redirect(302, 'ftp://127.0.0.1/file'),
    '/to-other': (_req, res) => {
      res.writeHead(302, { location: `${other.url}/landing` });
      res.end();
    },
    '/slow-headers': () => {
      // never answers
    },
    '/slow-body': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first part…');
      // then stalls
    },
    '/big': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      let sent = 0;
      const chunk = Buffer.alloc(16 * 1024, 97);
      const pump = () => {
        while (sent < 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    },
    '/big-declared': (_req, res) => {
      res.writeHead(200, { 'content-length': String(10 * 1024 * 1024) });
      res.write('x');
    },
    '/gzip': (_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'text/plain' });
      res.end(gzipSync(Buffer.from('compressed hello')));
    },
    '/gzip-bomb': (_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      res.end(gzipSync(Buffer.alloc(4 * 1024 * 1024)));
    },
    '/missing': (_req, res) => {
      res.writeHead(404, 'Not Found');
      res.end('gone');
    },
  });
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((http) => http.close()));
});

afterAll(async () => {
  await main.close();
  await other.close();
});

describe('Http.get', () => {
  it('returns status, lower-case headers, the final URL and the body', async () => {
    const http = client({ userAgent: 'test-agent/1' });
    const res = await http.get(`${main.url}/ok`);
    expect(res.status).toBe(200);
    expect(res.statusText).toBe('OK');
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers.link).toBe('<a>; rel=x');
    expect(res.url).toBe(`${main.url}/ok`);
    expect(res.redirects).toEqual([]);
    expect(await res.text()).toBe('hello test-agent/1');
  });

  it('decodes text with the charset from Content-Type', async () => {
    const res = await client().get(`${main.url}/latin1`);
    expect(await res.text()).toBe('café');
  });

  it('returns non-2xx responses (the caller decides)', async () => {
    const res = await client().get(`${main.url}/missing`);
    expect(res.status).toBe(404);
    expect(res.statusText).toBe('Not Found');
    await res.discard();
  });

  it('follows a redirect chain and records every hop', async () => {
    const res = await client().get(`${main.url}/r1`);
    expect(res.status).toBe(200);
    expect(res.url).toBe(`${main.url}/ok`);
    expect(res.redirects).toEqual([`${main.url}/r1`, `${main.url}/r2`, `${main.url}/r3?x=1`]);
    await res.discard();
  });

  it('refuses a redirect loop with a clear error', async () => {
    const err = await client({ maxRedirects: 5 })
      .get(`${main.url}/loop-a`)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).code).toBe('too-many-redirects');
    expect((err as NetworkError).message).toBe(
      `Too many redirects (a redirect loop): more than 5 starting at ${main.url}/loop-a`,
    );
  });

  it('stops after maxRedirects hops', async () => {
    const err = await client({ maxRedirects: 2 })
      .get(`${main.url}/r1`)
      .catch((e: unknown) => e);
    expect((err as NetworkError).code).toBe('too-many-redirects');
    const ok = await client({ maxRedirects: 3 }).get(`${main.url}/r1`);
    expect(ok.status).toBe(200);
    await ok.discard();
  });

  it('refuses a redirect to a non-http scheme', async () => {
    const err = await client()
      .get(`${main.url}/to-ftp`)
      .catch((e: unknown) => e);
    expect((err as NetworkError).code).toBe('bad-redirect');
    expect((err as NetworkError).message).toContain('ftp:');
  });

  it('refuses URLs that are not http(s)', async () => {
    for (const url of ['file:///etc/passwd', 'not a url', 'javascript:alert(1)']) {
      const err = await client()
        .get(url)
        .catch((e: unknown) => e);
      expect((err as NetworkError).code).toBe('bad-url');
    }
  });

  it('sends a token to the origin it is given for, and to no other', async () => {
    const http = client({ sourceHeaders: bearerFor(`${main.url}/auth`, 'secret-1') });
    const a = await http.get(`${main.url}/auth`);
    expect(await a.text()).toBe('auth=Bearer secret-1');
    const b = await http.get(`${other.url}/landing`);
    expect(await b.text()).toBe('auth=none');
    const none = await client().get(`${main.url}/auth`);
    expect(await none.text()).toBe('auth=none');
  });

  it('sends no Authorization a caller passes among extra headers, however it is spelled', async () => {
    for (const name of ['authorization', 'Authorization', 'AUTHORIZATION']) {
      const res = await client().get(`${other.url}/landing`, { headers: { [name]: 'Bearer stolen' } });
      expect(await res.text()).toBe('auth=none');
    }
  });

  it('drops the token when a redirect leaves the origin (undici follows no redirect itself)', async () => {
    const http = client({ sourceHeaders: bearerFor(main.url, 'secret-2') });
    const res = await http.get(`${main.url}/to-other`);
    expect(res.url).toBe(`${other.url}/landing`);
    expect(res.redirects).toEqual([`${main.url}/to-other`]);
    expect(await res.text()).toBe('auth=none');
    const first = main.seen.filter((req) => req.url === '/to-other').at(-1);
    expect(first?.headers.authorization).toBe('Bearer secret-2');
    expect(other.seen.filter((req) => req.url === '/landing').every((req) => req.headers.authorization === undefined)).toBe(true);
  });

  it('times out waiting for headers with a readable message', async () => {
    const started = Date.now();
    const err = await client({ timeoutMs: 300 })
      .get(`${main.url}/slow-headers`)
      .catch((e: unknown) => e);
    expect((err as NetworkError).code).toBe('timeout');
    expect((err as NetworkError).message).toBe(`Timed out after 0.3 s waiting for ${main.url}/slow-headers`);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('times out when a body stops arriving', async () => {
    const res = await client({ timeoutMs: 300 }).get(`${main.url}/slow-body`);
    const err = await res.text().catch((e: unknown) => e);
    expect((err as NetworkError).code).toBe('timeout');
    expect((err as NetworkError).message).toBe(`Timed out after 0.3 s waiting for more data from ${main.url}/slow-body`);
  });

  it('enforces the size limit while streaming', async () => {
    const res = await client().get(`${main.url}/big`, { maxBytes: 100_000 });
    let received = 0;
    const err = await (async () => {
      for await (const chunk of res.body) received += chunk.byteLength;
    })().catch((e: unknown) => e);
    expect((err as NetworkError).code).toBe('too-large');
    expect((err as NetworkError).message).toBe(`${main.url}/big is larger than the limit of 97.7 KiB`);
    expect(received).toBeLessThanOrEqual(100_000);
    const whole = await client().get(`${main.url}/big`);
    expect((await whole.text()).length).toBe(1024 * 1024);
  });

  it('refuses up front when Content-Length exceeds the limit', async () => {
    const err = await client()
      .get(`${main.url}/big-declared`, { maxBytes: 1024 })
      .catch((e: unknown) => e);
    expect((err as NetworkError).code).toBe('too-large');
  });

  it('decodes a gzip body and applies the limit to decoded bytes', async () => {
    const res = await client().get(`${main.url}/gzip`);
    expect(await res.text()).toBe('compressed hello');
    const bomb = await client().get(`${main.url}/gzip-bomb`, { maxBytes: 1024 * 1024 });
    const err = await bomb.text().catch((e: unknown) => e);
    expect((err as NetworkError).code).toBe('too-large');
  });

  it('reports a refused connection', async () => {
    const closed = await serve({});
    const url = closed.url;
    await closed.close();
    const err = await client()
      .get(`${url}/x`)
      .catch((e: unknown) => e);
    expect((err as NetworkError).code).toBe('refused');
    expect((err as NetworkError).message).toContain(url.replace('http://', ''));
  });

  it('can be cancelled', async () => {
    const controller = new AbortController();
    const pending = client()
      .get(`${main.url}/slow-headers`, { signal: controller.signal })
      .catch((e: unknown) => e);
    setTimeout(() => controller.abort(), 50);
    const err = await pending;
    expect((err as NetworkError).code).toBe('aborted');
  });

  it('HttpStatusError names status and URL', () => {
    const err = new HttpStatusError(404, 'Not Found', 'http://127.0.0.1/x');
    expect(err.message).toBe('HTTP 404 Not Found for http://127.0.0.1/x');
    expect(err.code).toBe('http-status');
    expect(err).toBeInstanceOf(NetworkError);
  });
});
