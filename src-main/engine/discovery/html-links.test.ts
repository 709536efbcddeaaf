import { describe, expect, it } from 'vitest';
import { findHtmlLinks } from './html-links.ts';

async function* chunks(text: string, size = 7): AsyncGenerator<Uint8Array> {
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

describe('findHtmlLinks', () => {
  it('finds resourcesync links in the head, resolved against <base>, in order, without duplicates', async () => {
    const html =
      '<!DOCTYPE html><HTML><Head><title>x</title>' +
      '<link rel="stylesheet" href="/s.css">' +
      '<LINK REL="alternate ResourceSync" HREF="cl1.xml?a=1&amp;b=2">' +
      '<base href="http://127.0.0.1:9/base/">' +
      '<link rel=resourcesync href="/cl2.xml"><link rel="resourcesync" href="/cl2.xml"><link rel="resourcesync">' +
      '</head><body><link rel="resourcesync" href="/in-body.xml"></body></html>';
    const result = await findHtmlLinks(chunks(html), 'http://127.0.0.1:8/page/index.html', 'resourcesync');
    expect(result).toEqual({
      links: ['http://127.0.0.1:9/base/cl1.xml?a=1&b=2', 'http://127.0.0.1:9/cl2.xml'],
      truncated: false,
    });
  });

  it('stops reading at the end of the head', async () => {
    let pulled = 0;
    async function* endless(): AsyncGenerator<Uint8Array> {
      yield Buffer.from('<html><head><link rel="resourcesync" href="a.xml"></head><body>');
      for (;;) {
        pulled++;
        yield Buffer.from('<p>more</p>');
      }
    }
    const result = await findHtmlLinks(endless(), 'http://127.0.0.1/', 'resourcesync');
    expect(result.links).toEqual(['http://127.0.0.1/a.xml']);
    expect(pulled).toBeLessThanOrEqual(1);
  });

  it('gives up after maxBytes when the head never ends', async () => {
    const html = '<html><head>' + '<meta name="x" content="y">'.repeat(10_000) + '<link rel="resourcesync" href="late.xml">';
    const result = await findHtmlLinks(chunks(html, 4096), 'http://127.0.0.1/', 'resourcesync', { maxBytes: 50_000 });
    expect(result).toEqual({ links: [], truncated: true });
  });

  it('decodes the page in its charset', async () => {
    const bytes = Buffer.concat([Buffer.from('<head><link rel="resourcesync" href="caf'), Buffer.from([0xe9]), Buffer.from('.xml"></head>')]);
    async function* one(): AsyncGenerator<Uint8Array> {
      yield bytes;
    }
    const result = await findHtmlLinks(one(), 'http://127.0.0.1/', 'resourcesync', { charset: 'iso-8859-1' });
    expect(result.links).toEqual(['http://127.0.0.1/caf%C3%A9.xml']);
  });
});

describe('findHtmlLinks against a page that floods', () => {
  it('reads a head full of distinct resourcesync links (2 MB, about 60,000) in well under a second or two', async () => {
    let html = '<html><head>';
    for (let i = 0; html.length < 2 * 1024 * 1024 - 100; i++) html += `<link rel=resourcesync href=/a${i}>`;
    const started = Date.now();
    const result = await findHtmlLinks(chunks(html, 64 * 1024), 'http://127.0.0.1/', 'resourcesync');
    expect(result.links.length).toBeGreaterThan(50_000);
    expect(result.links[1]).toBe('http://127.0.0.1/a1');
    // Comparing each link with all before it took about 5 s.
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
