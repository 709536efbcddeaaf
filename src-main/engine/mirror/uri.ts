// The form of a URI by which the mirror knows a resource: as a URL parser writes it (scheme and host in lower case,
// the default port dropped, `.` and `..` segments resolved, an empty path as `/`) and without a fragment. Sources
// spell one URI several ways (a Change List writing `HTTP://Example.org:80/a`, its Resource List
// `http://example.org/a`): each spelling was a resource of its own, with a row, a file (`a%~2`) and a count, and a
// change under one spelling left the other's copy stale. Requests do not change: they are made from the parsed URL
// either way, and a fragment is never sent. Percent-escapes stay as written: decoding them could change what a
// server (signed URLs) accepts, and no parser does it.

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
  return url.href;
}
