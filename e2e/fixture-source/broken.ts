// Documents that are wrong on purpose, each in one way, for tests of the reader and of discovery.
import { PATHS } from './paths.ts';
import { BASE_TIME, iso } from './state.ts';
import { document } from './xml.ts';

export interface BrokenDocument {
  /** null: no Content-Type header at all. */
  contentType: string | null;
  body: string;
}

const B = PATHS.broken;

export function brokenDocuments(base: string, capabilityList: string): Record<string, BrokenDocument> {
  const up = { rel: 'up', href: base + PATHS.dataset1.capabilityList };
  const smallList = document('urlset', { capability: 'resourcelist', at: iso(BASE_TIME) }, [up], [
    { loc: `${base}/dataset1/res/1.json`, md: { length: 10, type: 'application/json' } },
  ]);
  const t = (s: number) => iso(BASE_TIME + s * 1000);
  return {
    [B.junkNamespace]: {
      contentType: 'application/xml',
      body:
        `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://example.org/junk" xmlns:rs="http://www.openarchives.org/rs/terms/">\n` +
        `  <rs:md capability="resourcelist" at="${iso(BASE_TIME)}"/>\n  <url><loc>${base}/a</loc></url>\n</urlset>\n`,
    },
    [B.doctype]: {
      contentType: 'application/xml',
      body:
        `<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE urlset [\n  <!ENTITY a "aaaaaaaaaa">\n  <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">\n]>\n` +
        `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">\n` +
        `  <rs:md capability="resourcelist" at="${iso(BASE_TIME)}"/>\n  <url><loc>${base}/&b;</loc></url>\n</urlset>\n`,
    },
    [B.truncated]: { contentType: 'application/xml', body: smallList.slice(0, Math.floor(smallList.length * 0.7)) },
    [B.htmlAsXml]: {
      contentType: 'application/xml',
      body: '<!DOCTYPE html>\n<html><head><title>Not a sitemap</title></head><body><p>Hello</p></body></html>\n',
    },
    [B.noContentType]: { contentType: null, body: smallList },
    // A good Capability List that claims to be HTML.
    [B.wrongContentType]: { contentType: 'text/html; charset=utf-8', body: capabilityList },
    [B.changeListOutOfOrder]: {
      contentType: 'application/xml',
      body: document('urlset', { capability: 'changelist', from: t(0) }, [up], [
        { loc: `${base}/dataset1/res/1.json`, md: { change: 'updated', datetime: t(30) } },
        { loc: `${base}/dataset1/res/2.html`, md: { change: 'updated', datetime: t(10) } },
        { loc: `${base}/dataset1/res/3.txt`, md: { change: 'deleted', datetime: t(20) } },
      ]),
    },
    [B.capabilityListWithoutUp]: {
      contentType: 'application/xml',
      body: document('urlset', { capability: 'capabilitylist' }, [], [
        { loc: base + PATHS.dataset1.resourceList, md: { capability: 'resourcelist' } },
      ]),
    },
    [B.orphanPart]: {
      contentType: 'application/xml',
      body: document(
        'urlset',
        { capability: 'resourcelist', at: iso(BASE_TIME) },
        [{ rel: 'index', href: base + PATHS.dataset2.resourceListIndex }],
        [{ loc: `${base}${PATHS.dataset2.resource(1)}`, md: { type: 'text/plain' } }],
      ),
    },
    [B.mixedIndex]: {
      contentType: 'application/xml',
      body: document('sitemapindex', { capability: 'resourcelist', at: iso(BASE_TIME) }, [up], [
        { loc: base + B.changeListOutOfOrder },
      ]),
    },
    [B.notXml]: { contentType: 'text/plain', body: 'This is not a ResourceSync document.\n' },
    [B.empty]: { contentType: 'application/xml', body: '' },
  };
}

