// Extra request headers a person may give a mirror (its Access tab): the rules main checks them by. No
// dependencies, so the renderer can show the same limits.

/** RFC 9110 §5.6.2: a field name is a token. */
export const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Names the mirror writes itself, request by request: the conditional and range requests it makes (one set for every
 * request made every resource answer 304 "to a request that was not conditional", or 206 with a part of it, kept as
 * the whole when the list gives no hash), the codings it accepts (none: a coded body is kept as sent), and Expect
 * (the client refuses it: every request failed, Source discovery included).
 */
export const MIRROR_OWN_HEADERS: ReadonlySet<string> = new Set([
  'range',
  'if-range',
  'if-match',
  'if-none-match',
  'if-modified-since',
  'if-unmodified-since',
  'accept-encoding',
  'expect',
]);

/**
 * Names that cannot be set: hop-by-hop fields (RFC 9110 §7.6.1, and Proxy-Connection, Keep-Alive of old), the ones
 * the HTTP client writes itself (Host, Content-Length), those the mirror writes itself (MIRROR_OWN_HEADERS), and
 * Authorization (the mirror's user name and password or token are given apart, so they can be kept sealed).
 */
export const FORBIDDEN_HEADERS: ReadonlySet<string> = new Set([
  ...MIRROR_OWN_HEADERS,
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'authorization',
]);

export const HEADER_LIMITS = { count: 32, name: 256, value: 8192 } as const;

/** RFC 9110 §5.5: a field value is visible characters, spaces and tabs; CR, LF, NUL and other controls break it. */
export const HEADER_VALUE_FORBIDDEN = /[\u0000-\u0008\u000a-\u001f\u007f]/;

/**
 * Why a header value cannot be sent, or null when it can. Only Latin-1 travels in a header (RFC 9110 §5.5's obs-text
 * is bytes 0x80–0xFF): a value with another script's letters or a curly quote was kept, then every request failed.
 */
export function headerValueProblem(value: string): string | null {
  if (HEADER_VALUE_FORBIDDEN.test(value)) return 'contains a line break or another control character';
  return /[^\u0000-\u00ff]/.test(value) ? 'contains a character that cannot be sent in a header (only Latin-1 letters and signs can: not a curly quote or another script)' : null;
}
