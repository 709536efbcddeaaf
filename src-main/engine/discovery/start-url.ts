// What a person pastes as a start URL: a URL or a bare host name. No dependencies beyond the error type, so the
// renderer shows the same URL the engine will fetch and the CLI, the service and the UI agree.
import { NetworkError } from '../http/errors.ts';
import { hideUserinfo } from '../http/userinfo.ts';

/** A bare host ("example.org", "127.0.0.1:8080/x") gets http:// or https://; other schemes are refused. */
export function normalizeStartUrl(input: string): string {
  const text = input.trim();
  const hasScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) || /^[a-z][a-z0-9+.-]*:(?!\d)/i.test(text);
  // A bare host gets https (a bearer token must not travel in clear), except a loopback host, which rarely has TLS.
  const loopback = /^(localhost|127(\.\d{1,3}){3}|\[::1\])(:\d+)?(\/|$)/i.test(text);
  const candidate = hasScheme ? text : `${loopback ? 'http' : 'https'}://${text}`;
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    throw new NetworkError('bad-url', `Not an http(s) URL or host name: ${hideUserinfo(text).slice(0, 200)}`, hideUserinfo(text));
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    throw new NetworkError('bad-url', `Not an http(s) URL or host name: ${hideUserinfo(text).slice(0, 200)}`, hideUserinfo(text));
  }
  return url.href;
}

/**
 * Whether two start URLs name the same place, up to differences a person does not mean: a fragment, a trailing
 * slash ("…/dataset1" and "…/dataset1/"), and what URL parsing already evens out (case of the scheme and host, a
 * default port, a bare host's missing "/").
 */
export function sameStartUrl(a: string, b: string): boolean {
  return startUrlKey(a) === startUrlKey(b);
}

function startUrlKey(href: string): string {
  try {
    const url = new URL(href);
    url.hash = '';
    if (url.pathname.length > 1 && url.pathname.endsWith('/')) url.pathname = url.pathname.slice(0, -1);
    return url.href;
  } catch {
    return href;
  }
}
