// `<link rel="resourcesync" href>` in the head of an HTML page (core spec 6.3.3), read as a stream with a bound:
// parsing stops at the end of the head (or the start of the body), or after `maxBytes`.
import { Parser } from 'htmlparser2';

export interface HtmlLinksResult {
  /** Absolute hrefs, in document order, without duplicates. */
  links: string[];
  /** True when the limit was hit before the head ended. */
  truncated: boolean;
}

export const HTML_SCAN_BYTES = 2 * 1024 * 1024;

export async function findHtmlLinks(
  body: AsyncIterable<Uint8Array>,
  pageUrl: string,
  rel: string,
  options: { charset?: string; maxBytes?: number } = {},
): Promise<HtmlLinksResult> {
  const maxBytes = options.maxBytes ?? HTML_SCAN_BYTES;
  const wanted = rel.toLowerCase();
  const hrefs: string[] = [];
  let base = pageUrl;
  let done = false;
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (name === 'body') done = true;
        else if (name === 'base' && attribs.href !== undefined) base = resolve(attribs.href, pageUrl) ?? base;
        else if (name === 'link' && attribs.href !== undefined && relTypes(attribs.rel).includes(wanted)) hrefs.push(attribs.href);
      },
      onclosetag(name) {
        if (name === 'head') done = true;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  let decoder = new TextDecoder('utf-8');
  try {
    if (options.charset) decoder = new TextDecoder(options.charset);
  } catch {
    // unknown charset: UTF-8
  }
  let bytes = 0;
  let truncated = false;
  for await (const chunk of body) {
    const room = maxBytes - bytes;
    const slice = chunk.byteLength > room ? chunk.subarray(0, room) : chunk;
    bytes += slice.byteLength;
    parser.write(decoder.decode(slice, { stream: true }));
    if (done) break;
    if (bytes >= maxBytes) {
      truncated = true;
      break;
    }
  }
  if (!done) parser.end();
  // `<base href>` may come after a link; browsers resolve every link against the document's base.
  // A Set: a 2 MB head holds some 60,000 links, and comparing each with all before it took seconds.
  const links = new Set<string>();
  for (const href of hrefs) {
    const url = resolve(href, base);
    if (url !== null) links.add(url);
  }
  return { links: [...links], truncated };
}

function relTypes(rel: string | undefined): string[] {
  return (rel ?? '').toLowerCase().split(/\s+/).filter(Boolean);
}

function resolve(href: string, base: string): string | null {
  try {
    return new URL(href.trim(), base).href;
  } catch {
    return null;
  }
}
