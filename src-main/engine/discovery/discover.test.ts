import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DiscoveryResult, DiscoveryStep } from '../../contract/types.ts';
import { PATHS, startFixtureSource, type FixtureSourceOptions as FixtureOptions, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { Http } from '../http/client.ts';
import { NetworkError } from '../http/errors.ts';
import { discover, normalizeStartUrl } from './discover.ts';

const SMALL = { resources: 12, bigListParts: 2, bigListEntries: 50 } satisfies FixtureOptions;
const fixtures: FixtureSource[] = [];
const clients: Http[] = [];

async function fixture(options: FixtureOptions = {}): Promise<FixtureSource> {
  const f = await startFixtureSource({ ...SMALL, ...options });
  fixtures.push(f);
  return f;
}

function client(timeoutMs = 5000): Http {
  const http = new Http({ timeoutMs });
  clients.push(http);
  return http;
}

/** Routes as `route +/- capability path` lines, the fixture's origin stripped. */
function routesOf(result: DiscoveryResult, base: string): string[] {
  return result.routes.map(
    (s) => `${s.route} ${s.found ? '+' : '-'}${s.capability ? ` ${s.capability}` : ''} ${s.url.replace(base, '') || '/'}`,
  );
}

function codes(result: DiscoveryResult): string[] {
  return result.findings.map((f) => `${f.severity} ${f.code}`);
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(fixtures.splice(0).map((f) => f.close()));
});

const NO_WELL_KNOWN_NO_ROBOTS = { routes: { wellKnown: false, robots: false } };

describe('discover: each route against the fixture Source', () => {
  it('html-link: the HTML page links a Capability List, whose up link leads to the Source Description', async () => {
    const f = await fixture({ routes: { wellKnown: false, robots: false, linkHeader: false } });
    const steps: DiscoveryStep[] = [];
    const result = await discover(`${f.url}/`, { http: client(), onStep: (s) => steps.push(s) });
    expect(routesOf(result, f.url)).toEqual([
      'document - /',
      'link-header - /',
      'html-link + capabilitylist /dataset1/capabilitylist.xml',
      'well-known - /.well-known/resourcesync',
      'robots - /robots.txt',
      'up + description /source-description.xml',
    ]);
    expect(steps).toEqual(result.routes);
    expect(result.routes.map((s) => s.message)).toEqual([
      'HTML page',
      'no Link header with rel="resourcesync"',
      'Capability List',
      '404 Not Found',
      '404 Not Found',
      'Source Description',
    ]);
    expect(result.start).toBe(`${f.url}/`);
    expect(result.sourceDescription).toBe(f.url + PATHS.sourceDescription);
    expect(result.capabilityLists).toEqual([
      {
        url: f.url + PATHS.dataset1.capabilityList,
        capabilities: [
          { capability: 'resourcelist', url: f.url + PATHS.dataset1.resourceList },
          { capability: 'resourcedump', url: f.url + PATHS.dataset1.resourceDump },
          { capability: 'changelist', url: f.url + PATHS.dataset1.changeListIndex },
          { capability: 'changedump', url: f.url + PATHS.dataset1.changeDump },
          { capability: 'change-notification', url: f.url + PATHS.dataset1.notifications, hub: f.url + PATHS.hub },
        ],
      },
      {
        url: f.url + PATHS.dataset2.capabilityList,
        capabilities: [{ capability: 'resourcelist', url: f.url + PATHS.dataset2.resourceListIndex }],
      },
    ]);
    // The Source breaks spec 6.3.2 (no well-known URI), a MUST: said once, as an error.
    expect(codes(result)).toEqual(['error well-known-missing']);
  });

  it('link-header: a Link header (several links, multi-valued rel, relative target) names the Capability List', async () => {
    const f = await fixture({ routes: { wellKnown: false, robots: false } });
    const result = await discover(f.url + PATHS.linkHeaderPage, { http: client() });
    expect(routesOf(result, f.url)).toEqual([
      'document - /linked/article.html',
      'link-header + capabilitylist /dataset2/capabilitylist.xml',
      'html-link - /linked/article.html',
      'well-known - /.well-known/resourcesync',
      'robots - /robots.txt',
      'up + description /source-description.xml',
    ]);
    expect(result.routes[2].message).toBe('HTML page without <link rel="resourcesync">');
    expect(result.sourceDescription).toBe(f.url + PATHS.sourceDescription);
    expect(result.capabilityLists.map((c) => c.url)).toEqual([
      f.url + PATHS.dataset1.capabilityList,
      f.url + PATHS.dataset2.capabilityList,
    ]);
  });

  it('well-known: a bare origin (no scheme) with only the well-known URI', async () => {
    const f = await fixture({ routes: { htmlLink: false, linkHeader: false, robots: false } });
    const result = await discover(f.url.replace('http://', ''), { http: client() });
    expect(result.start).toBe(`${f.url}/`);
    expect(routesOf(result, f.url)).toEqual([
      'document - /',
      'link-header - /',
      'html-link - /',
      'well-known + description /.well-known/resourcesync',
    ]);
    expect(result.sourceDescription).toBe(f.url + PATHS.wellKnown);
    expect(result.capabilityLists).toHaveLength(2);
    expect(result.findings).toEqual([]);
  });

  it('robots: Sitemap lines lead to a Resource List, then up to the Capability List and the Source Description', async () => {
    const f = await fixture({ routes: { wellKnown: false, htmlLink: false, linkHeader: false } });
    const result = await discover(f.url, { http: client() });
    expect(routesOf(result, f.url)).toEqual([
      'document - /',
      'link-header - /',
      'html-link - /',
      'well-known - /.well-known/resourcesync',
      'robots - /sitemap.xml',
      'robots + resourcelist /dataset1/resourcelist.xml',
      'up + capabilitylist /dataset1/capabilitylist.xml',
      'up + description /source-description.xml',
    ]);
    expect(result.routes[4].message).toBe('a plain Sitemap, not a ResourceSync document (no rs:md)');
    expect(result.sourceDescription).toBe(f.url + PATHS.sourceDescription);
    expect(result.capabilityLists).toHaveLength(2);
  });

  it('up: from a Resource List up to its Capability List and up to the Source Description', async () => {
    const f = await fixture(NO_WELL_KNOWN_NO_ROBOTS);
    const result = await discover(f.url + PATHS.dataset1.resourceList, { http: client() });
    expect(routesOf(result, f.url)).toEqual([
      'document + resourcelist /dataset1/resourcelist.xml',
      'link-header - /dataset1/resourcelist.xml',
      'html-link - /dataset1/resourcelist.xml',
      'well-known - /.well-known/resourcesync',
      'robots - /robots.txt',
      'up + capabilitylist /dataset1/capabilitylist.xml',
      'up + description /source-description.xml',
    ]);
    expect(result.routes[2].message).toBe('not an HTML page');
    expect(result.sourceDescription).toBe(f.url + PATHS.sourceDescription);
  });

  it('up: a part of an index takes its own up link (the index link is not needed)', async () => {
    const f = await fixture(NO_WELL_KNOWN_NO_ROBOTS);
    const result = await discover(f.url + PATHS.dataset2.resourceListPart(2), { http: client() });
    expect(routesOf(result, f.url).slice(5)).toEqual([
      'up + capabilitylist /dataset2/capabilitylist.xml',
      'up + description /source-description.xml',
    ]);
  });

  it('index: a part without an up link goes to its index, and from there up', async () => {
    const f = await fixture(NO_WELL_KNOWN_NO_ROBOTS);
    const result = await discover(f.url + PATHS.broken.orphanPart, { http: client() });
    expect(routesOf(result, f.url)).toEqual([
      'document + resourcelist /broken/orphan-part.xml',
      'link-header - /broken/orphan-part.xml',
      'html-link - /broken/orphan-part.xml',
      'well-known - /.well-known/resourcesync',
      'robots - /robots.txt',
      'index + resourcelist /dataset2/resourcelist-index.xml',
      'up + capabilitylist /dataset2/capabilitylist.xml',
      'up + description /source-description.xml',
    ]);
    expect(result.routes[5].message).toBe('Resource List Index');
    // The reader's finding about the missing up link, prefixed with the document's URL.
    const missingUp = result.findings.find((x) => x.code === 'missing-up');
    expect(missingUp?.message.startsWith(`${f.url}${PATHS.broken.orphanPart}: `)).toBe(true);
  });

  it('document: the start URL is the Source Description itself', async () => {
    const f = await fixture();
    const result = await discover(f.url + PATHS.wellKnown, { http: client() });
    expect(routesOf(result, f.url)).toEqual(['document + description /.well-known/resourcesync']);
    expect(result.capabilityLists).toHaveLength(2);
  });

  it('stops at the first route that finds the Source Description (all routes on)', async () => {
    const f = await fixture();
    const result = await discover(`${f.url}/`, { http: client() });
    expect(routesOf(result, f.url)).toEqual([
      'document - /',
      'link-header - /',
      'html-link + capabilitylist /dataset1/capabilitylist.xml',
      'well-known + description /.well-known/resourcesync',
    ]);
    expect(f.requests.map((r) => r.path)).not.toContain(PATHS.robots);
  });
});

describe('discover: failures and hostile Sources', () => {
  it('reports nothing found clearly, naming the routes tried', async () => {
    const f = await fixture({ routes: { wellKnown: false, htmlLink: false, linkHeader: false, robots: false } });
    const result = await discover(f.url, { http: client() });
    expect(routesOf(result, f.url)).toEqual([
      'document - /',
      'link-header - /',
      'html-link - /',
      'well-known - /.well-known/resourcesync',
      'robots - /robots.txt',
    ]);
    expect(result.sourceDescription).toBeNull();
    expect(result.capabilityLists).toEqual([]);
    expect(result.findings).toEqual([
      {
        severity: 'error',
        code: 'nothing-found',
        message: `No ResourceSync Source found at ${f.url}/; tried: URL itself, Link header, HTML link, .well-known, robots.txt`,
      },
    ]);
  });

  it('follows redirects and says so', async () => {
    const f = await fixture();
    const result = await discover(f.url + PATHS.redirectChain, { http: client() });
    expect(routesOf(result, f.url)).toEqual([
      'document + capabilitylist /redirect-chain',
      'link-header - /dataset1/capabilitylist.xml',
      'html-link - /dataset1/capabilitylist.xml',
      'well-known + description /.well-known/resourcesync',
    ]);
    expect(result.routes[0].message).toBe(`Capability List (redirected to ${f.url}${PATHS.dataset1.capabilityList})`);
  });

  it('survives a redirect loop at the start URL', async () => {
    const f = await fixture();
    const result = await discover(f.url + PATHS.redirectLoop, { http: client() });
    expect(routesOf(result, f.url)).toEqual(['document - /redirect-loop/a', 'well-known + description /.well-known/resourcesync']);
    expect(result.routes[0].message).toContain('Too many redirects');
  });

  it('times out on a slow start URL and on a hanging well-known URI, and goes on', async () => {
    const f = await fixture({ routes: { robots: false } });
    f.setBroken(PATHS.wellKnown, 'hang');
    const result = await discover(f.url + PATHS.slow, { http: client(300) });
    expect(routesOf(result, f.url)).toEqual([
      'document - /slow',
      'well-known - /.well-known/resourcesync',
      'robots - /robots.txt',
    ]);
    // The step shows its URL beside the message, which does not repeat it.
    expect(result.routes[0]).toMatchObject({ url: `${f.url}${PATHS.slow}`, message: 'Timed out after 0.3 s waiting for an answer' });
    expect(result.routes[1]).toMatchObject({ url: `${f.url}${PATHS.wellKnown}`, message: 'Timed out after 0.3 s waiting for an answer' });
    expect(result.findings.map((x) => x.code)).toEqual(['nothing-found']);
  });

  it('reads a document served with the wrong Content-Type', async () => {
    const f = await fixture();
    const result = await discover(f.url + PATHS.broken.wrongContentType, { http: client() });
    expect(routesOf(result, f.url)).toEqual([
      'document + capabilitylist /broken/wrong-content-type.xml',
      'link-header - /broken/wrong-content-type.xml',
      'html-link - /broken/wrong-content-type.xml',
      'well-known + description /.well-known/resourcesync',
    ]);
    // It is a copy of dataset1's Capability List, at a URL the Source Description does not list.
    expect(codes(result)).toEqual(['warning unlisted-capability-list']);
  });

  it('reports a Capability List without a Source Description above it', async () => {
    const f = await fixture(NO_WELL_KNOWN_NO_ROBOTS);
    const result = await discover(f.url + PATHS.broken.capabilityListWithoutUp, { http: client() });
    expect(result.sourceDescription).toBeNull();
    expect(result.capabilityLists).toEqual([
      {
        url: f.url + PATHS.broken.capabilityListWithoutUp,
        capabilities: [{ capability: 'resourcelist', url: f.url + PATHS.dataset1.resourceList }],
      },
    ]);
    expect(codes(result)).toEqual(['warning missing-describedby', 'error missing-up', 'warning no-source-description']);
    expect(result.findings[1].message.startsWith(`${f.url}${PATHS.broken.capabilityListWithoutUp}: `)).toBe(true);
  });

  it('can be cancelled', async () => {
    const f = await fixture();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const err = await discover(f.url + PATHS.slow, { http: client(), signal: controller.signal }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).code).toBe('aborted');
  });
});

describe('discover: spec checks against a hand-made Source', () => {
  let server: Server;
  let base: string;
  const docs: Record<string, { type?: string; body: string; link?: string }> = {};
  const NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';

  beforeAll(async () => {
    server = createServer((req, res) => {
      const doc = docs[req.url ?? ''];
      if (!doc) {
        res.writeHead(404, { 'content-type': 'text/plain' });
        return void res.end('no');
      }
      res.writeHead(200, { ...(doc.type ? { 'content-type': doc.type } : {}), ...(doc.link ? { link: doc.link } : {}) });
      res.end(doc.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const cl = (up: string, entries: string) =>
      `<?xml version="1.0"?><urlset ${NS}><rs:ln rel="up" href="${up}"/><rs:ln rel="describedby" href="/about"/><rs:md capability="capabilitylist"/>${entries}</urlset>`;
    // The well-known URI serves a Capability List; the Source Description lists a missing document too.
    docs['/.well-known/resourcesync'] = {
      type: 'application/xml',
      body: cl(
        '/sd.xml',
        `<url><loc>${base}/cl-rl.xml</loc><rs:md capability="resourcelist"/></url>` +
          `<url><loc>${base}/topic</loc><rs:md capability="change-notification"/></url>`,
      ),
    };
    docs['/sd.xml'] = {
      type: 'text/plain',
      body:
        `<?xml version="1.0"?><urlset ${NS}><rs:ln rel="describedby" href="/about"/><rs:md capability="description"/>` +
        `<url><loc>${base}/.well-known/resourcesync</loc><rs:md capability="capabilitylist"/></url>` +
        `<url><loc>${base}/gone.xml</loc><rs:md capability="capabilitylist"/></url></urlset>`,
    };
    // A page whose Link header points to a Resource List (not a Capability List), whose up links loop.
    docs['/page'] = { type: 'text/html', body: '<html><head></head><body></body></html>', link: '</a.xml>; rel="resourcesync"' };
    docs['/a.xml'] = {
      body: `<urlset ${NS}><rs:ln rel="up" href="/b.xml"/><rs:md capability="resourcelist" at="2025-01-01T00:00:00Z"/></urlset>`,
    };
    docs['/b.xml'] = { body: cl('/a.xml', '') };
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('reports a well-known URI that is not a Source Description and listed documents that are not Capability Lists', async () => {
    const result = await discover(base, { http: client() });
    expect(routesOf(result, base)).toEqual([
      'document - /',
      'well-known + capabilitylist /.well-known/resourcesync',
      'robots - /robots.txt',
      'up + description /sd.xml',
    ]);
    expect(result.routes[0].message).toBe('404 Not Found');
    expect(result.sourceDescription).toBe(`${base}/sd.xml`);
    expect(result.capabilityLists).toEqual([
      {
        url: `${base}/.well-known/resourcesync`,
        capabilities: [
          { capability: 'resourcelist', url: `${base}/cl-rl.xml` },
          { capability: 'change-notification', url: `${base}/topic` },
        ],
      },
      { url: `${base}/gone.xml`, capabilities: [] },
    ]);
    expect(codes(result)).toEqual(['error missing-hub-link', 'warning well-known-not-description', 'error not-a-capability-list']);
    expect(result.findings[0].message.startsWith(`${base}/.well-known/resourcesync: `)).toBe(true);
    expect(result.findings[2].message).toBe(
      `${base}/gone.xml: listed in the Source Description as a Capability List, but it is 404 Not Found`,
    );
  });

  it('warns about a resourcesync link to a Resource List and never loops on up links', async () => {
    const result = await discover(`${base}/page`, { http: client() });
    expect(routesOf(result, base)).toEqual([
      'document - /page',
      'link-header + resourcelist /a.xml',
      'html-link - /page',
      'well-known + capabilitylist /.well-known/resourcesync',
      'robots - /robots.txt',
      'up + capabilitylist /b.xml',
      'up + description /sd.xml',
    ]);
    // a.xml → b.xml → a.xml: the loop is reported, not followed; the well-known Capability List's own up link then
    // finds the Source Description, which does not list b.xml.
    expect(result.sourceDescription).toBe(`${base}/sd.xml`);
    expect(codes(result)).toContain('warning resourcesync-link-target');
    expect(codes(result)).toContain('warning up-loop');
    expect(codes(result)).toContain('warning unlisted-capability-list');
  });

  it('bounds the number of documents fetched', async () => {
    const result = await discover(`${base}/page`, { http: client(), maxDocuments: 2 });
    expect(result.routes).toHaveLength(3);
    expect(codes(result)).toContain('warning document-limit');
  });
});

describe('normalizeStartUrl', () => {
  it('adds https:// to bare hosts (http:// to loopback ones) and refuses other schemes', () => {
    expect(normalizeStartUrl('example.org')).toBe('https://example.org/');
    expect(normalizeStartUrl('127.0.0.1')).toBe('http://127.0.0.1/');
    expect(normalizeStartUrl('[::1]:8080')).toBe('http://[::1]:8080/');
    expect(normalizeStartUrl('localhost.example.org')).toBe('https://localhost.example.org/');
    expect(normalizeStartUrl(' 127.0.0.1:8080/x ')).toBe('http://127.0.0.1:8080/x');
    expect(normalizeStartUrl('localhost:3000')).toBe('http://localhost:3000/');
    expect(normalizeStartUrl('https://example.org/rs')).toBe('https://example.org/rs');
    expect(() => normalizeStartUrl('ftp://example.org/')).toThrow(NetworkError);
    expect(() => normalizeStartUrl('mailto:a@example.org')).toThrow('Not an http(s) URL or host name: mailto:a@example.org');
  });
});
