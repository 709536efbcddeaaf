// Content-Type of a delivery, with its parameters (`application/xml; charset=utf-8`), and a sniff of the body when
// the header is absent or says nothing useful: hubs pass on what the Source sent, and some send nothing.

export interface MediaType {
  /** Lower-case type/subtype, e.g. `application/xml`. */
  essence: string;
  params: Record<string, string>;
}

export function parseContentType(value: string | undefined): MediaType | null {
  if (value === undefined) return null;
  const [head, ...rest] = splitParams(value);
  const essence = head.trim().toLowerCase();
  if (!/^[!#$%&'*+.^_`|~0-9a-z-]+\/[!#$%&'*+.^_`|~0-9a-z-]+$/.test(essence)) return null;
  const params: Record<string, string> = {};
  for (const part of rest) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim().toLowerCase();
    let v = part.slice(eq + 1).trim();
    if (v.startsWith('"') && v.endsWith('"') && v.length >= 2) v = v.slice(1, -1).replace(/\\(.)/g, '$1');
    if (name && !(name in params)) params[name] = v;
  }
  return { essence, params };
}

/** Splits on `;` outside quoted strings. */
function splitParams(value: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (quoted && c === '\\' && i + 1 < value.length) {
      current += c + value[++i];
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === ';' && !quoted) {
      parts.push(current);
      current = '';
    } else current += c;
  }
  parts.push(current);
  return parts;
}

export function isXmlType(essence: string): boolean {
  return essence === 'application/xml' || essence === 'text/xml' || essence.endsWith('+xml');
}

/** What the first bytes look like: XML (after a BOM and white space, a `<`), else not. */
export function sniffXml(body: Uint8Array): boolean {
  let i = 0;
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) i = 3;
  else if ((body[0] === 0xfe && body[1] === 0xff) || (body[0] === 0xff && body[1] === 0xfe)) return true;
  while (i < body.length && (body[i] === 0x20 || body[i] === 0x09 || body[i] === 0x0a || body[i] === 0x0d)) i++;
  return body[i] === 0x3c;
}

export type BodyKind = { xml: true; mediaType: MediaType | null; sniffed: boolean } | { xml: false; reason: string };

/**
 * Decides whether a delivery body is XML. A declared XML type is trusted only when the bytes agree; a missing or
 * generic type (text/plain, application/octet-stream) is sniffed; any other declared type is refused.
 */
export function classifyBody(contentType: string | undefined, body: Uint8Array): BodyKind {
  const mediaType = parseContentType(contentType);
  const looksXml = sniffXml(body);
  if (mediaType && isXmlType(mediaType.essence)) {
    return looksXml ? { xml: true, mediaType, sniffed: false } : { xml: false, reason: `declared ${mediaType.essence} but the body does not start like XML` };
  }
  const generic = mediaType === null || mediaType.essence === 'text/plain' || mediaType.essence === 'application/octet-stream';
  if (!generic) return { xml: false, reason: `Content-Type ${mediaType.essence} is not XML` };
  return looksXml ? { xml: true, mediaType, sniffed: true } : { xml: false, reason: `${contentType === undefined ? 'no Content-Type, and the' : `Content-Type ${mediaType!.essence}, and the`} body does not look like XML` };
}
