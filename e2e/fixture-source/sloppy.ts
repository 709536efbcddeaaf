// A sloppy view of dataset1 under /sloppy/, as real Sources serve them: a Resource List Index written as a <urlset>,
// entries without hash or length, a Change List without `from` whose `until` is simply "now" while it keeps
// growing, a 500 instead of an empty Change List, no Content-Type anywhere, Last-Modified as an ISO datetime, HEAD
// refused. Tests add broken entries (no loc, an unknown change, a malformed hash) through `extraResources`,
// `extraChanges` and `extraIndexEntries`.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SourceState } from './state.ts';
import { document, type EntrySpec } from './xml.ts';

export const SLOPPY = {
  capabilityList: '/sloppy/capabilitylist.xml',
  /** A Resource List Index served as a <urlset> whose entries are its parts. */
  resourceList: '/sloppy/resourcelist.xml',
  resourceListPart: (n: number) => `/sloppy/resourcelist-${n}.xml`,
  changeList: '/sloppy/changelist.xml',
  resource: (id: number) => `/sloppy/res/${id}`,
  /** Anything under it answers 200 with ODD_BODY: for URIs whose local paths need care (`..`, reserved names…). */
  odd: '/sloppy/odd/',
} as const;

export const ODD_BODY = 'an oddly named resource\n';

export interface SloppyControls {
  /** Entries appended to the second Resource List part as they are. */
  extraResources: EntrySpec[];
  /** Entries appended to the Change List as they are. */
  extraChanges: EntrySpec[];
  /** Entries appended to the <urlset> index itself, after its parts. */
  extraIndexEntries: EntrySpec[];
}

/** Serves /sloppy/…; false when the path is not one of them. */
export function serveSloppy(
  base: string,
  state: SourceState,
  initialChanges: number,
  controls: SloppyControls,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): boolean {
  if (!path.startsWith('/sloppy/')) return false;
  if (req.method === 'HEAD') return void plain(res, 405, 'HEAD is not allowed here\n'), true;
  const url = (p: string) => base + p;
  const now = state.now();
  if (path === SLOPPY.capabilityList) {
    xml(
      res,
      document('urlset', { capability: 'capabilitylist' }, [], [
        { loc: url(SLOPPY.resourceList), md: { capability: 'resourcelist' } },
        { loc: url(SLOPPY.changeList), md: { capability: 'changelist' } },
      ]),
    );
    return true;
  }
  if (path === SLOPPY.resourceList) {
    xml(
      res,
      document('urlset', { capability: 'resourcelist', at: now }, [], [
        ...[1, 2].map((n) => ({ loc: url(SLOPPY.resourceListPart(n)), md: { capability: 'resourcelist', at: now } })),
        ...controls.extraIndexEntries,
      ]),
    );
    return true;
  }
  const part = /^\/sloppy\/resourcelist-([12])\.xml$/.exec(path);
  if (part) {
    const live = state.live();
    const half = Math.ceil(live.length / 2);
    const mine = part[1] === '1' ? live.slice(0, half) : live.slice(half);
    const entries: EntrySpec[] = mine.map((r) => ({ loc: url(SLOPPY.resource(r.id)), lastmod: r.lastmod }));
    if (part[1] === '2') entries.push(...controls.extraResources);
    xml(res, document('urlset', { capability: 'resourcelist', at: now }, [], entries));
    return true;
  }
  if (path === SLOPPY.changeList) {
    const entries: EntrySpec[] = state.changes
      .slice(initialChanges)
      .map((c) => ({ loc: url(SLOPPY.resource(c.id)), lastmod: c.change === 'deleted' ? undefined : c.datetime, md: { change: c.change, datetime: c.datetime } }));
    entries.push(...controls.extraChanges);
    // Some Sources fail rather than send a Change List with nothing in it.
    if (entries.length === 0) return void plain(res, 500, 'Internal Server Error\n'), true;
    // No `from`; `until` is "now", though the list will grow.
    xml(res, document('urlset', { capability: 'changelist', until: now }, [], entries));
    return true;
  }
  if (path.startsWith(SLOPPY.odd)) return void plain(res, 200, ODD_BODY), true;
  const resource = /^\/sloppy\/res\/(\d+)$/.exec(path);
  if (resource) {
    const r = state.resources.get(Number(resource[1]));
    if (!r || r.deleted) return void plain(res, 404, 'Not Found\n'), true;
    // An ISO datetime where an HTTP-date belongs, compared as a date all the same.
    const since = req.headers['if-modified-since'];
    if (since !== undefined && Date.parse(since) >= Date.parse(r.lastmod)) {
      res.writeHead(304, { 'last-modified': r.lastmod });
      return void res.end(), true;
    }
    const body = state.representation(r.id, r.version).body;
    res.writeHead(200, { 'content-length': body.length, 'last-modified': r.lastmod });
    res.end(body);
    return true;
  }
  plain(res, 404, 'Not Found\n');
  return true;
}

/** Without a Content-Type, as some Sources send their sitemaps. */
function xml(res: ServerResponse, body: string): void {
  const buffer = Buffer.from(body, 'utf8');
  res.writeHead(200, { 'content-length': buffer.length });
  res.end(buffer);
}

function plain(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
