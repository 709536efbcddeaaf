// The classic weblogUpdates pings over XML-RPC (`POST /RPC2`): weblogUpdates.ping(name, url) and
// weblogUpdates.extendedPing(name, url, changesUrl, rssUrl[, tags]); the answer is the customary struct with
// `flerror` (boolean) and `message`.
import { clip } from '../clip.ts';
import type { Ping } from './model.ts';
import { httpUrl } from './ping.ts';
import { child, parseSmallXml, SmallXmlError, type XmlNode } from './small-xml.ts';

export type XmlRpcPing = { ok: true; ping: Ping } | { ok: false; reason: string };

/** A <value>: its typed child's text (string, or anything scalar), or its own text (an untyped value is a string). */
function scalar(value: XmlNode): string | null {
  const typed = value.children[0];
  if (!typed) return value.text.trim();
  if (typed.children.length > 0) return null;
  return typed.text.trim();
}

export function readXmlRpcPing(body: string): XmlRpcPing {
  let root: XmlNode;
  try {
    root = parseSmallXml(body);
  } catch (err) {
    if (err instanceof SmallXmlError) return { ok: false, reason: `the call is ${err.message}` };
    throw err;
  }
  if (root.name !== 'methodCall') return { ok: false, reason: `the root element is <${clip(root.name, 40)}>, not <methodCall> (XML-RPC)` };
  const method = child(root, 'methodName')?.text.trim() ?? '';
  if (method !== 'weblogUpdates.ping' && method !== 'weblogUpdates.extendedPing') {
    return { ok: false, reason: `unknown method "${clip(method, 60)}"; this server answers weblogUpdates.ping and weblogUpdates.extendedPing` };
  }
  const params = (child(root, 'params')?.children ?? []).filter((p) => p.name === 'param').map((p) => {
    const v = child(p, 'value');
    return v ? scalar(v) : null;
  });
  const [name, url, third, fourth] = params;
  if (!name || !url) return { ok: false, reason: `${method} needs at least two parameters: the site's name and its URL` };
  const siteUri = httpUrl(url);
  if (siteUri === null) return { ok: false, reason: `the site URL is not an http(s) URL: ${clip(url, 100)}` };
  const extended = method === 'weblogUpdates.extendedPing';
  // extendedPing: (name, url, changesUrl, rssUrl); ping with a third parameter: (name, url, changesUrl).
  const feed = extended ? (fourth ?? third ?? null) : null;
  const ping: Ping = {
    kind: extended ? 'weblogUpdates.extendedPing' : 'weblogUpdates.ping',
    siteName: clip(name, 300),
    siteUri,
    feedUri: httpUrl(feed),
    items: third && httpUrl(third) && !extended ? [{ title: null, link: httpUrl(third) }] : [],
  };
  return { ok: true, ping };
}

function escape(text: string): string {
  return text.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!);
}

/** The customary answer: a struct with flerror and message. */
export function xmlRpcAnswer(flerror: boolean, message: string): string {
  return (
    `<?xml version="1.0"?>\n<methodResponse><params><param><value><struct>` +
    `<member><name>flerror</name><value><boolean>${flerror ? 1 : 0}</boolean></value></member>` +
    `<member><name>message</name><value><string>${escape(message)}</string></value></member>` +
    `</struct></value></param></params></methodResponse>\n`
  );
}
