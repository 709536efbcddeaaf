// A small Source under /broken-source/ that is wrong across documents, each document in one way, for the check of
// a whole Source: a Capability List the Source Description does not know, a document listed as something it is
// not, an `up` link that leads elsewhere, an index with a part of another capability, a refused part and a part
// that cannot be fetched in the middle, and an index that lists itself (a loop).
import type { BrokenDocument } from './broken.ts';
import { BASE_TIME, iso } from './state.ts';
import { document } from './xml.ts';

const DIR = '/broken-source';

export const BROKEN_SOURCE = {
  sourceDescription: `${DIR}/description.xml`,
  capabilityList: `${DIR}/capabilitylist.xml`,
  /** Listed in the Source Description, never served (404). */
  missingCapabilityList: `${DIR}/missing-capabilitylist.xml`,
  /** A Resource List that the Source Description lists as a Capability List. */
  notACapabilityList: `${DIR}/not-a-capabilitylist.xml`,
  /** Listed by the Capability List as a Capability List: no Source Description lists it. */
  nestedCapabilityList: `${DIR}/nested-capabilitylist.xml`,
  resourceListIndex: `${DIR}/resourcelist-index.xml`,
  resourceListPart: (n: number) => `${DIR}/resourcelist-${n}.xml`,
  /** A Change List listed as a part of the Resource List Index. */
  changeListPart: `${DIR}/changelist-part.xml`,
  /** An index part that is an HTML page. */
  refusedPart: `${DIR}/refused-part.xml`,
  /** A Change List whose `up` link points to a document that is not its Capability List. */
  changeList: `${DIR}/changelist.xml`,
  elsewhere: `${DIR}/elsewhere.xml`,
  resourceDump: `${DIR}/resourcedump.xml`,
  /** Listed in the Resource Dump, never served: a check must not fetch packages. */
  resourceDumpPackage: `${DIR}/resourcedump/part1.zip`,
  resourceDumpManifest: `${DIR}/resourcedump/part1-manifest.xml`,
  /** A notification channel: a check must not fetch it. */
  notifications: `${DIR}/notifications`,
} as const;

const XML = 'application/xml';

export function brokenSourceDocuments(base: string): Record<string, BrokenDocument> {
  const P = BROKEN_SOURCE;
  const url = (path: string) => base + path;
  const at = iso(BASE_TIME);
  const up = { rel: 'up', href: url(P.capabilityList) };
  const toIndex = { rel: 'index', href: url(P.resourceListIndex) };
  const xml = (body: string): BrokenDocument => ({ contentType: XML, body });
  const part = (n: number) =>
    xml(document('urlset', { capability: 'resourcelist', at }, [up, toIndex], [{ loc: url(`${DIR}/res/${n}.txt`), md: { length: 5 } }]));
  return {
    [P.sourceDescription]: xml(
      document('urlset', { capability: 'description' }, [], [
        { loc: url(P.capabilityList), md: { capability: 'capabilitylist' } },
        { loc: url(P.missingCapabilityList), md: { capability: 'capabilitylist' } },
        { loc: url(P.notACapabilityList), md: { capability: 'capabilitylist' } },
      ]),
    ),
    [P.capabilityList]: xml(
      document('urlset', { capability: 'capabilitylist' }, [{ rel: 'up', href: url(P.sourceDescription) }], [
        { loc: url(P.resourceListIndex), md: { capability: 'resourcelist' } },
        { loc: url(P.resourceDump), md: { capability: 'resourcedump' } },
        { loc: url(P.changeList), md: { capability: 'changelist' } },
        { loc: url(P.nestedCapabilityList), md: { capability: 'capabilitylist' } },
        { loc: url(P.notifications), md: { capability: 'change-notification' }, links: [{ rel: 'hub', href: url(`${DIR}/hub`) }] },
      ]),
    ),
    [P.notACapabilityList]: xml(
      document('urlset', { capability: 'resourcelist', at }, [{ rel: 'up', href: url(P.sourceDescription) }], [
        { loc: url(`${DIR}/res/9.txt`) },
      ]),
    ),
    [P.nestedCapabilityList]: xml(document('urlset', { capability: 'capabilitylist' }, [{ rel: 'up', href: url(P.sourceDescription) }], [])),
    [P.resourceListIndex]: xml(
      document('sitemapindex', { capability: 'resourcelist', at }, [up], [
        { loc: url(P.resourceListPart(1)) },
        { loc: url(P.changeListPart) },
        { loc: url(P.refusedPart) },
        { loc: url(P.resourceListPart(2)) },
        { loc: url(P.resourceListPart(3)) },
        { loc: url(P.resourceListIndex) },
      ]),
    ),
    [P.resourceListPart(1)]: part(1),
    [P.resourceListPart(2)]: part(2),
    // Part 3 is listed but not served (404).
    [P.changeListPart]: xml(
      document('urlset', { capability: 'changelist', from: at }, [up, toIndex], [
        { loc: url(`${DIR}/res/1.txt`), md: { change: 'updated', datetime: iso(BASE_TIME + 1000) } },
      ]),
    ),
    [P.refusedPart]: { contentType: XML, body: '<!DOCTYPE html>\n<html><head><title>Oops</title></head><body>Not here</body></html>\n' },
    [P.changeList]: xml(
      document('urlset', { capability: 'changelist', from: at }, [{ rel: 'up', href: url(P.elsewhere) }], [
        { loc: url(`${DIR}/res/2.txt`), md: { change: 'created', datetime: iso(BASE_TIME + 2000) } },
      ]),
    ),
    [P.resourceDump]: xml(
      document('urlset', { capability: 'resourcedump', at }, [up], [
        {
          loc: url(P.resourceDumpPackage),
          md: { type: 'application/zip', length: 100, at },
          links: [{ rel: 'contents', href: url(P.resourceDumpManifest), type: XML }],
        },
      ]),
    ),
    [P.resourceDumpManifest]: xml(
      document('urlset', { capability: 'resourcedump-manifest', at }, [up], [
        { loc: url(`${DIR}/res/1.txt`), md: { path: '/res/1.txt', length: 5 } },
      ]),
    ),
  };
}
