import { describe, expect, it } from 'vitest';
import { readManifest } from './manifest.ts';

const NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
async function* chunks(text: string) {
  yield new TextEncoder().encode(text);
}

describe('readManifest', () => {
  it('judges an undated change by the dated one after it, and a dated one by the end of the period it names', async () => {
    const xml =
      `<urlset ${NS}><rs:md capability="changedump-manifest" from="2020-01-01T00:00:00Z"/>` +
      `<url><loc>http://s/a</loc><rs:md change="deleted"/></url>` +
      `<url><loc>http://s/a</loc><rs:md change="created" datetime="2020-01-02" path="/a"/></url>` +
      `<url><loc>http://s/b</loc><rs:md change="updated" datetime="2020-01-03T10:00:00Z" path="/b"/></url>` +
      `<url><loc>http://s/c</loc><rs:md change="updated" path="/c"/></url></urlset>`;
    const { entries } = await readManifest(chunks(xml), { url: 'http://s/manifest.xml', maxBytes: 1 << 20 });
    expect(entries.map((e) => e.newAfterMs)).toEqual([
      Date.parse('2020-01-02T23:59:59.999Z'),
      Date.parse('2020-01-02T23:59:59.999Z'),
      Date.parse('2020-01-03T10:00:00.999Z'),
      undefined,
    ]);
  });
});

describe('packagesAfter', () => {
  it('keeps a package whose until, to the day, ends after the checkpoint', async () => {
    const { packagesAfter } = await import('../dump-incremental.ts');
    const pkg = (loc: string, until: string) => ({
      entry: { index: 0, line: 0, loc, md: { until }, links: [] },
      dumpUrl: 'http://s/cd.xml',
      untilMs: Date.parse(until.length === 10 ? `${until}T00:00:00Z` : until),
    });
    const listing = { kind: 'changedump' as const, md: {}, problems: [], notes: [], packages: [pkg('http://s/1.zip', '2020-01-02'), pkg('http://s/2.zip', '2020-01-03')] };
    const kept = packagesAfter(listing as never, { at: '2020-01-03T10:00:00Z', from: 'http://s/cl.xml' }, 'http://s/cd.xml');
    expect(kept.map((p) => p.entry.loc)).toEqual(['http://s/2.zip']);
  });
});
