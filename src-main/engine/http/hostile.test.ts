// The client against servers that misbehave on purpose: every fetch ends, in bounded time, with a plain message.
import { afterEach, describe, expect, it } from 'vitest';
import { Http, deadlineFor, MAX_DEADLINE_MS } from './client.ts';
import { NetworkError } from './errors.ts';
import {
  hostileServer,
  hugeHeaders,
  notHttp,
  redirectForever,
  redirectInside,
  stall,
  trickle,
  trickleHeaders,
  twoLengths,
  type HostileServer,
} from './hostile-servers.ts';

const servers: HostileServer[] = [];
const clients: Http[] = [];
async function server(behaviour: Parameters<typeof hostileServer>[0]): Promise<HostileServer> {
  const s = await hostileServer(behaviour);
  servers.push(s);
  return s;
}
function client(options: ConstructorParameters<typeof Http>[0] = {}): Http {
  const http = new Http(options);
  clients.push(http);
  return http;
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function failure(work: Promise<unknown>): Promise<NetworkError> {
  const err = await work.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(NetworkError);
  return err as NetworkError;
}

describe('Http against hostile servers', () => {
  it('has an overall deadline of 10 × the idle timeout, at most 10 minutes', () => {
    expect(deadlineFor(30_000)).toBe(300_000);
    expect(deadlineFor(600_000)).toBe(MAX_DEADLINE_MS);
    expect(client().deadlineMs).toBe(300_000);
    expect(client({ timeoutMs: 2_000 }).deadlineMs).toBe(20_000);
  });

  it('stops a body that trickles one byte at a time within the idle timeout, naming the URL', async () => {
    const s = await server(trickle(20));
    const http = client({ timeoutMs: 500, deadlineMs: 800 });
    const started = Date.now();
    const response = await http.get(`${s.url}/slow.xml`);
    const err = await failure(response.text());
    const took = Date.now() - started;
    expect(err.code).toBe('deadline');
    expect(err.message).toMatch(new RegExp(`^${s.url}/slow\\.xml did not finish within 0\\.8 s \\(\\d+ bytes had arrived\\); `));
    expect(took).toBeGreaterThanOrEqual(750);
    expect(took).toBeLessThan(3_000);
  });

  it('stops a trickling body read as a stream too (for await over body)', async () => {
    const s = await server(trickle(20));
    const response = await client({ timeoutMs: 500, deadlineMs: 600 }).get(`${s.url}/x`);
    let bytes = 0;
    const err = await failure(
      (async () => {
        for await (const chunk of response.body) bytes += chunk.byteLength;
      })(),
    );
    expect(err.code).toBe('deadline');
    expect(bytes).toBeGreaterThan(0);
  });

  it('a deadline given by the caller ends the fetch earlier, saying it ran out of time', async () => {
    const s = await server(trickle(20));
    const response = await client({ timeoutMs: 5_000 }).get(`${s.url}/x`, { deadlineAt: Date.now() + 300 });
    const err = await failure(response.text());
    expect(err.code).toBe('deadline');
    expect(err.message).toMatch(new RegExp(`^Ran out of time while fetching ${s.url}/x`));
  });

  it('a caller may give one fetch a longer deadline than the client’s (a large body known in advance)', async () => {
    const s = await server(trickle(20));
    const response = await client({ timeoutMs: 500, deadlineMs: 200 }).get(`${s.url}/package.zip`, { deadlineMs: 700 });
    const started = Date.now();
    const err = await failure(response.text());
    expect(err.code).toBe('deadline');
    expect(err.message).toMatch(/did not finish within 0\.7 s/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
  });

  it('the deadline covers a server that never answers, even with a long idle timeout', async () => {
    const s = await server(stall);
    const started = Date.now();
    const err = await failure(client({ timeoutMs: 60_000, deadlineMs: 400 }).get(`${s.url}/never`));
    expect(err.code).toBe('deadline');
    expect(err.message).toContain(`${s.url}/never`);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('the deadline covers headers that trickle in a byte at a time', async () => {
    const s = await server(trickleHeaders(10));
    const started = Date.now();
    const err = await failure(client({ timeoutMs: 60_000, deadlineMs: 500 }).get(`${s.url}/slow-headers`));
    expect(['deadline', 'timeout']).toContain(err.code);
    expect(err.message).toContain(`${s.url}/slow-headers`);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('a cancellation stays a cancellation, not a timeout', async () => {
    const s = await server(trickle(20));
    const controller = new AbortController();
    const response = await client({ deadlineMs: 5_000 }).get(`${s.url}/x`, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    const err = await failure(response.text());
    expect(err.code).toBe('aborted');
  });

  it('oversized response headers get a plain message, not the library’s', async () => {
    const s = await server(hugeHeaders(64 * 1024));
    const err = await failure(client({ timeoutMs: 2_000 }).get(`${s.url}/big-headers`));
    expect(err.code).toBe('headers-too-large');
    expect(err.message).toBe(
      `${s.url.replace('http://', '')} answered with response headers larger than 16 KiB; not read (${s.url}/big-headers)`,
    );
    expect(err.message).not.toMatch(/overflow|UND_ERR/i);
  });

  it('a server that does not speak HTTP gets a plain message', async () => {
    const s = await server(notHttp);
    const err = await failure(client({ timeoutMs: 2_000 }).get(`${s.url}/`));
    expect(['protocol', 'reset']).toContain(err.code);
    expect(err.message).not.toMatch(/HPE_|UND_ERR|Expected HTTP/);
    expect(err.message).toContain(s.url);
  });

  it('a server that lies about the length of its body gets a plain message', async () => {
    const s = await server(twoLengths);
    // Found out while the headers are read or while the body is: either way, said plainly.
    const err = await failure(client({ timeoutMs: 2_000 }).get(`${s.url}/lying`).then((response) => response.text()));
    expect(err.message).not.toMatch(/does not match content-length header|UND_ERR/);
    // 'network', as before: a mirror tries such a resource again.
    expect(err.code).toBe('network');
    expect(err.message).toBe(`${s.url.replace('http://', '')} sent a body of another length than its Content-Length header says (${s.url}/lying)`);
  });

  it('a redirect chain that never ends stops after the redirect limit', async () => {
    const s = await server(redirectForever);
    const started = Date.now();
    const err = await failure(client({ timeoutMs: 2_000 }).get(`${s.url}/hop/0`));
    expect(err.code).toBe('too-many-redirects');
    expect(err.message).toBe(`Too many redirects: more than 5 starting at ${s.url}/hop/0`);
    expect(s.requests).toHaveLength(6);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('a redirect further inside the network (a Source at 127.0.0.1 to 169.254.169.254) is not followed', async () => {
    // The server is the proxy too: a request for the metadata address would reach it, and nothing leaves 127.0.0.1.
    for (const target of ['http://169.254.169.254/latest/meta-data/', 'http://[::ffff:169.254.169.254]/', 'http://[fe80::1]/']) {
      const s = await server(redirectInside(target));
      const err = await failure(client({ timeoutMs: 2_000, proxy: s.url }).get(`${s.url}/start`));
      expect(err.code).toBe('bad-redirect');
      expect(err.message).toMatch(new RegExp(`^${s.url}/start redirects to .*, which is not followed: .* is a link-local address \\(such as a cloud server’s metadata service\\), which a Source at ${s.url.replace('http://', '')} may not send requests to$`));
      expect(s.requests).toHaveLength(1);
    }
    // Within the same reach it is followed as any redirect.
    const s = await server(redirectInside('http://127.0.0.2/x'));
    const response = await client({ timeoutMs: 2_000, proxy: s.url }).get(`${s.url}/start`);
    expect(await response.text()).toBe('secret');
  });

  it('a bad URL is quoted in a bounded slice', async () => {
    const err = await failure(client().get(`nothttp:${'x'.repeat(1 << 20)}`));
    expect(err.message.length).toBeLessThan(500);
  });
});
