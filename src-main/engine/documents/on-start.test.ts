import { describe, expect, it } from 'vitest';
import type { DocumentHead } from './model.ts';
import { readDocument } from './reader.ts';

async function* chunks(text: string): AsyncGenerator<string> {
  for (let i = 0; i < text.length; i += 7) yield text.slice(i, i + 7);
}

const NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';

describe('readDocument onStart', () => {
  it('says what the document is once, before its first entry', async () => {
    const events: string[] = [];
    let head: DocumentHead | null = null;
    await readDocument(
      chunks(`<sitemapindex ${NS}><rs:md capability="changelist" from="2020-01-01T00:00:00Z"/><sitemap><loc>http://a/1</loc></sitemap><sitemap><loc>http://a/2</loc></sitemap></sitemapindex>`),
      {
        url: 'http://a/',
        onStart: (h) => {
          head = h;
          events.push('start');
        },
        onEntry: (e) => void events.push(e.loc),
      },
    );
    expect(events).toEqual(['start', 'http://a/1', 'http://a/2']);
    expect(head).toEqual({ root: 'sitemapindex', capability: 'changelist', isIndex: true, md: { capability: 'changelist', from: '2020-01-01T00:00:00Z' }, links: [] });
  });

  it("gives the root's links read before the first entry", async () => {
    let head: DocumentHead | null = null;
    await readDocument(
      chunks(
        `<urlset ${NS}><rs:ln rel="up" href="http://a/caps.xml"/><rs:md capability="resourcelist"/><rs:ln rel="index" href="http://a/index.xml"/>` +
          `<url><loc>http://a/1</loc></url></urlset>`,
      ),
      { url: 'http://a/', onStart: (h) => void (head = h) },
    );
    expect(head!.links.map((l) => [l.rel, l.href])).toEqual([
      ['up', 'http://a/caps.xml'],
      ['index', 'http://a/index.xml'],
    ]);
  });

  it('is not called for a document without entries', async () => {
    let called = false;
    await readDocument(chunks(`<urlset ${NS}><rs:md capability="capabilitylist"/></urlset>`), { url: 'http://a/', onStart: () => (called = true) });
    expect(called).toBe(false);
  });
});
