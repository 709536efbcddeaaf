// The ResourceSync document model, shared by the engine, the contract and the renderer.
// Pure types, constants and tiny helpers: no Node or DOM imports, so every process can import it.

export const RS_NAMESPACE = 'http://www.openarchives.org/rs/terms/';
export const SITEMAP_NAMESPACE = 'http://www.sitemaps.org/schemas/sitemap/0.9';

/** Values of `rs:md capability` known to the core spec and the Change Notification spec. */
export const CAPABILITIES = [
  'description',
  'capabilitylist',
  'resourcelist',
  'resourcedump',
  'resourcedump-manifest',
  'changelist',
  'changedump',
  'changedump-manifest',
  'change-notification',
] as const;
export type Capability = (typeof CAPABILITIES)[number];

/** The names the spec gives each capability, for people to read. */
export const CAPABILITY_NAMES: Readonly<Record<Capability, string>> = {
  description: 'Source Description',
  capabilitylist: 'Capability List',
  resourcelist: 'Resource List',
  resourcedump: 'Resource Dump',
  'resourcedump-manifest': 'Resource Dump Manifest',
  changelist: 'Change List',
  changedump: 'Change Dump',
  'changedump-manifest': 'Change Dump Manifest',
  'change-notification': 'Change Notification',
};

/** "Resource List", "Resource List Index", …; an unknown value is shown as written. */
export function capabilityName(capability: string, isIndex = false): string {
  const name = (CAPABILITY_NAMES as Record<string, string>)[capability] ?? capability;
  return isIndex ? `${name} Index` : name;
}

export type RootElement = 'urlset' | 'sitemapindex';

export const CHANGE_TYPES = ['created', 'updated', 'deleted'] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

/** Every `rs:md` attribute, as written in the document (raw strings; parsing is the reader's job). */
export interface RsMd {
  capability?: string;
  at?: string;
  completed?: string;
  from?: string;
  until?: string;
  change?: string;
  datetime?: string;
  encoding?: string;
  hash?: string;
  length?: string;
  path?: string;
  type?: string;
}

/** Every `rs:ln` attribute, as written in the document. */
export interface RsLn {
  rel: string;
  href: string;
  hash?: string;
  length?: string;
  modified?: string;
  path?: string;
  pri?: string;
  type?: string;
  encoding?: string;
}

/** One `<url>` (in a `urlset`) or `<sitemap>` (in a `sitemapindex`). */
export interface Entry {
  /** 0-based position in the document. */
  index: number;
  loc: string;
  /**
   * The `loc` as its Source spelled it, where the mirror knows the resource by another form (mirror/uri.ts): its
   * own bytes are requested from it.
   */
  requestLoc?: string;
  lastmod?: string;
  changefreq?: string;
  md: RsMd;
  links: RsLn[];
  /** 1-based line of the entry's opening tag. */
  line: number;
}

export type Severity = 'error' | 'warning';

export interface Finding {
  /** `error`: the document is unusable; `warning`: the spec is violated but processing can go on. */
  severity: Severity;
  /** Stable machine-readable code, e.g. `missing-at`, `change-order`. */
  code: string;
  message: string;
  line?: number;
}

/** What a whole read of one document yields, apart from the entries (which are streamed). */
export interface DocumentSummary {
  url: string;
  root: RootElement;
  capability: Capability;
  /** True for a `sitemapindex` root (a ... List Index, Resource Dump Index, ...). */
  isIndex: boolean;
  md: RsMd;
  links: RsLn[];
  entries: number;
  findings: Finding[];
}

/** What a document is, known once its rs:md was read, before its entries. */
export interface DocumentHead {
  root: RootElement;
  capability: Capability;
  isIndex: boolean;
  md: RsMd;
  /** The root's rs:ln read so far: the schema puts them all before the first entry. */
  links: RsLn[];
}

/** Algorithms accepted in `hash` attributes: space-separated `alg:hexdigest` tokens. */
export const HASH_ALGORITHMS = { md5: 32, 'sha-1': 40, 'sha-256': 64 } as const;
export type HashAlgorithm = keyof typeof HASH_ALGORITHMS;
