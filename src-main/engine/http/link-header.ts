// HTTP `Link` header parsing per RFC 8288 section 3: several links per header (and several headers joined with
// commas), parameters with token or quoted-string values, `rel` holding several space-separated types,
// and relative targets resolved against the response URL.

export interface WebLink {
  /** Absolute target URL (or the raw reference when it cannot be resolved). */
  href: string;
  /** Relation types, lower-cased (registered types are case-insensitive; extension URIs are compared as given). */
  rels: string[];
  /** Other parameters, names lower-cased; the first occurrence of each wins. */
  params: Record<string, string>;
}

export function parseLinkHeader(value: string, baseUrl: string): WebLink[] {
  const links: WebLink[] = [];
  let i = 0;
  const n = value.length;
  const skipWs = () => {
    while (i < n && (value[i] === ' ' || value[i] === '\t' || value[i] === '\r' || value[i] === '\n')) i++;
  };
  while (i < n) {
    skipWs();
    if (value[i] === ',') {
      i++;
      continue;
    }
    if (value[i] !== '<') {
      // Not a link-value: skip to the next top-level comma.
      i = skipToComma(value, i);
      continue;
    }
    const close = value.indexOf('>', i + 1);
    if (close < 0) break;
    const target = value.slice(i + 1, close).trim();
    i = close + 1;
    const params: Record<string, string> = {};
    for (;;) {
      skipWs();
      if (value[i] !== ';') break;
      i++;
      skipWs();
      const nameStart = i;
      while (i < n && /[!#$%&'*+\-.^_`|~0-9A-Za-z]/.test(value[i])) i++;
      const name = value.slice(nameStart, i).toLowerCase();
      skipWs();
      let paramValue = '';
      if (value[i] === '=') {
        i++;
        skipWs();
        if (value[i] === '"') {
          i++;
          while (i < n && value[i] !== '"') {
            if (value[i] === '\\' && i + 1 < n) i++;
            paramValue += value[i];
            i++;
          }
          i++; // closing quote
        } else {
          const valueStart = i;
          while (i < n && value[i] !== ';' && value[i] !== ',') i++;
          paramValue = value.slice(valueStart, i).trim();
        }
      }
      if (!name) {
        i = skipToDelimiter(value, i);
        continue;
      }
      // RFC 8288 3.3: occurrences of a parameter after the first are ignored.
      if (!(name in params)) params[name] = paramValue;
    }
    i = skipToComma(value, i);
    links.push({ href: resolve(target, baseUrl), rels: relTypes(params.rel), params });
  }
  return links;
}

/** Targets of links whose rel includes `rel` and whose context is the response itself (no foreign `anchor`). */
export function linksWithRel(links: WebLink[], rel: string, responseUrl: string): string[] {
  const wanted = rel.toLowerCase();
  return links
    .filter((link) => link.rels.includes(wanted))
    .filter((link) => link.params.anchor === undefined || sameDocument(resolve(link.params.anchor, responseUrl), responseUrl))
    .map((link) => link.href);
}

function sameDocument(a: string, b: string): boolean {
  return a.split('#')[0] === b.split('#')[0];
}

function relTypes(rel: string | undefined): string[] {
  if (!rel) return [];
  return rel
    .split(/[ \t\r\n]+/)
    .filter(Boolean)
    .map((type) => (/^[a-z][a-z0-9.+-]*:/i.test(type) ? type : type.toLowerCase()));
}

function resolve(reference: string, base: string): string {
  try {
    return new URL(reference, base).href;
  } catch {
    return reference;
  }
}

function skipToComma(value: string, from: number): number {
  let i = from;
  let quoted = false;
  while (i < value.length) {
    const c = value[i];
    if (quoted) {
      if (c === '\\') i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === ',') return i + 1;
    i++;
  }
  return i;
}

function skipToDelimiter(value: string, from: number): number {
  let i = from;
  while (i < value.length && value[i] !== ';' && value[i] !== ',') i++;
  return i;
}
