import { describe, expect, it } from 'vitest';
import { checkIndexChild, MAX_ENTRIES } from './conformance.ts';
import { MAX_FINDINGS_PER_CODE } from './findings.ts';
import { LIMITS } from './parser.ts';
import type { DocumentSummary, Finding, Severity } from './model.ts';
import { readDocument } from './reader.ts';
import { NS, UP_CAPABILITY_LIST, UP_SOURCE_DESCRIPTION, lineOf, read, sitemapindex, url, urlset } from './test-support.ts';

const MD5 = 'md5:1584abdf8ebdc9802ac0c6a7402c03b6';
const RL = '<rs:md capability="resourcelist" at="2013-01-03T09:00:00Z"/>';
const CL = '<rs:md capability="changelist" from="2013-01-03T00:00:00Z"/>';

async function findings(xml: string): Promise<Finding[]> {
  return (await read(xml)).summary.findings;
}

/** The findings of `xml` with this code must be exactly these (severity, line). */
async function expectFindings(xml: string, code: string, expected: [Severity, number][]): Promise<void> {
  const found = (await findings(xml)).filter((f) => f.code === code).map((f) => [f.severity, f.line]);
  expect(found, code).toEqual(expected);
}

describe('clean documents yield no findings', () => {
  const clean: [string, string][] = [
    ['Source Description', urlset('<rs:md capability="description"/>', [url('http://example.com/cl1.xml', '<rs:md capability="capabilitylist"/>'), url('http://example.com/cl2.xml')], ['<rs:ln rel="describedby" href="http://example.com/about"/>'])],
    ['Capability List', urlset('<rs:md capability="capabilitylist"/>', [url('http://example.com/rl.xml', '<rs:md capability="resourcelist"/>'), url('http://example.com/cl.xml', '<rs:md capability="changelist"/>'), url('http://example.com/cn/', '<rs:md capability="change-notification"/><rs:ln rel="hub" href="http://hub.example.com/"/>')], [UP_SOURCE_DESCRIPTION, '<rs:ln rel="describedby" href="http://example.com/about-set1"/>'])],
    ['Resource List', urlset('<rs:md capability="resourcelist" at="2013-01-03T09:00:00Z" completed="2013-01-03T09:01:00Z"/>', [url('http://example.com/r1', '<lastmod>2013-01-02T13:00:00Z</lastmod><changefreq>daily</changefreq>', `<rs:md hash="${MD5}" length="8876" type="text/html"/>`, '<rs:ln rel="duplicate" pri="1" href="http://mirror.example.com/r1" modified="2013-01-03T18:00:00Z"/>')], [UP_CAPABILITY_LIST, '<rs:ln rel="index" href="http://example.com/rli.xml"/>'])],
    ['Resource List Index', sitemapindex(RL, ['<sitemap><loc>http://example.com/rl1.xml</loc><rs:md at="2013-01-03T09:00:00Z"/></sitemap>'], [UP_CAPABILITY_LIST])],
    ['Resource Dump', urlset('<rs:md capability="resourcedump" at="2013-01-03T09:00:00Z"/>', [url('http://example.com/p1.zip', '<rs:md type="application/zip" length="4765" at="2013-01-03T09:00:00Z" completed="2013-01-03T09:02:00Z"/><rs:ln rel="contents" href="http://example.com/m1.xml" type="application/xml"/>')], [UP_CAPABILITY_LIST])],
    ['Resource Dump Manifest', urlset('<rs:md capability="resourcedump-manifest" at="2013-01-03T09:00:00Z"/>', [url('http://example.com/r1', `<rs:md hash="${MD5}" path="/resources/r1" type="text/html"/>`)], [UP_CAPABILITY_LIST])],
    ['Change List', urlset('<rs:md capability="changelist" from="2013-01-03T00:00:00Z" until="2013-01-04T00:00:00Z"/>', [url('http://example.com/r1', '<rs:md change="created" datetime="2013-01-03T11:00:00Z"/>'), url('http://example.com/r2', '<lastmod>2013-01-03T12:00:00Z</lastmod><rs:md change="deleted"/>'), url('http://example.com/r1', '<rs:md change="updated"/>')], [UP_CAPABILITY_LIST])],
    ['Change List Index', sitemapindex(CL, ['<sitemap><loc>http://example.com/c1.xml</loc><rs:md from="2013-01-01T00:00:00Z" until="2013-01-02T00:00:00Z"/></sitemap>', '<sitemap><loc>http://example.com/c2.xml</loc><rs:md from="2013-01-02T00:00:00Z"/></sitemap>'], [UP_CAPABILITY_LIST])],
    ['Change Dump', urlset('<rs:md capability="changedump" from="2013-01-01T00:00:00Z"/>', [url('http://example.com/d1.zip', '<lastmod>2013-01-01T23:59:59Z</lastmod><rs:md type="application/zip" length="3109" from="2013-01-01T00:00:00Z" until="2013-01-02T00:00:00Z"/>')], [UP_CAPABILITY_LIST])],
    ['Change Dump Manifest', urlset('<rs:md capability="changedump-manifest" from="2013-01-02T00:00:00Z" until="2013-01-03T00:00:00Z"/>', [url('http://example.com/r7', `<rs:md change="created" datetime="2013-01-02T12:00:00Z" hash="${MD5}" path="/changes/r7"/>`), url('http://example.com/r5', '<rs:md change="deleted" datetime="2013-01-02T19:00:00Z"/>')], [UP_CAPABILITY_LIST])],
    ['change notification', urlset('<rs:md capability="change-notification" from="2013-01-03T00:00:00Z" until="2013-01-03T00:10:00Z"/>', [url('http://example.com/r1', '<rs:md change="updated" datetime="2013-01-03T00:07:22Z"/>')])],
  ];
  for (const [name, xml] of clean) {
    it(name, async () => {
      expect(await findings(xml)).toEqual([]);
    });
  }
});

describe('document-level rules', () => {
  it('missing at in Resource Lists, Resource Dumps and manifests (Appendix A)', async () => {
    for (const capability of ['resourcelist', 'resourcedump', 'resourcedump-manifest']) {
      const xml = urlset(`<rs:md capability="${capability}"/>`, [], [UP_CAPABILITY_LIST]);
      await expectFindings(xml, 'missing-at', [['error', lineOf(xml, '<rs:md')]]);
    }
    const index = sitemapindex('<rs:md capability="resourcelist"/>', [], [UP_CAPABILITY_LIST]);
    await expectFindings(index, 'missing-at', [['error', lineOf(index, '<rs:md')]]);
    expect((await findings(index)).find((f) => f.code === 'missing-at')?.message).toBe(
      'The <rs:md> of a Resource List Index must have an "at" attribute: when its snapshot began (§10.2, Appendix A)',
    );
  });

  it('missing from in change documents; change notifications also need until (CN §3)', async () => {
    for (const capability of ['changelist', 'changedump', 'changedump-manifest', 'change-notification']) {
      const xml = urlset(`<rs:md capability="${capability}" until="2013-01-03T00:00:00Z"/>`, [], [UP_CAPABILITY_LIST]);
      await expectFindings(xml, 'missing-from', [['error', lineOf(xml, '<rs:md')]]);
    }
    const notification = urlset('<rs:md capability="change-notification" from="2013-01-03T00:00:00Z"/>');
    await expectFindings(notification, 'missing-until', [['error', 3]]);
    await expectFindings(urlset(CL, [], [UP_CAPABILITY_LIST]), 'missing-until', []);
  });

  it('at/completed in change documents and from/until in resource documents are not applicable (§7)', async () => {
    const xml = urlset('<rs:md capability="changelist" from="2013-01-03T00:00:00Z" at="2013-01-03T00:00:00Z"/>', [], [UP_CAPABILITY_LIST]);
    await expectFindings(xml, 'attribute-not-applicable', [['warning', 4]]);
    const rl = urlset('<rs:md capability="resourcelist" at="2013-01-03T00:00:00Z" until="2013-01-04T00:00:00Z"/>', [], [UP_CAPABILITY_LIST]);
    await expectFindings(rl, 'attribute-not-applicable', [['warning', 4]]);
  });

  it('until before from, completed before at', async () => {
    const cl = urlset('<rs:md capability="changelist" from="2013-01-03T00:00:00Z" until="2013-01-02T00:00:00Z"/>', [], [UP_CAPABILITY_LIST]);
    await expectFindings(cl, 'until-before-from', [['warning', 4]]);
    const rl = urlset('<rs:md capability="resourcelist" at="2013-01-03T09:00:00Z" completed="2013-01-03T08:00:00Z"/>', [], [UP_CAPABILITY_LIST]);
    await expectFindings(rl, 'completed-before-at', [['warning', 4]]);
    const equal = urlset('<rs:md capability="resourcelist" at="2013-01-03T09:00:00Z" completed="2013-01-03T09:00:00Z"/>', [], [UP_CAPABILITY_LIST]);
    await expectFindings(equal, 'completed-before-at', []);
  });

  it('mandatory up links: Capability List to the Source Description, the others to the Capability List', async () => {
    const capabilityList = urlset('<rs:md capability="capabilitylist"/>');
    const found = (await findings(capabilityList)).filter((f) => f.code === 'missing-up');
    expect(found).toEqual([expect.objectContaining({ severity: 'error', line: 3, message: 'No <rs:ln rel="up"> to the Source Description: a Capability List must link up to it (§9)' })]);
    for (const md of [RL, CL, '<rs:md capability="resourcedump" at="2013-01-03T00:00:00Z"/>', '<rs:md capability="changedump" from="2013-01-03T00:00:00Z"/>', '<rs:md capability="resourcedump-manifest" at="2013-01-03T00:00:00Z"/>', '<rs:md capability="changedump-manifest" from="2013-01-03T00:00:00Z"/>']) {
      const xml = urlset(md);
      const missing = (await findings(xml)).filter((f) => f.code === 'missing-up');
      expect(missing, md).toEqual([expect.objectContaining({ severity: 'error', line: 3, message: expect.stringContaining('Capability List') })]);
      await expectFindings(urlset(md, [], [UP_CAPABILITY_LIST]), 'missing-up', []);
    }
    await expectFindings(sitemapindex(RL), 'missing-up', [['error', 3]]);
    // Optional in a Source Description (it is the top) and in a change notification (CN §3).
    await expectFindings(urlset('<rs:md capability="description"/>'), 'missing-up', []);
    await expectFindings(urlset('<rs:md capability="change-notification" from="2013-01-03T00:00:00Z" until="2013-01-04T00:00:00Z"/>'), 'missing-up', []);
  });

  it('no index link is required in a document on its own (only "if an index exists")', async () => {
    expect(await findings(urlset(RL, [url('http://example.com/a')], [UP_CAPABILITY_LIST]))).toEqual([]);
  });

  it('indexes where the specs define none', async () => {
    await expectFindings(sitemapindex('<rs:md capability="capabilitylist"/>', [], [UP_SOURCE_DESCRIPTION]), 'index-not-expected', [['warning', 4]]);
    await expectFindings(sitemapindex('<rs:md capability="change-notification" from="2013-01-03T00:00:00Z" until="2013-01-04T00:00:00Z"/>'), 'index-not-allowed', [['error', 3]]);
    await expectFindings(sitemapindex('<rs:md capability="resourcedump-manifest" at="2013-01-03T00:00:00Z"/>', [], [UP_CAPABILITY_LIST]), 'index-not-allowed', [['error', 4]]);
    await expectFindings(sitemapindex('<rs:md capability="description"/>'), 'index-not-allowed', []);
  });

  it('rs:md and rs:ln of the document after the first entry', async () => {
    const xml = `<urlset ${NS}>\n${UP_CAPABILITY_LIST}\n${url('http://example.com/a')}\n${RL}\n<rs:ln rel="describedby" href="http://example.com/d"/>\n</urlset>`;
    await expectFindings(xml, 'md-after-entry', [['warning', 4]]);
    await expectFindings(xml, 'ln-after-entry', [['warning', 5]]);
  });

  it('a second document-level rs:md', async () => {
    const xml = urlset(RL, ['<rs:md capability="changelist"/>'], [UP_CAPABILITY_LIST]);
    const { summary } = await read(xml);
    expect(summary.capability).toBe('resourcelist');
    expect(summary.findings).toEqual([expect.objectContaining({ code: 'duplicate-md', severity: 'warning', line: 5 })]);
  });

  it('malformed document-level values and links', async () => {
    const xml = urlset('<rs:md capability="resourcelist" at="03/01/2013"/>', [], ['<rs:ln rel="up"/>', '<rs:ln href="http://example.com/x" length="-1" pri="0"/>']);
    const found = await findings(xml);
    expect(found).toContainEqual(expect.objectContaining({ code: 'invalid-datetime', severity: 'warning', line: 5 }));
    expect(found).toContainEqual(expect.objectContaining({ code: 'invalid-link', severity: 'error', line: 3, message: '<rs:ln> without "href": every link must have both (§7)' }));
    expect(found).toContainEqual(expect.objectContaining({ code: 'invalid-link', severity: 'error', line: 4, message: '<rs:ln> without "rel": every link must have both (§7)' }));
    expect(found).toContainEqual(expect.objectContaining({ code: 'invalid-length', severity: 'warning', line: 4 }));
    expect(found).toContainEqual(expect.objectContaining({ code: 'invalid-pri', severity: 'warning', line: 4 }));
  });

  it('unknown and rs-prefixed attributes, unknown elements, misplaced sitemap elements', async () => {
    const xml = urlset('<rs:md capability="resourcelist" at="2013-01-03T09:00:00Z" modified="2013-01-03T09:00:00Z" x:own="ok" xmlns:x="urn:x"/>', [
      '<url><loc>http://example.com/a</loc>',
      '<rs:md rs:hash="md5:00"/>',
      '<rs:size>12</rs:size>',
      '<image:image xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"/>',
      '<title>x</title>',
      '</url>',
      '<sitemap><loc>http://example.com/s.xml</loc></sitemap>',
    ], [UP_CAPABILITY_LIST]);
    await expectFindings(xml, 'unknown-attribute', [['warning', 4]]);
    // §7: ResourceSync's own attributes never carry a prefix; rs:hash is not the hash.
    await expectFindings(xml, 'prefixed-attribute', [['error', 6]]);
    const { entries } = await read(xml);
    expect(entries[0].md.hash).toBeUndefined();
    const other = urlset(RL, ['<url><loc>http://example.com/a</loc><rs:md rs:size="12"/></url>'], [UP_CAPABILITY_LIST]);
    await expectFindings(other, 'unknown-attribute', [['warning', 5]]);
    await expectFindings(other, 'prefixed-attribute', []);
    await expectFindings(xml, 'unknown-element', [['warning', 7], ['warning', 9]]);
    await expectFindings(xml, 'unexpected-element', [['error', 11]]);
  });
});

describe('entry rules', () => {
  it('missing or relative loc is an error', async () => {
    const xml = urlset(RL, ['<url><lastmod>2013-01-01</lastmod></url>', url('/relative/path'), url('res.html'), url('urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66')], [UP_CAPABILITY_LIST]);
    await expectFindings(xml, 'missing-loc', [['error', 5]]);
    await expectFindings(xml, 'relative-loc', [['error', 6], ['error', 7]]);
  });

  it('malformed lastmod, datetime, length, hash (md and ln) and changefreq', async () => {
    const xml = urlset('<rs:md capability="changelist" from="2013-01-03T00:00:00Z"/>', [
      '<url>',
      '<loc>http://example.com/a</loc>',
      '<lastmod>2013-01-03 10:00</lastmod>',
      '<changefreq>sometimes</changefreq>',
      '<rs:md change="updated" datetime="yesterday" length="12kB" hash="sha-256:f40xZX_x_DFGFDgghgdfb6rtSx"/>',
      '<rs:ln rel="alternate" href="http://example.com/a.pdf" modified="x" hash="md5:abc"/>',
      '</url>',
    ], [UP_CAPABILITY_LIST]);
    const entryLine = lineOf(xml, '<url>');
    const mdLine = lineOf(xml, 'change="updated"');
    const lnLine = lineOf(xml, 'rel="alternate"');
    await expectFindings(xml, 'invalid-datetime', [['warning', entryLine], ['warning', mdLine], ['warning', lnLine]]);
    await expectFindings(xml, 'invalid-changefreq', [['warning', entryLine]]);
    await expectFindings(xml, 'invalid-length', [['warning', mdLine]]);
    await expectFindings(xml, 'invalid-hash', [['warning', mdLine], ['warning', lnLine]]);
  });

  it('a hash with its algorithm split across lines is reported, a proper multi-line hash is not', async () => {
    const split = urlset(RL, ['<url><loc>http://example.com/a</loc>', `<rs:md hash="${MD5}`, '   sha-', '256:854f61290e2e197a11bc91063afce22e43f8ccc655237050ace766adc68dc784"/></url>'], [UP_CAPABILITY_LIST]);
    const found = (await findings(split)).filter((f) => f.code === 'invalid-hash');
    expect(found).toEqual([expect.objectContaining({ severity: 'warning', line: 6, message: expect.stringContaining('split by whitespace') })]);
    const proper = urlset(RL, ['<url><loc>http://example.com/a</loc>', `<rs:md hash="${MD5}`, '   sha-256:854f61290e2e197a11bc91063afce22e43f8ccc655237050ace766adc68dc784"/></url>'], [UP_CAPABILITY_LIST]);
    expect(await findings(proper)).toEqual([]);
  });

  it('more than 50,000 entries', async () => {
    async function* list(n: number): AsyncGenerator<string> {
      yield `<urlset ${NS}>\n${UP_CAPABILITY_LIST}\n${RL}\n`;
      for (let i = 0; i < n; i += 1000) {
        let batch = '';
        for (let j = i; j < Math.min(n, i + 1000); j++) batch += `${url(`http://example.com/${j}`)}\n`;
        yield batch;
      }
      yield '</urlset>';
    }
    const over = await readDocument(list(MAX_ENTRIES + 2), { url: 'u' });
    expect(over.entries).toBe(MAX_ENTRIES + 2);
    expect(over.findings).toEqual([expect.objectContaining({ code: 'too-many-entries', severity: 'warning', line: 4 + MAX_ENTRIES })]);
    expect((await readDocument(list(MAX_ENTRIES), { url: 'u' })).findings).toEqual([]);
  });

  it('change: missing or not created/updated/deleted in change documents; not applicable elsewhere', async () => {
    for (const capability of ['changelist', 'changedump-manifest', 'change-notification']) {
      const xml = urlset(`<rs:md capability="${capability}" from="2013-01-03T00:00:00Z" until="2013-01-04T00:00:00Z"/>`, [
        url('http://example.com/a'),
        url('http://example.com/b', '<rs:md datetime="2013-01-03T01:00:00Z" path="/b"/>'),
        url('http://example.com/c', '<rs:md change="modified" path="/c"/>'),
      ], [UP_CAPABILITY_LIST]);
      await expectFindings(xml, 'missing-change', [['error', lineOf(xml, '/a<')], ['error', lineOf(xml, '/b<')]]);
      await expectFindings(xml, 'invalid-change', [['error', lineOf(xml, '/c<')]]);
    }
    const rl = urlset(RL, [url('http://example.com/a', '<rs:md change="created"/>')], [UP_CAPABILITY_LIST]);
    await expectFindings(rl, 'attribute-not-applicable', [['warning', 5]]);
    await expectFindings(sitemapindex(CL, ['<sitemap><loc>http://example.com/c1.xml</loc></sitemap>'], [UP_CAPABILITY_LIST]), 'missing-change', []);
  });

  it('changes not in forward chronological order, by datetime (not by lastmod, which need not be the change time, §7)', async () => {
    const xml = urlset(CL, [
      url('http://example.com/a', '<rs:md change="created" datetime="2013-01-03T11:00:00Z"/>'),
      url('http://example.com/b', '<lastmod>2000-01-01T00:00:00Z</lastmod><rs:md change="updated" datetime="2013-01-03T12:00:00Z"/>'),
      url('http://example.com/c', '<rs:md change="updated"/>'),
      url('http://example.com/d', '<rs:md change="deleted" datetime="2013-01-03T10:00:00Z"/>'),
      url('http://example.com/e', '<lastmod>2013-01-03T11:30:00Z</lastmod><rs:md change="updated"/>'),
      url('http://example.com/f', '<lastmod>2013-01-03T13:00:00Z</lastmod><rs:md change="updated"/>'),
    ], [UP_CAPABILITY_LIST]);
    // e's lastmod is earlier than b's datetime, but an undated change is placed by its position: no finding.
    // A MUST in a Change List (§12.1), a Change List Index (§12.2) and a change notification (CN §3): errors.
    await expectFindings(xml, 'change-order', [['error', lineOf(xml, '/d<')]]);
    expect((await findings(xml)).find((f) => f.code === 'change-order')?.message).toBe(
      'Entry (2013-01-03T10:00:00Z) is earlier than an entry before it: the entries of a Change List must be in forward chronological order, oldest first (§12.1)',
    );
    const index = sitemapindex(CL, ['<sitemap><loc>http://example.com/2.xml</loc><rs:md from="2013-01-05T00:00:00Z"/></sitemap>', '<sitemap><loc>http://example.com/1.xml</loc><rs:md from="2013-01-04T00:00:00Z" until="2013-01-05T00:00:00Z"/></sitemap>'], [UP_CAPABILITY_LIST]);
    await expectFindings(index, 'change-order', [['error', 6]]);
    const notification = urlset('<rs:md capability="change-notification" from="2013-01-03T00:00:00Z" until="2013-01-04T00:00:00Z"/>', [url('http://example.com/b', '<rs:md change="updated" datetime="2013-01-03T02:00:00Z"/>'), url('http://example.com/a', '<rs:md change="updated" datetime="2013-01-03T01:00:00Z"/>')]);
    await expectFindings(notification, 'change-order', [['error', 5]]);
    // A SHOULD in a Change Dump (§13.1) and a Change Dump Manifest (§13.2): warnings.
    const dump = urlset('<rs:md capability="changedump" from="2013-01-01T00:00:00Z"/>', [url('http://example.com/2.zip', '<rs:md from="2013-01-02T00:00:00Z"/>'), url('http://example.com/1.zip', '<rs:md from="2013-01-01T00:00:00Z"/>')], [UP_CAPABILITY_LIST]);
    await expectFindings(dump, 'change-order', [['warning', 6]]);
    const manifest = urlset('<rs:md capability="changedump-manifest" from="2013-01-01T00:00:00Z"/>', [url('http://example.com/b', '<rs:md change="deleted" datetime="2013-01-02T00:00:00Z"/>'), url('http://example.com/a', '<rs:md change="deleted" datetime="2013-01-01T00:00:00Z"/>')], [UP_CAPABILITY_LIST]);
    await expectFindings(manifest, 'change-order', [['warning', 6]]);
  });

  it('datetime outside [from, until]', async () => {
    const xml = urlset('<rs:md capability="changelist" from="2013-01-03T00:00:00Z" until="2013-01-04T00:00:00Z"/>', [
      url('http://example.com/a', '<rs:md change="created" datetime="2013-01-02T23:59:59Z"/>'),
      url('http://example.com/b', '<rs:md change="created" datetime="2013-01-03T00:00:00Z"/>'),
      url('http://example.com/c', '<rs:md change="created" datetime="2013-01-04T00:00:00Z"/>'),
      url('http://example.com/d', '<rs:md change="created" datetime="2013-01-04T00:00:01Z"/>'),
    ], [UP_CAPABILITY_LIST]);
    await expectFindings(xml, 'datetime-out-of-range', [['error', lineOf(xml, '/a<')], ['error', lineOf(xml, '/d<')]]);
  });

  it('manifest path: missing (except deletions in a Change Dump Manifest) or not starting with /', async () => {
    const rdm = urlset('<rs:md capability="resourcedump-manifest" at="2013-01-03T00:00:00Z"/>', [url('http://example.com/a', `<rs:md hash="${MD5}"/>`), url('http://example.com/b'), url('http://example.com/c', '<rs:md path="resources/c"/>')], [UP_CAPABILITY_LIST]);
    await expectFindings(rdm, 'missing-path', [['error', 5], ['error', 6]]);
    await expectFindings(rdm, 'invalid-path', [['warning', 7]]);
    const cdm = urlset('<rs:md capability="changedump-manifest" from="2013-01-03T00:00:00Z"/>', [url('http://example.com/a', '<rs:md change="deleted"/>'), url('http://example.com/b', '<rs:md change="updated"/>')], [UP_CAPABILITY_LIST]);
    await expectFindings(cdm, 'missing-path', [['error', 6]]);
    const rl = urlset(RL, [url('http://example.com/a', '<rs:md path="/a"/>')], [UP_CAPABILITY_LIST]);
    await expectFindings(rl, 'attribute-not-applicable', [['warning', 5]]);
  });

  it('entry time attributes where Appendix A gives none, and inverted entry intervals', async () => {
    const rl = urlset(RL, [url('http://example.com/a', '<rs:md at="2013-01-03T00:00:00Z"/>')], [UP_CAPABILITY_LIST]);
    await expectFindings(rl, 'attribute-not-applicable', [['warning', 5]]);
    const rd = urlset('<rs:md capability="resourcedump" at="2013-01-03T00:00:00Z"/>', [url('http://example.com/p.zip', '<rs:md at="2013-01-03T00:00:00Z" completed="2013-01-02T00:00:00Z"/>'), url('http://example.com/q.zip', '<rs:md from="2013-01-03T00:00:00Z"/>')], [UP_CAPABILITY_LIST]);
    await expectFindings(rd, 'completed-before-at', [['warning', 5]]);
    await expectFindings(rd, 'attribute-not-applicable', [['warning', 6]]);
    const cd = urlset('<rs:md capability="changedump" from="2013-01-01T00:00:00Z"/>', [url('http://example.com/p.zip', '<rs:md from="2013-01-03T00:00:00Z" until="2013-01-02T00:00:00Z"/>')], [UP_CAPABILITY_LIST]);
    await expectFindings(cd, 'until-before-from', [['warning', 5]]);
  });

  it('Source Description: lists Capability Lists only, without lastmod', async () => {
    const xml = urlset('<rs:md capability="description"/>', [
      url('http://example.com/cl.xml', '<rs:md capability="capabilitylist"/>'),
      url('http://example.com/rl.xml', '<rs:md capability="resourcelist"/>'),
      url('http://example.com/x.xml', '<rs:md type="application/xml"/>'),
      url('http://example.com/cl2.xml', '<lastmod>2013-01-01</lastmod>'),
    ]);
    await expectFindings(xml, 'description-entry', [['error', 5], ['error', 6]]);
    await expectFindings(xml, 'lastmod-not-expected', [['warning', 7]]);
  });

  it('Capability List: capability mandatory, once per capability, no description, no lastmod, hub link', async () => {
    const xml = urlset('<rs:md capability="capabilitylist"/>', [
      url('http://example.com/rl.xml', '<rs:md capability="resourcelist"/>'),
      url('http://example.com/rl2.xml', '<rs:md capability="resourcelist"/>'),
      url('http://example.com/x.xml'),
      url('http://example.com/d.xml', '<rs:md capability="description"/>'),
      url('http://example.com/cd.xml', '<lastmod>2013-01-01</lastmod><rs:md capability="changedump"/>'),
      url('http://example.com/cn/', '<rs:md capability="change-notification"/>'),
      url('http://example.com/rla.xml', '<rs:md capability="resourcelist-archive"/>'),
    ], [UP_SOURCE_DESCRIPTION]);
    await expectFindings(xml, 'duplicate-capability', [['error', 6]]);
    await expectFindings(xml, 'missing-entry-capability', [['error', 7]]);
    await expectFindings(xml, 'capabilitylist-entry', [['warning', 8]]);
    await expectFindings(xml, 'lastmod-not-expected', [['warning', 9]]);
    await expectFindings(xml, 'missing-hub-link', [['error', 10]]);
    expect((await findings(xml)).filter((f) => f.line === 11)).toEqual([]);
  });

  it('describedby: recommended in a Source Description and a Capability List, not in their indexes (§8, §9)', async () => {
    const about = '<rs:ln rel="describedby" href="http://example.com/about"/>';
    await expectFindings(urlset('<rs:md capability="description"/>'), 'missing-describedby', [['warning', 3]]);
    await expectFindings(urlset('<rs:md capability="capabilitylist"/>', [], [UP_SOURCE_DESCRIPTION]), 'missing-describedby', [['warning', 4]]);
    expect((await findings(urlset('<rs:md capability="description"/>')))[0].message).toBe(
      'No <rs:ln rel="describedby"> to a document about the Source: a Source Description should have one (§8)',
    );
    await expectFindings(urlset('<rs:md capability="description"/>', [], [about]), 'missing-describedby', []);
    await expectFindings(urlset('<rs:md capability="capabilitylist"/>', [], [UP_SOURCE_DESCRIPTION, about]), 'missing-describedby', []);
    await expectFindings(sitemapindex('<rs:md capability="description"/>'), 'missing-describedby', []);
    await expectFindings(urlset(RL, [], [UP_CAPABILITY_LIST]), 'missing-describedby', []);
  });

  it('from on the entries of a Change List Index, a Change Dump and a Change Dump Index is recommended (Appendix A)', async () => {
    const index = sitemapindex(CL, ['<sitemap><loc>http://example.com/c1.xml</loc></sitemap>', '<sitemap><loc>http://example.com/c2.xml</loc><rs:md until="2013-01-02T00:00:00Z"/></sitemap>', '<sitemap><loc>http://example.com/c3.xml</loc><rs:md from="2013-01-02T00:00:00Z"/></sitemap>'], [UP_CAPABILITY_LIST]);
    await expectFindings(index, 'missing-entry-from', [['warning', 5], ['warning', 6]]);
    const CD = '<rs:md capability="changedump" from="2013-01-01T00:00:00Z"/>';
    await expectFindings(urlset(CD, [url('http://example.com/p.zip', '<rs:md type="application/zip"/>')], [UP_CAPABILITY_LIST]), 'missing-entry-from', [['warning', 5]]);
    await expectFindings(sitemapindex(CD, ['<sitemap><loc>http://example.com/cd1.xml</loc></sitemap>'], [UP_CAPABILITY_LIST]), 'missing-entry-from', [['warning', 5]]);
    // Not asked of Change Lists, Resource Dumps, manifests (Appendix A).
    await expectFindings(urlset(CL, [url('http://example.com/a', '<rs:md change="created"/>')], [UP_CAPABILITY_LIST]), 'missing-entry-from', []);
    await expectFindings(urlset('<rs:md capability="resourcedump" at="2013-01-01T00:00:00Z"/>', [url('http://example.com/p.zip')], [UP_CAPABILITY_LIST]), 'missing-entry-from', []);
  });

  it('dump packages: type and length recommended, ZIP the spec\'s format, one format per dump (§11.1, §13.1)', async () => {
    const RD = '<rs:md capability="resourcedump" at="2013-01-03T00:00:00Z"/>';
    const rd = urlset(RD, [
      url('http://example.com/1.zip', '<rs:md type="application/zip" length="10"/>'),
      url('http://example.com/2.zip', '<rs:md type="application/zip"/>'),
      url('http://example.com/3.zip'),
      url('http://example.com/4.tar', '<rs:md type="application/x-tar" length="10"/>'),
    ], [UP_CAPABILITY_LIST]);
    await expectFindings(rd, 'package-md', [['warning', lineOf(rd, '2.zip')], ['warning', lineOf(rd, '3.zip')], ['warning', lineOf(rd, '4.tar')]]);
    const messages = (await findings(rd)).filter((f) => f.code === 'package-md').map((f) => f.message);
    expect(messages).toEqual([
      'Package entry without rs:md "length": a Resource Dump should give each package\'s media type and length (§11.1)',
      'Package entry without rs:md "type" and "length": a Resource Dump should give each package\'s media type and length (§11.1)',
      `Package of type "application/x-tar", the one on line ${lineOf(rd, '1.zip')} is "application/zip": a Resource Dump should point to packages of one format only (§11.1)`,
    ]);
    const cd = urlset('<rs:md capability="changedump" from="2013-01-01T00:00:00Z"/>', [url('http://example.com/1.tgz', '<rs:md type="application/gzip" length="1" from="2013-01-01T00:00:00Z"/>')], [UP_CAPABILITY_LIST]);
    await expectFindings(cd, 'package-md', [['warning', 5]]);
    expect((await findings(cd))[0].message).toBe('Package of type "application/gzip": the spec\'s package format is ZIP, "application/zip" (§13.1)');
    // Manifests and lists are not asked this.
    await expectFindings(urlset(RL, [url('http://example.com/a')], [UP_CAPABILITY_LIST]), 'package-md', []);
  });

  it('patch links need a type, and a path in a Change Dump Manifest (§14.4)', async () => {
    const PATCH = 'http://www.openarchives.org/rs/terms/patch';
    const cl = urlset(CL, [url('http://example.com/a.json', '<rs:md change="updated"/>', `<rs:ln rel="${PATCH}" href="http://example.com/a.patch" type="application/json-patch"/>`), url('http://example.com/b.json', '<rs:md change="updated"/>', `<rs:ln rel="${PATCH}" href="http://example.com/b.patch"/>`)], [UP_CAPABILITY_LIST]);
    await expectFindings(cl, 'patch-link', [['error', lineOf(cl, 'b.patch')]]);
    const cdm = urlset('<rs:md capability="changedump-manifest" from="2013-01-01T00:00:00Z"/>', [url('http://example.com/a.json', '<rs:md change="updated" path="/a.json"/>', `<rs:ln rel="${PATCH}" href="http://example.com/a.patch" type="application/json-patch"/>`), url('http://example.com/b.json', '<rs:md change="updated" path="/b.json"/>', `<rs:ln rel="${PATCH}" href="http://example.com/b.patch" type="application/json-patch" path="/b.patch"/>`)], [UP_CAPABILITY_LIST]);
    await expectFindings(cdm, 'patch-link', [['error', lineOf(cdm, 'a.patch')]]);
    expect((await findings(cdm)).find((f) => f.code === 'patch-link')?.message).toMatch(/must have a "path".*§14\.4/);
  });

  it('index entries declaring another capability than the index', async () => {
    const xml = sitemapindex(RL, ['<sitemap><loc>http://example.com/a.xml</loc><rs:md capability="resourcelist"/></sitemap>', '<sitemap><loc>http://example.com/b.xml</loc><rs:md capability="changelist"/></sitemap>'], [UP_CAPABILITY_LIST]);
    await expectFindings(xml, 'index-entry-capability', [['warning', 6]]);
  });

  it('a repeated rs:md or loc in one entry', async () => {
    const xml = urlset(RL, ['<url><loc>http://example.com/a</loc>', '<loc>http://example.com/b</loc>', '<rs:md length="1"/>', '<rs:md length="2"/></url>'], [UP_CAPABILITY_LIST]);
    const { summary, entries } = await read(xml);
    expect(entries[0].md).toEqual({ length: '1' });
    expect(summary.findings.map((f) => [f.code, f.severity, f.line])).toEqual([
      ['duplicate-element', 'warning', 6],
      ['duplicate-md', 'warning', 8],
    ]);
  });

  it('keeps at most LIMITS.maxLinks rs:ln per element and says so once per element, with how many were ignored', async () => {
    const links = (n: number) => Array.from({ length: n }, (_, i) => `<rs:ln rel="duplicate" href="http://m${i}.example.com/a"/>`).join('');
    const xml = urlset(RL, [url('http://example.com/a', links(LIMITS.maxLinks + 2)), url('http://example.com/b', links(LIMITS.maxLinks + 100_000))], [UP_CAPABILITY_LIST]);
    const { summary, entries } = await read(xml);
    expect(entries[0].links).toHaveLength(LIMITS.maxLinks);
    expect(entries[1].links).toHaveLength(LIMITS.maxLinks);
    expect(summary.findings.map((f) => [f.code, f.line, f.message])).toEqual([
      ['too-many-links', 5, 'More than 1,000 <rs:ln> in one element; the 2 more were ignored'],
      ['too-many-links', 6, 'More than 1,000 <rs:ln> in one element; the 100,000 more were ignored'],
    ]);
  });

  it('caps the findings per code and says how many were left out', async () => {
    async function* list(): AsyncGenerator<string> {
      yield `<urlset ${NS}>\n${UP_CAPABILITY_LIST}\n${RL}\n`;
      for (let i = 0; i < 5000; i++) yield `${url(`relative/${i}`)}\n`;
      yield '</urlset>';
    }
    const summary = await readDocument(list(), { url: 'u' });
    const relative = summary.findings.filter((f) => f.code === 'relative-loc');
    expect(relative).toHaveLength(MAX_FINDINGS_PER_CODE + 1);
    expect(relative[MAX_FINDINGS_PER_CODE].message).toMatch(/4900 more .* \(5000 in all\)/);
  });
});

describe('checkIndexChild', () => {
  const index: DocumentSummary = {
    url: 'http://example.com/dataset1/resourcelist-index.xml',
    root: 'sitemapindex',
    capability: 'resourcelist',
    isIndex: true,
    md: { capability: 'resourcelist', at: '2013-01-03T09:00:00Z' },
    links: [{ rel: 'up', href: 'capabilitylist.xml' }],
    entries: 2,
    findings: [],
  };
  const child: DocumentSummary = {
    url: 'http://example.com/dataset1/resourcelist1.xml',
    root: 'urlset',
    capability: 'resourcelist',
    isIndex: false,
    md: { capability: 'resourcelist', at: '2013-01-03T09:00:00Z' },
    links: [
      { rel: 'up', href: 'http://example.com/dataset1/capabilitylist.xml' },
      { rel: 'index', href: 'resourcelist-index.xml' },
    ],
    entries: 10,
    findings: [],
  };

  it('accepts a child of the same capability that links back (relative links resolved)', () => {
    expect(checkIndexChild(index, child)).toEqual([]);
  });

  it('a child of another capability, or itself an index, is an error', () => {
    expect(checkIndexChild(index, { ...child, capability: 'changelist' })).toEqual([expect.objectContaining({ code: 'index-child-capability', severity: 'error' })]);
    expect(checkIndexChild(index, { ...child, root: 'sitemapindex', isIndex: true })).toEqual([expect.objectContaining({ code: 'nested-index', severity: 'error' })]);
  });

  it('a missing or wrong index link, a different up link, are warnings', () => {
    const noIndexLink = { ...child, links: [child.links[0]] };
    expect(checkIndexChild(index, noIndexLink)).toEqual([expect.objectContaining({ code: 'missing-index-link', severity: 'warning' })]);
    const wrongIndex = { ...child, links: [child.links[0], { rel: 'index', href: 'http://example.com/other-index.xml' }] };
    expect(checkIndexChild(index, wrongIndex)).toEqual([expect.objectContaining({ code: 'index-link-mismatch', severity: 'warning' })]);
    const otherUp = { ...child, links: [{ rel: 'up', href: 'http://example.com/dataset2/capabilitylist.xml' }, child.links[1]] };
    expect(checkIndexChild(index, otherUp)).toEqual([expect.objectContaining({ code: 'up-link-mismatch', severity: 'warning' })]);
  });

  it('the index link is only recommended where the spec recommends it', () => {
    const sdIndex = { ...index, capability: 'description' as const, links: [] };
    const sd = { ...child, capability: 'description' as const, links: [] };
    expect(checkIndexChild(sdIndex, sd)).toEqual([]);
  });

  it('works on summaries read from documents', async () => {
    const indexXml = sitemapindex(RL, ['<sitemap><loc>http://example.com/rl1.xml</loc></sitemap>'], [UP_CAPABILITY_LIST]);
    const childXml = urlset(RL, [url('http://example.com/a')], [UP_CAPABILITY_LIST]);
    const indexSummary = await readDocument((async function* () { yield indexXml; })(), { url: 'http://example.com/rli.xml' });
    const childSummary = await readDocument((async function* () { yield childXml; })(), { url: 'http://example.com/rl1.xml' });
    expect(checkIndexChild(indexSummary, childSummary).map((f) => f.code)).toEqual(['missing-index-link']);
  });
});
