// The form of a URI by which the mirror knows a resource: as a URL parser writes it (scheme and host in lower case,
// the default port dropped, `.` and `..` segments resolved, an empty path as `/`), without a fragment, and with its
// percent-escapes normalized as RFC 3986 §6.2.2 says (an escaped unreserved character decoded, `%7Euser` being
// `~user`; the hex digits of the others in upper case, `%2f` being `%2F`). Sources spell one URI several ways (a
// Change List writing `HTTP://Example.org:80/a` or `/%7euser/a`, its Resource List `http://example.org/a` or
// `/~user/a`): each spelling was a resource of its own, with a row, a file (`a%~2`) and a count, a change under one
// spelling left the other's copy stale, and a deletion under one left the other's file in place.
// Requests do not change: host, port and dots are the parsed URL's either way, a fragment is never sent, and the
// percent-escapes of a resource's own address are sent as its Source wrote them (requestUri), since a server (signed
// URLs) may check them as written.
import type { Entry } from '../documents/model.ts';

/** A path (and query) a URL parser leaves as it is: no `%`, no `.` or `..` segment, nothing it escapes. */
const PLAIN = /^(?:\/(?!\.\.?(?:\/|$))[A-Za-z0-9._~!$&()*+,;=:@-]*)+(?:\?[A-Za-z0-9._~!$&()*+,;=:@/?-]*)?$/;

/** The origin of the last URI parsed: a list's URIs nearly all share one, and then most need no parsing. */
let knownOrigin = '';

/** `uri` in the form the mirror keeps it (itself when it is in that form already, or is no http(s) URL). */
export function canonicalUri(uri: string): string {
  if (knownOrigin !== '' && uri.startsWith(knownOrigin) && PLAIN.test(uri.slice(knownOrigin.length))) return uri;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return uri;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return uri;
  if (uri.includes('#')) url.hash = '';
  knownOrigin = url.origin;
  const href = url.href;
  return href.includes('%') ? normalizeEscapes(href) : href;
}

/** The URI as a URL parser writes it, percent-escapes as written: what is sent for it. */
function parsedUri(uri: string): string {
  try {
    const url = new URL(uri);
    if (uri.includes('#')) url.hash = '';
    return url.href;
  } catch {
    return uri;
  }
}

/** Unreserved characters (RFC 3986 §2.3): ALPHA, DIGIT, `-`, `.`, `_`, `~`. */
const UNRESERVED = /^[A-Za-z0-9._~-]$/;

function normalizeEscapes(href: string): string {
  return href.replace(/%([0-9A-Fa-f]{2})/g, (escape, hex: string) => {
    const ch = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(ch) ? ch : escape.toUpperCase();
  });
}

/**
 * Puts an entry's `loc` in the mirror's form (canonicalUri), keeping the spelling its Source wrote in
 * `requestLoc` when they differ by more than a URL parser would change.
 */
export function canonicalEntry(entry: Entry): void {
  const loc = canonicalUri(entry.loc);
  if (loc !== entry.loc && entry.loc.includes('%')) {
    const parsed = parsedUri(entry.loc);
    if (parsed !== loc) entry.requestLoc = parsed;
  }
  entry.loc = loc;
}

/** The address a resource's own bytes are requested from: its `loc` as its Source spelled it. */
export function requestUri(entry: Pick<Entry, 'loc' | 'requestLoc'>): string {
  return entry.requestLoc ?? entry.loc;
}
