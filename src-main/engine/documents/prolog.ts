// The prolog (what precedes the root element) is looked at before the XML parser sees it, so that a DOCTYPE is
// refused the moment it appears: its internal subset (entity declarations, billion laughs) is never read, let
// alone expanded, and nothing it names is fetched. HTML pages are recognised here too.
import { DocumentError } from './errors.ts';

export type PrologVerdict = 'more' | 'parse';

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/**
 * Scans the start of a document. Returns 'more' while it cannot yet tell (and `final` is false), 'parse' once
 * the root element (or anything that is not prolog) begins; throws a DocumentError for a DOCTYPE or HTML.
 */
export function scanProlog(s: string, final: boolean, url: string): PrologVerdict {
  let i = s.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (;;) {
    while (i < s.length && isSpace(s.charCodeAt(i))) i++;
    if (i >= s.length) return final ? 'parse' : 'more';
    if (s.charCodeAt(i) !== 0x3c /* < */) return 'parse';
    if (s.startsWith('<?', i)) {
      const end = s.indexOf('?>', i + 2);
      if (end < 0) return final ? 'parse' : 'more';
      i = end + 2;
      continue;
    }
    if (s.startsWith('<!--', i)) {
      const end = s.indexOf('-->', i + 4);
      if (end < 0) return final ? 'parse' : 'more';
      i = end + 3;
      continue;
    }
    // Enough characters to see "<!DOCTYPE html" or "<html>".
    const window = s.slice(i, i + 24);
    if (window.length < 24 && !final && window.indexOf('>') < 0) return 'more';
    if (/^<!doctype\s+html(?:\s|>|$)/i.test(window) || /^<html(?:\s|>|\/|$)/i.test(window)) {
      throw new DocumentError('html', `${url} is an HTML page, not a ResourceSync document`, { line: lineAt(s, i) });
    }
    if (/^<!doctype/i.test(window)) {
      throw new DocumentError(
        'doctype',
        `${url} has a DOCTYPE declaration: refused (ResourceSync documents have none, and entities are never expanded)`,
        { line: lineAt(s, i) },
      );
    }
    return 'parse';
  }
}

function lineAt(s: string, index: number): number {
  let line = 1;
  for (let i = s.indexOf('\n'); i >= 0 && i < index; i = s.indexOf('\n', i + 1)) line++;
  return line;
}
