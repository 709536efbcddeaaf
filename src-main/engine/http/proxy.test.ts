// Proxies that misbehave, on loopback: one that wants credentials or will not open a tunnel (said as the proxy's
// answer, not as a cancellation), and one that never answers (the client's timeout holds, not undici's 5 minutes).
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Fetcher } from '../mirror/fetcher.ts';
import { Http } from './client.ts';
import { proxyFor } from './dispatcher.ts';
import { NetworkError } from './errors.ts';

const servers: Server[] = [];
/** Tunnels asked for and never answered: no longer the server's once CONNECT arrived, so closed apart. */
const held: Socket[] = [];
afterEach(async () => {
  for (const socket of held.splice(0)) socket.destroy();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A proxy answering every request and every CONNECT with `status`, or (null) never answering at all. */
async function proxyAnswering(status: number | null): Promise<{ host: string; env: { HTTP_PROXY: string; HTTPS_PROXY: string }; asked: string[] }> {
  const asked: string[] = [];
  const server = createServer((req, res) => {
    asked.push(`${req.method} ${req.url}`);
    if (status === null) return;
    res.writeHead(status, status === 407 ? { 'proxy-authenticate': 'Basic realm="proxy"' } : {});
    res.end();
  });
  server.on('connect', (req, socket: Socket) => {
    asked.push(`CONNECT ${req.url}`);
    if (status === null) return void held.push(socket);
    socket.end(`HTTP/1.1 ${status} No\r\nContent-Length: 0\r\n\r\n`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { host, env: { HTTP_PROXY: `http://${host}`, HTTPS_PROXY: `http://${host}` }, asked };
}

const failureOf = (p: Promise<unknown>) => p.then(() => expect.unreachable('fetched'), (err: unknown) => err as NetworkError);

describe('a proxy that refuses', () => {
  it('asking for credentials is said to be the proxy, for http and https Sources alike, not a cancellation', async () => {
    const proxy = await proxyAnswering(407);
    const http = new Http({ proxyEnv: proxy.env, timeoutMs: 5000 });
    try {
      for (const url of ['http://source.invalid/a', 'https://source.invalid/b']) {
        const err = await failureOf(http.get(url));
        expect(err).toMatchObject({ code: 'proxy', status: 407 });
        expect(err.message).toBe(
          `The proxy ${proxy.host} asks for a user name and password, or refused the ones given (HTTP 407 Proxy Authentication Required), for ${url}. ` +
            'They are given in the HTTP_PROXY and HTTPS_PROXY environment variables (http://USER:PASSWORD@HOST:PORT), read when the proxy setting is env, the default.',
        );
      }
    } finally {
      await http.close();
    }
    // A mirror does not ask again what will be refused again.
    const fetcher = new Fetcher({ proxyEnv: proxy.env, retries: 2, backoffMs: 1 });
    try {
      const before = proxy.asked.length;
      expect(await failureOf(fetcher.get('https://source.invalid/c', {}, new AbortController().signal))).toMatchObject({ code: 'proxy', status: 407 });
      expect(proxy.asked.length - before).toBe(1);
    } finally {
      await fetcher.close();
    }
  });

  it('that will not open a tunnel to the Source says so, and a mirror tries again when it may be passing', async () => {
    const proxy = await proxyAnswering(502);
    const fetcher = new Fetcher({ proxyEnv: proxy.env, retries: 2, backoffMs: 1 });
    try {
      const err = await failureOf(fetcher.get('https://source.invalid/d', {}, new AbortController().signal));
      expect(err).toMatchObject({ code: 'proxy', status: 502 });
      expect(err.message).toBe(`The proxy ${proxy.host} did not pass the request on to source.invalid (it answered HTTP 502 Bad Gateway), for https://source.invalid/d`);
      expect(proxy.asked).toEqual(Array(3).fill('CONNECT source.invalid:443'));
    } finally {
      await fetcher.close();
    }
  });
});

describe('a proxy that never answers', () => {
  it("ends each fetch at the client's timeout, for http and https Sources, in the document client and the mirror's", async () => {
    const proxy = await proxyAnswering(null);
    const http = new Http({ proxyEnv: proxy.env, timeoutMs: 300, deadlineMs: 60_000 });
    const fetcher = new Fetcher({ proxyEnv: proxy.env, timeoutMs: 300, retries: 0 });
    try {
      for (const url of ['http://source.invalid/e', 'https://source.invalid/f']) {
        const t0 = Date.now();
        expect(await failureOf(http.get(url))).toMatchObject({ code: 'timeout', message: `Timed out after 0.3 s waiting for ${url}` });
        expect(await failureOf(fetcher.get(url, {}, AbortSignal.timeout(60_000)))).toMatchObject({ code: 'timeout' });
        expect(Date.now() - t0).toBeLessThan(5000);
      }
    } finally {
      await http.close();
      await fetcher.close();
    }
  }, 20_000);
});

describe('proxies as the environment names them', () => {
  it('takes HOST:PORT without a scheme as an http proxy, as curl does', async () => {
    const proxy = await proxyAnswering(407);
    const env = { HTTP_PROXY: '', http_proxy: ` ${proxy.host} ` };
    expect(proxyFor(new URL('https://source.invalid/'), 'env', env)).toBe(proxy.host);
    const http = new Http({ proxyEnv: env, timeoutMs: 5000 });
    try {
      expect(await failureOf(http.get('http://source.invalid/g'))).toMatchObject({ code: 'proxy', status: 407 });
      expect(await failureOf(http.get('https://source.invalid/h'))).toMatchObject({ code: 'proxy', status: 407 });
    } finally {
      await http.close();
    }
    expect(proxy.asked).toEqual(['GET http://source.invalid/g', 'CONNECT source.invalid:443']);
  });

  it('fails each request with one that is no URL, by the name of its variable, never quoting it (it may hold a password)', async () => {
    for (const [env, name] of [
      [{ HTTPS_PROXY: 'http://me:S3CRET@[::1' }, 'HTTPS_PROXY'],
      [{ http_proxy: 'ftp://me:S3CRET@proxy.invalid' }, 'http_proxy'],
    ] as const) {
      // The client is made (the app starts); what it is asked to fetch fails, saying why.
      const http = new Http({ proxyEnv: env });
      const fetcher = new Fetcher({ proxyEnv: env, retries: 0 });
      try {
        const expected = {
          code: 'bad-url',
          message: `The ${name} environment variable does not name a proxy: it is written http://HOST:PORT (with USER:PASSWORD@ before the host when the proxy asks for them). Correct it, or unset it to connect directly.`,
        };
        expect(await failureOf(http.get('http://127.0.0.1:9/a'))).toMatchObject(expected);
        expect(await failureOf(fetcher.get('https://127.0.0.1:9/b', {}, new AbortController().signal))).toMatchObject(expected);
      } finally {
        await http.close();
        await fetcher.close();
      }
    }
  });
});

describe('NO_PROXY', () => {
  const env = (noProxy: Record<string, string>) => ({ HTTP_PROXY: 'http://127.0.0.1:3128', ...noProxy });
  const via = (url: string, noProxy: Record<string, string>) => proxyFor(new URL(url), 'env', env(noProxy));

  it('reads what curl and undici read, and what one of them reads that the other does not', () => {
    const direct: [string, string][] = [
      ['http://example.org/', 'example.org'],
      ['http://a.b.example.org/', 'example.org'],
      ['http://a.example.org/', '.example.org'],
      ['http://example.org/', '*.example.org'],
      ['http://EXAMPLE.org./', 'Example.ORG.'],
      ['http://example.org:8080/', 'other.org, example.org:8080'],
      ['http://example.org/', 'other.org example.org:80'],
      ['http://x.invalid/', ' * '],
      // IPv6 literals as curl takes them (no brackets) and as URLs write them, in any spelling.
      ['http://[::1]:8080/', 'localhost,127.0.0.1,::1'],
      ['http://[::1]/', '[0:0:0:0:0:0:0:1]'],
      ['http://[fd00::5]:81/', '[fd00::5]:81'],
      // Address blocks (curl).
      ['http://10.1.2.3/', '10.0.0.0/8'],
      ['http://[fd00::5]/', 'fd00::/8'],
      // IPv4 addresses in any spelling URLs take.
      ['http://127.0.0.1/', '127.1'],
      ['http://127.1:8080/', '127.0.0.1:8080'],
      ['http://10.0.0.1/', '0xa.1'],
    ];
    for (const [url, noProxy] of direct) expect(via(url, { NO_PROXY: noProxy }), `${url} with NO_PROXY=${noProxy}`).toBeNull();
    const proxied: [string, string][] = [
      ['http://notexample.org/', 'example.org'],
      ['http://example.org/', 'example.org:8080'],
      ['http://[::2]/', '::1'],
      ['http://11.1.2.3/', '10.0.0.0/8'],
      ['http://example.org/', 'localhost,*'],
      ['http://example.org/', '10.0.0.0/99'],
      ['http://10.0.0.1/', '0.0.1'],
      ['http://10.0.0.1/', '1.2.3.4.5'],
    ];
    for (const [url, noProxy] of proxied) expect(via(url, { NO_PROXY: noProxy }), `${url} with NO_PROXY=${noProxy}`).toBe('127.0.0.1:3128');
  });

  it('is taken from no_proxy, else from NO_PROXY when no_proxy is empty', () => {
    expect(via('http://example.org/', { no_proxy: 'example.org', NO_PROXY: 'other.org' })).toBeNull();
    expect(via('http://example.org/', { no_proxy: ' ', NO_PROXY: 'example.org' })).toBeNull();
    expect(via('http://example.org/', { no_proxy: 'other.org', NO_PROXY: 'example.org' })).toBe('127.0.0.1:3128');
  });

  it('sends the requests it names direct and the others through the proxy, as proxyFor says', async () => {
    const proxy = await proxyAnswering(502);
    const source = createServer((_req, res) => res.end('direct'));
    await new Promise<void>((r) => source.listen(0, '127.0.0.1', r));
    servers.push(source);
    const port = (source.address() as AddressInfo).port;
    const url = `http://127.0.0.1:${port}/a`;
    for (const [noProxy, direct] of [
      [{ NO_PROXY: '127.0.0.0/8' }, true],
      [{ no_proxy: '', NO_PROXY: `127.0.0.1:${port}` }, true],
      [{ NO_PROXY: `127.0.0.1.:${port}` }, true],
      [{ NO_PROXY: `127.0.0.1:${port + 1}` }, false],
      // IPv4 addresses as URLs take them (`http://127.1/` is 127.0.0.1), each matching itself only.
      [{ NO_PROXY: '127.1' }, true],
      [{ NO_PROXY: `0x7f.0.0.1:${port}` }, true],
      [{ NO_PROXY: '2130706433' }, true],
      [{ NO_PROXY: `127.1:${port + 1}` }, false],
      [{ NO_PROXY: '0.0.1' }, false],
      [{ NO_PROXY: '.0.1' }, false],
      [{ NO_PROXY: '10.0.0.0/8' }, false],
    ] as const) {
      const proxyEnv = { ...proxy.env, ...noProxy };
      expect(proxyFor(new URL(url), 'env', proxyEnv), JSON.stringify(noProxy)).toBe(direct ? null : proxy.host);
      const fetcher = new Fetcher({ proxyEnv, retries: 0 });
      const before = proxy.asked.length;
      try {
        const response = await fetcher.get(url, {}, new AbortController().signal);
        expect(response.status, JSON.stringify(noProxy)).toBe(direct ? 200 : 502);
        response.body.resume();
      } catch (err) {
        expect(direct, `${JSON.stringify(noProxy)}: ${(err as Error).message}`).toBe(false);
      } finally {
        await fetcher.close();
      }
      expect(proxy.asked.slice(before), JSON.stringify(noProxy)).toEqual(direct ? [] : [`GET ${url}`]);
    }
  });
});
