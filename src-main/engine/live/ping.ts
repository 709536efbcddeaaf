// RSS Ping (rssping.com, described in the Japanese blog post in the shared specs): 1.0 is a GET with site_name,
// site_uri, feed_uri, item_title, item_link; 2.0 POSTs an <rss_ping> document whose <payload> carries an RSS 1.0,
// RSS 2.0 or Atom fragment of the newest item(s). A ping says "this site changed": it is reported, and can make a
// watched Source sync. Malformed pings get a plain reason (the server answers 400 with it).
import { clip } from '../clip.ts';
import type { Ping, PingItem } from './model.ts';
import { childText, parseSmallXml, SmallXmlError, type XmlNode } from './small-xml.ts';

export type PingResult = { ok: true; ping: Ping } | { ok: false; reason: string };

const RSS1 = 'http://purl.org/rss/1.0/';
const ATOM = 'http://www.w3.org/2005/Atom';
const RDF = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#';

/** An absolute http(s) URL, or null. */
export function httpUrl(value: string | null | undefined): string | null {
  if (!value) return null;
  try {
    const u = new URL(value.trim());
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

function checkUrls(ping: Ping, given: Record<string, string | null>): PingResult {
  for (const [name, value] of Object.entries(given)) {
    if (value !== null && value !== '' && httpUrl(value) === null) return { ok: false, reason: `${name} is not an http(s) URL: ${clip(value, 100)}` };
  }
  if (ping.siteUri === null && ping.feedUri === null) return { ok: false, reason: 'neither site_uri nor feed_uri is given: a ping must say what changed' };
  return { ok: true, ping };
}

/** RSS Ping 1.0: the query of `GET /ping`. */
export function readPing10(query: URLSearchParams): PingResult {
  const get = (k: string) => {
    const v = query.get(k);
    return v === null || v.trim() === '' ? null : v.trim();
  };
  const itemLink = get('item_link');
  const itemTitle = get('item_title');
  const ping: Ping = {
    kind: 'rss-ping-1.0',
    siteName: get('site_name') && clip(get('site_name')!, 300),
    siteUri: httpUrl(get('site_uri')),
    feedUri: httpUrl(get('feed_uri')),
    items: itemLink || itemTitle ? [{ title: itemTitle && clip(itemTitle, 300), link: httpUrl(itemLink) }] : [],
  };
  return checkUrls(ping, { site_uri: get('site_uri'), feed_uri: get('feed_uri'), item_link: itemLink });
}

/**
 * The published RSS Ping 2.0 example writes `<rss_ping version=2>` (an unquoted attribute, not well-formed XML);
 * that one attribute is quoted before parsing, nothing else is forgiven.
 */
function forgiveVersion(text: string): string {
  return text.replace(/^(\uFEFF?\s*(?:<\?xml[^>]*\?>\s*)?<rss_ping\s+version=)([0-9.]{1,8})(\s*>)/, '$1"$2"$3');
}

/** RSS Ping 2.0: the body of `POST /ping`. */
export function readPing20(body: string): PingResult {
  let root: XmlNode;
  try {
    root = parseSmallXml(forgiveVersion(body));
  } catch (err) {
    if (err instanceof SmallXmlError) return { ok: false, reason: `the ping is ${err.message}` };
    throw err;
  }
  if (root.name !== 'rss_ping') return { ok: false, reason: `the root element is <${clip(root.name, 40)}>, not <rss_ping> (RSS Ping 2.0)` };
  const payload = root.children.find((c) => c.name === 'payload');
  const siteUriText = childText(root, 'site_uri');
  const feedUriText = childText(root, 'feed_uri');
  const ping: Ping = {
    kind: 'rss-ping-2.0',
    siteName: childText(root, 'site_name') && clip(childText(root, 'site_name')!, 300),
    siteUri: httpUrl(siteUriText),
    feedUri: httpUrl(feedUriText),
    items: payload ? payloadItems(payload) : [],
    ...(payload ? { payloadFormat: payloadFormat(payload) } : {}),
  };
  return checkUrls(ping, { site_uri: siteUriText, feed_uri: feedUriText });
}

function payloadFormat(payload: XmlNode): string {
  const declared = payload.attrs.type;
  if (declared) return clip(declared, 60);
  const all = descendants(payload);
  if (all.some((n) => n.uri === ATOM)) return 'Atom';
  if (all.some((n) => n.uri === RSS1 || n.uri === RDF)) return 'RSS 1.0';
  return 'RSS 2.0';
}

function descendants(node: XmlNode): XmlNode[] {
  const out: XmlNode[] = [];
  const walk = (n: XmlNode) => {
    for (const c of n.children) {
      out.push(c);
      walk(c);
    }
  };
  walk(node);
  return out;
}

/** Items of an RSS 1.0 / RSS 2.0 fragment (`item`) or Atom (`entry`), wherever they sit in the payload. */
function payloadItems(payload: XmlNode): PingItem[] {
  const items: PingItem[] = [];
  for (const n of descendants(payload)) {
    if (items.length >= 100) break;
    if (n.name === 'item') {
      const link = childText(n, 'link') ?? n.attrs.about ?? null;
      items.push({ title: childText(n, 'title') && clip(childText(n, 'title')!, 300), link: httpUrl(link) });
    } else if (n.name === 'entry' && n.uri === ATOM) {
      const linkNode = n.children.find((c) => c.name === 'link' && (c.attrs.rel === undefined || c.attrs.rel === 'alternate'));
      items.push({ title: childText(n, 'title') && clip(childText(n, 'title')!, 300), link: httpUrl(linkNode?.attrs.href) });
    }
  }
  return items;
}
