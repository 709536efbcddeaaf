// A mirror's own state, inside its folder (`.resourcesync/state.sqlite`), so the folder is self-contained: the
// inventory (one row per mirrored URI), the run journal with its failures, the checkpoint and the binding (which
// Source list the folder mirrors, with which maps and options). Schema by the store's versioned migrations.
import { accessSync, constants, mkdirSync, statfsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { Statements } from '../../store/statements.ts';
import { migrate, SchemaTooNewError, schemaVersion, type Migration } from '../../store/migrations.ts';
import { transaction } from '../../store/tx.ts';
import { planPathMoves } from './respell.ts';
import { canonicalUri } from './uri.ts';
import { DiskFullError } from './disk-full.ts';
import type { Digests } from './fixity.ts';
import { caseKey, type ClaimStore, type MapRule, type PathMap } from './local-path.ts';
import type { SourceSettings } from './settings.ts';

import { STATE_DIR } from './state-dir.ts';
import { checkStateDir } from './within-folder.ts';

export { STATE_DIR };
export const STATE_FILE = 'state.sqlite';

/**
 * Said of a folder whose state names no Source: a state file emptied (zero bytes, its tables gone) opens as a new
 * state, and a mirror is bound in the run that made it, so a folder left unbound is one whose state was lost. Its
 * files are still there: a baseline with an empty inventory keeps each local file that matches the length and hashes
 * the Source lists (sync.test.ts: "rebuilds an emptied state").
 */
export class UnboundStateError extends Error {
  constructor(dest: string) {
    super(unboundStateMessage(dest));
    this.name = 'UnboundStateError';
  }
}

export function unboundStateMessage(dest: string): string {
  return (
    `The mirror's state in ${dest} (.resourcesync/state.sqlite) is empty or damaged: it no longer says which Source the folder mirrors. ` +
    `A sync given the Source's URL rebuilds it from the files already in the folder: those that match the length and hashes the Source lists are kept, not fetched again.`
  );
}
/** How long a write waits for another connection's write lock before it gives up. */
const BUSY_TIMEOUT_MS = 5_000;
/** The most a mirror state's WAL file keeps once emptied. */
export const WAL_KEEP_BYTES = 16 * 1024 * 1024;

export const MIRROR_MIGRATIONS: readonly Migration[] = [
  (db) => {
    db.exec(`
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE inventory (
        uri TEXT PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        length INTEGER,
        md5 TEXT,
        sha1 TEXT,
        sha256 TEXT,
        lastmod TEXT,
        etag TEXT,
        last_modified TEXT,
        type TEXT,
        -- verified | unverifiable | unchecked | deleted | quarantined | damaged
        status TEXT NOT NULL,
        verified_at TEXT,
        run_id INTEGER
      ) WITHOUT ROWID;
      CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        mode TEXT NOT NULL,
        list_url TEXT,
        started_at TEXT NOT NULL,
        ended_at TEXT,
        -- running | completed | failed | cancelled | interrupted
        status TEXT NOT NULL,
        created INTEGER NOT NULL DEFAULT 0,
        updated INTEGER NOT NULL DEFAULT 0,
        deleted INTEGER NOT NULL DEFAULT 0,
        unchanged INTEGER NOT NULL DEFAULT 0,
        skipped INTEGER NOT NULL DEFAULT 0,
        failed INTEGER NOT NULL DEFAULT 0,
        bytes INTEGER NOT NULL DEFAULT 0,
        phases TEXT NOT NULL DEFAULT '{}',
        message TEXT,
        pid INTEGER
      );
      CREATE TABLE failures (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        uri TEXT NOT NULL,
        reason TEXT NOT NULL
      );
      CREATE INDEX failures_by_run ON failures (run_id);
    `);
  },
  (db) => {
    // Metadata resources fetched beside the resources they describe (rs:ln rel="describedby", --with-metadata):
    // their files and inventory rows are ordinary ones; this says which resource each describes (metadata.ts).
    db.exec(`
      CREATE TABLE described_by (
        uri TEXT NOT NULL,
        describes TEXT NOT NULL,
        PRIMARY KEY (uri, describes)
      ) WITHOUT ROWID;
      CREATE INDEX described_by_resource ON described_by (describes);
    `);
  },
  (db) => {
    // The case-folded path (caseKey), indexed: path clashes are looked up in the inventory instead of loading every
    // path of a mirror that may hold millions (local-path.ts, PathClaims).
    db.exec('ALTER TABLE inventory ADD COLUMN path_key TEXT');
    const page = db.prepare('SELECT uri, path FROM inventory WHERE uri > ? ORDER BY uri LIMIT 10000');
    const set = db.prepare('UPDATE inventory SET path_key = ? WHERE uri = ?');
    for (let after = ''; ; ) {
      const rows = page.all(after) as { uri: string; path: string }[];
      if (rows.length === 0) break;
      for (const r of rows) set.run(caseKey(r.path), r.uri);
      after = rows.at(-1)!.uri;
    }
    db.exec('CREATE INDEX inventory_by_path_key ON inventory (path_key)');
  },
  (db) => {
    // Live change notifications (engine/live): the WebSub subscriptions that feed this mirror, and the inbox of
    // every delivery, its raw payload kept durably before the hub was answered, with how far it got.
    db.exec(`
      CREATE TABLE live_subscriptions (
        id INTEGER PRIMARY KEY,
        topic TEXT NOT NULL,
        hub TEXT NOT NULL,
        callback_token TEXT NOT NULL UNIQUE,
        callback_url TEXT NOT NULL,
        secret TEXT,
        -- pending | active | retrying | unsubscribing | unsubscribed | denied | expired
        status TEXT NOT NULL,
        -- subscribe | unsubscribe while a request awaits the hub's verification
        pending_mode TEXT,
        lease_requested INTEGER,
        lease_seconds INTEGER,
        verified_at TEXT,
        expires_at TEXT,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at TEXT,
        last_error TEXT,
        cursor TEXT,
        last_notification_at TEXT,
        created_at TEXT NOT NULL,
        UNIQUE (topic, hub)
      );
      CREATE TABLE live_inbox (
        id INTEGER PRIMARY KEY,
        subscription_id INTEGER NOT NULL REFERENCES live_subscriptions(id) ON DELETE CASCADE,
        received_at TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        content_type TEXT,
        link TEXT,
        body BLOB,
        -- received | applying | applied | seen | duplicate | covered | rejected
        status TEXT NOT NULL,
        from_at TEXT,
        until_at TEXT,
        run_id INTEGER,
        reason TEXT
      );
      CREATE INDEX live_inbox_open ON live_inbox (subscription_id, status);
      CREATE INDEX live_inbox_hash ON live_inbox (subscription_id, sha256);
    `);
  },
  (db) => {
    // Audit reports, kept with the audit's run so the last one is there after a restart (the app's Audit tab,
    // `rsdesk audit --last`): one row per report, one row per item that is not in sync. The newest few are kept.
    db.exec(`
      CREATE TABLE audit_reports (
        run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
        at TEXT NOT NULL,
        rehash INTEGER NOT NULL,
        seconds REAL NOT NULL,
        in_sync INTEGER NOT NULL,
        in_sync_count INTEGER NOT NULL
      );
      CREATE TABLE audit_items (
        run_id INTEGER NOT NULL REFERENCES audit_reports(run_id) ON DELETE CASCADE,
        -- missing | extra | changed | unverifiable
        status TEXT NOT NULL,
        item TEXT NOT NULL,
        reason TEXT
      );
      CREATE INDEX audit_items_by_run ON audit_items (run_id);
    `);
  },
  (db) => {
    // The rows of resources that are gone (deleted, quarantined), indexed apart: the mirror's size is then all rows
    // less these, counted from two indexes (~15 ms on 1,000,000 rows) instead of a scan of the table (~100–160 ms,
    // in the app's main process each time a mirror is shown or a run starts). Rows of resources that are there,
    // nearly all of them, do not enter this index, so recording them costs nothing more.
    db.exec(`CREATE INDEX inventory_gone ON inventory (status) WHERE status IN ('deleted', 'quarantined')`);
  },
  (db) => {
    // How long a run stood stopped (paused, or interrupted with its end recorded) before it was taken up again, in
    // all: its end minus its start, less this, is the time it ran.
    db.exec('ALTER TABLE runs ADD COLUMN paused_seconds REAL NOT NULL DEFAULT 0');
  },
  (db) => {
    // When a run last recorded work (each batch's commit): a run killed without a word is taken to have stopped
    // then, so that the time it stood dead before it was resumed is not counted as time it ran.
    db.exec('ALTER TABLE runs ADD COLUMN active_at TEXT');
  },
  (db) => {
    // Resources are known by the form of their URI a URL parser writes (uri.ts). A row kept under another spelling
    // takes that form, so the next run finds it instead of making a second row and file for the same resource;
    // where a row has that form already (both spellings were mirrored), the other stays, no longer listed.
    canonicalizeRows(db, false);
  },
  (db) => {
    // What a retry is of (the run whose failures it fetches again) and the URIs it was asked for: a retry paused,
    // or stopped by a kill, is taken up again for those it has not settled yet, and only those.
    db.exec(`
      CREATE TABLE retry_items (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        of_run INTEGER NOT NULL,
        uri TEXT NOT NULL,
        PRIMARY KEY (run_id, uri)
      ) WITHOUT ROWID;
    `);
  },
  (db) => {
    // The form of a URI now has its percent-escapes normalized (uri.ts: `%7Euser` is `~user`, `%2f` is `%2F`): rows
    // kept under another spelling take it, as in migration 9. Only a URI with a `%` can change.
    canonicalizeRows(db, true);
  },
  (db) => {
    // The case-folded path (caseKey) now goes through upper case, so that names NTFS or APFS take for one (`ς` and
    // `σ`) clash here too: the key of each path that is not ASCII (the others' keys are unchanged) is worked out anew.
    // (Paths with a character past ASCII picked out by SQLite: a mirror of a million ASCII paths is read in C.)
    const page = db.prepare('SELECT uri, path, path_key FROM inventory WHERE uri > ? AND path GLOB ? ORDER BY uri LIMIT 10000');
    const set = db.prepare('UPDATE inventory SET path_key = ? WHERE uri = ?');
    for (let after = ''; ; ) {
      const rows = page.all(after, '*[^\u0001-\u007f]*') as { uri: string; path: string; path_key: string | null }[];
      if (rows.length === 0) break;
      for (const r of rows) {
        const key = caseKey(r.path);
        if (key !== r.path_key) set.run(key, r.uri);
      }
      after = rows.at(-1)!.uri;
    }
  },
  (db) => {
    // Failures settled with nothing to fetch: a retry found the resource deleted at the Source and no copy of it in
    // the mirror. No inventory row says so, and without this the failure stood for every later retry (failuresSince).
    db.exec(`CREATE TABLE gone (uri TEXT PRIMARY KEY, run_id INTEGER NOT NULL) WITHOUT ROWID`);
  },
  (db) => {
    // Migrations 9 and 11 gave inventory rows the form canonicalUri writes, but left the other rows that name a
    // resource under the old spelling, orphans no row matched any more: a failure stood for good (no later run could
    // settle it, and an unfinished baseline never completed), an interrupted retry kept an item it could never settle,
    // and a metadata link whose canonical twin existed (UPDATE OR IGNORE) kept its metadata from being deleted with
    // its resource. They take the form now; a duplicate of a row that has it already goes. Rows of a resource whose
    // inventory row kept its spelling (both spellings were mirrored) keep theirs, as that row does.
    canonicalizeOrphans(db);
  },
  (db) => {
    // What the list reader found against the spec in the lists a run read (list-findings.ts): the first
    // MAX_RUN_FINDINGS of them, and how many there were in all.
    db.exec(`
      CREATE TABLE run_findings (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        document TEXT NOT NULL,
        severity TEXT NOT NULL,
        code TEXT NOT NULL,
        message TEXT NOT NULL,
        line INTEGER
      );
      CREATE INDEX run_findings_by_run ON run_findings (run_id);
      ALTER TABLE runs ADD COLUMN findings INTEGER NOT NULL DEFAULT 0;
    `);
  },
  (db) => {
    // Names shaped like Windows short names (`PROGRA~1`) have their `~` escaped now, and the code points HFS+ ignores
    // are escaped (local-path.ts); an older mirror's files keep the names that let two URIs share a file. The moves
    // are planned here, on the state alone, and carried out by the next sync under the mirror's lock (respell.ts).
    planPathMoves(db);
  },
  (db) => {
    // Planned again: names after which local-path.ts adds a marker or a query (`PROGRA~1%dir`, `x%q~1`) and names
    // with `ı` or `ſ` (which NTFS upper-cases to ASCII) are spelled otherwise now (respell.ts).
    planPathMoves(db);
  },
];

/** Gives failures, retry items and described_by links the form of their URI (migration 14); see there. */
function canonicalizeOrphans(db: DatabaseSync): void {
  const kept = db.prepare('SELECT 1 FROM inventory WHERE uri = ?');
  const moved = (uri: string): string | null => {
    const canonical = canonicalUri(uri);
    return canonical === uri || kept.get(uri) !== undefined ? null : canonical;
  };
  const failures = db.prepare('SELECT rowid AS id, uri FROM failures WHERE rowid > ? ORDER BY rowid LIMIT 10000');
  const setFailure = db.prepare('UPDATE failures SET uri = ? WHERE rowid = ?');
  for (let after = 0; ; ) {
    const rows = failures.all(after) as { id: number; uri: string }[];
    if (rows.length === 0) break;
    for (const r of rows) {
      const canonical = moved(r.uri);
      if (canonical !== null) setFailure.run(canonical, r.id);
    }
    after = Number(rows.at(-1)!.id);
  }
  // Paged by key (a mirror may hold a link per resource); a row renamed may come round again, then as it is.
  const items = db.prepare('SELECT run_id AS runId, uri FROM retry_items WHERE (run_id, uri) > (?, ?) ORDER BY run_id, uri LIMIT 10000');
  const setItem = db.prepare('UPDATE OR IGNORE retry_items SET uri = ? WHERE run_id = ? AND uri = ?');
  const dropItem = db.prepare('DELETE FROM retry_items WHERE run_id = ? AND uri = ?');
  for (let after = [0, '']; ; ) {
    const rows = items.all(...after) as { runId: number; uri: string }[];
    if (rows.length === 0) break;
    for (const r of rows) {
      const canonical = moved(r.uri);
      if (canonical === null) continue;
      setItem.run(canonical, r.runId, r.uri);
      dropItem.run(r.runId, r.uri);
    }
    after = [rows.at(-1)!.runId, rows.at(-1)!.uri];
  }
  const links = db.prepare('SELECT uri, describes FROM described_by WHERE (uri, describes) > (?, ?) ORDER BY uri, describes LIMIT 10000');
  const setLink = db.prepare('UPDATE OR IGNORE described_by SET uri = ?, describes = ? WHERE uri = ? AND describes = ?');
  const dropLink = db.prepare('DELETE FROM described_by WHERE uri = ? AND describes = ?');
  for (let after = ['', '']; ; ) {
    const rows = links.all(...after) as { uri: string; describes: string }[];
    if (rows.length === 0) break;
    for (const r of rows) {
      const uri = moved(r.uri) ?? r.uri;
      const describes = moved(r.describes) ?? r.describes;
      if (uri === r.uri && describes === r.describes) continue;
      setLink.run(uri, describes, r.uri, r.describes);
      dropLink.run(r.uri, r.describes);
    }
    after = [rows.at(-1)!.uri, rows.at(-1)!.describes];
  }
}

/** Gives inventory rows (and their described_by links) the form canonicalUri writes, unless a row has it already. */
function canonicalizeRows(db: DatabaseSync, escapedOnly: boolean): void {
  const page = db.prepare(`SELECT uri FROM inventory WHERE uri > ?${escapedOnly ? " AND instr(uri, '%') > 0" : ''} ORDER BY uri LIMIT 10000`);
  const taken = db.prepare('SELECT 1 FROM inventory WHERE uri = ?');
  const rename = db.prepare('UPDATE inventory SET uri = ? WHERE uri = ?');
  const renameDescribed = db.prepare('UPDATE OR IGNORE described_by SET uri = ? WHERE uri = ?');
  const renameDescribes = db.prepare('UPDATE OR IGNORE described_by SET describes = ? WHERE describes = ?');
  let after = '';
  for (;;) {
    const rows = page.all(after) as { uri: string }[];
    if (rows.length === 0) break;
    for (const { uri } of rows) {
      const canonical = canonicalUri(uri);
      if (canonical === uri || taken.get(canonical) !== undefined) continue;
      rename.run(canonical, uri);
      renameDescribed.run(canonical, uri);
      renameDescribes.run(canonical, uri);
    }
    after = rows.at(-1)!.uri;
  }
}

/** How many audit reports a mirror keeps (the newest). */
export const KEPT_AUDIT_REPORTS = 5;

/** An audit report as kept in the mirror's state. */
export interface SavedAudit {
  runId: number;
  /** When the audit ended. */
  at: string;
  rehash: boolean;
  seconds: number;
  report: {
    inSync: boolean;
    inSyncCount: number;
    missing: string[];
    extra: string[];
    changed: { uri: string; reason: string }[];
    unverifiable: { uri: string; reason: string }[];
    kept?: string[];
    notes?: string[];
    /** How many items of each kind the report holds (its lists may hold only the first few). */
    counts?: { missing: number; extra: number; changed: number; unverifiable: number; kept: number };
    runId?: number;
  };
}

export interface Binding {
  /** What the person gave (a site, a Source Description, a Capability List, a list). */
  url: string;
  capabilityListUrl: string | null;
  resourceListUrl: string | null;
  changeListUrl: string | null;
  resourceDumpUrl: string | null;
  changeDumpUrl: string | null;
  maps: PathMap[];
  /**
   * How the maps' prefixes match (local-path.ts), also stamped on each map: absent in mirrors made when a prefix
   * matched as a bare string prefix, which keep that rule while their inventory holds a URI the segment rule would map
   * elsewhere (sync.ts, settleMapRule).
   */
  mapRule?: MapRule;
  allowHosts: string[];
  createdAt: string;
  /** The mirror's own id (random): the key of its credentials in a SecretStore. Absent in mirrors made before it. */
  id?: string;
  /** Per-Source settings (absent in mirrors made before them: the defaults). */
  settings?: SourceSettings;
}

/**
 * `damaged`: an audit found the local file no longer as it was verified (other bytes, another size); the next sync
 * fetches it again, whatever its recorded hashes say.
 */
export type InventoryStatus = 'verified' | 'unverifiable' | 'unchecked' | 'deleted' | 'quarantined' | 'damaged';

export interface InventoryRow {
  uri: string;
  path: string;
  length: number | null;
  digests: Digests;
  lastmod: string | null;
  etag: string | null;
  lastModified: string | null;
  type: string | null;
  status: InventoryStatus;
  verifiedAt: string | null;
  runId: number | null;
}

export type RunKind = 'baseline' | 'incremental' | 'audit';
export type RunStatus = 'running' | 'completed' | 'failed' | 'cancelled' | 'interrupted';

export interface Synced {
  ms: number;
  readAt: number;
}

export interface RunCounts {
  created: number;
  updated: number;
  deleted: number;
  unchanged: number;
  skipped: number;
  failed: number;
  bytes: number;
}

export interface RunRecord extends RunCounts {
  id: number;
  kind: RunKind;
  mode: string;
  listUrl: string | null;
  startedAt: string;
  endedAt: string | null;
  status: RunStatus;
  /** Seconds per phase (discovery, lists, fetch, …). */
  phases: Record<string, number>;
  message: string | null;
  pid: number | null;
  /**
   * Seconds the run stood stopped between the end recorded when it was paused (or otherwise stopped) and the moment
   * it was taken up again, added up over its resumes. A pause going on now is not in it (the run's `endedAt` marks
   * its start). A process killed leaves no end, so the time until a resume after that is not known and not counted.
   */
  pausedSeconds: number;
  /** How many findings against the spec the list reader made in the lists this run read (runFindings: the first ones). */
  findingCount: number;
}

/** A finding of the list reader in a list a run read: which document, and what it breaks. */
export interface RunFinding {
  document: string;
  severity: 'error' | 'warning';
  code: string;
  message: string;
  line?: number;
}

/** The Source asked (Retry-After) not to be asked again before `until` (ISO datetime); `runId`: the run it paused. */
export interface SourceWait {
  until: string;
  runId: number;
}

/**
 * A period of changes the live side knows the mirror misses (a gap in the change notifications it could not catch
 * up from a Change List): `from`/`until` as the notifications gave them, `since` when that was found.
 */
export interface NeedsSync {
  from: string;
  until: string;
  since: string;
  reason: string;
}

/**
 * A failure of a run as it stands now: `fixedBy`, the later run that mirrored its resource since or found it
 * deleted at the Source while the mirror had no copy (`gone`: nothing was left to do); null while it stands.
 */
export interface FailureSince {
  uri: string;
  reason: string;
  fixedBy: number | null;
  gone: boolean;
}

/** A baseline that ended failed only for resources a later run may mend, and the checkpoint it would have set. */
export interface UnfinishedBaseline extends Checkpoint {
  runId: number;
  /** When it read its list (ms since the epoch): what afterBaseline takes. */
  readAt: number;
}

export interface Checkpoint {
  /** W3C datetime: the Resource List's `at` of the last complete baseline, or the last change applied. */
  at: string;
  /** Which document it came from. */
  from: string;
}

interface RawRow {
  uri: string;
  path: string;
  length: number | null;
  md5: string | null;
  sha1: string | null;
  sha256: string | null;
  lastmod: string | null;
  etag: string | null;
  last_modified: string | null;
  type: string | null;
  status: InventoryStatus;
  verified_at: string | null;
  run_id: number | null;
}

function toRow(raw: RawRow): InventoryRow {
  const digests: Digests = {};
  if (raw.md5) digests.md5 = raw.md5;
  if (raw.sha1) digests['sha-1'] = raw.sha1;
  if (raw.sha256) digests['sha-256'] = raw.sha256;
  return {
    uri: raw.uri,
    path: raw.path,
    length: raw.length === null ? null : Number(raw.length),
    digests,
    lastmod: raw.lastmod,
    etag: raw.etag,
    lastModified: raw.last_modified,
    type: raw.type,
    status: raw.status,
    verifiedAt: raw.verified_at,
    runId: raw.run_id === null ? null : Number(raw.run_id),
  };
}


/**
 * A run's phase times in seconds, to the millisecond: a phase summed over the parts of a resumed run was kept as
 * 2.8970000000000002, and `rsdesk runs --json` printed it so.
 */
function phasesOf(text: unknown): Record<string, number> {
  const phases = JSON.parse(String(text ?? '{}')) as Record<string, number>;
  for (const [name, seconds] of Object.entries(phases)) if (typeof seconds === 'number') phases[name] = Math.round(seconds * 1000) / 1000;
  return phases;
}

function toRun(raw: Record<string, unknown>): RunRecord {
  const n = (k: string) => Number(raw[k] ?? 0);
  return {
    id: n('id'),
    kind: raw.kind as RunKind,
    mode: String(raw.mode),
    listUrl: (raw.list_url as string | null) ?? null,
    startedAt: String(raw.started_at),
    endedAt: (raw.ended_at as string | null) ?? null,
    status: raw.status as RunStatus,
    created: n('created'),
    updated: n('updated'),
    deleted: n('deleted'),
    unchanged: n('unchanged'),
    skipped: n('skipped'),
    failed: n('failed'),
    bytes: n('bytes'),
    phases: phasesOf(raw.phases),
    pausedSeconds: Number(raw.paused_seconds ?? 0),
    findingCount: n('findings'),
    message: (raw.message as string | null) ?? null,
    pid: raw.pid === null || raw.pid === undefined ? null : Number(raw.pid),
  };
}

/** The longest run message read back whole (a run writes a sentence or two, or an error's message). */
export const RUN_MESSAGE_CHARS = 10_000;

export class MirrorState implements ClaimStore {
  readonly db: DatabaseSync;
  readonly path: string;
  #get: StatementSync;
  #put: StatementSync;
  #byKey: StatementSync;
  #under: StatementSync;
  // Prepared once per connection: a live batch reads and writes its meta and run rows many times a second (in a
  // profile of a burst of notifications, preparing them was 3–5 % of the main thread).
  readonly #stmts: Statements;

  /** `readOnly`: see forReading. */
  constructor(stateDir: string, options: { readOnly?: boolean } = {}) {
    checkStateDir(stateDir);
    if (!options.readOnly) mkdirSync(stateDir, { recursive: true });
    this.path = join(stateDir, STATE_FILE);
    this.db = options.readOnly
      ? // SQLite cannot open a WAL database read-only without writing its shared-memory file beside it, unless told
        // that nothing changes it (immutable): true of a folder no one can write.
        new DatabaseSync(`${pathToFileURL(this.path).href}?immutable=1`, { readOnly: true, enableForeignKeyConstraints: true })
      : new DatabaseSync(this.path, { enableForeignKeyConstraints: true, timeout: BUSY_TIMEOUT_MS });
    this.#stmts = new Statements(this.db);
    try {
      if (options.readOnly) {
        const version = schemaVersion(this.db);
        if (version > MIRROR_MIGRATIONS.length) throw new SchemaTooNewError(this.path, version, MIRROR_MIGRATIONS.length);
        if (version < MIRROR_MIGRATIONS.length) {
          throw new Error(`The mirror's state ${this.path} was written by an older version, and its folder cannot be written to bring it up to date; copy the mirror where it can be written to read it.`);
        }
      } else {
        // Set before the first table, or it takes a VACUUM (reclaim.ts): free pages can then be given back.
        if (this.db.prepare('SELECT 1 AS found FROM sqlite_schema LIMIT 1').get() === undefined) this.db.exec('PRAGMA auto_vacuum = INCREMENTAL');
        this.db.exec('PRAGMA journal_mode = WAL');
        // A WAL grown while a reader held its snapshot (a long audit, the app reading) kept its largest size for as long
        // as a connection stayed open (the app's live feed: days): cut back to this once a checkpoint empties it.
        this.db.exec(`PRAGMA journal_size_limit = ${WAL_KEEP_BYTES}`);
        // FULL: a committed row must survive a power cut (its bytes were made durable before the commit).
        this.db.exec('PRAGMA synchronous = FULL');
        migrate(this.db, this.path, MIRROR_MIGRATIONS);
      }
    } catch (err) {
      this.db.close();
      throw openError(this.path, err);
    }
    this.#get = this.db.prepare('SELECT * FROM inventory WHERE uri = ?');
    this.#put = this.db.prepare(`
      INSERT INTO inventory (uri, path, length, md5, sha1, sha256, lastmod, etag, last_modified, type, status, verified_at, run_id, path_key)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (uri) DO UPDATE SET path = excluded.path, path_key = excluded.path_key, length = excluded.length, md5 = excluded.md5, sha1 = excluded.sha1,
        sha256 = excluded.sha256, lastmod = excluded.lastmod, etag = excluded.etag, last_modified = excluded.last_modified,
        type = excluded.type, status = excluded.status, verified_at = excluded.verified_at, run_id = excluded.run_id`);
    this.#byKey = this.db.prepare('SELECT uri, path FROM inventory WHERE path_key = ? LIMIT 1');
    this.#under = this.db.prepare('SELECT 1 AS found FROM inventory WHERE path_key >= ? AND path_key < ? LIMIT 1');
  }

  /**
   * The state opened to be read alone (the runs, the last audit, a folder's status): a mirror whose folder cannot be
   * written (read-only media, a share mounted read-only, another person's folder) is read as it is, where opening it
   * to write said only "unable to open database file".
   */
  static forReading(stateDir: string): MirrorState {
    try {
      return new MirrorState(stateDir);
    } catch (err) {
      // On a full disk the file SQLite shares between connections cannot be made, so the state could not be read at
      // all ("disk I/O error"). Read as it is when nothing waits in its WAL: a WAL holding commits not yet copied into
      // the file is one a reader opened thus would not see.
      if (err instanceof DiskFullError && !pendingWal(join(stateDir, STATE_FILE))) return new MirrorState(stateDir, { readOnly: true });
      if (writable(stateDir)) throw err;
      return new MirrorState(stateDir, { readOnly: true });
    }
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }

  #stmt(sql: string): StatementSync {
    return this.#stmts.get(sql);
  }

  // ---- meta: binding and checkpoint ----

  #meta(key: string): string | null {
    const row = this.#stmt('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined;
    return row?.value ?? null;
  }

  #setMeta(key: string, value: string | null): void {
    if (value === null) this.#stmt('DELETE FROM meta WHERE key = ?').run(key);
    else this.#stmt('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(key, value);
  }

  binding(): Binding | null {
    const value = this.#meta('binding');
    return value === null ? null : (JSON.parse(value) as Binding);
  }

  setBinding(binding: Binding): void {
    this.#setMeta('binding', JSON.stringify(binding));
  }

  /**
   * The checkpoint as recorded. A value this version could not have written (the state edited: not JSON, `at` not a
   * string) comes back with its raw text as `at`, which no datetime parser takes: the sync then runs a baseline that
   * sets it right, saying why, where it used to stop with "s.charCodeAt is not a function".
   */
  checkpoint(): Checkpoint | null {
    const value = this.#meta('checkpoint');
    if (value === null) return null;
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      parsed = null;
    }
    const { at, from } = (parsed ?? {}) as Partial<Record<keyof Checkpoint, unknown>>;
    return typeof at === 'string' ? { at, from: typeof from === 'string' ? from : '' } : { at: value, from: '' };
  }

  setCheckpoint(checkpoint: Checkpoint | null): void {
    this.#setMeta('checkpoint', checkpoint === null ? null : JSON.stringify(checkpoint));
  }

  /** Why the next sync must be a baseline (changes were made that no Change List holds), or null. */
  baselineNeeded(): string | null {
    return this.#meta('baselineNeeded');
  }

  setBaselineNeeded(why: string | null): void {
    this.#setMeta('baselineNeeded', why);
  }

  /**
   * Up to when the mirror is known to be in step with its Source (`ms`), and when that was read (`readAt`): for a
   * baseline, its Resource List's `at` and the time it was read; for an incremental run that read the Change Lists
   * whole and applied every change, the time it read them (both). Null for a mirror made before this was kept.
   * A Change List that begins after `ms` leaves a gap (gap.ts). Epoch ms.
   */
  syncedThrough(): Synced | null {
    const value = this.#meta('syncedThrough');
    return value === null ? null : (JSON.parse(value) as Synced);
  }

  setSyncedThrough(synced: Synced): void {
    this.#setMeta('syncedThrough', JSON.stringify(synced));
  }

  /**
   * The last sync, when it was a baseline that failed only for resources a retry may mend: a retry that mends the last
   * of them completes it (retry.ts). Every sync that ends replaces it.
   */
  unfinishedBaseline(): UnfinishedBaseline | null {
    const value = this.#meta('unfinished-baseline');
    return value === null ? null : (JSON.parse(value) as UnfinishedBaseline);
  }

  setUnfinishedBaseline(baseline: UnfinishedBaseline | null): void {
    this.#setMeta('unfinished-baseline', baseline === null ? null : JSON.stringify(baseline));
  }

  /** Changes the live side knows it missed and could not catch up from a Change List, or null (gap.ts clears it). */
  needsSync(): NeedsSync | null {
    const value = this.#meta('needs-sync');
    return value === null ? null : (JSON.parse(value) as NeedsSync);
  }

  setNeedsSync(needs: NeedsSync | null): void {
    this.#setMeta('needs-sync', needs === null ? null : JSON.stringify(needs));
  }

  /**
   * Until when the Source asked to be left alone (its Retry-After), as the last run that paused for it recorded: the
   * app's schedule does not take the run up before then. Every run's end replaces it (sourceWaitOf, refusal-watch.ts).
   */
  sourceWait(): SourceWait | null {
    const value = this.#meta('source-wait');
    return value === null ? null : (JSON.parse(value) as SourceWait);
  }

  setSourceWait(wait: SourceWait | null): void {
    this.#setMeta('source-wait', wait === null ? null : JSON.stringify(wait));
  }

  /**
   * Until when live applying holds each subscription's notifications for the Source (its Retry-After), by
   * subscription id: a restart of the live side keeps the hold (feed.ts). Past ends are left for the next hold to drop.
   */
  liveSourceWaits(): Record<string, string> {
    const value = this.#meta('live-source-wait');
    return value === null ? {} : (JSON.parse(value) as Record<string, string>);
  }

  setLiveSourceWaits(waits: Record<string, string>): void {
    this.#setMeta('live-source-wait', Object.keys(waits).length === 0 ? null : JSON.stringify(waits));
  }

  // ---- inventory ----

  get(uri: string): InventoryRow | null {
    const raw = this.#get.get(uri) as RawRow | undefined;
    return raw === undefined ? null : toRow(raw);
  }

  /** Inserts or replaces rows; call inside `transaction` for a batch. */
  put(row: InventoryRow): void {
    const d = row.digests;
    this.#put.run(
      row.uri,
      row.path,
      row.length,
      d.md5 ?? null,
      d['sha-1'] ?? null,
      d['sha-256'] ?? null,
      row.lastmod,
      row.etag,
      row.lastModified,
      row.type,
      row.status,
      row.verifiedAt,
      row.runId,
      caseKey(row.path),
    );
  }

  /** The row whose case-folded path is `key` (ClaimStore). */
  fileByKey(key: string): { path: string; uri: string } | undefined {
    const raw = this.#byKey.get(key) as { uri: string; path: string } | undefined;
    return raw === undefined ? undefined : { uri: raw.uri, path: raw.path };
  }

  /** True when a row's path lies under the folder whose case-folded path is `key` (ClaimStore). */
  hasUnder(key: string): boolean {
    // Every key under `key/` sorts between `key/` and `key0` ('0' follows '/' in UTF-8 byte order).
    return this.#under.get(`${key}/`, `${key}0`) !== undefined;
  }

  /**
   * A URI of the inventory that starts with `prefix` and goes on within the same path segment (`http://h/database`
   * for `http://h/data`), if any: one a literal-prefix map put under the map's folder and a segment-boundary map
   * does not. Ranges of the primary key, skipping the URIs followed by `/` or `?` (fragments are never kept).
   */
  uriWithinSegment(prefix: string): string | undefined {
    const ranges: [string, string][] = [
      [`${prefix}\u0000`, `${prefix}/`],
      [`${prefix}0`, `${prefix}?`],
      [`${prefix}@`, `${prefix}\u{10FFFF}`],
    ];
    const find = this.#stmt('SELECT uri FROM inventory WHERE uri >= ? AND uri < ? LIMIT 1');
    for (const [from, to] of ranges) {
      const row = find.get(from, to) as { uri: string } | undefined;
      if (row !== undefined) return row.uri;
    }
    return undefined;
  }

  /** Puts back the status of a row marked damaged while its copy was about to be replaced (apply.ts). */
  setStatus(uri: string, status: InventoryStatus): void {
    this.#stmt("UPDATE inventory SET status = ? WHERE uri = ? AND status = 'damaged'").run(status, uri);
  }

  /** Marks mirrored copies an audit found damaged, for the next sync to fetch again (see InventoryStatus). */
  markDamaged(uris: string[]): void {
    const mark = this.#stmt("UPDATE inventory SET status = 'damaged' WHERE uri = ? AND status IN ('verified', 'unverifiable', 'unchecked')");
    transaction(this.db, () => {
      for (const uri of uris) mark.run(uri);
    });
  }

  /** How many rows an audit marked damaged. */
  damagedCount(): number {
    return Number((this.#stmt("SELECT COUNT(*) AS n FROM inventory WHERE status = 'damaged'").get() as { n: number }).n);
  }

  /**
   * The rows marked damaged by an audit, in URI order, the first `limit` after `after` (null: from the start): read a
   * page at a time, as an audit may mark a whole mirror damaged (a disk that lost its contents).
   */
  damagedAfter(after: string | null, limit: number): InventoryRow[] {
    const rows = after === null
      ? this.#stmt("SELECT * FROM inventory WHERE status = 'damaged' ORDER BY uri LIMIT ?").all(limit)
      : this.#stmt("SELECT * FROM inventory WHERE status = 'damaged' AND uri > ? ORDER BY uri LIMIT ?").all(after, limit);
    return (rows as unknown as RawRow[]).map(toRow);
  }

  remove(uri: string): void {
    this.#stmt('DELETE FROM inventory WHERE uri = ?').run(uri);
  }

  /** Every row, streamed. */
  *rows(): Generator<InventoryRow> {
    for (const raw of this.db.prepare('SELECT * FROM inventory ORDER BY uri').iterate() as Iterable<RawRow>) yield toRow(raw);
  }

  /** uri and path of every row (to rebuild the path claims). */
  *paths(): Generator<{ uri: string; path: string }> {
    yield* this.db.prepare('SELECT uri, path FROM inventory').iterate() as Iterable<{ uri: string; path: string }>;
  }

  /**
   * Every row's URI in URI order, read a page at a time: no statement stays open between pages, so the caller may
   * write rows (deletions) meanwhile, and no more than a page is held.
   */
  *urisPaged(page = 1000): Generator<string> {
    const next = this.#stmt('SELECT uri FROM inventory WHERE uri > ? ORDER BY uri LIMIT ?');
    let after = '';
    for (;;) {
      const rows = next.all(after, page) as { uri: string }[];
      for (const { uri } of rows) yield uri;
      if (rows.length < page) return;
      after = rows.at(-1)!.uri;
    }
  }

  /** True when the inventory holds no row at all (one index probe, not a count). */
  isEmpty(): boolean {
    return this.#stmt('SELECT 1 AS found FROM inventory LIMIT 1').get() === undefined;
  }

  /** Resources the inventory holds, deleted and quarantined ones left out: all rows less the gone ones, both counted from an index (inventory_gone is partial), not by a scan of the rows. */
  resourceCount(): number {
    const sql = "SELECT (SELECT COUNT(*) FROM inventory) - (SELECT COUNT(*) FROM inventory WHERE status IN ('deleted', 'quarantined')) AS n";
    return Number((this.#stmt(sql).get() as { n: number }).n);
  }

  inventoryCount(): number {
    return Number((this.#stmt('SELECT COUNT(*) AS n FROM inventory').get() as { n: number }).n);
  }

  transaction<T>(fn: () => T): T {
    return transaction(this.db, fn);
  }

  // ---- runs ----

  startRun(kind: RunKind, mode: string, listUrl: string | null): RunRecord {
    const started = new Date().toISOString();
    const result = this.#stmt('INSERT INTO runs (kind, mode, list_url, started_at, status, pid) VALUES (?, ?, ?, ?, ?, ?)')
      .run(kind, mode, listUrl, started, 'running', process.pid);
    return this.run(Number(result.lastInsertRowid))!;
  }

  run(id: number): RunRecord | null {
    const raw = this.#stmt(`SELECT ${this.#runColumns()} FROM runs WHERE id = ?`).get(id) as Record<string, unknown> | undefined;
    return raw === undefined ? null : toRun(raw);
  }

  runs(): RunRecord[] {
    return (this.#stmt(`SELECT ${this.#runColumns()} FROM runs ORDER BY id`).all() as Record<string, unknown>[]).map(toRun);
  }

  #runSelect: string | null = null;

  /**
   * Every column of a run, its message cut in SQLite to RUN_MESSAGE_CHARS (the runs write theirs shorter). A state
   * handed over with 20 runs of 20 MB messages took 4.6 s and 580 MB to read a mirror's folder, which the app does for
   * every look at the mirror, and sent the messages whole to the window.
   */
  #runColumns(): string {
    if (this.#runSelect === null) {
      const names = (this.db.prepare('PRAGMA table_info(runs)').all() as { name: string }[]).map((c) => c.name);
      this.#runSelect = names
        .map((n) =>
          n === 'message'
            ? `CASE WHEN length(message) > ${RUN_MESSAGE_CHARS} THEN substr(message, 1, ${RUN_MESSAGE_CHARS}) || ' [cut: the message recorded is longer]' ELSE message END AS message`
            : `"${n}"`,
        )
        .join(', ');
    }
    return this.#runSelect;
  }

  /** Runs left `running` by a process that is gone (only one process holds the lock, so: any but ours). */
  /**
   * Records as interrupted every run still said to be running. Called under the folder's lock, when no run of this
   * mirror can be going on anywhere, this process included: one this process could not end (a disk too full to
   * record it, in the app) is as stale as one a killed process left.
   */
  markInterrupted(): RunRecord[] {
    const stale = this.runs().filter((r) => r.status === 'running');
    // Its end is when it last recorded work (at worst its start): resumed, the time since is counted as stopped.
    for (const r of stale) this.#stmt("UPDATE runs SET status = 'interrupted', ended_at = COALESCE(active_at, started_at) WHERE id = ?").run(r.id);
    return stale.map((r) => ({ ...r, status: 'interrupted' as const }));
  }

  /**
   * Takes an interrupted run up again in this process. A run that reads its lists again from the start (lists, live)
   * forgets its failures but for those of resources it recorded (kept, unverifiable), and the entries it skipped: it
   * meets them again, and counts them again if they still fail, so they are neither counted twice nor left standing
   * when they now succeed. A dump run (`keepFailures`) does not read again the packages it finished: their failures
   * stand, and still hold its checkpoint back.
   */
  resumeRun(id: number, keepFailures = false): RunRecord {
    // A savepoint, not BEGIN: the live side resumes its run inside a transaction of its own.
    this.db.exec('SAVEPOINT resume_run');
    try {
      if (!keepFailures) {
        this.#stmt('DELETE FROM failures WHERE run_id = ? AND NOT EXISTS (SELECT 1 FROM inventory WHERE inventory.uri = failures.uri AND inventory.run_id = ?)').run(id, id);
        this.#stmt('UPDATE runs SET skipped = 0, failed = (SELECT COUNT(*) FROM failures WHERE run_id = ?) WHERE id = ?').run(id, id);
        // Its lists are read again, and what they break is found again.
        this.#stmt('DELETE FROM run_findings WHERE run_id = ?').run(id);
        this.#stmt('UPDATE runs SET findings = 0 WHERE id = ?').run(id);
      }
      // The message of how it stopped ("Paused") no longer holds: killed now, it is interrupted, not paused.
      // The time since its recorded end (a pause) is not time it ran.
      const stopped = this.#stmt('SELECT ended_at FROM runs WHERE id = ?').get(id) as { ended_at: string | null } | undefined;
      const endedMs = stopped?.ended_at ? Date.parse(stopped.ended_at) : NaN;
      const pausedSeconds = Number.isFinite(endedMs) ? Math.max(0, (Date.now() - endedMs) / 1000) : 0;
      this.#stmt("UPDATE runs SET status = 'running', pid = ?, ended_at = NULL, message = NULL, paused_seconds = paused_seconds + ? WHERE id = ?")
        .run(process.pid, pausedSeconds, id);
      this.db.exec('RELEASE resume_run');
    } catch (err) {
      this.db.exec('ROLLBACK TO resume_run');
      this.db.exec('RELEASE resume_run');
      throw err;
    }
    return this.run(id)!;
  }

  /**
   * Records what the list reader found in the lists a run read: every one is counted, the first `keep` of the run are
   * kept (a list of 50,000 entries each breaking a rule would otherwise add as many rows).
   */
  addRunFindings(id: number, findings: RunFinding[], keep: number): void {
    if (findings.length === 0) return;
    this.transaction(() => {
      const held = Number((this.#stmt('SELECT COUNT(*) AS n FROM run_findings WHERE run_id = ?').get(id) as { n: number }).n);
      const insert = this.#stmt('INSERT INTO run_findings (run_id, document, severity, code, message, line) VALUES (?, ?, ?, ?, ?, ?)');
      for (const f of findings.slice(0, Math.max(0, keep - held))) insert.run(id, f.document, f.severity, f.code, f.message, f.line ?? null);
      this.#stmt('UPDATE runs SET findings = findings + ? WHERE id = ?').run(findings.length, id);
    });
  }

  /** The findings kept for a run, in the order found. */
  runFindings(id: number): RunFinding[] {
    const rows = this.#stmt('SELECT document, severity, code, message, line FROM run_findings WHERE run_id = ? ORDER BY rowid').all(id) as Record<string, unknown>[];
    return rows.map((r) => ({ document: String(r.document), severity: r.severity as RunFinding['severity'], code: String(r.code), message: String(r.message), ...(r.line === null ? {} : { line: Number(r.line) }) }));
  }

  /** Adds to a run's counts and records failures; call inside the batch's transaction. */
  addToRun(id: number, counts: Partial<RunCounts>, failures: { uri: string; reason: string }[] = []): void {
    this.#stmt(
        `UPDATE runs SET created = created + ?, updated = updated + ?, deleted = deleted + ?, unchanged = unchanged + ?,
         skipped = skipped + ?, failed = failed + ?, bytes = bytes + ?, active_at = ? WHERE id = ?`,
      )
      .run(
        counts.created ?? 0,
        counts.updated ?? 0,
        counts.deleted ?? 0,
        counts.unchanged ?? 0,
        counts.skipped ?? 0,
        counts.failed ?? 0,
        counts.bytes ?? 0,
        new Date().toISOString(),
        id,
      );
    const insert = this.#stmt('INSERT INTO failures (run_id, uri, reason) VALUES (?, ?, ?)');
    for (const f of failures) insert.run(id, f.uri, f.reason);
  }

  /**
   * Keeps what a retry run is of and the URIs it was asked for (retry.ts), so that it can be taken up again. `ofRun`
   * is the run each URI failed in: one for all, or one per URI (a retry of the failures of several runs).
   */
  recordRetry(runId: number, ofRun: number | ((uri: string) => number), uris: Iterable<string>): void {
    this.transaction(() => {
      const insert = this.#stmt('INSERT OR IGNORE INTO retry_items (run_id, of_run, uri) VALUES (?, ?, ?)');
      for (const uri of uris) insert.run(runId, typeof ofRun === 'number' ? ofRun : ofRun(uri), uri);
    });
  }

  /**
   * Every failure of the mirror that still stands, whatever run it is of (on a mirror the live side feeds, one run per
   * batch of notifications): per URI its latest failure, unless a later run has mirrored the resource or found it gone
   * since. Each with the run it failed in (for a failure of a retry, the run that retry was of), oldest runs first;
   * at most `limit`, with how many there are in all.
   */
  standingFailures(limit: number): { total: number; failures: { uri: string; runId: number }[] } {
    const standing = `WITH latest AS (
        SELECT f.uri AS uri, MAX(f.run_id) AS run_id FROM failures f JOIN runs r ON r.id = f.run_id WHERE r.kind != 'audit' GROUP BY f.uri
      ), open AS (
        SELECT l.uri AS uri, l.run_id AS run_id FROM latest l
        WHERE NOT EXISTS (SELECT 1 FROM inventory i WHERE i.uri = l.uri AND i.run_id > l.run_id AND i.status IN ('verified', 'unchecked'))
        AND NOT EXISTS (SELECT 1 FROM gone g WHERE g.uri = l.uri AND g.run_id > l.run_id)
      )`;
    const total = Number((this.#stmt(`${standing} SELECT COUNT(*) AS n FROM open`).get() as { n: number }).n);
    const rows = this.#stmt(`${standing} SELECT o.uri AS uri, COALESCE((SELECT t.of_run FROM retry_items t WHERE t.run_id = o.run_id AND t.uri = o.uri), o.run_id) AS runId FROM open o ORDER BY runId, o.uri LIMIT ?`)
      .all(limit) as { uri: string; runId: number }[];
    return { total, failures: rows.map((r) => ({ uri: r.uri, runId: Number(r.runId) })) };
  }

  /**
   * The run a retry run is of and the URIs it still has to settle: those whose inventory row neither it nor a later
   * run has written since. Null for a run that is no retry, or one recorded before retries kept their URIs.
   */
  retryLeft(runId: number): { ofRun: number; ofRuns: number[]; asked: number; uris: string[] } | null {
    const of = this.#stmt('SELECT MAX(of_run) AS ofRun, COUNT(*) AS asked FROM retry_items WHERE run_id = ?').get(runId) as { ofRun: number | null; asked: number };
    if (of.ofRun === null || Number(of.asked) === 0) return null;
    const ofRuns = (this.#stmt('SELECT DISTINCT of_run AS ofRun FROM retry_items WHERE run_id = ? ORDER BY of_run').all(runId) as { ofRun: number }[]).map((r) => Number(r.ofRun));
    const left = this.#stmt(
        `SELECT r.uri AS uri FROM retry_items r WHERE r.run_id = ?
         AND NOT EXISTS (SELECT 1 FROM inventory i WHERE i.uri = r.uri AND i.run_id >= r.run_id AND i.status != 'damaged')
         AND NOT EXISTS (SELECT 1 FROM gone g WHERE g.uri = r.uri AND g.run_id >= r.run_id) ORDER BY r.uri`,
      )
      .all(runId) as { uri: string }[];
    return { ofRun: Number(of.ofRun), ofRuns, asked: Number(of.asked), uris: left.map((r) => r.uri) };
  }

  /** Run `runId` found `uri` deleted at the Source and not in the mirror: its earlier failures stand no more. */
  settleGone(runId: number, uri: string): void {
    this.#stmt('INSERT INTO gone (uri, run_id) VALUES (?, ?) ON CONFLICT (uri) DO UPDATE SET run_id = excluded.run_id').run(uri, runId);
  }

  /** Whether a retry run kept what it was asked for (see retryLeft): retries recorded before that did not. */
  keptRetry(runId: number): boolean {
    return this.#stmt('SELECT 1 AS kept FROM retry_items WHERE run_id = ? LIMIT 1').get(runId) !== undefined;
  }

  /** How many failures the journal holds for run `runId`. */
  failureCount(runId: number): number {
    return Number((this.#stmt('SELECT COUNT(*) AS n FROM failures WHERE run_id = ?').get(runId) as { n: number }).n);
  }

  /**
   * Run `runId`'s failures in the order recorded, past the first `skip` (those a resumed run's earlier part left),
   * streamed: a run against a Source that was down may have failed millions.
   */
  *failuresPast(runId: number, skip: number): Generator<{ uri: string; reason: string }> {
    yield* this.db.prepare('SELECT uri, reason FROM failures WHERE run_id = ? ORDER BY rowid LIMIT -1 OFFSET ?').iterate(runId, skip) as Iterable<{ uri: string; reason: string }>;
  }

  failures(runId: number): { uri: string; reason: string }[] {
    return this.#stmt('SELECT uri, reason FROM failures WHERE run_id = ? ORDER BY rowid').all(runId) as { uri: string; reason: string }[];
  }

  /** The URIs that failed in run `runId`, streamed: a run against a Source that was down may have failed millions. */
  *failedUris(runId: number): Generator<string> {
    for (const row of this.db.prepare('SELECT uri FROM failures WHERE run_id = ?').iterate(runId) as Iterable<{ uri: string }>) yield row.uri;
  }

  /**
   * A run's failures, each with the later run that has since mirrored its resource (a retry, a resumed or later
   * sync: its row is verified and that run's) or found it gone (settleGone), or null while it still stands. At most `limit`, with the counts.
   */
  failuresSince(runId: number, limit: number): { total: number; open: number; failures: FailureSince[] } {
    // Only a later run can have mended a failure. The latest run's, read every 2 s while it goes on, are thus all
    // standing: counted from the failures' index, without a look into the inventory per failure (~580 ms for a run
    // of 200,000 failures, each time).
    if (this.#stmt('SELECT 1 AS later FROM runs WHERE id > ? LIMIT 1').get(runId) === undefined) {
      const total = Number((this.#stmt('SELECT COUNT(*) AS n FROM failures WHERE run_id = ?').get(runId) as { n: number }).n);
      const rows = this.#stmt('SELECT uri, reason FROM failures WHERE run_id = ? ORDER BY rowid LIMIT ?').all(runId, limit) as { uri: string; reason: string }[];
      return { total, open: total, failures: rows.map((f) => ({ uri: f.uri, reason: f.reason, fixedBy: null, gone: false })) };
    }
    // Or the later run that found the resource deleted at the Source and not in the mirror (settleGone).
    const mirroredBy = `(SELECT i.run_id FROM inventory i WHERE i.uri = f.uri AND i.run_id > f.run_id AND i.status IN ('verified', 'unchecked'))`;
    const goneBy = `(SELECT g.run_id FROM gone g WHERE g.uri = f.uri AND g.run_id > f.run_id)`;
    const fixedBy = `COALESCE(${mirroredBy}, ${goneBy})`;
    const counts = this.#stmt(`SELECT COUNT(*) AS total, SUM(${fixedBy} IS NULL) AS open FROM failures f WHERE f.run_id = ?`).get(runId) as { total: number; open: number | null };
    const failures = this.#stmt(
        `SELECT f.uri AS uri, f.reason AS reason, ${fixedBy} AS fixedBy, (${mirroredBy} IS NULL AND ${goneBy} IS NOT NULL) AS gone
         FROM failures f WHERE f.run_id = ? ORDER BY (${fixedBy} IS NOT NULL), f.rowid LIMIT ?`,
      )
      .all(runId, limit) as { uri: string; reason: string; fixedBy: number | null; gone: number }[];
    return {
      total: Number(counts.total),
      open: Number(counts.open ?? 0),
      failures: failures.map((f) => ({ uri: f.uri, reason: f.reason, fixedBy: f.fixedBy === null ? null : Number(f.fixedBy), gone: Number(f.gone) === 1 })),
    };
  }

  // ---- audit reports ----

  /**
   * Keeps an audit's report with its run; older reports beyond KEPT_AUDIT_REPORTS are dropped. `items`, when given,
   * are its differences (the report's lists may hold only the first few of them).
   */
  saveAudit(audit: SavedAudit, items?: Iterable<{ status: string; item: string; reason: string | null }>): void {
    const { report } = audit;
    this.transaction(() => {
      this.#stmt('INSERT OR REPLACE INTO audit_reports (run_id, at, rehash, seconds, in_sync, in_sync_count) VALUES (?, ?, ?, ?, ?, ?)')
        .run(audit.runId, audit.at, audit.rehash ? 1 : 0, audit.seconds, report.inSync ? 1 : 0, report.inSyncCount);
      this.#stmt('DELETE FROM audit_items WHERE run_id = ?').run(audit.runId);
      const insert = this.#stmt('INSERT INTO audit_items (run_id, status, item, reason) VALUES (?, ?, ?, ?)');
      if (items !== undefined) {
        for (const f of items) insert.run(audit.runId, f.status, f.item, f.reason);
      } else {
        for (const uri of report.missing) insert.run(audit.runId, 'missing', uri, null);
        for (const path of report.extra) insert.run(audit.runId, 'extra', path, null);
        for (const c of report.changed) insert.run(audit.runId, 'changed', c.uri, c.reason);
        for (const c of report.unverifiable) insert.run(audit.runId, 'unverifiable', c.uri, c.reason);
        for (const uri of report.kept ?? []) insert.run(audit.runId, 'kept', uri, null);
      }
      // What the audit had to do without (a Change List it could not read…): the report read back says it too.
      for (const note of report.notes ?? []) insert.run(audit.runId, 'note', note, null);
      const old = this.#stmt('SELECT run_id FROM audit_reports ORDER BY run_id DESC LIMIT -1 OFFSET ?').all(KEPT_AUDIT_REPORTS) as { run_id: number }[];
      for (const r of old) {
        this.#stmt('DELETE FROM audit_items WHERE run_id = ?').run(r.run_id);
        this.#stmt('DELETE FROM audit_reports WHERE run_id = ?').run(r.run_id);
      }
    });
  }

  /**
   * The newest kept audit report (or that of run `runId`), null when none is kept; its lists hold the first `limit`
   * items of each kind, its counts all of them (auditItems reads them all).
   */
  audit(runId?: number, limit = Infinity): SavedAudit | null {
    const raw = (
      runId === undefined
        ? this.#stmt('SELECT * FROM audit_reports ORDER BY run_id DESC LIMIT 1').get()
        : this.#stmt('SELECT * FROM audit_reports WHERE run_id = ?').get(runId)
    ) as { run_id: number; at: string; rehash: number; seconds: number; in_sync: number; in_sync_count: number } | undefined;
    if (raw === undefined) return null;
    const id = Number(raw.run_id);
    const counts = { missing: 0, extra: 0, changed: 0, unverifiable: 0, kept: 0 };
    const report: SavedAudit['report'] = { inSync: raw.in_sync === 1, inSyncCount: Number(raw.in_sync_count), missing: [], extra: [], changed: [], unverifiable: [], kept: [], counts, runId: id };
    for (const row of this.#stmt('SELECT status, COUNT(*) AS n FROM audit_items WHERE run_id = ? GROUP BY status').all(id) as { status: string; n: number }[]) {
      if (row.status in counts) counts[row.status as keyof typeof counts] = Number(row.n);
    }
    const take = (status: string) => this.auditItems(id, status, limit);
    for (const row of take('missing')) report.missing.push(row.item);
    for (const row of take('extra')) report.extra.push(row.item);
    for (const row of take('changed')) report.changed.push({ uri: row.item, reason: row.reason ?? '' });
    for (const row of take('unverifiable')) report.unverifiable.push({ uri: row.item, reason: row.reason ?? '' });
    for (const row of take('kept')) report.kept!.push(row.item);
    for (const row of take('note')) (report.notes ??= []).push(row.item);
    return { runId: id, at: raw.at, rehash: raw.rehash === 1, seconds: Number(raw.seconds), report };
  }

  /** The items of one kind of run `runId`'s audit report, in the order found, read a page at a time. */
  *auditItems(runId: number, status: string, limit = Infinity): Generator<{ item: string; reason: string | null }> {
    const page = this.#stmt('SELECT rowid AS seq, item, reason FROM audit_items WHERE run_id = ? AND status = ? AND rowid > ? ORDER BY rowid LIMIT ?');
    let after = 0;
    let left = limit;
    while (left > 0) {
      const rows = page.all(runId, status, after, Math.min(1_000, left)) as { seq: number; item: string; reason: string | null }[];
      for (const row of rows) yield { item: row.item, reason: row.reason };
      if (rows.length < Math.min(1_000, left)) return;
      left -= rows.length;
      after = Number(rows.at(-1)!.seq);
    }
  }

  /** The run ids of the kept audit reports, newest first. */
  auditRuns(): number[] {
    return (this.#stmt('SELECT run_id FROM audit_reports ORDER BY run_id DESC').all() as { run_id: number }[]).map((r) => Number(r.run_id));
  }

  /**
   * Cancels an interrupted run without taking it up (a cancel that came while the sync that was to take it up still
   * read the Source's lists): it keeps its counts, its failures and its end, the time it last worked.
   */
  cancelInterrupted(id: number, message: string): void {
    this.#stmt("UPDATE runs SET status = 'cancelled', message = ? WHERE id = ? AND status = 'interrupted'").run(message, id);
  }

  endRun(id: number, status: RunStatus, phases: Record<string, number>, message: string | null = null): RunRecord {
    this.#stmt('UPDATE runs SET status = ?, ended_at = ?, phases = ?, message = ? WHERE id = ?')
      .run(status, new Date().toISOString(), JSON.stringify(phases), message, id);
    return this.run(id)!;
  }
}

function writable(stateDir: string): boolean {
  try {
    accessSync(stateDir, constants.W_OK);
    accessSync(join(stateDir, STATE_FILE), constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Why a mirror's state cannot be opened or written, naming the file: SQLite's own words ("file is not a database",
 * "database is locked", "disk I/O error") say neither which file, nor that nothing was changed, nor what to do. Other
 * errors (a folder that cannot be written) stay as they are.
 */
export function explainStateError(path: string, err: unknown, changed = false): unknown {
  return openError(path, err, changed);
}

function openError(path: string, err: unknown, changed = false): unknown {
  if (err instanceof SchemaTooNewError) {
    return new SchemaTooNewError(path, err.found, err.known, 'open this mirror with that version. Nothing in it was changed.');
  }
  const code = (err as { errcode?: unknown }).errcode;
  const primary = typeof code === 'number' ? code & 0xff : null;
  // SQLITE_FULL; SQLITE_IOERR on a disk with (nearly) no room, which is how a shared-memory file that cannot be grown
  // shows: either way SQLite's words ("disk I/O error") say nothing of what to do.
  if (primary === 13 || (primary === 10 && diskNearlyFull(dirname(path)))) return new DiskFullError(dirname(dirname(path)), changed);
  // SQLITE_BUSY, SQLITE_LOCKED: another program held the database's write lock for longer than the busy timeout.
  if (primary === 5 || primary === 6) {
    return new Error(
      `The mirror's state ${path} is being written by another program, which kept it locked for more than ${BUSY_TIMEOUT_MS / 1000} seconds; ` +
        `nothing in it was changed. Try again once it is done (another ResourceSync Desktop or rsdesk working on this mirror, or a database tool that has the file open).`,
    );
  }
  // SQLITE_CORRUPT, SQLITE_NOTADB.
  if (primary === 11 || primary === 26) {
    // Found damaged while a run was writing it: that run stopped there, and what it recorded before stays.
    const what = changed ? 'is damaged (' + (err as Error).message + '), so the run stopped; what it had recorded stays as it was' : `is damaged and cannot be read (${(err as Error).message}); nothing in it was changed`;
    return new Error(`The mirror's state ${path} ${what}. Put back a copy of it from a backup, or mirror the Source into another folder.`);
  }
  return err;
}

/** Less than this free on the state's disk: an I/O error there is taken for a full disk. */
const NEARLY_FULL_BYTES = 1024 * 1024;

function diskNearlyFull(dir: string): boolean {
  try {
    const s = statfsSync(dir);
    return Number(s.bavail) * Number(s.bsize) < NEARLY_FULL_BYTES;
  } catch {
    return false;
  }
}

/** True when the state's WAL holds pages (commits a reader of the file alone would miss). */
function pendingWal(path: string): boolean {
  try {
    return statSync(`${path}-wal`).size > 0;
  } catch {
    return false;
  }
}

export function stateDirOf(dest: string): string {
  return join(dest, STATE_DIR);
}
