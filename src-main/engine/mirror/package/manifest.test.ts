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
