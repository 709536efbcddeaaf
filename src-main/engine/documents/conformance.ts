// The conformance report: which rules of the core spec (ANSI/NISO Z39.99-2017, "§") and of the Change
// Notification spec ("CN §") a document breaks. `error`: the document (or the entry) cannot be used as what it
// claims to be; `warning`: the spec is violated but processing can go on.
import { clip } from '../clip.ts';
import { parseW3cDatetime } from './datetime.ts';
import type { FindingCode, FindingList } from './findings.ts';
import { parseHashes } from './hash.ts';
import { unregisteredRelationTypes } from './relation-types.ts';
import { CHANGE_TYPES, capabilityName, type Capability, type DocumentSummary, type Entry, type Finding, type RsLn, type RsMd } from './model.ts';

/** The community limit on entries per document (§7, from the Sitemap protocol). */
export const MAX_ENTRIES = 50_000;

type TimeFamily = 'at' | 'from';

interface Profile {
  /** The document-level time attributes (Appendix A, table 4); null: the spec names none for this document. */
  time: TimeFamily | null;
  /** Time attributes an entry's rs:md may carry (Appendix A); null: none; 'unchecked': the spec says nothing. */
  entryTime: TimeFamily | null | 'unchecked';
  /** A mandatory `rs:ln rel="up"` to the parent document. */
  upRequired: boolean;
  /** Entries are resource changes: rs:md with `change` is mandatory. */
  changes: boolean;
  /** Entries are bitstreams in a package: rs:md `path` is mandatory (except for deletions in a change manifest). */
  manifest: boolean;
  /** Entries must be in forward chronological order, by this attribute. */
  order: 'datetime' | 'from' | null;
  /** The order is a MUST (an error when broken), not a SHOULD; and where the spec says so. */
  orderMust: boolean;
  orderSection: string;
}

function profileOf(capability: Capability, isIndex: boolean): Profile {
  switch (capability) {
    case 'description': // §8
      return { time: null, entryTime: 'unchecked', upRequired: false, changes: false, manifest: false, order: null, orderMust: false, orderSection: '' };
    case 'capabilitylist': // §9: "関係タイプ up を持つ<urlset>の必須<rs:ln>子要素"
      return { time: null, entryTime: 'unchecked', upRequired: true, changes: false, manifest: false, order: null, orderMust: false, orderSection: '' };
    case 'resourcelist': // §10.1, §10.2: at mandatory; index children may carry at
      return { time: 'at', entryTime: isIndex ? 'at' : null, upRequired: true, changes: false, manifest: false, order: null, orderMust: false, orderSection: '' };
    case 'resourcedump': // §11.1: packages may carry at/completed
      return { time: 'at', entryTime: 'at', upRequired: true, changes: false, manifest: false, order: null, orderMust: false, orderSection: '' };
    case 'resourcedump-manifest': // §11.2
      return { time: 'at', entryTime: null, upRequired: true, changes: false, manifest: true, order: null, orderMust: false, orderSection: '' };
    case 'changelist':
      // §12.1: "時系列順で提供しなければなりません"; §12.2: "時系列で列挙しなければなりません" (both MUST).
      return isIndex
        ? { time: 'from', entryTime: 'from', upRequired: true, changes: false, manifest: false, order: 'from', orderMust: true, orderSection: '§12.2' }
        : { time: 'from', entryTime: null, upRequired: true, changes: true, manifest: false, order: 'datetime', orderMust: true, orderSection: '§12.1' };
    case 'changedump': // §13.1: packages carry from/until, listed oldest first ("提供される必要があります": SHOULD)
      return { time: 'from', entryTime: 'from', upRequired: true, changes: false, manifest: false, order: 'from', orderMust: false, orderSection: '§13.1' };
    case 'changedump-manifest': // §13.2: forward chronological order is a SHOULD ("必要があります")
      return { time: 'from', entryTime: null, upRequired: true, changes: true, manifest: true, order: 'datetime', orderMust: false, orderSection: '§13.2' };
    case 'change-notification': // CN §3: from and until mandatory, up optional, forward chronological ("must")
      return { time: 'from', entryTime: null, upRequired: false, changes: true, manifest: false, order: 'datetime', orderMust: true, orderSection: 'CN §3' };
  }
}

/** The section of the spec that defines a document type, for messages. */
function sectionOf(capability: Capability, isIndex: boolean): string {
  switch (capability) {
    case 'description':
      return '§8';
    case 'capabilitylist':
      return '§9';
    case 'resourcelist':
      return isIndex ? '§10.2' : '§10.1';
    case 'resourcedump':
      return '§11.1';
    case 'resourcedump-manifest':
      return '§11.2';
    case 'changelist':
      return isIndex ? '§12.2' : '§12.1';
    case 'changedump':
      return '§13.1';
    case 'changedump-manifest':
      return '§13.2';
    case 'change-notification':
      return 'Change Notification spec §3';
  }
}

const CHANGEFREQ = new Set(['always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never']);
const CHANGE_SET: ReadonlySet<string> = new Set(CHANGE_TYPES);
const LENGTH = /^\d+$/;
/** The common case, one well-formed digest, checked without building parseHashes' result. */
const SINGLE_HASH = /^(?:md5:[0-9a-fA-F]{32}|sha-1:[0-9a-fA-F]{40}|sha-256:[0-9a-fA-F]{64})$/;
const PRI = /^\d{1,6}$/;
/** The relation type of a link to a description of the changes a resource went through (§14.4). */
const PATCH_REL = 'http://www.openarchives.org/rs/terms/patch';
/** An absolute URI has a scheme (RFC 3986 §3.1); relative references are resolved by nobody in ResourceSync. */
const ABSOLUTE_URI = /^[A-Za-z][A-Za-z0-9+.-]*:/;

function ms(value: string | undefined): number | null {
  return value === undefined ? null : parseW3cDatetime(value);
}

function quote(value: string): string {
  return JSON.stringify(clip(value, 100));
}

/** Checks one document as it streams: the document-level rs:md first, then each entry, then the whole. */
export class DocumentChecker {
  private readonly findings: FindingList;
  private readonly capability: Capability;
  private readonly isIndex: boolean;
  private readonly profile: Profile;
  private readonly fromMs: number | null;
  private readonly untilMs: number | null;
  private lastOrderMs = Number.NEGATIVE_INFINITY;
  private readonly capabilitiesListed = new Map<string, number>();
  /** The media type of the first package of a dump that gives one, and its line. */
  private packageType: { type: string; line: number } | null = null;

  constructor(findings: FindingList, capability: Capability, isIndex: boolean, md: RsMd, mdLine: number) {
    this.findings = findings;
    this.capability = capability;
    this.isIndex = isIndex;
    this.profile = profileOf(capability, isIndex);
    this.fromMs = ms(md.from);
    this.untilMs = ms(md.until);
    this.checkDocumentMd(md, mdLine);
  }

  private warn(code: FindingCode, message: string, line?: number): void {
    this.findings.add('warning', code, message, line);
  }

  private error(code: FindingCode, message: string, line?: number): void {
    this.findings.add('error', code, message, line);
  }

  private checkDocumentMd(md: RsMd, line: number): void {
    const { capability, isIndex, profile } = this;
    if (isIndex) {
      if (capability === 'capabilitylist') {
        // §9: a handful of capabilities never needs an index; "ソースは、そのような構造を生成すべきではありません"
        this.warn('index-not-expected', 'A Capability List should not be a <sitemapindex> (§9)', line);
      } else if (capability === 'change-notification' || capability === 'resourcedump-manifest' || capability === 'changedump-manifest') {
        // CN §3: notifications never use <sitemapindex>; §11.2/§13.2: a manifest is one <urlset> inside its package.
        this.error('index-not-allowed', `A ${capabilityName(capability)} must be a <urlset>, not a <sitemapindex> (${this.section()})`, line);
      }
    }
    this.checkMdValues(md, line);
    if (profile.time === 'at') {
      // §10.1, §10.2, §11.1, §11.2, Appendix A: at is mandatory; from/until belong to change documents (§7).
      if (md.at === undefined) {
        this.error('missing-at', `The <rs:md> of a ${this.name()} must have an "at" attribute: when its snapshot began (${this.section()}, Appendix A)`, line);
      }
      this.notApplicable(md, ['from', 'until'], 'a resource document (§7)', line);
    } else if (profile.time === 'from') {
      // §12.1, §12.2, §13.1, §13.2, CN §3, Appendix A: from is mandatory; at/completed belong to resource documents.
      if (md.from === undefined) {
        this.error('missing-from', `The <rs:md> of a ${this.name()} must have a "from" attribute: the start of the period it covers (${this.section()}, Appendix A)`, line);
      }
      if (capability === 'change-notification' && md.until === undefined) {
        this.error('missing-until', 'A change notification must have an "until" attribute: the end of the period it covers (Change Notification spec §3)', line);
      }
      this.notApplicable(md, ['at', 'completed'], 'a change document (§7)', line);
    }
    this.checkIntervals(md, line);
  }

  private notApplicable(md: RsMd, names: readonly (keyof RsMd)[], where: string, line: number): void {
    for (const name of names) {
      if (md[name] !== undefined) this.warn('attribute-not-applicable', `"${name}" is not used in ${where}`, line);
    }
  }

  /** completed before at, until before from (§7: both pairs bound an interval). */
  private checkIntervals(md: RsMd, line: number): void {
    const at = ms(md.at);
    const completed = ms(md.completed);
    if (at !== null && completed !== null && completed < at) {
      this.warn('completed-before-at', `"completed" (${md.completed}) is before "at" (${md.at})`, line);
    }
    const from = ms(md.from);
    const until = ms(md.until);
    if (from !== null && until !== null && until < from) {
      this.warn('until-before-from', `"until" (${md.until}) is before "from" (${md.from})`, line);
    }
  }

  /** Well-formedness of the values of one rs:md: datetimes (§7, W3C Datetime), length, hash. */
  private checkMdValues(md: RsMd, line: number): void {
    // Named reads, not a loop over names: md objects come in many shapes, and a keyed read per name is slow.
    if (md.at !== undefined) this.checkDatetime('at', md.at, line);
    if (md.completed !== undefined) this.checkDatetime('completed', md.completed, line);
    if (md.from !== undefined) this.checkDatetime('from', md.from, line);
    if (md.until !== undefined) this.checkDatetime('until', md.until, line);
    if (md.datetime !== undefined) this.checkDatetime('datetime', md.datetime, line);
    if (md.length !== undefined) this.checkLength(md.length, 'rs:md', line);
    if (md.hash !== undefined) this.checkHash(md.hash, 'rs:md', line);
  }

  private checkDatetime(name: string, value: string, line: number): void {
    if (parseW3cDatetime(value) === null) {
      this.warn('invalid-datetime', `rs:md "${name}" is not a W3C Datetime such as 2013-01-03T09:00:00Z: ${quote(value)} (§7)`, line);
    }
  }

  private checkLength(value: string | undefined, where: string, line: number): void {
    // §7: the value of Content-Length, i.e. a non-negative decimal integer.
    if (value !== undefined && !LENGTH.test(value.trim())) {
      this.warn('invalid-length', `${where} "length" is not a number of bytes (a whole number, as in Content-Length): ${quote(value)} (§7)`, line);
    }
  }

  private checkHash(value: string | undefined, where: string, line: number): void {
    if (value === undefined || SINGLE_HASH.test(value)) return;
    const { problems, notes } = parseHashes(value);
    const all = [...problems, ...notes];
    if (all.length > 0) this.warn('invalid-hash', `${where} "hash": ${all.join('; ')} (§7: hexadecimal digests such as md5:…, sha-256:…)`, line);
  }

  /** One rs:ln, document-level or in an entry (§7). */
  checkLink(ln: RsLn, line: number): void {
    if (ln.rel === '' || ln.href === '') {
      const missing = ln.rel === '' && ln.href === '' ? '"rel" and "href"' : ln.rel === '' ? '"rel"' : '"href"';
      this.error('invalid-link', `<rs:ln> without ${missing}: every link must have both (§7)`, line);
    } else {
      const unregistered = unregisteredRelationTypes(ln.rel);
      if (unregistered.length > 0) {
        const names = unregistered.map((type) => quote(type)).join(', ');
        this.warn('unregistered-rel', `rs:ln "rel" ${names} ${unregistered.length === 1 ? 'is' : 'are'} neither a relation type registered with IANA (as this app knew the registry in 2025) nor a URI, which the spec requires of every relation type (§7); a client looking for a link by its relation type will not find this one`, line);
      }
    }
    if (ln.modified !== undefined && parseW3cDatetime(ln.modified) === null) {
      this.warn('invalid-datetime', `rs:ln "modified" is not a W3C Datetime such as 2013-01-03T09:00:00Z: ${quote(ln.modified)} (§7)`, line);
    }
    this.checkLength(ln.length, 'rs:ln', line);
    this.checkHash(ln.hash, 'rs:ln', line);
    if (ln.pri !== undefined) {
      // §7: pri is an integer from 1 to 999,999
      const pri = ln.pri.trim();
      if (!PRI.test(pri) || Number(pri) < 1) this.warn('invalid-pri', `rs:ln "pri" is not a whole number from 1 to 999999: ${quote(ln.pri)} (§7)`, line);
    }
  }

  /**
   * One <url> / <sitemap>. `mdLine`: line of its rs:md, 0 if it has none; `linkLines`: line of each rs:ln.
   * Findings about the rs:md (rs:ln) are reported on its own line, the others on the entry's.
   */
  checkEntry(entry: Entry, mdLine: number, linkLines: readonly number[] | null): void {
    const { capability, isIndex, profile } = this;
    const { md } = entry;
    const hasMd = mdLine !== 0;
    const line = hasMd ? mdLine : entry.line;
    const entryLine = entry.line;
    if (entry.index === MAX_ENTRIES) {
      this.warn('too-many-entries', `More than ${MAX_ENTRIES.toLocaleString('en')} entries in one document (§7)`, entryLine);
    }
    if (entry.loc === '') this.error('missing-loc', 'Entry without <loc>: every entry must give its URI (§7)', entryLine);
    else if (!ABSOLUTE_URI.test(entry.loc)) {
      this.error('relative-loc', `<loc> is not an absolute URI (a sitemap gives full URLs, §7): ${quote(entry.loc)}`, entryLine);
    }
    if (entry.lastmod !== undefined && parseW3cDatetime(entry.lastmod) === null) {
      this.warn('invalid-datetime', `<lastmod> is not a W3C Datetime such as 2013-01-03T09:00:00Z: ${quote(entry.lastmod)} (§7)`, entryLine);
    }
    if (entry.changefreq !== undefined && !CHANGEFREQ.has(entry.changefreq)) {
      this.warn('invalid-changefreq', `<changefreq> is not one of ${[...CHANGEFREQ].join(', ')}: ${quote(entry.changefreq)} (§7)`, entryLine);
    }
    if (hasMd) {
      this.checkMdValues(md, line);
      this.checkIntervals(md, line);
    }
    const links = entry.links;
    for (let i = 0; i < links.length; i++) {
      const linkLine = linkLines?.[i] ?? entryLine;
      this.checkLink(links[i], linkLine);
      if (links[i].rel === PATCH_REL) this.checkPatchLink(links[i], linkLine);
    }

    if (isIndex) this.checkIndexEntry(md, line);
    else if (capability === 'description') this.checkDescriptionEntry(entry, hasMd, line);
    else if (capability === 'capabilitylist') this.checkCapabilityListEntry(entry, line);
    else if (capability === 'resourcedump' || capability === 'changedump') this.checkPackageEntry(md, line);

    if (hasMd && profile.entryTime !== 'unchecked') {
      if (profile.entryTime !== 'at' && (md.at !== undefined || md.completed !== undefined)) {
        this.notApplicable(md, ['at', 'completed'], `the entries of a ${this.name()} (Appendix A)`, line);
      }
      if (profile.entryTime !== 'from' && (md.from !== undefined || md.until !== undefined)) {
        this.notApplicable(md, ['from', 'until'], `the entries of a ${this.name()} (Appendix A)`, line);
      }
    }
    if (profile.entryTime === 'from' && md.from === undefined) {
      // Appendix A, §12.2, §13.1: the period each Change List or package covers is recommended on its entry.
      this.warn('missing-entry-from', `Entry without rs:md "from": each entry of a ${this.name()} should give the start of the period it covers (${this.section()}, Appendix A)`, line);
    }
    if (profile.changes) this.checkChange(entry, hasMd, line);
    else if (md.change !== undefined && capability !== 'description' && capability !== 'capabilitylist') {
      // §7: change is used in Change Lists and Change Dump Manifests (and CN §3 notifications) only.
      this.warn('attribute-not-applicable', `"change" is not used in the entries of a ${this.name()} (§7)`, line);
    }
    if (profile.manifest) this.checkPath(entry, line);
    else if (md.path !== undefined) {
      this.warn('attribute-not-applicable', `rs:md "path" is only used in manifests (§7), not in a ${this.name()}`, line);
    }
    if (profile.order !== null) this.checkOrder(entry);
  }

  /** "Resource List", "Change List Index", …: the document type as people name it. */
  private name(): string {
    return capabilityName(this.capability, this.isIndex);
  }

  private section(): string {
    return sectionOf(this.capability, this.isIndex);
  }

  /**
   * §11.1, §13.1: a dump's entry should give its package's type and length; a dump should point to packages of
   * one format only, and ZIP is the format the spec names.
   */
  private checkPackageEntry(md: RsMd, line: number): void {
    const missing = [md.type === undefined ? '"type"' : '', md.length === undefined ? '"length"' : ''].filter(Boolean);
    if (missing.length > 0) {
      this.warn('package-md', `Package entry without rs:md ${missing.join(' and ')}: a ${this.name()} should give each package's media type and length (${this.section()})`, line);
    }
    if (md.type === undefined) return;
    const type = md.type.trim().toLowerCase();
    if (this.packageType === null) {
      this.packageType = { type, line };
      if (type !== 'application/zip') {
        this.warn('package-md', `Package of type ${quote(md.type)}: the spec's package format is ZIP, "application/zip" (${this.section()})`, line);
      }
    } else if (type !== this.packageType.type) {
      this.warn('package-md', `Package of type ${quote(md.type)}, the one on line ${this.packageType.line} is ${quote(this.packageType.type)}: a ${this.name()} should point to packages of one format only (${this.section()})`, line);
    }
  }

  /** §14.4: a patch link names the media type of the change description; in a Change Dump Manifest, its path too. */
  private checkPatchLink(ln: RsLn, line: number): void {
    if (ln.type === undefined || ln.type.trim() === '') {
      this.error('patch-link', 'A patch link (rel="http://www.openarchives.org/rs/terms/patch") must have a "type": the media type of the change description (§14.4)', line);
    }
    if (this.capability === 'changedump-manifest' && ln.path === undefined) {
      this.error('patch-link', 'A patch link in a Change Dump Manifest must have a "path": where the change description is in the package (§14.4)', line);
    }
  }

  private checkIndexEntry(md: RsMd, line: number): void {
    // §6.1: the documents of one capability (an index and its children) carry the same capability value.
    if (md.capability !== undefined && md.capability !== this.capability) {
      this.warn('index-entry-capability', `Index entry declares capability ${quote(md.capability)}, the index is "${this.capability}" (§6.1)`, line);
    }
  }

  private checkDescriptionEntry(entry: Entry, hasMd: boolean, line: number): void {
    // §8: a Source Description lists Capability Lists; its optional rs:md must say capability="capabilitylist".
    if (hasMd && entry.md.capability !== 'capabilitylist') {
      const what = entry.md.capability === undefined ? 'an rs:md without capability' : `capability ${quote(entry.md.capability)}`;
      this.error('description-entry', `A Source Description lists Capability Lists only: the rs:md of its entries must say capability="capabilitylist"; this one has ${what} (§8)`, line);
    }
    this.noLastmod(entry, 'Source Description (§8)');
  }

  private checkCapabilityListEntry(entry: Entry, line: number): void {
    const { md } = entry;
    this.noLastmod(entry, 'Capability List (§9)');
    if (md.capability === undefined) {
      // §9: "必須の<rs:md>子要素には、それぞれの機能のタイプを伝える capability 属性がなければなりません"
      this.error('missing-entry-capability', 'Capability List entry without rs:md capability (mandatory, §9)', line);
      return;
    }
    if (md.capability === 'description' || md.capability === 'capabilitylist') {
      this.warn('capabilitylist-entry', `A Capability List lists capabilities of its resource set, not a ${quote(md.capability)} (§9)`, line);
    }
    // §9: "機能ごとに 1 つのエントリのみが含まれなければなりません"
    const first = this.capabilitiesListed.get(md.capability);
    if (first === undefined) this.capabilitiesListed.set(md.capability, line);
    else this.error('duplicate-capability', `Capability ${quote(md.capability)} is listed again (first on line ${first}): a Capability List must have only one entry per capability (§9)`, line);
    if (md.capability === 'change-notification' && !entry.links.some((l) => l.rel === 'hub')) {
      // CN §5: the channel's entry "must have" an rs:ln rel="hub" with the hub URI.
      this.error('missing-hub-link', 'A change-notification entry must have an <rs:ln rel="hub"> giving the hub\'s URI (Change Notification spec §5)', line);
    }
  }

  private noLastmod(entry: Entry, where: string): void {
    // §8, §9: lastmod must be omitted unless the document is updated with every child; a reader cannot tell.
    if (entry.lastmod !== undefined) this.warn('lastmod-not-expected', `<lastmod> should be omitted in a ${where}`, entry.line);
  }

  private checkChange(entry: Entry, hasMd: boolean, line: number): void {
    const { md } = entry;
    // §12.1, §13.2, CN §3: mandatory rs:md with change = created | updated | deleted.
    if (!hasMd || md.change === undefined) {
      this.error('missing-change', `Entry without rs:md "change": every entry of a ${this.name()} must say created, updated or deleted (${this.section()})`, line);
    } else if (!CHANGE_SET.has(md.change)) {
      this.error('invalid-change', `"change" must be created, updated or deleted, not ${quote(md.change)} (${this.section()})`, line);
    }
    // §7 (datetime): "from 日時と同じまたはそれ以降、および、指定されている場合には、until 日時より前または同じ"
    const datetime = ms(md.datetime);
    if (datetime !== null) {
      if (this.fromMs !== null && datetime < this.fromMs) {
        this.error('datetime-out-of-range', `"datetime" ${md.datetime} is before the document's "from": a change must fall within the period the ${this.name()} covers (§7)`, line);
      } else if (this.untilMs !== null && datetime > this.untilMs) {
        this.error('datetime-out-of-range', `"datetime" ${md.datetime} is after the document's "until": a change must fall within the period the ${this.name()} covers (§7)`, line);
      }
    }
  }

  private checkPath(entry: Entry, line: number): void {
    const { md } = entry;
    if (md.path === undefined) {
      // §11.2: path mandatory; §13.2: mandatory unless change="deleted".
      if (!(this.capability === 'changedump-manifest' && md.change === 'deleted')) {
        this.error('missing-path', `Manifest entry without rs:md "path" (mandatory, ${this.capability === 'changedump-manifest' ? '§13.2' : '§11.2'})`, line);
      }
    } else if (!md.path.startsWith('/')) {
      this.warn('invalid-path', `"path" must start with "/" (relative to the package root, §11.2/§13.2): ${quote(md.path)}`, line);
    }
  }

  private checkOrder(entry: Entry): void {
    const { md } = entry;
    // Not by lastmod: it need not be the time of the change (§7), and an undated change is placed by its position.
    const key = this.profile.order === 'datetime' ? md.datetime : md.from;
    const time = ms(key);
    if (time === null) return;
    if (time < this.lastOrderMs) {
      const { orderMust, orderSection } = this.profile;
      const message = `Entry (${key}) is earlier than an entry before it: the entries of a ${this.name()} ${orderMust ? 'must' : 'should'} be in forward chronological order, oldest first (${orderSection})`;
      this.findings.add(orderMust ? 'error' : 'warning', 'change-order', message, entry.line);
    } else {
      this.lastOrderMs = time;
    }
  }

  /** Rules on the whole document, once all of it was read. */
  finish(links: RsLn[], line: number): void {
    const { capability, isIndex } = this;
    if ((capability === 'description' || capability === 'capabilitylist') && !isIndex && !links.some((l) => l.rel === 'describedby')) {
      // §8, §9: a recommended rs:ln rel="describedby" to a document about the Source / the set of resources.
      const about = capability === 'description' ? 'the Source' : 'its set of resources';
      this.warn('missing-describedby', `No <rs:ln rel="describedby"> to a document about ${about}: a ${this.name()} should have one (${this.section()})`, line);
    }
    if (this.profile.upRequired && !links.some((l) => l.rel === 'up')) {
      const parent = this.capability === 'capabilitylist' ? 'Source Description' : 'Capability List';
      this.error('missing-up', `No <rs:ln rel="up"> to the ${parent}: a ${this.name()} must link up to it (${this.section()})`, line);
    }
  }
}

/** The absolute form of a (possibly relative) reference, or the reference itself if it does not parse. */
function absolute(href: string, base: string): string {
  try {
    return new URL(href, base).href;
  } catch {
    return href;
  }
}

/** Capabilities whose documents should link to their index "if one exists" (§10.1, §11.1, §12.1, §13.1). */
const INDEX_LINK_RECOMMENDED: ReadonlySet<Capability> = new Set(['resourcelist', 'resourcedump', 'changelist', 'changedump']);

/** Cross-document rules between an index (<sitemapindex>) and one of the documents it lists. */
export function checkIndexChild(index: DocumentSummary, child: DocumentSummary): Finding[] {
  const findings: Finding[] = [];
  if (!index.isIndex) return findings;
  if (child.capability !== index.capability) {
    // §6.1: an index and the documents it groups carry the same capability.
    findings.push({
      severity: 'error',
      code: 'index-child-capability',
      message: `${child.url} is a ${capabilityName(child.capability, child.isIndex)}, listed by the ${capabilityName(index.capability, true)} ${index.url}: an index and the documents it lists have the same capability (§6.1)`,
    });
  }
  if (child.isIndex) {
    // Sitemap protocol: a sitemap index lists sitemaps (<urlset>), not other indexes.
    findings.push({
      severity: 'error',
      code: 'nested-index',
      message: `${child.url} is itself an index, listed by the index ${index.url}: an index lists <urlset> documents only (Sitemap protocol, §6.1)`,
    });
  }
  const indexLinks = child.links.filter((l) => l.rel === 'index');
  if (indexLinks.length === 0) {
    if (INDEX_LINK_RECOMMENDED.has(child.capability)) {
      findings.push({
        severity: 'warning',
        code: 'missing-index-link',
        message: `${child.url} is part of the index ${index.url} but has no <rs:ln rel="index"> to it (recommended, §10.1/§11.1/§12.1/§13.1)`,
      });
    }
  } else if (!indexLinks.some((l) => absolute(l.href, child.url) === absolute(index.url, index.url))) {
    findings.push({
      severity: 'warning',
      code: 'index-link-mismatch',
      message: `${child.url} links rel="index" to ${clip(indexLinks[0].href)}, but it is listed by ${index.url}`,
    });
  }
  const indexUp = index.links.find((l) => l.rel === 'up');
  const childUp = child.links.find((l) => l.rel === 'up');
  if (indexUp !== undefined && childUp !== undefined && absolute(childUp.href, child.url) !== absolute(indexUp.href, index.url)) {
    findings.push({
      severity: 'warning',
      code: 'up-link-mismatch',
      message: `${child.url} links rel="up" to ${clip(childUp.href)}, its index ${index.url} to ${clip(indexUp.href)}: both belong to one Capability List (§6.2)`,
    });
  }
  return findings;
}
