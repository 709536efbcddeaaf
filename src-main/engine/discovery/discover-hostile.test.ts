// Discovery against hostile Sources on 127.0.0.1: it ends in bounded time, and every limit it hits is a finding.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Http } from '../http/client.ts';
import { hostileServer, trickle, type HostileServer } from '../http/hostile-servers.ts';
import { RefusalMemory } from '../refusals.ts';
import { discover, MAX_LINK_TARGETS, MAX_SITEMAPS } from './discover.ts';
import { HTML_SCAN_BYTES } from './html-links.ts';

type Handler = (req: IncomingMessage, res: ServerResponse, base: string) => void;
const servers: { close(): Promise<void> }[] = [];
const clients: Http[] = [];

async function site(routes: Record<string, Handler>): Promise<string> {
  let base = '';
  const server: Server = createServer((req, res) => {
    const handler = routes[new URL(req.url ?? '/', 'http://x').pathname];
    if (handler) handler(req, res, base);
    else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  servers.push({
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  return base;
}

async function hostile(behaviour: Parameters<typeof hostileServer>[0]): Promise<HostileServer> {
  const s = await hostileServer(behaviour);
  servers.push(s);
  return s;
}

function client(options: ConstructorParameters<typeof Http>[0] = {}): Http {
  const http = new Http({ timeoutMs: 2_000, ...options });
  clients.push(http);
  return http;
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const PLAIN_SITEMAP = '<?xml version="1.0"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://127.0.0.1/a</loc></url></urlset>';

function send(body: string, type: string): Handler {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': type });
    res.end(body);
  };
}

describe('discovery limits that used to be silent', () => {
  it('robots.txt with 10,000 Sitemap: lines: the first 10 are followed and the rest is a finding', async () => {
    const base = await site({
      '/robots.txt': (_req, res, b) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(Array.from({ length: 10_000 }, (_, i) => `Sitemap: ${b}/sitemap-${i}.xml`).join('\n'));
      },
      ...Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`/sitemap-${i}.xml`, send(PLAIN_SITEMAP, 'application/xml')])),
    });
    const result = await discover(base, { http: client() });
    expect(result.routes.filter((r) => r.route === 'robots' && r.url.includes('sitemap-'))).toHaveLength(MAX_SITEMAPS);
    const limit = result.findings.find((f) => f.code === 'sitemap-limit');
    expect(limit?.message).toBe(`${base}/robots.txt: 10,000 Sitemap: lines; only the first 10 were followed, 9,990 not followed`);
    expect(limit?.severity).toBe('warning');
  });

  it('a robots.txt over 512 KiB is read up to there, and a finding says so', async () => {
    const base = await site({
      '/robots.txt': (_req, res, b) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write(`# ${'c'.repeat(600 * 1024)}\n`);
        res.end(`Sitemap: ${b}/late.xml\n`);
      },
    });
    const early = await site({
      '/robots.txt': (_req, res, b) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(`Sitemap: ${b}/early.xml\n# ${'c'.repeat(600 * 1024)}\nSitemap: ${b}/late.xml\n`);
      },
    });
    const late = await discover(base, { http: client() });
    expect(late.findings.find((f) => f.code === 'robots-limit')?.message).toBe(
      `${base}/robots.txt is longer than 512 KiB; only its first 512 KiB were read for Sitemap: lines`,
    );
    expect(late.routes.some((r) => r.url.endsWith('/late.xml'))).toBe(false);
    const found = await discover(early, { http: client() });
    expect(found.routes.filter((r) => r.route === 'robots').map((r) => r.url.replace(early, ''))).toEqual(['/early.xml']);
    expect(found.findings.map((f) => f.code)).toContain('robots-limit');
  });

  it('an HTML page with more resourcesync links than are followed says how many were left', async () => {
    const links = Array.from({ length: 8 }, (_, i) => `<link rel="resourcesync" href="/cl-${i}.xml">`).join('');
    const base = await site({
      '/': send(`<!doctype html><html><head>${links}</head><body></body></html>`, 'text/html'),
    });
    const result = await discover(base, { http: client() });
    expect(result.routes.filter((r) => r.route === 'html-link')).toHaveLength(MAX_LINK_TARGETS);
    expect(result.findings.find((f) => f.code === 'link-limit')?.message).toBe(
      `${base}/: 8 resourcesync links (html-link); only the first 5 were followed, 3 not followed`,
    );
  });

  it('an HTML head longer than the bytes searched is a finding', async () => {
    const filler = `<meta name="x" content="${'y'.repeat(1000)}">`.repeat(Math.ceil((HTML_SCAN_BYTES * 1.5) / 1000));
    const base = await site({
      '/': send(`<!doctype html><html><head>${filler}<link rel="resourcesync" href="/cl.xml"></head></html>`, 'text/html'),
    });
    const result = await discover(base, { http: client() });
    expect(result.findings.find((f) => f.code === 'html-scan-limit')?.message).toBe(
      `${base}/: only the first 2 MiB of this HTML page were searched for <link rel="resourcesync">; its head goes on beyond that`,
    );
  });
});

describe('discovery against a Source that names one document many ways', () => {
  it('a Source Description listing one Capability List under 100 fragments: it is fetched once and listed once', async () => {
    const NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
    let fetched = 0;
    const base = await site({
      '/.well-known/resourcesync': (_req, res, b) => {
        const lists = Array.from({ length: 100 }, (_, i) => `<url><loc>${b}/cl.xml#${i}</loc><rs:md capability="capabilitylist"/></url>`).join('');
        send(`<urlset ${NS}><rs:md capability="description"/>${lists}</urlset>`, 'application/xml')(_req, res, b);
      },
      '/cl.xml': (req, res, b) => {
        fetched++;
        send(`<urlset ${NS}><rs:ln rel="up" href="${b}/.well-known/resourcesync#top"/><rs:md capability="capabilitylist"/></urlset>`, 'application/xml')(req, res, b);
      },
    });
    const result = await discover(base, { http: client() });
    expect(result.sourceDescription).toBe(`${base}/.well-known/resourcesync`);
    expect(result.capabilityLists.map((list) => list.url)).toEqual([`${base}/cl.xml`]);
    expect(fetched).toBe(1);
    expect(result.findings.map((f) => f.code)).not.toContain('document-limit');
  });
});

describe('discovery in bounded time', () => {
  it('a Source that trickles every response: discovery ends at its deadline and names the URL it was fetching', async () => {
    const s = await hostile(trickle(30));
    const started = Date.now();
    // The idle timeout never fires (a byte every 30 ms); without deadlines this ran forever.
    const result = await discover(s.url, { http: client({ timeoutMs: 1_000, deadlineMs: 60_000 }), deadlineMs: 900 });
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(850);
    expect(took).toBeLessThan(4_000);
    const deadline = result.findings.find((f) => f.code === 'discovery-deadline');
    expect(deadline?.severity).toBe('error');
    expect(deadline?.message).toBe(`Discovery ran out of time (0.9 s) while fetching ${s.url}/; what was found until then is shown`);
    expect(result.routes[0]).toMatchObject({ route: 'document', url: `${s.url}/`, found: false });
    // The step shows the URL; its message does not repeat it.
    expect(result.routes[0].message).toMatch(/^Ran out of time while fetching it \(\d+ bytes had arrived\)$/);
    // Whether it was an HTML page is not known: the page could not be read.
    expect(result.routes.find((r) => r.route === 'html-link')?.message).toBe('not searched: the page could not be read');
    // Nothing is fetched after the time is up.
    expect(s.requests).toHaveLength(1);
  });

  it('each fetch has its own deadline within the run: a slow start URL, then the rest goes on', async () => {
    const s = await hostile(trickle(30));
    const started = Date.now();
    const result = await discover(s.url, { http: client({ timeoutMs: 1_000, deadlineMs: 300 }), deadlineMs: 30_000 });
    // document, well-known, robots: each fetch cut at 0.3 s.
    expect(Date.now() - started).toBeLessThan(5_000);
    const fetched = result.routes.filter((r) => ['document', 'well-known', 'robots'].includes(r.route));
    expect(fetched.map((r) => r.route)).toEqual(['document', 'well-known', 'robots']);
    for (const route of fetched) expect(route.message).toMatch(/did not finish within 0\.3 s/);
    expect(s.requests).toHaveLength(3);
    expect(result.findings.map((f) => f.code)).toEqual(['nothing-found']);
  });
});

describe('discovery and refused documents', () => {
  it('a start URL refused as too large is not downloaded again by a second discovery soon after', async () => {
    let served = 0;
    const base = await site({
      '/huge.xml': (_req, res) => {
        served++;
        res.writeHead(200, { 'content-type': 'application/xml' });
        // No Content-Length: the size shows only while reading.
        res.write('<?xml version="1.0"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">\n');
        res.write('<rs:md capability="resourcelist" at="2013-01-03T09:00:00Z"/>\n');
        const entry = Buffer.from('<url><loc>http://127.0.0.1/r</loc></url>\n'.repeat(1000));
        let sent = 0;
        const pump = () => {
          while (sent < 60 * 1024 * 1024 && !res.destroyed) {
            sent += entry.length;
            if (!res.write(entry)) return void res.once('drain', pump);
          }
          res.end('</urlset>\n');
        };
        pump();
      },
    });
    const refusals = new RefusalMemory();
    const first = await discover(`${base}/huge.xml`, { http: client(), refusals });
    expect(first.routes[0]).toMatchObject({ url: `${base}/huge.xml`, message: 'It is larger than 52,428,800 bytes' });
    expect(served).toBe(1);
    const second = await discover(`${base}/huge.xml`, { http: client(), refusals });
    expect(served).toBe(1);
    expect(second.routes[0]!.message).toBe(`${first.routes[0]!.message} (refused less than a minute ago and not fetched again; it can be retried in 10 min)`);
  });
});

describe('discovery for a sync (listsHeadOnly)', () => {
  const NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
  // A Resource List that sends its head and first entries (more than the 4 KiB sniffed to tell XML from HTML), then
  // nothing more: only a reader that stops at its head is done.
  async function stallingList(): Promise<{ base: string; requests: string[] }> {
    const requests: string[] = [];
    const base = await site({
      '/list.xml': (req, res) => {
        requests.push(req.url!);
        res.writeHead(200, { 'content-type': 'application/xml' });
        res.write(`<?xml version="1.0"?>\n<urlset ${NS}><rs:ln rel="up" href="/caps.xml"/><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>`);
        for (let i = 0; i < 200; i++) res.write(`<url><loc>http://127.0.0.1/r${i}</loc></url>\n`);
      },
      '/caps.xml': (req, res, b) => {
        requests.push(req.url!);
        res.writeHead(200, { 'content-type': 'application/xml' });
        res.end(`<?xml version="1.0"?>\n<urlset ${NS}><rs:md capability="capabilitylist"/><url><loc>${b}/list.xml</loc><rs:md capability="resourcelist"/></url></urlset>`);
      },
    });
    return { base, requests };
  }

  it('places a Resource List from its head and first entry, without reading the rest', async () => {
    const { base, requests } = await stallingList();
    const started = Date.now();
    const result = await discover(`${base}/list.xml`, { http: client({ timeoutMs: 1_000 }), listsHeadOnly: true });
    expect(Date.now() - started).toBeLessThan(900);
    expect(result.routes[0]).toMatchObject({ route: 'document', found: true, capability: 'resourcelist' });
    // Its up link was climbed from the head alone.
    expect(result.capabilityLists).toEqual([{ url: `${base}/caps.xml`, capabilities: [{ capability: 'resourcelist', url: `${base}/list.xml` }] }]);
    expect(requests.filter((r) => r === '/list.xml')).toHaveLength(1);
  });

  it('reads the whole list otherwise (the Inspect view counts its entries): the same list stalls it', async () => {
    const { base } = await stallingList();
    const result = await discover(`${base}/list.xml`, { http: client({ timeoutMs: 300 }) });
    expect(result.routes[0]).toMatchObject({ route: 'document', found: false });
    expect(result.routes[0]!.message).toMatch(/300 ms|0\.3 s/);
  });
});

describe('discovery and links further inside the network', () => {
  it('a Link header or a robots.txt Sitemap naming 169.254.169.254 is not requested, and the step says why', async () => {
    // The site is the proxy too: a request for the metadata address would reach it, and nothing leaves 127.0.0.1.
    const metadata: string[] = [];
    const target = 'http://169.254.169.254/latest/meta-data/';
    const base = await site({
      '/': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html', link: `<${target}>; rel="resourcesync"` });
        res.end('<html><head></head></html>');
      },
      '/robots.txt': send(`Sitemap: ${target}\n`, 'text/plain'),
      '/latest/meta-data/': (req, res) => {
        metadata.push(req.url ?? '');
        res.writeHead(200, { 'content-type': 'application/xml' });
        res.end('<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>');
      },
    });
    const result = await discover(`${base}/`, { http: client({ proxy: base }) });
    expect(metadata).toEqual([]);
    const steps = result.routes.filter((r) => r.url === target);
    expect(steps.length).toBeGreaterThan(0);
    for (const step of steps) {
      expect(step.message).toBe(`not requested: 169.254.169.254 is a link-local address (such as a cloud server’s metadata service), which a Source at ${base.replace('http://', '')} may not send requests to`);
    }
  });
});
