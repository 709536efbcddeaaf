// Namespaces go by URI, never by prefix; what the reader skips because of a namespace it says; attribute values
// are bounded like element values; messages quote a bounded slice of what they complain about.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { Http } from '../http/client.ts';
import { loadDocument } from '../load.ts';
import { LIMITS } from './parser.ts';
import { codes, read, refusal, url, urlset, UP_CAPABILITY_LIST } from './test-support.ts';

const RS = 'http://www.openarchives.org/rs/terms/';
const SM = 'http://www.sitemaps.org/schemas/sitemap/0.9';
const MD = '<rs:md capability="resourcelist" at="2013-01-03T09:00:00Z"/>';

/** A Resource List whose rs namespace is bound to `x:` and whose `rs:` prefix means something else entirely. */
const SWAPPED = [
  '<?xml version="1.0" encoding="UTF-8"?>',
  `<urlset xmlns="${SM}" xmlns:x="${RS}" xmlns:rs="http://example.org/not-resourcesync/">`,
  '<x:ln rel="up" href="http://example.com/dataset1/capabilitylist.xml"/>',
  '<x:md capability="resourcelist" at="2013-01-03T09:00:00Z"/>',
  '<rs:note>an extension element that happens to use the rs prefix</rs:note>',
  '<url><loc>http://example.com/res1</loc><x:md hash="md5:1584abdf8ebdc9802ac0c6a7402c03b6" length="8876"/><rs:md foo="bar"/></url>',
  '<url><loc>http://example.com/res2</loc><rs:tag deep="yes"><rs:deeper/></rs:tag></url>',
  '</urlset>',
].join('\n');

describe('namespaces by URI, not by prefix', () => {
  it('reads a document that binds x: to the rs namespace and rs: to another one', async () => {
    const { summary, entries } = await read(SWAPPED);
    expect(summary.capability).toBe('resourcelist');
    expect(summary.md.at).toBe('2013-01-03T09:00:00Z');
    expect(summary.links).toEqual([{ rel: 'up', href: 'http://example.com/dataset1/capabilitylist.xml' }]);
    expect(entries.map((e) => e.loc)).toEqual(['http://example.com/res1', 'http://example.com/res2']);
    expect(entries[0]!.md).toEqual({ hash: 'md5:1584abdf8ebdc9802ac0c6a7402c03b6', length: '8876' });
    // The foreign rs:md inside the entry is not ResourceSync's: ignored, and said so.
    expect(codes(summary.findings)).toEqual(['foreign-element']);
    expect(summary.findings[0]!.message).toBe(
      `<rs:md> is in the namespace "http://example.org/not-resourcesync/", not ResourceSync's "${RS}": ignored`,
    );
    expect(summary.findings[0]!.line).toBe(6);
  });

  it('the default namespace may be the rs one on an element (prefix-free ResourceSync elements)', async () => {
    const doc = urlset(`<md xmlns="${RS}" capability="resourcelist" at="2013-01-03T09:00:00Z"/>`, [url('http://example.com/a')], [UP_CAPABILITY_LIST]);
    const { summary, entries } = await read(doc);
    expect(summary.capability).toBe('resourcelist');
    expect(entries).toHaveLength(1);
    expect(summary.findings).toEqual([]);
  });

  it('still refuses a retyped rs namespace, naming the namespace found and the one expected', async () => {
    const junk = SWAPPED.replace(`xmlns:x="${RS}"`, 'xmlns:x="http://www.openarchives.org/rs/terms"');
    const err = await refusal(junk);
    expect(err.code).toBe('wrong-namespace');
    expect(err.message).toBe(
      'http://127.0.0.1/test.xml: <x:md> is in the namespace "http://www.openarchives.org/rs/terms", ' +
        `expected "${RS}"; the document has no ResourceSync <md>`,
    );
    expect(err.line).toBe(4);
  });

  it('reads the swapped-prefix document over HTTP from 127.0.0.1', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(SWAPPED);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const http = new Http({ timeoutMs: 5_000 });
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const loaded = await loadDocument(http, `${base}/swapped.xml`);
      expect(loaded.summary.capability).toBe('resourcelist');
      expect(loaded.summary.entries).toBe(2);
    } finally {
      await http.close();
      server.close();
    }
  });
});

describe('what a namespace makes the reader skip is a finding', () => {
  it('a <url> in a foreign default namespace is not dropped without a word', async () => {
    const doc = urlset(MD, [url('http://example.com/a'), '<url xmlns="http://example.org/other"><loc>http://example.com/b</loc></url>'], [UP_CAPABILITY_LIST]);
    const { summary, entries } = await read(doc);
    expect(entries.map((e) => e.loc)).toEqual(['http://example.com/a']);
    expect(codes(summary.findings)).toEqual(['foreign-entry']);
    expect(summary.findings[0]).toMatchObject({
      severity: 'warning',
      line: 6,
      message: `<url> is in the namespace "http://example.org/other", not the sitemap namespace "${SM}": it is not an entry and was skipped`,
    });
  });

  it('a <sitemap> with no namespace at all in a sitemap index', async () => {
    const doc = [
      '<?xml version="1.0"?>',
      `<sitemapindex xmlns="${SM}" xmlns:rs="${RS}">`,
      '<rs:md capability="resourcelist" at="2013-01-03T09:00:00Z"/>',
      '<sitemap xmlns=""><loc>http://example.com/part1.xml</loc></sitemap>',
      '</sitemapindex>',
    ].join('\n');
    const { summary } = await read(doc);
    expect(summary.findings.find((f) => f.code === 'foreign-entry')?.message).toMatch(/^<sitemap> is in the namespace \(none\)/);
  });

  it('a <loc> in a foreign namespace inside an entry is reported, not silently left empty', async () => {
    const doc = urlset(MD, ['<url><loc xmlns="http://example.org/other">http://example.com/a</loc></url>'], [UP_CAPABILITY_LIST]);
    const { summary } = await read(doc);
    expect(codes(summary.findings)).toContain('foreign-element');
    expect(summary.findings.find((f) => f.code === 'foreign-element')?.line).toBe(5);
  });
});

describe('attribute values are bounded like element values', () => {
  it('a 1 MiB "at" is refused, and the message does not echo it', async () => {
    const huge = `2013-01-03T09:00:00Z${'9'.repeat(1 << 20)}`;
    const err = await refusal(urlset(`<rs:md capability="resourcelist" at="${huge}"/>`), { chunkSize: 64 * 1024 });
    expect(err.code).toBe('token-too-large');
    expect(err.message).toBe(`http://127.0.0.1/test.xml: the value of attribute "at" is longer than 65,536 characters (line 3)`);
  });

  it('an attribute value just under the cap is read, and findings quote a bounded slice of it', async () => {
    const long = `x${'9'.repeat(LIMITS.maxValueChars - 2)}`;
    const { summary } = await read(urlset(`<rs:md capability="resourcelist" at="${long}"/>`, [], [UP_CAPABILITY_LIST]));
    expect(summary.md.at).toBe(long);
    const finding = summary.findings.find((f) => f.code === 'invalid-datetime');
    expect(finding).toBeDefined();
    expect(finding!.message.length).toBeLessThan(250);
  });

  it('a huge unknown element name is quoted in a bounded slice', async () => {
    const name = `rs:${'n'.repeat(500_000)}`;
    const { summary } = await read(urlset(MD, [`<${name}/>`], [UP_CAPABILITY_LIST]), { chunkSize: 64 * 1024 });
    const finding = summary.findings.find((f) => f.code === 'unknown-element');
    expect(finding!.message.length).toBeLessThan(250);
  });
});
