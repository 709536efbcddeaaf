// Result and event types of the contract. Types only: the renderer imports them with `import type`.
import type { Capability, DocumentSummary, Entry, Finding, RsLn, RsMd } from '../engine/documents/model.ts';

export type { Capability, DocumentSummary, Entry, Finding, RsLn, RsMd };
export type { EntryField, EntryShape } from '../engine/documents/shape.ts';
export type { CheckedDocument, CheckFinding, CheckProgress, CheckReport, CheckSummary } from '../engine/check/model.ts';

export interface AppInfo {
  name: string;
  version: string;
  adapter: 'electron' | 'http';
  platform: string;
}

export interface SavedSource {
  id: number;
  /** Host name of the Source, or what the person typed. */
  name: string;
  /** The URL the person pasted. */
  startUrl: string;
  sourceDescriptionUrl: string | null;
  capabilityListUrls: string[];
  addedAt: string;
}

export const DISCOVERY_ROUTES = [
  'document',
  'well-known',
  'link-header',
  'html-link',
  'robots',
  'up',
  'index',
] as const;
export type DiscoveryRoute = (typeof DISCOVERY_ROUTES)[number];

/** One route tried during discovery and what it found. */
export interface DiscoveryStep {
  route: DiscoveryRoute;
  /** The URL this route fetched or followed. */
  url: string;
  found: boolean;
  /** Capability of the ResourceSync document found there, if any. */
  capability?: Capability;
  /** Human-readable outcome: "Source Description", "404 Not Found", "not XML", ... */
  message: string;
  /** When the reader refused the document there (a DOCTYPE, a wrong namespace, not XML…): why, in full. */
  refused?: string;
}

export interface DiscoveredCapability {
  capability: string;
  url: string;
  /** WebSub hub of a change-notification channel. */
  hub?: string;
}

export interface DiscoveryResult {
  start: string;
  routes: DiscoveryStep[];
  sourceDescription: string | null;
  capabilityLists: { url: string; capabilities: DiscoveredCapability[] }[];
  findings: Finding[];
}

/**
 * A child named by a Source Description, Capability List or index, or a dump's Manifest (the `contents` link of one
 * of its packages): what the tree shows below a node.
 */
export interface ChildRef {
  url: string;
  capability?: string;
  hub?: string;
  md: RsMd;
  links: RsLn[];
  /** For a Manifest: the package (the dump's entry) it describes. */
  package?: string;
}

/** A fetched and checked document, as the tree and the detail pane show it. */
export interface DocumentView extends DocumentSummary {
  fetchedAt: string;
  /** For change documents: true when `until` is absent (the document is still growing). */
  open: boolean | null;
  children: ChildRef[];
  /** Size of the raw document in bytes. */
  bytes: number;
  /** What the entries have in common and which fields they use: the entries table's columns. */
  shape: import('../engine/documents/shape.ts').EntryShape;
}

export const ENTRY_SORT_KEYS = ['index', 'loc', 'lastmod', 'datetime', 'length'] as const;
export type EntrySortKey = (typeof ENTRY_SORT_KEYS)[number];

export interface EntryPage {
  /** Entries in the document. */
  total: number;
  /** Entries matching the filter. */
  matched: number;
  offset: number;
  rows: Entry[];
}

export interface RawDocument {
  text: string;
  truncated: boolean;
  bytes: number;
}

export interface Settings {
  /** Sent as `Authorization: Bearer ...` on every request to Sources. */
  bearerToken: string | null;
  /** Per-request timeout in milliseconds. */
  timeoutMs: number;
}

export interface Events {
  'discovery.step': { runId: string; step: DiscoveryStep };
  /** Discovery started fetching url (the UI shows it, with the time elapsed). */
  'discovery.fetching': { runId: string; url: string };
  'sources.changed': { sources: SavedSource[] };
  'document.progress': { url: string; entries: number; bytes: number };
  /** At most about 5 a second per run. */
  'check.progress': { runId: string } & import('../engine/check/model.ts').CheckProgress;
  'live.events': LiveBatch;
}

export type { LiveEvent, Subscription, ChangeSummary, AppliedChange, Ping } from '../engine/live/model.ts';
export type { SelfTest } from '../engine/live/engine.ts';
export type { LiveBatch } from '../app/live-batch.ts';
import type { LiveBatch } from '../app/live-batch.ts';

/** The callback server's settings. */
export interface LiveSettings {
  /** The address it listens on (127.0.0.1: this machine only). */
  host: string;
  port: number;
  /** The URL hubs reach it by (a tunnel, a reverse proxy), when they cannot reach this machine directly. */
  publicUrl: string | null;
}

export interface LiveStatus {
  settings: LiveSettings;
  /** http://host:port as listening, null when the server is not running. */
  address: string | null;
  /** What hubs are given as the start of callback URLs. */
  callbackBase: string | null;
  /** Why the server is not running, in words. */
  error: string | null;
  /** Where new mirror folders go unless the person picks another. */
  suggestedFolder: string;
}

/** A subscription as the app shows it; `now` is the engine's clock, for lease countdowns. */
export type SubscriptionView = import('../engine/live/model.ts').Subscription & { now: string };

/** Errors cross the boundary as plain objects. */
export interface CommandError {
  code: 'invalid-arguments' | 'unknown-command' | 'not-found' | 'document' | 'network' | 'cancelled' | 'internal';
  /** A plain sentence for people: no codes, no schema language. */
  message: string;
  /** For invalid-arguments: the argument the message is about (e.g. "timeoutMs"), so a form can mark its field. */
  field?: string;
}

/** What adding a Source did. */
export interface AddSourceResult {
  /** The saved Source: the new one, or the one already saved. */
  source: SavedSource;
  /** false: the same Source was already saved (same start URL up to a trailing slash, Source Description or Capability Lists); nothing was added. */
  created: boolean;
  discovery: DiscoveryResult;
  /** What the pasted URL itself turned out to be. */
  pasted: {
    /** The pasted text as a URL (a bare host gets its scheme). */
    url: string;
    /** Its capability when it is itself a ResourceSync document, so the UI can open it. */
    capability: Capability | null;
    /** When the pasted URL is a document the reader refused: why, in plain words (even if another route found the Source). */
    refused: string | null;
  };
}
