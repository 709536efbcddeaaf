import { SaxesParser } from 'saxes';
import { describe, expect, it } from 'vitest';
import { LEAN_SAXES, createSaxesParser, type PlainSaxesParser } from './lean-saxes.ts';
import { refusal, url, urlset } from './test-support.ts';

const RL_MD = '<rs:md capability="resourcelist" at="2013-01-03T09:00:00Z"/>';

/** Everything a parser reports on `xml`, errors included (it goes on after them), written in `chunkSize` pieces. */
function events(sax: PlainSaxesParser, xml: string, chunkSize = xml.length || 1): string[] {
  const log: string[] = [];
  sax.on('opentagstart', (tag) => log.push(`<${tag.name}`));
  sax.on('attribute', (a) => log.push(`@${a.name}=${a.value}`));
  sax.on('opentag', (tag) => log.push(`>${tag.name}${tag.isSelfClosing ? '/' : ''}`));
  sax.on('closetag', (tag) => log.push(`</${tag.name}`));
  sax.on('text', (t) => log.push(`t:${t}`));
  sax.on('cdata', (t) => log.push(`c:${t}`));
  sax.on('comment', (t) => log.push(`!${t}`));
  sax.on('error', (err) => log.push(`E:${err.message}`));
  for (let i = 0; i < xml.length; i += chunkSize) sax.write(xml.slice(i, i + chunkSize));
  sax.close();
  return log;
}

function plain(xml: string, chunkSize?: number): string[] {
  return events(new SaxesParser({ xmlns: false, position: true }), xml, chunkSize);
}

function lean(xml: string, chunkSize?: number): string[] {
  return events(createSaxesParser(), xml, chunkSize);
}

/** A small deterministic generator, so that a failure can be replayed. */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

describe('lean saxes', () => {
  it('is in use with the installed saxes (if this fails, saxes changed: compare lean-saxes.ts with its new source)', () => {
    expect(LEAN_SAXES).toBe(true);
  });

  it('reports exactly what saxes reports, on well-formed and broken markup', () => {
    const documents = [
      '<a x="1" y=\'2\'><b/><c z="&amp;&#x41;"> t </c><![CDATA[ <d> ]]><!-- c --></a>',
      '<a x="1" x="2"/>',
      '<a x="1" y="2" x="3" y="4"/>',
      `<a ${Array.from({ length: 12 }, (_, i) => `p${i}="${i}"`).join(' ')} p3="again"/>`,
      `<a ${Array.from({ length: 12 }, (_, i) => `p${i}="${i}"`).join(' ')}/>`,
      '<a xmlns:x="u" x:y="1" y="2"/>',
      '<a/><b/>',
      '<a></a><b>junk</b>',
      '<a\u0001/>',
      '<a b></a>',
      '<a b=c></a>',
      '<a><b></a></b>',
      '<a><b>',
      '<a x="<"/>',
      '<a/ >',
      '<a\n  x="1"\n  y="2"\n/>',
    ];
    for (const xml of documents) {
      expect(lean(xml), xml).toEqual(plain(xml));
      expect(lean(xml, 3), xml).toEqual(plain(xml, 3));
    }
  });

  it('reports exactly what saxes reports on thousands of mangled documents', () => {
    const base = urlset(RL_MD, [url('http://example.com/a'), `<url><loc>b</loc><rs:md hash="md5:0" length="1" type="t"/></url>`]);
    const pieces = ['<', '>', '/', '"', "'", '=', ' ', '\n', 'a', 'x="1"', '<b>', '</b>', '&amp;', '&', ']]>', '<!--', '-->', '\u0000'];
    const next = random(42);
    for (let n = 0; n < 3000; n++) {
      let xml = base;
      for (let k = 0; k < 1 + Math.floor(next() * 3); k++) {
        const at = Math.floor(next() * xml.length);
        const cut = Math.floor(next() * 4);
        xml = xml.slice(0, at) + pieces[Math.floor(next() * pieces.length)] + xml.slice(at + cut);
      }
      expect(lean(xml), xml).toEqual(plain(xml));
    }
  });

  it('leaves the reader refusing duplicate attributes and a second root as malformed', async () => {
    const duplicate = urlset(RL_MD, ['<url><loc>http://example.com/a</loc><rs:md length="1" length="2"/></url>']);
    expect((await refusal(duplicate)).code).toBe('malformed');
    expect((await refusal(`${urlset(RL_MD, [url('http://example.com/a')])}<urlset/>`)).code).toBe('malformed');
  });
});
