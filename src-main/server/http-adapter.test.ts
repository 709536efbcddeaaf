import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createService, type Service } from '../app/service.ts';
import { openStore } from '../store/store.ts';
import { CSP, startHttpAdapter, type HttpAdapter } from './http-adapter.ts';

let dir: string;
let rendererDir: string;
let service: Service;
let adapter: HttpAdapter;

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

function request(options: {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  host?: string;
}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: adapter.port,
        agent: false,
        method: options.method ?? 'GET',
        path: options.path,
        headers: { host: options.host ?? `127.0.0.1:${adapter.port}`, ...options.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

function invoke(command: unknown, args?: unknown, token = adapter.token): Promise<Answer> {
  return request({
    method: 'POST',
    path: '/api/invoke',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(args === undefined ? { command } : { command, args }),
  });
}

/** Opens the event stream and collects what arrives. */
function openEvents(path = `/api/events?token=${adapter.token}`, headers: Record<string, string> = {}): Promise<{
  res: IncomingMessage;
  text: () => string;
  ended: Promise<void>;
  waitFor: (needle: string) => Promise<void>;
}> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: adapter.port, path, headers: { host: `127.0.0.1:${adapter.port}`, ...headers } }, (res) => {
      let text = '';
      const waiters: { needle: string; done: () => void }[] = [];
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        for (const w of [...waiters]) if (text.includes(w.needle)) w.done();
      });
      const ended = new Promise<void>((done) => res.on('close', () => done()));
      resolve({
        res,
        text: () => text,
        ended,
        waitFor: (needle) =>
          new Promise<void>((done) => {
            if (text.includes(needle)) done();
            else waiters.push({ needle, done });
          }),
      });
    });
    req.on('error', reject);
    req.end();
  });
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rsdesk-adapter-'));
  rendererDir = join(dir, 'renderer');
  mkdirSync(join(rendererDir, 'assets'), { recursive: true });
  writeFileSync(join(rendererDir, 'index.html'), '<!doctype html><title>RS</title><script src="/assets/app.js"></script>');
  writeFileSync(join(rendererDir, 'assets', 'app.js'), 'console.log(1);');
  writeFileSync(join(rendererDir, 'assets', 'app.css'), 'body{}');
  writeFileSync(join(rendererDir, 'assets', 'logo.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(join(dir, 'secret.txt'), 'TOP SECRET');
  symlinkSync(join(dir, 'secret.txt'), join(rendererDir, 'assets', 'link.txt'));
  service = createService({ store: openStore(join(dir, 'db.sqlite')), adapter: 'http', version: '9.9.9' });
  adapter = await startHttpAdapter({ dispatch: service.dispatch, events: service.events, rendererDir, pingIntervalMs: 50 });
});

afterEach(async () => {
  await adapter.close();
  await service.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('startHttpAdapter', () => {
  it('listens on 127.0.0.1 and gives a URL with a fresh 32-byte token', () => {
    expect(adapter.origin).toBe(`http://127.0.0.1:${adapter.port}`);
    expect(adapter.token).toMatch(/^[0-9a-f]{64}$/);
    expect(adapter.url).toBe(`http://127.0.0.1:${adapter.port}/#token=${adapter.token}`);
  });

  it('refuses calls without the token (401) and never runs them', async () => {
    const noToken = await request({ method: 'POST', path: '/api/invoke', body: JSON.stringify({ command: 'settings.set', args: { timeoutMs: 5000 } }) });
    expect(noToken.status).toBe(401);
    const wrong = await invoke('settings.set', { timeoutMs: 5000 }, 'f'.repeat(64));
    expect(wrong.status).toBe(401);
    const short = await invoke('settings.set', { timeoutMs: 5000 }, 'abc');
    expect(short.status).toBe(401);
    const settings = JSON.parse((await invoke('settings.get', {})).body);
    expect(settings).toEqual({ ok: true, result: { bearerToken: null, tokenOrigin: null, timeoutMs: 30_000 } });
    expect((await request({ path: '/api/events' })).status).toBe(401);
    expect((await request({ path: '/api/events?token=nope' })).status).toBe(401);
  });

  it('refuses a Host other than 127.0.0.1:PORT or localhost:PORT', async () => {
    for (const host of ['evil.example', `evil.example:${adapter.port}`, '127.0.0.1', `127.0.0.1:${adapter.port + 1}`]) {
      const answer = await request({ path: '/', host });
      expect(answer.status, host).toBe(403);
      expect(answer.body).not.toContain('<title>');
    }
    const viaInvoke = await request({
      method: 'POST',
      path: '/api/invoke',
      host: 'rebound.example',
      headers: { authorization: `Bearer ${adapter.token}` },
      body: JSON.stringify({ command: 'app.info', args: {} }),
    });
    expect(viaInvoke.status).toBe(403);
    expect((await request({ path: '/', host: `localhost:${adapter.port}` })).status).toBe(200);
  });

  it('refuses a cross-origin caller even with the token', async () => {
    const answer = await request({
      method: 'POST',
      path: '/api/invoke',
      headers: { authorization: `Bearer ${adapter.token}`, origin: 'http://evil.example' },
      body: JSON.stringify({ command: 'app.info', args: {} }),
    });
    expect(answer.status).toBe(403);
  });

  it('runs commands and answers with the envelope', async () => {
    const info = await invoke('app.info', {});
    expect(info.status).toBe(200);
    expect(info.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(info.body)).toEqual({ ok: true, result: { name: 'ResourceSync Desktop', version: '9.9.9', adapter: 'http', platform: process.platform, secrets: null } });

    expect(JSON.parse((await invoke('settings.set', { bearerToken: 's3cret', tokenOrigin: 'https://example.org', timeoutMs: 5000 })).body)).toEqual({
      ok: true,
      result: { bearerToken: 's3cret', tokenOrigin: 'https://example.org', timeoutMs: 5000 },
    });
    expect(JSON.parse((await invoke('settings.get')).body)).toEqual({ ok: true, result: { bearerToken: 's3cret', tokenOrigin: 'https://example.org', timeoutMs: 5000 } });

    const unknown = await invoke('nope.never', {});
    expect(unknown.status).toBe(200);
    expect(JSON.parse(unknown.body)).toMatchObject({ ok: false, error: { code: 'unknown-command' } });
    const invalid = JSON.parse((await invoke('settings.set', { timeoutMs: 'soon' })).body);
    expect(invalid).toMatchObject({ ok: false, error: { code: 'invalid-arguments' } });
    expect(invalid.error).toMatchObject({ message: 'Timeout must be a whole number of seconds from 1 to 600.', field: 'timeoutMs' });
    const external = JSON.parse((await invoke('shell.openExternal', { url: 'http://127.0.0.1:1/x' })).body);
    expect(external).toEqual({ ok: true, result: { opened: false } });
  });

  it('answers 400 to a body that is not JSON and 413 to one over 1 MiB', async () => {
    const headers = { authorization: `Bearer ${adapter.token}` };
    expect((await request({ method: 'POST', path: '/api/invoke', headers, body: '{not json' })).status).toBe(400);
    expect((await request({ method: 'POST', path: '/api/invoke', headers, body: '[1,2]' })).status).toBe(400);
    const big = JSON.stringify({ command: 'app.info', args: { pad: 'x'.repeat(1024 * 1024) } });
    expect((await request({ method: 'POST', path: '/api/invoke', headers, body: big })).status).toBe(413);
    // Without a Content-Length (chunked), the limit is counted while reading.
    const chunked = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port: adapter.port, method: 'POST', path: '/api/invoke', headers: { ...headers, host: `127.0.0.1:${adapter.port}`, 'transfer-encoding': 'chunked' } },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
        },
      );
      req.on('error', reject);
      for (let i = 0; i < 20; i++) req.write('x'.repeat(64 * 1024));
      req.end();
    });
    expect(chunked).toBe(413);
    expect((await request({ path: '/api/invoke', headers })).status).toBe(405);
  });

  it('delivers events over SSE, with pings', async () => {
    const stream = await openEvents();
    expect(stream.res.statusCode).toBe(200);
    expect(stream.res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    await stream.waitFor(': connected');
    service.events.emit('document.progress', { url: 'http://127.0.0.1:1/a.xml', entries: 5, bytes: 100 });
    await stream.waitFor('event: document.progress\n');
    expect(stream.text()).toContain('event: document.progress\ndata: {"url":"http://127.0.0.1:1/a.xml","entries":5,"bytes":100}\n\n');
    // An event caused by a command reaches the stream too.
    await invoke('sources.list', {});
    await stream.waitFor(': ping\n\n');
    stream.res.destroy();
    await stream.ended;
  });

  it('numbers events, and gives a client that comes back what it missed, or tells it to read everything again', async () => {
    const first = await openEvents();
    await first.waitFor('event: stream.start\n');
    // A new stream starts with the id it starts from (and asks to be tried again within a second when it drops).
    const start = /id: ([0-9a-f]+)\.(\d+)\nevent: stream\.start\ndata: \{\}\n\n/.exec(first.text())!;
    expect(first.text().startsWith('retry: 1000\n')).toBe(true);
    const [epoch, seq] = [start[1]!, Number(start[2])];
    const progress = (entries: number) => service.events.emit('document.progress', { url: 'http://127.0.0.1:1/a.xml', entries, bytes: 1 });
    progress(1);
    await first.waitFor('"entries":1');
    expect(first.text()).toContain(`id: ${epoch}.${seq + 1}\nevent: document.progress\n`);
    first.res.destroy();
    await first.ended;
    // Emitted while nobody is connected.
    progress(2);
    progress(3);
    // The EventSource's own header on a reconnect:
    const back = await openEvents(undefined, { 'Last-Event-ID': `${epoch}.${seq + 1}` });
    await back.waitFor('"entries":3');
    expect(back.text()).not.toContain('"entries":1');
    expect(back.text()).toContain(`id: ${epoch}.${seq + 2}\nevent: document.progress\ndata: {"url":"http://127.0.0.1:1/a.xml","entries":2,"bytes":1}\n\n`);
    expect(back.text().indexOf('"entries":2')).toBeLessThan(back.text().indexOf('"entries":3'));
    expect(back.text()).not.toContain('stream.start');
    // Live events follow the replay.
    progress(4);
    await back.waitFor('"entries":4');
    back.res.destroy();
    // The query parameter, for a stream the page opens anew:
    const anew = await openEvents(`/api/events?token=${adapter.token}&lastEventId=${epoch}.${seq + 3}`);
    await anew.waitFor('"entries":4');
    expect(anew.text()).not.toContain('"entries":3');
    anew.res.destroy();
    // An id of another start of the server: told so, numbered from now on.
    const other = await openEvents(undefined, { 'Last-Event-ID': `${epoch === 'abc' ? 'def' : 'abc'}.3` });
    await other.waitFor('event: events.missed\n');
    expect(other.text()).toContain(
      `id: ${epoch}.${seq + 4}\nevent: events.missed\ndata: {"reason":"restart","message":"The app server was restarted: everything shown is read again."}\n\n`,
    );
    other.res.destroy();
  });

  it('serves the renderer with MIME types and the strict CSP', async () => {
    const index = await request({ path: '/' });
    expect(index.status).toBe(200);
    expect(index.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(index.body).toContain('<title>RS</title>');
    expect(index.headers['content-security-policy']).toBe(CSP);
    expect(CSP).toContain("default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; frame-ancestors 'none'");
    expect(index.headers['x-content-type-options']).toBe('nosniff');
    const js = await request({ path: '/assets/app.js' });
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.body).toBe('console.log(1);');
    expect((await request({ path: '/assets/app.css' })).headers['content-type']).toBe('text/css; charset=utf-8');
    expect((await request({ path: '/assets/logo.svg' })).headers['content-type']).toBe('image/svg+xml');
    expect((await request({ path: '/index.html?x=1' })).status).toBe(200);
    expect((await request({ path: '/missing.js' })).status).toBe(404);
    expect((await request({ path: '/assets' })).status).toBe(404);
    const head = await request({ method: 'HEAD', path: '/assets/app.js' });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect((await request({ method: 'DELETE', path: '/' })).status).toBe(405);
    // Errors carry the policy too.
    expect((await request({ path: '/missing.js' })).headers['content-security-policy']).toBe(CSP);
  });

  it('never serves a file outside the renderer folder', async () => {
    const attempts = [
      '/../secret.txt',
      '/assets/../../secret.txt',
      '/%2e%2e/secret.txt',
      '/%2E%2E/%2e%2e/secret.txt',
      '/assets/..%2f..%2fsecret.txt',
      '/assets/%2e%2e%2f%2e%2e%2fsecret.txt',
      '/..%5csecret.txt',
      '/assets/link.txt',
      '/%00/secret.txt',
      '/%',
      `/${encodeURIComponent(join(dir, 'secret.txt'))}`,
      '//etc/passwd',
    ];
    for (const path of attempts) {
      const answer = await request({ path });
      expect([400, 404], path).toContain(answer.status);
      expect(answer.body, path).not.toContain('TOP SECRET');
    }
    expect((await request({ path: '/../secret.txt' })).status).toBe(400);
  });

  it('close() ends open event streams and stops listening', async () => {
    const stream = await openEvents();
    await stream.waitFor(': connected');
    await adapter.close();
    await stream.ended;
    expect(stream.res.complete).toBe(true);
    await expect(request({ path: '/' })).rejects.toThrow(/ECONNREFUSED/);
    // A second close is harmless.
    await adapter.close();
  });
});
