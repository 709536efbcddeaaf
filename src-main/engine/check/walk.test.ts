import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROKEN_SOURCE, PATHS, startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { Http } from '../http/index.ts';
import type { CheckProgress, CheckReport } from './model.ts';
import { checkSource } from './walk.ts';

let fixture: FixtureSource;
let http: Http;

beforeAll(async () => {
  fixture = await startFixtureSource({ bigListEntries: 300 });
  http = new Http({ timeoutMs: 10_000 });
});

afterAll(async () => {
  await http.close();
  await fixture.close();
});

const B = BROKEN_SOURCE;
const u = (path: string) => fixture.url + path;

function codesOf(report: CheckReport, path: string): string[] {
  return report.findings.filter((f) => f.document === u(path)).map((f) => f.code);
}

function requestsTo(pattern: RegExp, since: number): string[] {
  return fixture.requests.slice(since).map((r) => r.path).filter((p) => pattern.test(p));
}

describe('checkSource on the fixture Source', () => {
  it('walks every document from the Source Description down, each once, and no resource, package or channel', async () => {
    const since = fixture.requests.length;
    const report = await checkSource(fixture.url + '/', { http });
    const urls = report.documents.map((d) => d.url);
    expect(report.sourceDescription).toBe(u(PATHS.wellKnown));
    expect(urls[0]).toBe(u(PATHS.wellKnown));
    for (const path of [
      PATHS.dataset1.capabilityList,
      PATHS.dataset1.resourceList,
      PATHS.dataset1.resourceDump,
      PATHS.dataset1.resourceDumpManifest(1),
      PATHS.dataset1.changeListIndex,
      PATHS.dataset1.changeList(1),
      PATHS.dataset1.changeDump,
      PATHS.dataset1.changeDumpManifest(1),
      PATHS.dataset2.capabilityList,
      PATHS.dataset2.resourceListIndex,
      PATHS.dataset2.resourceListPart(3),
    ]) {
      expect(urls).toContain(u(path));
    }
    expect(new Set(urls).size).toBe(urls.length);
    expect(report.summary.errors).toBe(0);
    expect(report.summary.entries).toBe(report.documents.reduce((sum, d) => sum + d.entries, 0));
    expect(report.summary.entries).toBeGreaterThan(900);
    expect(requestsTo(/\.zip$|\/notifications|\/res\/|\/hub/, since)).toEqual([]);
    // Discovery reads the Source Description and its Capability Lists once; the walk once more, nothing else twice.
    const walked = fixture.requests.slice(since).map((r) => r.path).filter((p) => /^\/dataset2\/resourcelist-\d+\.xml$/.test(p));
    expect(walked.sort()).toEqual([1, 2, 3].map((n) => PATHS.dataset2.resourceListPart(n)));
  });

  it('reports every cross-document fault of the broken Source, and checks on past a refused part', async () => {
    const since = fixture.requests.length;
    const report = await checkSource(u(B.sourceDescription), { http });
    expect(codesOf(report, B.missingCapabilityList)).toEqual(['http-status']);
    expect(codesOf(report, B.notACapabilityList)).toContain('capability-mismatch');
    expect(codesOf(report, B.changeList)).toEqual(['up-link-elsewhere']);
    expect(codesOf(report, B.nestedCapabilityList)).toContain('unlisted-capability-list');
    expect(codesOf(report, B.capabilityList)).not.toContain('unlisted-capability-list');
    expect(codesOf(report, B.changeListPart)).toContain('index-child-capability');
    expect(codesOf(report, B.refusedPart)).toEqual(['html']);
    expect(report.findings.find((f) => f.code === 'html')?.message).toMatch(/^Refused: .*HTML page/);
    expect(codesOf(report, B.resourceListPart(3))).toEqual(['http-status']);
    // The parts after the refused one were read.
    const part2 = report.documents.find((d) => d.url === u(B.resourceListPart(2)));
    expect(part2).toMatchObject({ capability: 'resourcelist', entries: 1, findings: [], parent: u(B.resourceListIndex) });
    // The manifest is reached through the dump's rs:ln rel="contents"; the package itself is not fetched.
    expect(report.documents.find((d) => d.url === u(B.resourceDumpManifest))?.capability).toBe('resourcedump-manifest');
    expect(requestsTo(/\.zip$|\/notifications$/, since)).toEqual([]);
    // The index lists itself: one finding on the line of that entry, and the index is fetched once by the walk.
    const loop = report.findings.find((f) => f.code === 'loop');
    expect(loop).toMatchObject({ document: u(B.resourceListIndex), severity: 'warning' });
    expect(loop?.line).toBeGreaterThan(1);
    expect(requestsTo(/resourcelist-index\.xml$/, since)).toHaveLength(1);
    expect(report.summary).toMatchObject({ documents: 14, truncated: false, cancelled: false });
    expect(report.summary.errors).toBe(report.findings.filter((f) => f.severity === 'error').length);
  });

  it('flags a Capability List that no Source Description lists when none is found', async () => {
    const alone = await startFixtureSource({ bigListEntries: 10, routes: { wellKnown: false, robots: false, htmlLink: false, linkHeader: false } });
    try {
      const report = await checkSource(alone.url + PATHS.broken.capabilityListWithoutUp, { http });
      expect(report.sourceDescription).toBeNull();
      const mine = report.findings.filter((f) => f.document === alone.url + PATHS.broken.capabilityListWithoutUp).map((f) => f.code);
      expect(mine).toContain('unlisted-capability-list');
      expect(mine).toContain('missing-up');
      expect(report.findings.find((f) => f.code === 'unlisted-capability-list')?.message).toMatch(/none was found/);
      // Its Resource List points up to another Capability List.
      expect(report.findings.filter((f) => f.document === alone.url + PATHS.dataset1.resourceList).map((f) => f.code)).toEqual(['up-link-elsewhere']);

      // Nothing found at all is an error finding on the start URL.
      const nothing = await checkSource(alone.url + PATHS.about, { http });
      expect(nothing.documents.map((d) => d.url)).toEqual([alone.url + PATHS.about]);
      expect(nothing.findings.map((f) => [f.severity, f.code])).toEqual([['error', 'nothing-found']]);
    } finally {
      await alone.close();
    }
  });

  it('stops at --max-documents and says how many were left', async () => {
    const since = fixture.requests.length;
    const report = await checkSource(u(B.sourceDescription), { http, maxDocuments: 3 });
    expect(report.documents).toHaveLength(3);
    expect(report.summary.truncated).toBe(true);
    const limit = report.findings.find((f) => f.code === 'document-limit');
    expect(limit?.document).toBe(u(B.sourceDescription));
    // 3 checked: the Source Description and 2 of its 3 Capability Lists; the third and the capability list's 4 are left.
    expect(limit?.message).toMatch(/^Stopped after 3 documents; \d+ more listed documents were not checked/);
    const walkRequests = requestsTo(/^\/broken-source\//, since).length;
    expect(walkRequests).toBeLessThanOrEqual(3 + 4); // the walk's 3 + discovery's own
  });

  it('cancels: stops at once, even with a document that never answers, and reports what it checked', async () => {
    fixture.setBroken(PATHS.dataset2.resourceListIndex, 'hang');
    try {
      const abort = new AbortController();
      const progress: CheckProgress[] = [];
      const began = Date.now();
      const pending = checkSource(fixture.url + '/', {
        http,
        signal: abort.signal,
        progressIntervalMs: 0,
        onProgress: (p) => {
          progress.push(p);
          if (p.done >= 6) abort.abort();
        },
      });
      const report = await pending;
      expect(Date.now() - began).toBeLessThan(5000);
      expect(report.summary.cancelled).toBe(true);
      expect(report.summary.truncated).toBe(true);
      expect(report.documents.length).toBeGreaterThanOrEqual(6);
      expect(report.findings.find((f) => f.code === 'cancelled')?.message).toMatch(/^Check cancelled after \d+ documents; \d+ more known/);
      expect(report.documents.map((d) => d.url)).not.toContain(u(PATHS.dataset2.resourceListIndex));
      expect(progress.every((p, i) => i === 0 || p.done >= progress[i - 1].done)).toBe(true);
    } finally {
      fixture.setBroken(PATHS.dataset2.resourceListIndex, null);
    }
  });

  it('reports progress at most every 200 ms by default, with documents known and entries read', async () => {
    const progress: { at: number; p: CheckProgress }[] = [];
    const report = await checkSource(fixture.url + '/', { http, onProgress: (p) => progress.push({ at: Date.now(), p }) });
    const last = progress.at(-1)!.p;
    expect(last).toMatchObject({ done: report.documents.length, known: report.documents.length, current: null });
    expect(last.entries).toBeGreaterThanOrEqual(report.summary.entries);
    for (let i = 2; i < progress.length - 1; i++) expect(progress[i].at - progress[i - 1].at).toBeGreaterThanOrEqual(195);
  });

  it('fetches a few documents at once, never more than asked', async () => {
    const slow = await startFixtureSource({ bigListParts: 6, bigListEntries: 10 });
    let inFlight = 0;
    let most = 0;
    const counting = new Http({ timeoutMs: 10_000 });
    const get = counting.get.bind(counting);
    counting.get = async (url, init) => {
      inFlight++;
      most = Math.max(most, inFlight);
      try {
        // A slow Source: each request takes a while to answer, so the walk's requests overlap as far as it allows.
        await new Promise((r) => setTimeout(r, 50));
        return await get(url, init);
      } finally {
        inFlight--;
      }
    };
    try {
      const report = await checkSource(slow.url + PATHS.dataset2.capabilityList, { http: counting, concurrency: 3 });
      expect(report.documents.length).toBeGreaterThan(6);
      expect(most).toBe(3);
    } finally {
      await counting.close();
      await slow.close();
    }
  });
});

describe('checkSource against a Source that floods', () => {
  it('an index listing the same part, and itself, thousands of times, and a document with hundreds of faults: bounded findings that say how many more', async () => {
    const NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
    const REPEATS = 5000;
    let base = '';
    const server = createServer((req, res) => {
      res.setHeader('content-type', 'application/xml');
      if (req.url === '/capabilitylist.xml') {
        res.end(
          `<urlset ${NS}><rs:md capability="capabilitylist"/><url><loc>${base}/index.xml</loc><rs:md capability="resourcelist"/></url>` +
            `<url><loc>${base}/faulty.xml</loc><rs:md capability="changelist"/></url></urlset>`,
        );
      } else if (req.url === '/index.xml') {
        // The part under other spellings too: a fragment is never sent, the host's case and the default port change nothing.
        const part = `<sitemap><loc>${base}/part.xml</loc></sitemap><sitemap><loc>${base.replace('http:', 'HTTP:')}/part.xml#again</loc></sitemap>`;
        const self = `<sitemap><loc>${base}/index.xml</loc></sitemap>`;
        res.end(`<sitemapindex ${NS}><rs:ln rel="up" href="${base}/capabilitylist.xml"/><rs:md capability="resourcelist" at="2020-01-01T00:00:00Z"/>${(part + self).repeat(REPEATS)}</sitemapindex>`);
      } else if (req.url === '/faulty.xml') {
        // 150 entries with five faults each: 750 findings (the reader keeps 100 of each kind).
        const entry = '<url><loc>relative</loc><lastmod>yesterday</lastmod><changefreq>often</changefreq><rs:md hash="md5:x" length="-1"/></url>';
        res.end(`<urlset ${NS}><rs:ln rel="up" href="${base}/capabilitylist.xml"/><rs:md capability="changelist" from="2020-01-01T00:00:00Z"/>${entry.repeat(150)}</urlset>`);
      } else if (req.url === '/part.xml') {
        res.end(`<urlset ${NS}><rs:ln rel="up" href="${base}/capabilitylist.xml"/><rs:ln rel="index" href="${base}/index.xml"/><rs:md capability="resourcelist" at="2020-01-01T00:00:00Z"/></urlset>`);
      } else {
        res.statusCode = 404;
        res.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const report = await checkSource(`${base}/capabilitylist.xml`, { http });
      const index = report.documents.find((d) => d.url === `${base}/index.xml`)!;
      expect(index.entries).toBe(3 * REPEATS);
      const codes = index.findings.map((f) => f.code);
      expect(codes.filter((c) => c === 'listed-again')).toHaveLength(101);
      expect(codes.filter((c) => c === 'loop')).toHaveLength(101);
      expect(index.findings.slice(-2).map((f) => f.message).sort()).toEqual([
        'Lists 4,900 more documents above it in the Source (a loop), not shown here (5,000 in all); none is checked again',
        'Lists 9,899 more documents again that were already reached, not shown here (9,999 in all); each is checked once',
      ]);
      expect(report.findings.filter((f) => f.document === `${base}/index.xml`).length).toBeLessThan(300);
      // Each document fetched once, whatever the spelling.
      expect(report.documents.map((d) => d.url)).toEqual([`${base}/capabilitylist.xml`, `${base}/index.xml`, `${base}/faulty.xml`, `${base}/part.xml`]);
      // A document with hundreds of findings: the first 250 (errors first), and how many more.
      const faulty = report.documents.find((d) => d.url === `${base}/faulty.xml`)!;
      expect(faulty.findings).toHaveLength(251);
      expect(faulty.findings.at(-1)).toMatchObject({ code: 'more-findings', severity: 'warning' });
      expect(faulty.findings.at(-1)?.message).toMatch(/^\d+ more findings of this document are not listed here \(\d+ in all\); inspecting the document alone lists them$/);
      const severities = faulty.findings.slice(0, -1).map((f) => f.severity);
      expect(severities.indexOf('warning') === -1 || severities.lastIndexOf('error') < severities.indexOf('warning')).toBe(true);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('checkSource of an index with more parts than the document limit', () => {
  it('keeps only what it can still check: the rest is counted, the limit says so, a repeat within the limit is still found', async () => {
    const NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
    const PARTS = 40;
    let base = '';
    const server = createServer((req, res) => {
      res.setHeader('content-type', 'application/xml');
      if (req.url === '/capabilitylist.xml') {
        res.end(`<urlset ${NS}><rs:md capability="capabilitylist"/><url><loc>${base}/index.xml</loc><rs:md capability="resourcelist"/></url></urlset>`);
      } else if (req.url === '/index.xml') {
        const parts = Array.from({ length: PARTS }, (_, i) => `<sitemap><loc>${base}/part${i}.xml</loc></sitemap>`).join('');
        // part0 again, early (within the limit), and part30 twice (past it: counted twice, not found as a repeat).
        const again = `<sitemap><loc>${base}/part0.xml</loc></sitemap><sitemap><loc>${base}/part30.xml</loc></sitemap>`;
        res.end(`<sitemapindex ${NS}><rs:ln rel="up" href="${base}/capabilitylist.xml"/><rs:md capability="resourcelist" at="2020-01-01T00:00:00Z"/>${parts}${again}</sitemapindex>`);
      } else {
        res.end(`<urlset ${NS}><rs:ln rel="up" href="${base}/capabilitylist.xml"/><rs:md capability="resourcelist" at="2020-01-01T00:00:00Z"/></urlset>`);
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const report = await checkSource(`${base}/capabilitylist.xml`, { http, maxDocuments: 6 });
      // The Capability List, the index and the first 4 parts.
      expect(report.documents.map((d) => d.url)).toEqual([`${base}/capabilitylist.xml`, `${base}/index.xml`, ...[0, 1, 2, 3].map((i) => `${base}/part${i}.xml`)]);
      expect(report.summary.truncated).toBe(true);
      const limit = report.findings.find((f) => f.code === 'document-limit')!;
      // 36 parts left, part30 counted twice.
      expect(limit.message).toBe(
        'Stopped after 6 documents; 37 more listed documents were not checked (nor what they list); past the limit, a document listed more than once is counted each time and not reported as listed again',
      );
      const index = report.documents.find((d) => d.url === `${base}/index.xml`)!;
      expect(index.findings.filter((f) => f.code === 'listed-again').map((f) => f.message)).toHaveLength(1);
      expect(index.findings.find((f) => f.code === 'listed-again')!.message).toContain(`${base}/part0.xml`);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('checkSource on small hand-written Sources', () => {
  const NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';

  async function serve(docs: Record<string, string>, run: (base: string) => Promise<void>): Promise<void> {
    let base = '';
    const server = createServer((req, res) => {
      const body = docs[req.url ?? ''];
      if (body === undefined) {
        res.statusCode = 404;
        return void res.end('no');
      }
      res.setHeader('content-type', 'application/xml');
      res.end(body.replaceAll('BASE', base));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      await run(base);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }

  const sd = `<urlset ${NS}><rs:ln rel="describedby" href="BASE/about"/><rs:md capability="description"/><url><loc>BASE/cl.xml</loc><rs:md capability="capabilitylist"/></url></urlset>`;
  const cl = `<urlset ${NS}><rs:ln rel="describedby" href="BASE/about"/><rs:ln rel="up" href="BASE/sd.xml"/><rs:md capability="capabilitylist"/></urlset>`;

  it('§6.3.2: a Source Description found elsewhere while the well-known URI answers 404 is an error of the Source', async () => {
    await serve({ '/sd.xml': sd, '/cl.xml': cl }, async (base) => {
      const report = await checkSource(`${base}/sd.xml`, { http });
      expect(report.sourceDescription).toBe(`${base}/sd.xml`);
      const found = report.findings.filter((f) => f.code === 'well-known-missing');
      expect(found).toEqual([
        expect.objectContaining({
          document: `${base}/sd.xml`,
          severity: 'error',
          message: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/\.well-known\/resourcesync does not serve a Source Description \(Could not be fetched: .*404.*\); it was found at .*\/sd\.xml\. A Source must publish its Source Description at \/\.well-known\/resourcesync \(§6\.3\.2\)$/),
        }),
      ]);
      expect(report.summary.errors).toBe(1);
    });
  });

  it('a well-known URI that serves another kind of document is an error; one that serves a Source Description is fine', async () => {
    await serve({ '/sd.xml': sd, '/cl.xml': cl, '/.well-known/resourcesync': cl }, async (base) => {
      const report = await checkSource(`${base}/sd.xml`, { http });
      expect(report.findings.find((f) => f.code === 'well-known-missing')?.message).toContain('(it serves a Capability List)');
    });
    await serve({ '/sd.xml': sd, '/cl.xml': cl, '/.well-known/resourcesync': sd }, async (base) => {
      const fromCapabilityList = await checkSource(`${base}/cl.xml`, { http });
      expect(fromCapabilityList.findings.filter((f) => f.code === 'well-known-missing')).toEqual([]);
      const fromSourceDescription = await checkSource(`${base}/sd.xml`, { http });
      expect(fromSourceDescription.findings.filter((f) => f.code === 'well-known-missing')).toEqual([]);
    });
  });

  it('§12.2: a Change List Index entry gives until exactly when its Change List is closed', async () => {
    const index =
      `<sitemapindex ${NS}><rs:ln rel="up" href="BASE/cl.xml"/><rs:md capability="changelist" from="2013-01-01T00:00:00Z"/>` +
      '<sitemap><loc>BASE/closed-ok.xml</loc><rs:md from="2013-01-01T00:00:00Z" until="2013-01-02T00:00:00Z"/></sitemap>\n' +
      '<sitemap><loc>BASE/closed-bad.xml</loc><rs:md from="2013-01-02T00:00:00Z"/></sitemap>\n' +
      '<sitemap><loc>BASE/open-bad.xml</loc><rs:md from="2013-01-03T00:00:00Z" until="2013-01-04T00:00:00Z"/></sitemap>\n' +
      '<sitemap><loc>BASE/open-ok.xml</loc><rs:md from="2013-01-04T00:00:00Z"/></sitemap></sitemapindex>';
    const part = (from: string, until?: string) =>
      `<urlset ${NS}><rs:ln rel="up" href="BASE/cl.xml"/><rs:ln rel="index" href="BASE/cli.xml"/>` +
      `<rs:md capability="changelist" from="${from}"${until === undefined ? '' : ` until="${until}"`}/></urlset>`;
    const capabilityList = `<urlset ${NS}><rs:ln rel="describedby" href="BASE/about"/><rs:ln rel="up" href="BASE/.well-known/resourcesync"/><rs:md capability="capabilitylist"/><url><loc>BASE/cli.xml</loc><rs:md capability="changelist"/></url></urlset>`;
    const docs = {
      '/.well-known/resourcesync': sd,
      '/cl.xml': capabilityList,
      '/cli.xml': index,
      '/closed-ok.xml': part('2013-01-01T00:00:00Z', '2013-01-02T00:00:00Z'),
      '/closed-bad.xml': part('2013-01-02T00:00:00Z', '2013-01-03T00:00:00Z'),
      '/open-bad.xml': part('2013-01-03T00:00:00Z'),
      '/open-ok.xml': part('2013-01-04T00:00:00Z'),
    };
    await serve(docs, async (base) => {
      const report = await checkSource(`${base}/`, { http });
      const found = report.findings.filter((f) => f.code === 'index-entry-until').map((f) => [f.document.replace(base, ''), f.severity, f.message]);
      expect(found).toEqual([
        ['/closed-bad.xml', 'error', `This Change List is closed (until="2013-01-03T00:00:00Z"), but its entry in the Change List Index ${base}/cli.xml (line 2) has no "until": the entry of a closed Change List must give it (§12.2)`],
        ['/open-bad.xml', 'error', `This Change List is open (no "until"), but its entry in the Change List Index ${base}/cli.xml (line 3) gives until="2013-01-04T00:00:00Z": the entry of an open Change List must not (§12.2)`],
      ]);
      expect(report.summary.errors).toBe(2);
    });
  });

  it('§6.3.3: a resourcesync link of the page the check starts from that points to a Resource List is reported', async () => {
    const rl = `<urlset ${NS}><rs:ln rel="up" href="BASE/cl.xml"/><rs:md capability="resourcelist" at="2013-01-03T00:00:00Z"/></urlset>`;
    const page = '<html><head><link rel="resourcesync" href="BASE/rl.xml"></head><body></body></html>';
    const docs = { '/.well-known/resourcesync': sd, '/cl.xml': cl.replace('BASE/sd.xml', 'BASE/.well-known/resourcesync'), '/rl.xml': rl, '/page.html': page };
    await serve(docs, async (base) => {
      const report = await checkSource(`${base}/page.html`, { http });
      expect(report.findings.filter((f) => f.code === 'resourcesync-link-target')).toEqual([
        expect.objectContaining({ severity: 'warning', message: expect.stringContaining('should point to a Capability List (core spec 6.3.3)') }),
      ]);
    });
  });
});
