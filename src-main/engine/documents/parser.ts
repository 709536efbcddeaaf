// The synchronous half of the reader: XML text in (through saxes), entries out into a queue that the
// asynchronous half drains. Builds the document-level rs:md / rs:ln, refuses what is not a ResourceSync document,
// and keeps every buffer bounded (depth, token size, value size, links per entry, entries awaiting an rs:md).
import type { SaxesTagPlain } from 'saxes';
import { clip } from '../clip.ts';
import { DocumentChecker } from './conformance.ts';
import { DocumentError } from './errors.ts';
import { FindingList } from './findings.ts';
import { createSaxesParser, type PlainSaxesParser } from './lean-saxes.ts';
import {
  CAPABILITIES,
  RS_NAMESPACE,
  SITEMAP_NAMESPACE,
  type Capability,
  type DocumentSummary,
  type Entry,
  type RootElement,
  type RsLn,
  type DocumentHead,
  type RsMd,
} from './model.ts';
import { PrologScanner } from './prolog.ts';

export const LIMITS = {
  /** ResourceSync needs 3 levels (root, entry, loc); extensions a few more. */
  maxDepth: 32,
  /**
   * Characters the XML parser may hold for one token (a text node, a tag with its attributes, a comment). Checked
   * after each slice of text fed, so what is held stays below this plus one slice.
   */
  maxTokenChars: 1 << 20,
  /** Characters of one <loc>, <lastmod> or <changefreq> value, and of one attribute value. */
  maxValueChars: 64 * 1024,
  /** rs:ln elements kept per entry or per document. */
  maxLinks: 1000,
  /** Entries held while no document-level rs:md has been seen yet (rs:md after the first entry is only a warning). */
  maxEntriesBeforeMd: 1000,
} as const;

const KNOWN_CAPABILITIES: ReadonlySet<string> = new Set(CAPABILITIES);
/** The attributes of rs:md and rs:ln (§7, table 3). */
const RS_ATTRIBUTES: ReadonlySet<string> = new Set([
  'capability', 'at', 'completed', 'from', 'until', 'change', 'datetime', 'encoding', 'hash', 'length', 'path', 'type',
  'rel', 'href', 'modified', 'pri',
]);

// What each open element is, by depth.
const ROLE_OTHER = 0;
const ROLE_ROOT = 1;
const ROLE_ENTRY = 2;
const ROLE_LOC = 3;
const ROLE_LASTMOD = 4;
const ROLE_CHANGEFREQ = 5;

/**
 * A hash value lists its digests separated by whitespace, often across lines (XML has already turned those
 * newlines into spaces): one space between tokens, none around them.
 */
function normaliseSpace(value: string): string {
  return value.indexOf(' ') < 0 ? value : value.trim().replace(/ +/g, ' ');
}

/**
 * A declared namespace name, as the module's own constant when it is one of the two ResourceSync uses. Every
 * element's namespace is compared with these: with the very same string that is an identity check, with a copy
 * sliced out of the document a compare of 40-odd characters (openEntryChild took half as long with the constants).
 */
function canonicalNamespace(value: string): string {
  const uri = value.trim();
  if (uri === SITEMAP_NAMESPACE) return SITEMAP_NAMESPACE;
  if (uri === RS_NAMESPACE) return RS_NAMESPACE;
  return uri;
}

function quoteNamespace(uri: string): string {
  return uri === '' ? '(none)' : `"${clip(uri)}"`;
}

const SAXES_POSITION_PREFIX = /^(?:[^:]*:)?\d+:\d+: /;

/**
 * saxes' `on()` stores a handler with `this[name] = handler`. Keyed stores that add properties turn the parser
 * object into a dictionary-mode object in V8 after a few of them, and every state of the parser then runs about
 * four times slower. Creating the handler slots first with named stores keeps its properties fast; if a future
 * saxes renames them this only costs speed, since the handlers themselves are still set through `on()`.
 */
function createHandlerSlots(sax: object): void {
  const slots = sax as Record<string, unknown>;
  slots.xmldeclHandler = undefined;
  slots.textHandler = undefined;
  slots.piHandler = undefined;
  slots.doctypeHandler = undefined;
  slots.commentHandler = undefined;
  slots.openTagStartHandler = undefined;
  slots.attributeHandler = undefined;
  slots.openTagHandler = undefined;
  slots.closeTagHandler = undefined;
  slots.cdataHandler = undefined;
  slots.errorHandler = undefined;
  slots.endHandler = undefined;
  slots.readyHandler = undefined;
}

/**
 * The last parser that read a whole document, kept for V8's sake only. Optimised code depends on the hidden
 * classes ("maps") of the objects it was optimised for (this parser, saxes' parser, the checker, ...) but holds
 * them weakly: when no such object is alive, a garbage collection between two reads drops those maps and, with
 * them, the optimised code of the whole parse (`node --trace-deopt` says "weak objects"), so each read started
 * partly cold again: the bench's 50,000-entry list, read after a collection, took 20-30 % longer. A finished
 * parser is small: saxes clears its text when closed, and the parser lets go of what it read (summary()) but for
 * its findings (at most 100 per code), until the next read finishes.
 */
const kept: { lastFinished: DocumentParser | null } = { lastFinished: null };

export class DocumentParser {
  private readonly url: string;
  private readonly sax: PlainSaxesParser;
  private readonly findings = new FindingList();

  /** Until the root element begins; null after. */
  private prolog: PrologScanner | null;
  private fed = 0;
  private lastEventAt = 0;
  private closing = false;
  /** An element has begun: from then on a syntax error is "malformed", before it "not XML". */
  private started = false;
  private sawXmlDecl = false;

  private depth = 0;
  private readonly roles: number[] = [];
  private tagLine = 1;

  // Namespaces are resolved here rather than by saxes: its namespace mode allocates several objects per element
  // and per attribute, a third of the time of a large list. Scopes chain by prototype; a new one only where an
  // element declares a namespace.
  private scope: Record<string, string> = Object.assign(Object.create(null) as Record<string, string>, {
    xml: 'http://www.w3.org/XML/1998/namespace',
    xmlns: 'http://www.w3.org/2000/xmlns/',
  });
  private readonly scopes: Record<string, string>[] = [];
  private readonly scopeDepths: number[] = [];
  // The element being opened: its qualified name split and resolved.
  private name = '';
  private prefix = '';
  private local = '';
  private uri = '';
  // Its attributes, collected from saxes' attribute events: cheaper than enumerating saxes' attribute objects.
  private readonly attrNames: string[] = [];
  private readonly attrValues: string[] = [];
  private attrCount = 0;

  private root: RootElement | null = null;
  /** The first md element seen in a namespace other than rs. */
  private foreignMd: { name: string; uri: string; line: number } | null = null;
  private rootLine = 1;
  private entryName = '';
  private rootClosed = false;

  private md: RsMd | null = null;
  private mdLine = 0;
  private capability: Capability | null = null;
  private links: RsLn[] = [];
  private readonly linkLines: number[] = [];
  checker: DocumentChecker | null = null;

  private entry: Entry | null = null;
  /** Line of the current entry's rs:md (0: none yet), and of each of its rs:ln. */
  private entryMdLine = 0;
  private entryLinkLines: number[] | null = null;
  /** <rs:ln> past the limit, in the current entry and in the document itself, and the line of the first. */
  private entryLinksIgnored = 0;
  private entryLinksIgnoredLine = 0;
  private linksIgnored = 0;
  private linksIgnoredLine = 0;
  private entryCount = 0;
  private capturing = false;
  private readonly onText: (text: string) => void;
  /** Whether saxes keeps its text handler in `textHandler`, so that it can be swapped with a named store. */
  private readonly textSlot: boolean;
  private captured = '';
  private capturedLine = 0;
  /** Completed entries not yet handed out, with the lines of their rs:md (0: none) and rs:ln elements. */
  private queue: Entry[] = [];
  private queueMdLines: number[] = [];
  private queueLinkLines: (number[] | null)[] = [];

  constructor(url: string) {
    this.url = url;
    this.prolog = new PrologScanner(url);
    const sax = createSaxesParser();
    createHandlerSlots(sax);
    this.sax = sax;
    sax.on('xmldecl', () => {
      this.sawXmlDecl = true;
      this.lastEventAt = sax.position;
    });
    sax.on('doctype', () => {
      // The prolog scan refuses any DOCTYPE first; this catches one the scan could not see (e.g. after the root).
      throw new DocumentError('doctype', `${this.url} has a DOCTYPE declaration: refused`, { line: sax.line });
    });
    sax.on('opentagstart', () => {
      // The name may have been ended by a newline, already counted: column 0 means exactly that.
      this.tagLine = sax.column === 0 ? sax.line - 1 : sax.line;
      this.attrCount = 0;
      this.started = true;
    });
    sax.on('attribute', (attribute) => {
      if (attribute.value.length > LIMITS.maxValueChars) throw this.valueTooLong(`the value of attribute "${clip(attribute.name, 60)}"`);
      this.attrNames[this.attrCount] = attribute.name;
      this.attrValues[this.attrCount++] = attribute.value;
    });
    sax.on('opentag', (tag) => this.openTag(tag));
    sax.on('closetag', () => this.closeTag());
    // The text handler is only set while a value is captured (see startCapture): otherwise saxes skips copying
    // out the whitespace between tags, most of a document's text.
    this.onText = (text: string) => this.text(text);
    // The text handler is swapped twice per value (150,000 times in a 50,000-entry list), and `on()` does it with
    // a keyed store. Use the slot directly only once seen to be the one `on()` sets.
    sax.on('text', this.onText);
    this.textSlot = (sax as unknown as { textHandler: unknown }).textHandler === this.onText;
    sax.off('text');
    sax.on('cdata', this.onText);
    sax.on('comment', () => {
      this.lastEventAt = sax.position;
    });
    sax.on('processinginstruction', () => {
      this.lastEventAt = sax.position;
    });
    sax.on('error', (err) => {
      throw this.syntaxError(err);
    });
  }

  private syntaxError(err: Error): DocumentError {
    const detail = err.message.replace(SAXES_POSITION_PREFIX, '');
    const line = this.sax.line;
    if (!this.started) {
      if (this.closing && this.sawXmlDecl && detail.includes('must contain a root element')) {
        return new DocumentError('truncated', `${this.url} ends after the XML declaration, before any root element`, { line });
      }
      return new DocumentError('not-xml', `${this.url} is not an XML document (line ${line}: ${detail})`, { line, cause: err });
    }
    if (this.closing && !this.rootClosed) {
      // Cut inside the root's own start tag, its name is not known yet.
      const where = this.root === null ? 'inside its first tag' : `before </${this.root}>`;
      return new DocumentError('truncated', `${this.url} is truncated: it ends at line ${line} ${where}`, { line, cause: err });
    }
    return new DocumentError('malformed', `${this.url} is not well-formed XML (line ${line}: ${detail})`, { line, cause: err });
  }

  /** Feeds decoded text. Throws a DocumentError on a refusal. */
  write(text: string): void {
    if (this.prolog !== null) {
      const { verdict, safe } = this.prolog.push(text, false);
      if (verdict === 'parse') this.prolog = null;
      text = safe;
    }
    if (text.length === 0) return;
    this.fed += text.length;
    this.sax.write(text);
    if (this.fed - this.lastEventAt > LIMITS.maxTokenChars) {
      throw new DocumentError(
        'token-too-large',
        `${this.url}: a single text node, tag or comment near line ${this.sax.line} exceeds ${LIMITS.maxTokenChars.toLocaleString('en')} characters`,
        { line: this.sax.line },
      );
    }
  }

  /** Ends the input. Throws a DocumentError on a refusal. */
  close(): void {
    if (this.prolog !== null) {
      const prolog = this.prolog;
      const { safe } = prolog.push('', true);
      this.prolog = null;
      if (!prolog.sawContent) throw new DocumentError('empty', `${this.url} is empty`);
      this.write(safe);
    }
    this.closing = true;
    this.sax.close();
    if (this.md === null) throw this.missingMd();
  }

  private missingMd(): DocumentError {
    // An <md> in another namespace is what a copy of the spec with its namespace retyped looks like: name both.
    const foreign = this.foreignMd;
    if (foreign !== null) {
      return new DocumentError(
        'wrong-namespace',
        `${this.url}: <${foreign.name}> is in the namespace ${quoteNamespace(foreign.uri)}, expected "${RS_NAMESPACE}"; ` +
          'the document has no ResourceSync <md>',
        { line: foreign.line },
      );
    }
    return new DocumentError(
      'missing-md',
      `${this.url} has no document-level <rs:md> (mandatory, §7): a ${this.root === 'sitemapindex' ? 'sitemap index' : 'sitemap'} but not a ResourceSync document`,
      { line: this.rootLine },
    );
  }

  /** The namespace of a prefix (of `qname`) in the scope in effect; '' for no namespace. */
  private resolve(prefix: string, qname: string, line: number): string {
    const uri = this.scope[prefix];
    if (uri !== undefined) return uri;
    if (prefix === '') return '';
    throw new DocumentError('malformed', `${this.url}: namespace prefix "${clip(prefix, 60)}" of "${clip(qname, 60)}" is not declared (line ${line})`, { line });
  }

  private openTag(tag: SaxesTagPlain): void {
    const sax = this.sax;
    this.lastEventAt = sax.position;
    const depth = this.depth;
    const line = this.tagLine;
    const attrNames = this.attrNames;
    for (let i = 0; i < this.attrCount; i++) {
      const attribute = attrNames[i];
      if (attribute.startsWith('xmlns') && (attribute.length === 5 || attribute.charCodeAt(5) === 0x3a)) {
        if (this.scopeDepths[this.scopeDepths.length - 1] !== depth) {
          this.scopes.push(this.scope);
          this.scopeDepths.push(depth);
          this.scope = Object.create(this.scope) as Record<string, string>;
        }
        this.scope[attribute.length === 5 ? '' : attribute.slice(6)] = canonicalNamespace(this.attrValues[i]);
      }
    }
    const name = tag.name;
    const colon = name.indexOf(':');
    this.name = name;
    if (colon < 0) {
      this.prefix = '';
      this.local = name;
    } else {
      this.prefix = name.slice(0, colon);
      this.local = name.slice(colon + 1);
    }
    this.uri = this.resolve(this.prefix, name, line);
    let role = ROLE_OTHER;
    if (depth === 0) {
      this.openRoot(line);
      role = ROLE_ROOT;
    } else if (depth === 1) {
      role = this.openRootChild(line);
    } else if (depth === 2 && this.entry !== null) {
      role = this.openEntryChild(line);
    } else if (depth >= LIMITS.maxDepth) {
      throw new DocumentError('too-deep', `${this.url}: elements nested more than ${LIMITS.maxDepth} deep (line ${line})`, { line });
    }
    this.roles[depth] = role;
    this.depth = depth + 1;
  }

  private closeTag(): void {
    this.lastEventAt = this.sax.position;
    const depth = --this.depth;
    if (this.scopeDepths[this.scopeDepths.length - 1] === depth) {
      this.scope = this.scopes.pop() as Record<string, string>;
      this.scopeDepths.pop();
    }
    const role = this.roles[depth];
    if (role === ROLE_OTHER) return;
    if (role >= ROLE_LOC) {
      const entry = this.entry as Entry;
      const value = this.captured.trim();
      this.capturing = false;
      this.captured = '';
      this.setTextHandler(undefined);
      if (role === ROLE_LOC) {
        if (entry.loc !== '') this.findings.add('warning', 'duplicate-element', 'Entry has more than one <loc>; the last is used', this.capturedLine);
        entry.loc = value;
      } else if (role === ROLE_LASTMOD) entry.lastmod = value;
      else entry.changefreq = value;
      return;
    }
    if (role === ROLE_ENTRY) {
      if (this.entryLinksIgnored > 0) this.tooManyLinks(this.entryLinksIgnoredLine, this.entryLinksIgnored);
      this.queue.push(this.entry as Entry);
      this.queueMdLines.push(this.entryMdLine);
      this.queueLinkLines.push(this.entryLinkLines);
      this.entry = null;
      if (this.md === null && this.queue.length > LIMITS.maxEntriesBeforeMd) throw this.missingMd();
      return;
    }
    if (this.linksIgnored > 0) this.tooManyLinks(this.linksIgnoredLine, this.linksIgnored);
    this.rootClosed = true;
  }

  private setTextHandler(handler: ((text: string) => void) | undefined): void {
    if (this.textSlot) (this.sax as unknown as { textHandler: typeof handler }).textHandler = handler;
    else if (handler === undefined) this.sax.off('text');
    else this.sax.on('text', handler);
  }

  private startCapture(): void {
    this.capturing = true;
    this.capturedLine = this.tagLine;
    this.setTextHandler(this.onText);
  }

  private text(text: string): void {
    this.lastEventAt = this.sax.position;
    if (!this.capturing) return;
    const captured = this.captured + text;
    if (captured.length > LIMITS.maxValueChars) throw this.valueTooLong('a value');
    this.captured = captured;
  }

  private valueTooLong(what: string): DocumentError {
    const line = this.sax.line;
    return new DocumentError(
      'token-too-large',
      `${this.url}: ${what} is longer than ${LIMITS.maxValueChars.toLocaleString('en')} characters (line ${line})`,
      { line },
    );
  }

  private wrongNamespace(line: number): DocumentError {
    const expected = this.local === 'urlset' || this.local === 'sitemapindex' ? SITEMAP_NAMESPACE : RS_NAMESPACE;
    return new DocumentError(
      'wrong-namespace',
      `${this.url}: <${clip(this.name, 60)}> is in the namespace ${quoteNamespace(this.uri)}, expected "${expected}"`,
      { line },
    );
  }

  private openRoot(line: number): void {
    const local = this.local;
    this.rootLine = line;
    if (local.toLowerCase() === 'html') {
      throw new DocumentError('html', `${this.url} is an HTML page, not a ResourceSync document`, { line });
    }
    if (local !== 'urlset' && local !== 'sitemapindex') {
      throw new DocumentError(
        'wrong-root',
        `${this.url}: the root element is <${clip(this.name, 60)}>${this.uri === '' ? '' : ` (namespace "${clip(this.uri)}")`}, expected <urlset> or <sitemapindex>`,
        { line },
      );
    }
    if (this.uri !== SITEMAP_NAMESPACE) throw this.wrongNamespace(line);
    // Namespaces go by URI, never by prefix: `x:md` bound to the rs namespace is ResourceSync's md, `rs:md` bound
    // to anything else is not (a retyped copy of the spec is refused when its md is missing, see missingMd).
    this.root = local;
    this.entryName = local === 'urlset' ? 'url' : 'sitemap';
  }

  private openRootChild(line: number): number {
    const { uri, local } = this;
    if (uri === RS_NAMESPACE) {
      if (local === 'md') this.documentMd(line);
      else if (local === 'ln') {
        if (this.entryCount > 0) {
          this.findings.add('warning', 'ln-after-entry', '<rs:ln> of the document after the first entry (it precedes the entries, §7)', line);
        }
        if (this.links.length < LIMITS.maxLinks) {
          this.links.push(this.readLn(line));
          this.linkLines.push(line);
        } else if (this.linksIgnored++ === 0) this.linksIgnoredLine = line;
      } else this.findings.add('warning', 'unknown-element', `<${clip(this.name, 60)}> is not a ResourceSync element`, line);
      return ROLE_OTHER;
    }
    if (local === 'md' || local === 'ln') {
      this.foreignRsElement(line, true);
      return ROLE_OTHER;
    }
    if (uri === SITEMAP_NAMESPACE) {
      if (local === this.entryName) {
        // Every field from the start, so that all entries share one shape.
        this.entry = { index: this.entryCount++, loc: '', lastmod: undefined, changefreq: undefined, md: {}, links: [], line };
        this.entryMdLine = 0;
        this.entryLinkLines = null;
        this.entryLinksIgnored = 0;
        return ROLE_ENTRY;
      }
      this.findings.add('error', 'unexpected-element', `<${clip(this.name, 60)}> does not belong in <${this.root}> (expected <${this.entryName}>)`, line);
    } else if (local === this.entryName) {
      // Read as an extension element, it would vanish without a word: most likely a namespace mistake.
      this.findings.add(
        'warning',
        'foreign-entry',
        `<${clip(this.name, 60)}> is in the namespace ${quoteNamespace(uri)}, not the sitemap namespace "${SITEMAP_NAMESPACE}": ` +
          'it is not an entry and was skipped',
        line,
      );
    }
    return ROLE_OTHER;
  }

  /** An md or ln element outside the rs namespace: ignored, said so, and remembered for a missing-md refusal. */
  private foreignRsElement(line: number, documentLevel: boolean): void {
    if (documentLevel && this.local === 'md' && this.foreignMd === null) this.foreignMd = { name: clip(this.name, 60), uri: clip(this.uri), line };
    this.findings.add(
      'warning',
      'foreign-element',
      `<${clip(this.name, 60)}> is in the namespace ${quoteNamespace(this.uri)}, not ResourceSync's "${RS_NAMESPACE}": ignored`,
      line,
    );
  }

  private openEntryChild(line: number): number {
    const { uri, local } = this;
    const entry = this.entry as Entry;
    if (uri === SITEMAP_NAMESPACE) {
      switch (local) {
        case 'loc':
          this.startCapture();
          return ROLE_LOC;
        case 'lastmod':
          this.startCapture();
          return ROLE_LASTMOD;
        case 'changefreq':
          this.startCapture();
          return ROLE_CHANGEFREQ;
        case 'priority':
          return ROLE_OTHER;
        default:
          this.findings.add('warning', 'unknown-element', `<${clip(this.name, 60)}> is not a sitemap element`, line);
          return ROLE_OTHER;
      }
    }
    if (uri === RS_NAMESPACE) {
      if (local === 'md') {
        if (this.entryMdLine !== 0) {
          this.findings.add('warning', 'duplicate-md', 'More than one <rs:md> in one entry (it is not repeatable, §7); the first is used', line);
        } else {
          entry.md = this.readMd(line);
          this.entryMdLine = line;
        }
      } else if (local === 'ln') {
        if (entry.links.length < LIMITS.maxLinks) {
          entry.links.push(this.readLn(line));
          (this.entryLinkLines ??= []).push(line);
        } else if (this.entryLinksIgnored++ === 0) this.entryLinksIgnoredLine = line;
      } else {
        this.findings.add('warning', 'unknown-element', `<${clip(this.name, 60)}> is not a ResourceSync element`, line);
      }
      return ROLE_OTHER;
    }
    if (local === 'md' || local === 'ln') this.foreignRsElement(line, false);
    else if (local === 'loc' || local === 'lastmod' || local === 'changefreq') {
      this.findings.add(
        'warning',
        'foreign-element',
        `<${clip(this.name, 60)}> is in the namespace ${quoteNamespace(uri)}, not the sitemap namespace "${SITEMAP_NAMESPACE}": ignored`,
        line,
      );
    }
    return ROLE_OTHER;
  }

  /** Said once per element, at its end (an element with 100,000 links is one finding, not 99,000). */
  private tooManyLinks(line: number, ignored: number): void {
    const rest = `${ignored.toLocaleString('en')} more ${ignored === 1 ? 'was' : 'were'} ignored`;
    this.findings.add('warning', 'too-many-links', `More than ${LIMITS.maxLinks.toLocaleString('en')} <rs:ln> in one element; the ${rest}`, line);
  }

  private documentMd(line: number): void {
    if (this.md !== null) {
      this.findings.add('warning', 'duplicate-md', 'More than one document-level <rs:md>; the first is used', line);
      return;
    }
    if (this.entryCount > 0) {
      this.findings.add('warning', 'md-after-entry', 'The document-level <rs:md> comes after the first entry (it precedes the entries, §7)', line);
    }
    const md = this.readMd(line);
    const capability = md.capability;
    if (capability === undefined) {
      throw new DocumentError('missing-capability', `${this.url}: the document-level <rs:md> has no "capability" (mandatory, §7)`, { line });
    }
    if (!KNOWN_CAPABILITIES.has(capability)) {
      throw new DocumentError(
        'unknown-capability',
        `${this.url}: unknown capability "${capability.slice(0, 100)}" (known: ${CAPABILITIES.join(', ')})`,
        { line },
      );
    }
    this.md = md;
    this.mdLine = line;
    this.capability = capability as Capability;
    this.checker = new DocumentChecker(this.findings, this.capability, this.root === 'sitemapindex', md, line);
  }

  // Named stores in a switch rather than `md[name] = value`: a keyed store whose key keeps changing takes V8's
  // generic (megamorphic) path, and this runs for every attribute of a 50,000-entry list (in profiles of such a
  // read, readMd went from about 10 ms to 2 ms).
  private readMd(line: number): RsMd {
    const md: RsMd = {};
    const { attrNames, attrValues, attrCount } = this;
    for (let i = 0; i < attrCount; i++) {
      const value = attrValues[i];
      switch (attrNames[i]) {
        case 'capability': md.capability = value; break;
        case 'at': md.at = value; break;
        case 'completed': md.completed = value; break;
        case 'from': md.from = value; break;
        case 'until': md.until = value; break;
        case 'change': md.change = value; break;
        case 'datetime': md.datetime = value; break;
        case 'encoding': md.encoding = value; break;
        case 'hash': md.hash = normaliseSpace(value); break;
        case 'length': md.length = value; break;
        case 'path': md.path = value; break;
        case 'type': md.type = value; break;
        default: this.unknownAttribute(attrNames[i], line);
      }
    }
    return md;
  }

  private readLn(line: number): RsLn {
    const ln: RsLn = { rel: '', href: '' };
    const { attrNames, attrValues, attrCount } = this;
    for (let i = 0; i < attrCount; i++) {
      const value = attrValues[i];
      switch (attrNames[i]) {
        case 'rel': ln.rel = value; break;
        case 'href': ln.href = value; break;
        case 'hash': ln.hash = normaliseSpace(value); break;
        case 'length': ln.length = value; break;
        case 'modified': ln.modified = value; break;
        case 'path': ln.path = value; break;
        case 'pri': ln.pri = value; break;
        case 'type': ln.type = value; break;
        case 'encoding': ln.encoding = value; break;
        default: this.unknownAttribute(attrNames[i], line);
      }
    }
    return ln;
  }

  private unknownAttribute(name: string, line: number): void {
    const colon = name.indexOf(':');
    if (name === 'xmlns' || (colon === 5 && name.startsWith('xmlns'))) return;
    // §7: communities may add attributes, in their own namespace and with its prefix.
    if (colon >= 0 && this.resolve(name.slice(0, colon), name, line) !== RS_NAMESPACE) return;
    const local = name.slice(colon + 1);
    if (colon >= 0 && RS_ATTRIBUTES.has(local)) {
      // §7: "これらの属性には XML 名前空間接頭辞を含めてはなりません". Read as written, it is not the attribute at all.
      this.findings.add(
        'error',
        'prefixed-attribute',
        `<${clip(this.name, 60)}> attribute "${clip(name, 60)}" has a namespace prefix: ResourceSync's attributes are written without one, as "${local}" (§7); it was not read`,
        line,
      );
      return;
    }
    this.findings.add('warning', 'unknown-attribute', `<${clip(this.name, 60)}> attribute "${clip(name, 60)}" is not defined by ResourceSync (§7)`, line);
  }

  /** What the document is, once its rs:md was read (null before): lets a caller decide what to keep of its entries. */
  head(): DocumentHead | null {
    if (this.md === null || this.capability === null || this.root === null) return null;
    return { root: this.root, capability: this.capability, isIndex: this.root === 'sitemapindex', md: this.md, links: this.links.slice() };
  }

  /** Hands out the completed entries (only once the document's rs:md is known). */
  take(): { entries: Entry[]; mdLines: number[]; linkLines: (number[] | null)[] } | null {
    if (this.queue.length === 0 || this.checker === null) return null;
    const taken = { entries: this.queue, mdLines: this.queueMdLines, linkLines: this.queueLinkLines };
    this.queue = [];
    this.queueMdLines = [];
    this.queueLinkLines = [];
    return taken;
  }

  /** The summary, once the document was read to its end (once: the parser lets go of what it read). */
  summary(): DocumentSummary {
    const checker = this.checker as DocumentChecker;
    for (let i = 0; i < this.links.length; i++) checker.checkLink(this.links[i], this.linkLines[i]);
    checker.finish(this.links, this.mdLine);
    const summary: DocumentSummary = {
      url: this.url,
      root: this.root as RootElement,
      capability: this.capability as Capability,
      isIndex: this.root === 'sitemapindex',
      md: this.md as RsMd,
      links: this.links,
      entries: this.entryCount,
      findings: this.findings.finish(),
    };
    // What it read may be slices of the document's text: let go of it (the summary has its own references)
    // before this parser is kept.
    this.attrNames.length = 0;
    this.attrValues.length = 0;
    this.name = this.prefix = this.local = this.uri = '';
    this.md = null;
    this.links = [];
    kept.lastFinished = this;
    return summary;
  }
}
