import { describe, expect, it } from 'vitest';
import { linksWithRel, parseLinkHeader } from './link-header.ts';

const base = 'http://127.0.0.1:8080/articles/one.html';

describe('parseLinkHeader', () => {
  it('parses the spec example (one link, quoted rel, line break inside)', () => {
    const links = parseLinkHeader('<http://www.example.com/dataset1/capabilitylist.xml>;\n      rel="resourcesync"', base);
    expect(links).toEqual([
      { href: 'http://www.example.com/dataset1/capabilitylist.xml', rels: ['resourcesync'], params: { rel: 'resourcesync' } },
    ]);
  });

  it('parses several links, several rel values, token values and relative targets', () => {
    const header =
      '</style.css>; rel=stylesheet, <../dataset1/capabilitylist.xml>; rel="alternate ResourceSync"; type="application/xml", ' +
      '<http://127.0.0.1:8080/b>; title="a, b; c"; rel=next';
    const links = parseLinkHeader(header, base);
    expect(links.map((l) => l.href)).toEqual([
      'http://127.0.0.1:8080/style.css',
      'http://127.0.0.1:8080/dataset1/capabilitylist.xml',
      'http://127.0.0.1:8080/b',
    ]);
    expect(links[1].rels).toEqual(['alternate', 'resourcesync']);
    expect(links[1].params.type).toBe('application/xml');
    expect(links[2].params.title).toBe('a, b; c');
    expect(links[2].rels).toEqual(['next']);
    expect(linksWithRel(links, 'resourcesync', base)).toEqual(['http://127.0.0.1:8080/dataset1/capabilitylist.xml']);
  });

  it('ignores a second rel parameter and keeps extension relation URIs as written', () => {
    const links = parseLinkHeader('<a>; rel="up"; rel="resourcesync", <p>; rel="http://www.openarchives.org/rs/terms/patch"', base);
    expect(links[0].rels).toEqual(['up']);
    expect(links[1].rels).toEqual(['http://www.openarchives.org/rs/terms/patch']);
  });

  it('handles escaped quotes and skips junk', () => {
    const links = parseLinkHeader('garbage, <x>; title="say \\"hi\\""; rel=resourcesync,, <y>', base);
    expect(links.map((l) => l.href)).toEqual(['http://127.0.0.1:8080/articles/x', 'http://127.0.0.1:8080/articles/y']);
    expect(links[0].params.title).toBe('say "hi"');
    expect(links[1].rels).toEqual([]);
  });

  it('skips links whose anchor names another resource', () => {
    const links = parseLinkHeader('<cl.xml>; rel=resourcesync; anchor="/other", <cl2.xml>; rel=resourcesync; anchor="#top"', base);
    expect(linksWithRel(links, 'resourcesync', base)).toEqual(['http://127.0.0.1:8080/articles/cl2.xml']);
    const self = parseLinkHeader('<cl.xml>; rel=resourcesync; anchor="one.html"', base);
    expect(linksWithRel(self, 'resourcesync', base)).toEqual(['http://127.0.0.1:8080/articles/cl.xml']);
  });
});
