// The prolog (what precedes the root element) is looked at before the XML parser sees it, so that a DOCTYPE is
// refused the moment it appears: its internal subset (entity declarations, billion laughs) is never read, let
// alone expanded, and nothing it names is fetched. HTML pages are recognised here too.
import { DocumentError } from './errors.ts';

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

function countLines(s: string, end = s.length): number {
  let lines = 0;
  for (let i = s.indexOf('\n'); i >= 0 && i < end; i = s.indexOf('\n', i + 1)) lines++;
  return lines;
}

/** Enough characters to see "<!DOCTYPE html" or "<html>". */
const WINDOW = 24;

export interface PrologStep {
  /** 'more': still in the prolog; 'parse': the root element (or something that is not prolog) has begun. */
  verdict: 'more' | 'parse';
  /** Text now known to be safe, to hand to the XML parser (after 'parse': all the rest). */
  safe: string;
}

/**
 * Scans the start of a document as it arrives. It holds back only the few characters it cannot judge yet (a
 * markup start, the end of a possibly split terminator) and hands everything else on, so a prolog fed one
 * character at a time costs linear time and the memory held stays tiny. Throws a DocumentError for a DOCTYPE or
 * an HTML page.
 */
export class PrologScanner {
  private readonly url: string;
  private tail = '';
  /** The terminator ('?>' or '-->') of a processing instruction or comment that is open, if any. */
  private pending: string | null = null;
  private atStart = true;
  private linesBefore = 0;
  /** Whether anything but whitespace (and a byte order mark) was seen. */
  sawContent = false;

  constructor(url: string) {
    this.url = url;
  }

  push(chunk: string, final: boolean): PrologStep {
    const s = this.tail + chunk;
    let i = 0;
    if (this.atStart && s.length > 0) {
      this.atStart = false;
      if (s.charCodeAt(0) === 0xfeff) i = 1;
    }
    for (;;) {
      if (this.pending !== null) {
        const end = s.indexOf(this.pending, i);
        if (end < 0) {
          // Hand on all but what could be the start of the terminator, split by the chunk boundary.
          return this.hold(s, final ? s.length : Math.max(i, s.length - this.pending.length + 1), final);
        }
        i = end + this.pending.length;
        this.pending = null;
      }
      while (i < s.length && isSpace(s.charCodeAt(i))) i++;
      if (i >= s.length) return this.hold(s, s.length, final);
      this.sawContent = true;
      if (s.charCodeAt(i) !== 0x3c /* < */) return this.parse(s);
      if (s.length - i < 4 && !final) return this.hold(s, i, final);
      if (s.startsWith('<?', i)) {
        this.pending = '?>';
        i += 2;
        continue;
      }
      if (s.startsWith('<!--', i)) {
        this.pending = '-->';
        i += 4;
        continue;
      }
      const window = s.slice(i, i + WINDOW);
      if (window.length < WINDOW && !final && window.indexOf('>') < 0) return this.hold(s, i, final);
      if (/^<!doctype\s+html(?:\s|>|$)/i.test(window) || /^<html(?:\s|>|\/|$)/i.test(window)) {
        throw new DocumentError('html', `${this.url} is an HTML page, not a ResourceSync document`, { line: this.lineAt(s, i) });
      }
      if (/^<!doctype/i.test(window)) {
        throw new DocumentError(
          'doctype',
          `${this.url} has a DOCTYPE declaration: refused (ResourceSync documents have none, and entities are never expanded)`,
          { line: this.lineAt(s, i) },
        );
      }
      return this.parse(s);
    }
  }

  private hold(s: string, safeEnd: number, final: boolean): PrologStep {
    if (final) return this.parse(s);
    const safe = s.slice(0, safeEnd);
    this.tail = s.slice(safeEnd);
    this.linesBefore += countLines(safe);
    return { verdict: 'more', safe };
  }

  private parse(s: string): PrologStep {
    this.tail = '';
    return { verdict: 'parse', safe: s };
  }

  private lineAt(s: string, index: number): number {
    return this.linesBefore + countLines(s, index) + 1;
  }
}
