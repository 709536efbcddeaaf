// rsdesk discover / check --token: the token goes to the origin of the URL given and nowhere else, not to another
// host a document names (an up link) nor to the host a redirect led to, on the requests that follow it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { checkCommand } from './check-command.ts';
import { discoverCommand } from './discover-command.ts';
import type { Io } from './io.ts';

const TOKEN = 'S3CRET-token';
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

const capabilityList = (up: string) =>
  `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">` +
  `<rs:ln rel="up" href="${up}"/><rs:md capability="capabilitylist"/></urlset>`;

/** A server answering `routes` (path → body, or a redirect), recording each request's Authorization. */
async function server(routes: Record<string, string | { location: string }>): Promise<{ url: string; seen: string[] }> {
  const seen: string[] = [];
  const s = createServer((req, res) => {
    seen.push(`${req.url} ${req.headers.authorization ?? '-'}`);
    const route = routes[req.url ?? ''];
    if (route === undefined) return void res.writeHead(404).end();
    if (typeof route !== 'string') return void res.writeHead(302, { location: route.location }).end();
    res.writeHead(200, { 'content-type': 'application/xml' }).end(route);
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  servers.push(s);
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, seen };
}

const io: Io = { out: () => undefined, err: () => undefined };
const common = { json: true, token: TOKEN, timeoutMs: 5000, userAgent: 'test' };

describe('--token', () => {
  it('goes to the origin of the URL given only, never to another host a document or a redirect names', async () => {
    // Another port is another origin. The Source's Capability List names it in its up link; /moved redirects there,
    // and discovery goes on from what it finds there.
    const elsewhere: Record<string, string | { location: string }> = {};
    const other = await server(elsewhere);
    elsewhere['/cl.xml'] = capabilityList(`${other.url}/description.xml`);
    const source = await server({ '/cl.xml': capabilityList(`${other.url}/description.xml`), '/moved': { location: `${other.url}/cl.xml` } });
    for (const run of [discoverCommand, checkCommand]) {
      await run({ ...common, url: `${source.url}/cl.xml` }, io);
      await run({ ...common, url: `${source.url}/moved` }, io);
    }
    expect(source.seen.length).toBeGreaterThan(0);
    expect(source.seen.every((r) => r.endsWith(`Bearer ${TOKEN}`))).toBe(true);
    expect(other.seen).toEqual(expect.arrayContaining(['/description.xml -', '/cl.xml -']));
    expect(other.seen.filter((r) => !r.endsWith(' -'))).toEqual([]);
  });
});
