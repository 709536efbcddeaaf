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
  /**
   * How tokens and passwords are kept at rest (the Settings token and each mirror's credentials): sealed with the OS
   * keychain (Electron's safeStorage) or in clear in a file only the user can read. Null: not kept (a run only).
   */
  secrets: { sealed: boolean; description: string } | null;
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
  /** When the answer could not be had or read to its end (a network error, a stall, a body that broke off). */
  unreadable?: boolean;
  /** The HTTP status of the answer, when one came (401 and 403 say the Source wants a sign-in). */
  status?: number;
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
  /** Children not in `children` (it holds the first 10,000 at most); absent when none was left out. */
  childrenLeftOut?: number;
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
  /**
   * Sent as `Authorization: Bearer ...` to `tokenOrigin` only. Kept from an earlier version without an origin, it is
   * sent nowhere until the person names the Source it is for.
   */
  bearerToken: string | null;
  /** The origin (scheme, host, port) the token is sent to, and no other; null: none named yet. */
  tokenOrigin: string | null;
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
  /** The mirrors the app remembers, whenever one is added, forgotten, or changes state. */
  'mirrors.changed': { mirrors: MirrorSummary[] };
  /** A running sync or audit, in batches: at most about 4 a second per mirror, never one per resource. */
  'mirror.progress': MirrorProgress;
  /** A sync ended (completed, failed, cancelled, paused) or could not run. */
  'mirror.ended': MirrorRunEnd;
  'audit.ended': MirrorRunEnd & { audit: AuditView | null };
  /** `read` of `total` items of the report read so far (a filter may write fewer of them). */
  'audit.exportProgress': { path: string; runId: number; file: string; read: number; total: number };
  'live.events': LiveBatch;
  /** `message`: plain words for a person. */
  'events.missed': { reason: 'overrun' | 'restart'; message: string };
}

export type { LiveEvent, Subscription, ChangeSummary, AppliedChange, Ping } from '../engine/live/model.ts';
export type { SelfTest } from '../engine/live/engine.ts';
export type { LiveBatch } from '../app/live-batch.ts';
import type { LiveBatch } from '../app/live-batch.ts';
import type { RunRecord } from '../engine/mirror/state.ts';

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
  code: 'invalid-arguments' | 'unknown-command' | 'not-found' | 'document' | 'network' | 'cancelled' | 'mirror' | 'sign-in' | 'internal';
  /** A plain sentence for people: no codes, no schema language. */
  message: string;
  /** For invalid-arguments: the argument the message is about (e.g. "timeoutMs"), so a form can mark its field. */
  field?: string;
  /** For sign-in (the Source answered 401 or 403): the origin a sign-in is for (`sources.signIn`). */
  origin?: string;
  /** For sign-in: true when credentials were sent and refused (they were wrong or are not allowed this). */
  refusedSignIn?: boolean;
}

/** What the UI may see of a Source's sign-in: never the password or the token. */
export type SignInShown = { origin: string; scheme: 'basic'; user: string } | { origin: string; scheme: 'bearer' };

/** A sign-in the Source accepted, and kept: `checked` is the URL asked with it and what it answered. */
export interface SignInResult {
  signIn: SignInShown;
  checked: { url: string; status: number };
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

// ---- Mirrors ----

export type { AuditReport } from '../engine/mirror/audit.ts';
export type { AuditRow, AuditStatus } from '../engine/mirror/audit-report.ts';

export const MIRROR_MODES = ['auto', 'baseline', 'incremental'] as const;
export type MirrorMode = (typeof MIRROR_MODES)[number];
export const DELETE_POLICIES = ['keep', 'delete', 'quarantine'] as const;
export type MirrorDeletePolicy = (typeof DELETE_POLICIES)[number];

/** How the app runs a mirror's syncs (kept in the app's store beside the mirror's path). */
export interface MirrorOptions {
  deletePolicy: MirrorDeletePolicy;
  /** Connections per host. */
  concurrency: number;
  /** Pause after each request, per connection. */
  delaySeconds: number;
  /** A sync every so many hours while the app runs (after the last one ended); 0: none. */
  syncEveryHours: number;
  /**
   * For an interval of whole days: the time of day (minutes after midnight on the computer's clock) the sync starts
   * at, instead of counting from the last one's end; null: any time.
   */
  syncAtMinute: number | null;
}

/**
 * One run of the mirror's journal (sync or audit), as the engine records it (`status` `interrupted`: the process
 * stopped, or the run was paused, message "Paused"; the next sync resumes it), without the process id.
 */
export type MirrorRun = Omit<RunRecord, 'pid'>;

/**
 * What the mirror is doing: `ready` (nothing running), `running`, `pausing` (in-flight resources finishing),
 * `cancelling`, `auditing`, `paused` / `interrupted` (its last sync can be resumed), `missing` (the folder or its
 * state is gone), `busy` (another process, e.g. `rsdesk sync`, holds its lock).
 */
export type MirrorStatus = 'ready' | 'running' | 'pausing' | 'cancelling' | 'auditing' | 'paused' | 'interrupted' | 'missing' | 'busy';

export interface MirrorSummary {
  /** The mirror's folder (absolute): its id. */
  path: string;
  /** The folder's name. */
  name: string;
  /** What the mirror was made from (a Capability List, a Resource List, a Change List…). */
  url: string | null;
  capabilityListUrl: string | null;
  resourceListUrl: string | null;
  changeListUrl: string | null;
  options: MirrorOptions;
  addedAt: string;
  status: MirrorStatus;
  /** Why it is `missing` or `busy`, in a sentence. */
  problem: string | null;
  /** The datetime the mirror is in sync up to (the last complete baseline's `at`, or the last change applied). */
  checkpoint: string | null;
  /**
   * Changes live notifications showed were missed (a gap) and no Change List could give: `from`/`until` of the
   * period, `since` when that was found. Cleared by a sync that brings the mirror in step past `until`.
   */
  needsSync: { from: string; until: string; since: string } | null;
  /**
   * Live notifications whose resources failed keep the checkpoint back (engine live/checkpoint.ts): `at` where it is
   * held, `since` when the oldest of those runs started, `failures` still standing (no later run mirrored them), in
   * the runs `runIds` (oldest first). `overflow`: more than the hold lists; only a sync lets it go.
   */
  liveHold: { at: string; since: string | null; failures: number; runIds: number[]; overflow: boolean } | null;
  /** Resources the mirror holds. */
  resources: number;
  /** The last sync run (not audit). */
  lastRun: MirrorRun | null;
  lastAudit: MirrorRun | null;
  /** The last sync stopped before its end (paused, or the app was closed): Resume takes it up. */
  resumable: boolean;
  /**
   * When the mirror's scheduled sync is due (ISO datetime; past: it starts within a minute), or null: no schedule, or
   * none can start now (a run going on, a run a person paused, the folder missing or in use). A run the app's closing,
   * a kill or the Source stopped has one: the schedule resumes it.
   */
  nextSync: string | null;
  /**
   * The scheduled sync that could not start when it was due (`at`), and why (`because`, in words: "the folder was in
   * use by rsdesk sync (process 4242)"): it is tried again at `nextSync`. Null once a sync has ended since.
   */
  putOff: { at: string; because: string } | null;
  /**
   * Until when the Source asked, with a Retry-After, not to be asked again (ISO datetime), while the run it paused
   * waits to be taken up: `nextSync` is no sooner (a week after the pause at most). Null otherwise.
   */
  sourceWait: string | null;
  /** The progress of the run going on, if any. */
  progress: MirrorProgress | null;
}

/** A running sync or audit, as the run view shows it. Sent at most about 4 times a second per run. */
export interface MirrorProgress {
  path: string;
  kind: 'sync' | 'audit';
  mode: 'baseline' | 'incremental' | null;
  dryRun: boolean;
  phase: 'discovery' | 'lists' | 'fetch' | 'finishing' | 'audit';
  /** A pause was asked for: the resources in flight are finishing. */
  pausing: boolean;
  cancelling: boolean;
  /** A retry of a run's failures: paused, it is taken up again by Resume (not by a sync). */
  retry: boolean;
  /** Resources done (fetched, unchanged, skipped or failed). */
  done: number;
  /** Resources listed so far; the total once `totalKnown`. */
  total: number;
  totalKnown: boolean;
  bytesDone: number;
  /** What the listed `rs:md length`s add up to (0 when the list gives none). */
  bytesTotal: number;
  /** Resources per second and bytes per second over the last seconds. */
  rate: number;
  byteRate: number;
  /** Seconds left at the current rate, when the total is known. */
  etaSeconds: number | null;
  elapsedSeconds: number;
  created: number;
  updated: number;
  deleted: number;
  unchanged: number;
  skipped: number;
  failed: number;
  /** Resources the mirror holds now, this run's work counted as it settles; null for audits and dry runs. */
  resources: number | null;
  /** The run's last failure so far (a Source that went down shows at once). */
  latestFailure: { uri: string; reason: string } | null;
}

/** How a run ended, for the run view and notifications. */
export interface MirrorRunEnd {
  path: string;
  kind: 'sync' | 'audit';
  /** `paused`: stopped on request, resumable; `error`: the run could not run at all (message says why). */
  status: 'completed' | 'failed' | 'cancelled' | 'paused' | 'error';
  message: string | null;
  /** The message in its parts, so that no one reads them back out of its wording. */
  summary: RunEndSummary;
  mode: 'baseline' | 'incremental' | null;
  created: number;
  updated: number;
  deleted: number;
  unchanged: number;
  skipped: number;
  failed: number;
  bytes: number;
  seconds: number;
  /** What the run said along the way (a list read leniently, nothing deleted and why…), the first MAX_RUN_NOTES. */
  notes?: string[];
  /**
   * Resources the Source no longer lists that the run did not remove: with the deletion policy keep, or held back
   * because they were more than the Source lists (then `heldBack`, and a sync allowing it removes them).
   */
  kept?: number;
  heldBack?: boolean;
}

/**
 * A run's end as its message says it: the run view's one-sentence status is `headline`, followed by what changed
 * (from the counts) when `changes`; `rest` is the message past its headline and counts, for reading on screen.
 */
export interface RunEndSummary {
  /** "Baseline completed", "Baseline ended with 2 failures", "Paused after 12 resources", "Cancelled": no final stop. */
  headline: string;
  /** The run completed: its sentence names what changed ("Baseline completed: 40 created"). */
  changes: boolean;
  /** "Retry fetches what failed again.", or ''. */
  rest: string;
}

/** How many of a run's notes reach its end (each is clipped); the rest are counted in a last one. */
export const MAX_RUN_NOTES = 20;

export interface MirrorDetail extends MirrorSummary {
  /** Newest first, at most 200. */
  runs: MirrorRun[];
  access: MirrorAccess;
  /** Extra request headers sent to the Source's origin (kept in the mirror's folder, in clear: no secrets here). */
  headers: { name: string; value: string }[];
  /**
   * How long the Source may refuse every request of a run before the run pauses, in seconds (kept in the mirror's
   * folder, as `rsdesk sync --pause-after-refusals` keeps it); null: the default, REFUSAL_SECONDS.default.
   */
  pauseAfterRefusalsSeconds: number | null;
}

/**
 * How the mirror authenticates to its Source (never the secret itself). `settings`: with the bearer token of Settings,
 * if one is set for its origin (or the copy of it the mirror kept); `basic`: with a user name and a password of its own, which this
 * computer keeps (`kept`) or not (then a run stops before any request and says so).
 */
export type MirrorAccess =
  | { scheme: 'settings'; origin: string | null }
  | { scheme: 'basic'; origin: string; user: string; kept: boolean }
  /** A token of the mirror's own (Access tab), kept on this computer or not. */
  | { scheme: 'bearer'; origin: string; kept: boolean };

export interface RunFailures {
  runId: number;
  total: number;
  /** Failures whose resource no later run has mirrored since. */
  open: number;
  /**
   * At most 1,000, those still standing first; `fixedBy`: the later run that mirrored the resource since, or (`gone`)
   * found it deleted at the Source while the mirror had no copy, so that nothing was left to do.
   */
  failures: { uri: string; reason: string; fixedBy: number | null; gone: boolean }[];
}

/** An audit's result as the app keeps it (the last one per mirror, while the app runs). */
export interface AuditView {
  path: string;
  at: string;
  rehash: boolean;
  seconds: number;
  report: import('../engine/mirror/audit.ts').AuditReport;
}
