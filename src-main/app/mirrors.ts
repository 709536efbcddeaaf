// Mirrors for the UI: the folders the app remembers (paths in its store, everything else in each folder's own
// state), one sync or audit at a time per folder, pause / resume / cancel, and progress as events in batches (a
// timer sends the latest state at most every `progressIntervalMs`, never one message per resource).
import { pausedByPerson, pausedMessage } from '../engine/mirror/refusal-watch.ts';
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, isAbsolute, join, normalize, relative } from 'node:path';
import type {
  AuditView,
  MirrorAccess,
  MirrorDetail,
  MirrorOptions,
  MirrorProgress,
  MirrorRun,
  MirrorRunEnd,
  RunEndSummary,
  MirrorStatus,
  MirrorSummary,
  RunFailures,
} from '../contract/types.ts';
import { MAX_RUN_NOTES } from '../contract/types.ts';
import { clip } from '../engine/clip.ts';
import { splitUserinfo } from '../engine/http/userinfo.ts';
import type { DeletePolicy } from '../engine/mirror/apply.ts';
import { audit, lastAudit } from '../engine/mirror/audit.ts';
import { auditFileName, type AuditFilter } from '../engine/mirror/audit-report.ts';
import { exportAudit } from './audit-export.ts';
import { readLiveHold } from './live-hold.ts';
import { nextSyncAt, scheduleText } from './schedule.ts';
import { inventorySize, isMirror, prepareMirror, readBinding, readFailures, readFolder, setMirrorCredentials, setMirrorHeaders, setMirrorRefusalLimit, type FolderStatus } from '../engine/mirror/folder.ts';
import { normalizeStartUrl } from '../engine/discovery/start-url.ts';
import { mirrorOrigin, settingsTokenFor } from './settings-token.ts';
import { parseMap } from '../engine/mirror/local-path.ts';
import { MirrorLockedError } from '../engine/mirror/lock.ts';
import { DiskFullError, diskFullMessage, isDiskFull } from '../engine/mirror/disk-full.ts';
import type { SecretStore } from '../engine/mirror/secrets.ts';
import { authorizationOf, secretKey, type AskAgain, type Credentials, type SourceSettings } from '../engine/mirror/settings.ts';
import type { SourceHeaders } from '../engine/http/index.ts';
import { STATE_DIR, UnboundStateError, unboundStateMessage, type Binding, type RunCounts, type RunRecord } from '../engine/mirror/state.ts';
import { checkResumeRetry, checkRetry, resumeRetry, retryResources, retryStanding, runsWords, RetryError, type ResumeRetryOptions, type RetryResult } from '../engine/mirror/retry.ts';
import { resumable, sync, SyncError, type SyncProgress, type SyncResult } from '../engine/mirror/sync.ts';
import { DEFAULT_MIRROR_OPTIONS } from '../store/mirrors.ts';
import type { Store } from '../store/store.ts';
import { InvalidArgumentsError, MirrorError, NotFoundError } from './errors.ts';
import { absoluteFolder } from './folder-path.ts';
import type { EventHub } from './events.ts';
import type { SourceSignIns } from './source-sign-ins.ts';

export interface MirrorServiceDeps {
  store: Store;
  events: EventHub;
  userAgent: string;
  /** The system's folder dialog (desktop app). */
  chooseFolder?: () => Promise<string | null>;
  /** The system's save dialog (desktop app), offering `name`: the path chosen, null when cancelled. */
  chooseSaveFile?: (name: string, format: 'json' | 'csv') => Promise<string | null>;
  /** Opens a folder in the system's file manager; resolves with an error text, '' when it worked (shell.openPath). */
  openPath?: (path: string) => Promise<string>;
  progressIntervalMs?: number;
  /** Where each mirror's credentials are kept between runs (desktop app: sealed with the OS keychain). */
  secretStore?: SecretStore;
  /** Credentials kept per Source origin: a new mirror of that origin takes them as its own; the browser uses them first. */
  signIns?: SourceSignIns;
  /** How often the schedules are looked at (default a minute); the first look is that long after the start. */
  scheduleCheckMs?: number;
  /** The clock of the schedules (tests). */
  now?: () => number;
}

/** In the app, a bearer token comes from Settings, a user name and password from the mirror's Access tab. */
export const APP_ASK_AGAIN: AskAgain = {
  bearer: "enter it as the bearer token in Settings, with this Source's address, then run the mirror again",
  basic: "enter the password in the mirror's Access tab, then run the mirror again",
};

/** A mirror's own token is asked for again in its Access tab (a copy of the Settings token, in Settings). */
const OWN_TOKEN_ASK_AGAIN: AskAgain = { ...APP_ASK_AGAIN, bearer: "enter the token in the mirror's Access tab, then run the mirror again" };

/** True when the mirror signs in with credentials of its own: a user name and password, or a token of its own. */
export function hasOwnCredentials(settings: SourceSettings | undefined): boolean {
  const auth = settings?.auth;
  return auth?.scheme === 'basic' || (auth?.scheme === 'bearer' && auth.own === true);
}

/** The origin of a URL as a person gave it (a bare host name too), or null. */
function originOrNull(url: string): string | null {
  try {
    return new URL(normalizeStartUrl(url)).origin;
  } catch {
    return null;
  }
}

/**
 * The credentials the app gives a mirror's run (sync, retry, audit, applied notifications): the bearer token of
 * Settings when it is for the mirror's origin (`bearerToken`: that token, or null), unless the mirror has credentials of its own (a user name and password, or a token given in its Access
 * tab), which then win (and are not overwritten).
 * Undefined: none given, the mirror's kept ones are used.
 */
export function givenByApp(settings: SourceSettings | undefined, bearerToken: string | null): Credentials | undefined {
  if (hasOwnCredentials(settings)) return undefined;
  return bearerToken ? { scheme: 'bearer', token: bearerToken } : undefined;
}

interface Active {
  path: string;
  kind: 'sync' | 'audit';
  dryRun: boolean;
  /** A retry of a run's failures (paused, it is taken up again by Resume, not by a sync). */
  retry: boolean;
  abort: AbortController;
  pause: AbortController;
  /**
   * The engine decided the run's end (onFinishing): a Pause or Cancel from now on stops nothing, and is answered
   * false, so that the answer and the run's recorded end never disagree.
   */
  finishing: boolean;
  startedAt: number;
  /** What the inventory held when the run began: with the run's own change, what the mirror holds now. */
  resourcesAtStart: number;
  latest: SyncProgress | null;
  /** (time, done, bytes) of the last seconds, for the rate. */
  samples: { t: number; done: number; bytes: number }[];
  changed: boolean;
  timer: NodeJS.Timeout | null;
  done: Promise<unknown>;
  /** The run's notes so far (the first MAX_RUN_NOTES), and how many more there were. */
  notes: string[];
  notesLeftOut: number;
}

/** Keeps a note of the run for its end (the CLI prints them as they come; the app shows them when it ends). */
function noteOf(active: Active, note: string): void {
  if (active.notes.length < MAX_RUN_NOTES) active.notes.push(clip(note, 1000));
  else active.notesLeftOut++;
}

function notesOf(active: Active): string[] {
  return active.notesLeftOut === 0 ? active.notes : [...active.notes, `… and ${plural(active.notesLeftOut, 'more note')}.`];
}

const RATE_WINDOW_MS = 5_000;

function toRun(r: RunRecord): MirrorRun {
  const { pid: _pid, ...run } = r;
  return run;
}

/** What the mirror follows, as its view names it: the list it was made from, else its Capability List. */
function followed(binding: Binding): string | null {
  let given: string | null = null;
  try {
    given = normalizeStartUrl(binding.url);
  } catch {
    given = null;
  }
  if (given !== null && (given === binding.changeListUrl || given === binding.resourceListUrl)) return given;
  return binding.capabilityListUrl ?? binding.resourceListUrl ?? binding.changeListUrl ?? binding.url;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en')} ${n === 1 ? one : many}`;
}

/** Engine errors a person can act on keep their message (as a MirrorError); others go up as they are. */
function plain(error: unknown): unknown {
  if (error instanceof SyncError || error instanceof RetryError || error instanceof MirrorLockedError || error instanceof DiskFullError || error instanceof UnboundStateError) return new MirrorError(error.message);
  return error;
}

export class MirrorService {
  readonly #d: MirrorServiceDeps;
  readonly #active = new Map<string, Active>();
  /** The audit exports under way, by mirror: what Cancel stops. */
  readonly #exports = new Map<string, Set<AbortController>>();
  readonly #interval: number;
  #closed = false;
  readonly #scheduler: NodeJS.Timeout;
  /**
   * When a scheduled sync of a mirror could not start (its folder in use or gone), and why, by mirror: it waits a while
   * (nextSyncAt), and the list says so (MirrorSummary.putOff).
   */
  readonly #refused = new Map<string, { at: number; because: string }>();

  constructor(deps: MirrorServiceDeps) {
    this.#d = deps;
    this.#interval = deps.progressIntervalMs ?? 250;
    this.#scheduler = setInterval(() => this.#startDue(), deps.scheduleCheckMs ?? 60_000);
    this.#scheduler.unref();
  }

  #now(): number {
    return this.#d.now?.() ?? Date.now();
  }

  /**
   * Starts the scheduled syncs that are due, of mirrors that can run now. A run that a kill, the app's closing or the
   * Source (refusing, or asking to wait) interrupted is resumed; one a person paused waits for their Resume.
   */
  #startDue(): void {
    if (this.#closed) return;
    for (const m of this.#d.store.mirrors.list()) {
      if (m.options.syncEveryHours <= 0 || this.#active.has(m.path)) continue;
      let due: string | null;
      try {
        due = this.#summary(m.path, m.options, m.addedAt).nextSync;
      } catch {
        continue;
      }
      if (due === null || Date.parse(due) > this.#now()) continue;
      try {
        // An interrupted retry is taken up as Resume takes it up; otherwise a sync, which resumes an interrupted sync.
        if (toResume(this.#read(m.path).status)?.retry !== undefined) this.resume(m.path);
        else this.#startSync(m.path, 'auto', false, false, true);
        const active = this.#active.get(m.path);
        if (active) noteOf(active, `Started by the mirror's schedule (${scheduleText(m.options.syncEveryHours, m.options.syncAtMinute)}).`);
      } catch (error) {
        // Gone since it was looked at, or the app closing: tried again later, not every minute. (A folder rsdesk took
        // in the meantime is found by the run itself, when it takes the lock: #putOff.)
        this.#refused.set(m.path, { at: this.#now(), because: (error as Error).message });
      }
    }
  }

  // ---- the list ----

  list(): MirrorSummary[] {
    return this.#d.store.mirrors.list().map((m) => this.#summary(m.path, m.options, m.addedAt));
  }

  get(path: string): MirrorDetail {
    const key = this.#known(path);
    const m = this.#d.store.mirrors.get(key)!;
    const folder = this.#read(key);
    const summary = this.#summary(key, m.options, m.addedAt, folder);
    const runs = (folder.status?.runs ?? []).slice(-200).reverse().map((r) => this.#shown(key, r, folder.status));
    const headers = Object.entries(folder.status?.binding?.settings?.headers ?? {}).map(([name, value]) => ({ name, value }));
    const refusalLimitMs = folder.status?.binding?.settings?.refusalLimitMs ?? null;
    const pauseAfterRefusalsSeconds = refusalLimitMs === null ? null : Math.round(refusalLimitMs / 1000);
    return { ...summary, runs, access: this.#accessOf(folder.status?.binding ?? null), headers, pauseAfterRefusalsSeconds };
  }

  /** What the Access tab shows: the scheme, the basic user name, whether the password is kept here; never a secret. */
  #accessOf(binding: Binding | null): MirrorAccess {
    const auth = binding?.settings?.auth;
    if (auth?.scheme === 'basic') {
      const kept = binding?.id !== undefined && (this.#d.secretStore?.get(secretKey(binding.id)) ?? null) !== null;
      return { scheme: 'basic', origin: binding!.settings!.origin, user: auth.user, kept };
    }
    if (auth?.scheme === 'bearer' && auth.own) {
      const kept = binding?.id !== undefined && (this.#d.secretStore?.get(secretKey(binding.id)) ?? null) !== null;
      return { scheme: 'bearer', origin: binding!.settings!.origin, kept };
    }
    return { scheme: 'settings', origin: binding?.settings?.origin ?? null };
  }

  /**
   * Gives the mirror a user name and password of its own for its Source (sealed in the app's secret store, sent to
   * the Source's origin only), or with null takes them away (the Settings token applies again). The next run, and
   * the next batch of live notifications, use them.
   */
  setCredentials(path: string, basic: { user: string; password: string } | null): MirrorDetail {
    const key = this.#idle(path, 'This mirror is running: change its credentials when the run has ended.');
    if (basic && !this.#d.secretStore) throw new MirrorError('This app has nowhere to keep a password: give it to rsdesk sync --basic instead.');
    try {
      setMirrorCredentials(key, basic ? { scheme: 'basic', ...basic } : null, this.#d.secretStore);
    } catch (error) {
      throw plain(error);
    }
    this.#changed();
    return this.get(key);
  }

  /**
   * Gives the mirror a bearer token of its own (sealed like a password, sent to the Source's origin only; the Settings
   * token no longer replaces it), or with null takes its own credentials away. The next run and the next batch of live
   * notifications use it.
   */
  setToken(path: string, token: string | null): MirrorDetail {
    const key = this.#idle(path, 'This mirror is running: change its credentials when the run has ended.');
    if (token !== null && !this.#d.secretStore) throw new MirrorError('This app has nowhere to keep a token: give it to rsdesk sync --token instead.');
    try {
      setMirrorCredentials(key, token !== null ? { scheme: 'bearer', token, own: true } : null, this.#d.secretStore);
    } catch (error) {
      throw plain(error);
    }
    this.#changed();
    return this.get(key);
  }

  /** Replaces the mirror's extra request headers (checked by the contract); the next run and live batch send them. */
  setHeaders(path: string, headers: { name: string; value: string }[]): MirrorDetail {
    const key = this.#idle(path, 'This mirror is running: change its headers when the run has ended.');
    try {
      setMirrorHeaders(key, Object.fromEntries(headers.map((h) => [h.name.trim().toLowerCase(), h.value.trim()])));
    } catch (error) {
      throw plain(error);
    }
    this.#changed();
    return this.get(key);
  }

  runs(path: string): MirrorRun[] {
    return this.get(path).runs;
  }

  failures(path: string, runId: number): RunFailures {
    const key = this.#known(path);
    return { runId, ...readFailures(key, runId) };
  }

  async create(args: {
    url?: string;
    path: string;
    capabilityListUrl?: string;
    deletePolicy?: MirrorOptions['deletePolicy'];
    concurrency?: number;
    delaySeconds?: number;
    syncEveryHours?: number;
    syncAtMinute?: number | null;
    maps?: string[];
    allowHosts?: string[];
    user?: string;
    password?: string;
  }): Promise<MirrorSummary> {
    const path = this.#absolute(args.path);
    if (this.#active.has(path)) throw new MirrorError('This mirror is running; wait for its run to end.');
    for (const url of [args.url, args.capabilityListUrl]) {
      // Kept in the mirror's folder and shown in every message naming it: a password has no place in it.
      const userinfo = url === undefined ? null : splitUserinfo(url);
      if (userinfo !== null) {
        throw new InvalidArgumentsError(`The URL has a user name and password in it, which would be kept in the mirror's folder and shown with it: give ${userinfo.url} without them, and the credentials in the user name and password fields.`);
      }
    }
    let maps;
    try {
      maps = (args.maps ?? []).filter((m) => m.trim() !== '').map((m) => parseMap(m.trim()));
    } catch (error) {
      // Said as the form names it (the form shows it beside its mappings by this start).
      throw new InvalidArgumentsError((error as Error).message.replace(/^--map:? ?/, 'Folder mapping: ').replace(/^The folder of a --map /, 'Folder mapping: its folder '));
    }
    const existed = existsSync(path);
    const wasMirror = isMirror(path);
    const current = wasMirror ? this.#read(path).status?.binding ?? null : null;
    if (args.url === undefined) {
      if (!wasMirror) throw new InvalidArgumentsError(`${path} is not a mirror yet: give the URL of the list to mirror`);
    } else if (current !== null && current.url !== args.url) {
      throw new MirrorError(`${path} is a mirror of ${current.url} already. Choose another folder for ${args.url}.`);
    } else if (!wasMirror && existed && !statSync(path).isDirectory()) {
      throw new MirrorError(`${path} is a file, not a folder. Choose a new or empty folder: the mirror puts its own files there.`);
    } else if (!wasMirror && existed && !isEmptyFolder(path)) {
      throw new MirrorError(`${path} is not empty. Choose a new or empty folder: the mirror puts its own files there.`);
    }
    // Given in the form, else those kept for the Source's origin (a sign-in when it was added): the mirror's own.
    const basic: Credentials | undefined =
      args.user !== undefined && args.password !== undefined
        ? { scheme: 'basic', user: args.user, password: args.password }
        : args.url !== undefined && current === null
          ? this.#signInFor(args.capabilityListUrl ?? args.url)
          : undefined;
    if (basic && !this.#d.secretStore) throw new MirrorError('This app has nowhere to keep a password: give it to rsdesk sync --basic instead.');
    if (args.url !== undefined && current === null) {
      const settings = this.#d.store.settings.get();
      try {
        await prepareMirror({
          url: args.url,
          dest: path,
          capabilityListUrl: args.capabilityListUrl,
          maps,
          allowHosts: args.allowHosts,
          // The Settings token only when it is for this Source's origin.
          token: settingsTokenFor(settings, originOrNull(args.capabilityListUrl ?? args.url)),
          credentials: basic,
          secretStore: this.#d.secretStore,
          timeoutMs: settings.timeoutMs,
          userAgent: this.#d.userAgent,
        });
      } catch (error) {
        // Nothing of a mirror that could not be made is left behind: the folder we created, or the state in it.
        try {
          if (!existed) rmSync(path, { recursive: true, force: true });
          else if (!wasMirror) rmSync(join(path, STATE_DIR), { recursive: true, force: true });
        } catch {
          // Left as it is; the error below says what went wrong.
        }
        throw plain(error);
      }
    } else if (basic) {
      try {
        setMirrorCredentials(path, basic, this.#d.secretStore);
      } catch (error) {
        throw plain(error);
      }
    }
    const old = this.#d.store.mirrors.get(path)?.options ?? DEFAULT_MIRROR_OPTIONS;
    const options: MirrorOptions = {
      deletePolicy: args.deletePolicy ?? old.deletePolicy,
      concurrency: args.concurrency ?? old.concurrency,
      delaySeconds: args.delaySeconds ?? old.delaySeconds,
      syncEveryHours: args.syncEveryHours ?? old.syncEveryHours,
      syncAtMinute: args.syncAtMinute === undefined ? old.syncAtMinute : args.syncAtMinute,
    };
    const saved = this.#d.store.mirrors.put(path, options);
    this.#changed();
    return this.#summary(path, saved.options, saved.addedAt);
  }

  /** The credentials signed in with for the origin of `url`, as a new mirror's own. */
  #signInFor(url: string): Credentials | undefined {
    let origin: string;
    try {
      origin = new URL(normalizeStartUrl(url)).origin;
    } catch {
      return undefined;
    }
    const kept = this.#d.signIns?.get(origin) ?? null;
    if (kept === null) return undefined;
    return kept.scheme === 'bearer' ? { ...kept, own: true } : kept;
  }

  update(args: {
    path: string;
    deletePolicy?: MirrorOptions['deletePolicy'];
    concurrency?: number;
    delaySeconds?: number;
    syncEveryHours?: number;
    syncAtMinute?: number | null;
    pauseAfterRefusalsSeconds?: number | null;
  }): MirrorSummary {
    const key = this.#known(args.path);
    const old = this.#d.store.mirrors.get(key)!;
    // Kept in the mirror's folder, where rsdesk keeps it too (both then use the one value); written first, so that a
    // folder that cannot be written leaves the other options unsaved as well, and the form says why.
    if (args.pauseAfterRefusalsSeconds !== undefined) {
      const limit = args.pauseAfterRefusalsSeconds;
      const kept = this.#read(key).status?.binding?.settings?.refusalLimitMs ?? null;
      if ((limit === null ? null : limit * 1000) !== kept) {
        if (this.#active.has(key)) throw new MirrorError('This mirror is running: change the pause after refusals when the run has ended.');
        try {
          setMirrorRefusalLimit(key, limit === null ? null : limit * 1000);
        } catch (error) {
          throw plain(error);
        }
      }
    }
    const options: MirrorOptions = {
      deletePolicy: args.deletePolicy ?? old.options.deletePolicy,
      concurrency: args.concurrency ?? old.options.concurrency,
      delaySeconds: args.delaySeconds ?? old.options.delaySeconds,
      syncEveryHours: args.syncEveryHours ?? old.options.syncEveryHours,
      syncAtMinute: args.syncAtMinute === undefined ? old.options.syncAtMinute : args.syncAtMinute,
    };
    // A new schedule is counted from the last sync again, not put off by an earlier refusal.
    if (options.syncEveryHours !== old.options.syncEveryHours || options.syncAtMinute !== old.options.syncAtMinute) this.#refused.delete(key);
    const saved = this.#d.store.mirrors.put(key, options);
    this.#changed();
    return this.#summary(key, saved.options, saved.addedAt);
  }

  forget(path: string): MirrorSummary[] {
    const key = this.#known(path);
    if (this.#active.has(key)) throw new MirrorError('This mirror is running: cancel its run before removing it from the list.');
    this.#d.store.mirrors.remove(key);
    this.#originAuth = null;
    const mirrors = this.list();
    this.#d.events.emit('mirrors.changed', { mirrors });
    return mirrors;
  }

  async chooseFolder(): Promise<{ supported: boolean; path: string | null }> {
    if (!this.#d.chooseFolder) return { supported: false, path: null };
    return { supported: true, path: await this.#d.chooseFolder() };
  }

  async openFolder(path: string): Promise<{ opened: boolean }> {
    const key = this.#known(path);
    if (!this.#d.openPath) return { opened: false };
    if (!existsSync(key)) throw new NotFoundError(`The folder ${key} no longer exists.`);
    const problem = await this.#d.openPath(key);
    if (problem) throw new MirrorError(`The folder could not be opened: ${problem}`);
    return { opened: true };
  }

  // ---- runs ----

  start(path: string, mode: 'auto' | 'baseline' | 'incremental' = 'auto', dryRun = false, allowMassDelete: boolean | number = false): MirrorSummary {
    return this.#startSync(path, mode, dryRun, allowMassDelete, false);
  }

  /**
   * A sync of the mirror; `scheduled`: started by its schedule, which a lock taken by another process (rsdesk) between
   * the look at the folder and the run's own taking of the lock puts off (#putOff) instead of failing.
   */
  #startSync(path: string, mode: 'auto' | 'baseline' | 'incremental', dryRun: boolean, allowMassDelete: boolean | number, scheduled: boolean): MirrorSummary {
    const key = this.#idle(path, 'A run of this mirror is going on already.');
    const options = this.#d.store.mirrors.get(key)!.options;
    // Whatever put the schedule off is past once a run starts.
    this.#refused.delete(key);
    const active = this.#begin(key, 'sync', dryRun);
    active.done = sync({
      dest: key,
      mode,
      dryRun,
      deletePolicy: options.deletePolicy,
      allowMassDelete,
      concurrency: options.concurrency,
      delayMs: Math.round(options.delaySeconds * 1000),
      ...this.#access(active),
      pauseSignal: active.pause.signal,
      onFinishing: () => this.#finishing(active),
      onProgress: (p) => this.#progressed(active, p),
      onNote: (n) => noteOf(active, n),
    }).then(
      (result) => this.#end(active, endOf(key, result, active, options.deletePolicy)),
      (error: unknown) =>
        scheduled && error instanceof MirrorLockedError && error.holder !== null ? this.#putOff(active, error) : this.#end(active, failedEnd(key, active, error)),
    );
    this.#changed();
    return this.#summary(key, options, this.#d.store.mirrors.get(key)!.addedAt);
  }

  /**
   * A scheduled sync that lost the folder's lock to another process in the same instant (rsdesk from cron, started
   * as the app looked): nothing ran and nothing failed, so no run ends; it is put off as a start refused before it
   * began is (REFUSED_WAIT_MS), and the list says why. Before, it ended as a failed run ("in use by rsdesk sync").
   */
  #putOff(active: Active, error: MirrorLockedError): void {
    this.#finish(active);
    const holder = error.holder!;
    this.#refused.set(active.path, { at: this.#now(), because: `the folder was in use by ${holder.command} (process ${holder.pid})` });
    this.#changed();
  }

  /**
   * Fetches again only chosen failures of a run (all of them when `uris` is absent), as a run of its own in the
   * journal; what was verified is not touched. Progress and the end come as for a sync.
   */
  retry(path: string, runId: number, uris?: string[]): MirrorSummary {
    const key = this.#idle(path, 'A run of this mirror is going on already.');
    try {
      checkRetry(key, runId, uris);
    } catch (error) {
      throw plain(error);
    }
    return this.#retrying(key, (common) => retryResources({ ...common, runId, uris }));
  }

  /**
   * Fetches again every failure of the mirror that still stands, whatever run it is of, as one retry run (at most
   * 10,000; its end says how many are left): a mirror the live side feeds has one run per batch of notifications.
   */
  retryStanding(path: string): MirrorSummary {
    const key = this.#idle(path, 'A run of this mirror is going on already.');
    return this.#retrying(key, (common) => retryStanding(common));
  }

  /** Starts a retry (a new one, or one taken up) as the mirror's active run. */
  #retrying(key: string, run: (common: Omit<ResumeRetryOptions, 'retryRunId'>) => Promise<RetryResult>): MirrorSummary {
    const options = this.#d.store.mirrors.get(key)!.options;
    this.#refused.delete(key);
    const active = this.#begin(key, 'sync', false, true);
    active.done = run({
      dest: key,
      deletePolicy: options.deletePolicy,
      concurrency: options.concurrency,
      ...this.#access(active),
      pauseSignal: active.pause.signal,
      onFinishing: () => this.#finishing(active),
      onProgress: (p) => this.#progressed(active, p),
    }).then(
      (result) => this.#end(active, retryEnd(key, result, active)),
      (error: unknown) => this.#end(active, failedEnd(key, active, plain(error))),
    );
    this.#changed();
    return this.#summary(key, options, this.#d.store.mirrors.get(key)!.addedAt);
  }

  /** The mirror at `path`, known, still a mirror, and with no run going on (else `busy` is the refusal). */
  #idle(path: string, busy: string): string {
    const key = this.#known(path);
    if (this.#closed) throw new MirrorError('The app is closing.');
    if (this.#active.has(key)) throw new MirrorError(busy);
    if (!isMirror(key)) throw new NotFoundError(`${key} is no longer a mirror (its folder or its ${STATE_DIR} folder is gone).`);
    return key;
  }

  /** How a run reaches the Source: the app's settings, the sealed secrets, and the run's cancel signal. */
  #access(active: Active) {
    const settings = this.#d.store.settings.get();
    const binding = readBinding(active.path);
    const given = givenByApp(binding?.settings, settingsTokenFor(settings, mirrorOrigin(binding)));
    return {
      // Given explicitly (a token, or nothing): a mirror with credentials of its own keeps them.
      credentials: given,
      secretStore: this.#d.secretStore,
      askAgain: given === undefined && hasOwnCredentials(binding?.settings) ? OWN_TOKEN_ASK_AGAIN : APP_ASK_AGAIN,
      timeoutMs: settings.timeoutMs,
      userAgent: this.#d.userAgent,
      signal: active.abort.signal,
    };
  }

  #progressed(active: Active, progress: SyncProgress): void {
    const recorded = active.latest !== null && active.latest.phase !== 'discovery';
    active.latest = progress;
    active.changed = true;
    // Past discovery the run is in the mirror's journal: the views read the mirror again to show its row.
    if (!recorded && progress.phase !== 'discovery') this.#changed();
  }

  /**
   * Resume = a sync in `auto` mode, which takes up the interrupted sync first; or, when the run to take up is an
   * interrupted retry (newer than any interrupted sync), that retry, for what it has not settled yet.
   */
  resume(path: string): MirrorSummary {
    const key = this.#idle(path, 'A run of this mirror is going on already.');
    const retryId = toResume(this.#read(key).status)?.retry;
    if (retryId === undefined) return this.start(key, 'auto');
    try {
      checkResumeRetry(key, retryId);
    } catch (error) {
      throw plain(error);
    }
    return this.#retrying(key, (common) => resumeRetry({ ...common, retryRunId: retryId }));
  }

  /** From here on the run ends as what it is (the engine's onFinishing). */
  #finishing(active: Active): void {
    active.finishing = true;
    active.changed = true;
  }

  pause(path: string): { paused: boolean } {
    const active = this.#active.get(this.#absolute(path));
    if (!active || active.kind !== 'sync' || active.finishing || active.pause.signal.aborted) return { paused: false };
    active.pause.abort();
    active.changed = true;
    this.#changed();
    return { paused: true };
  }

  cancel(path: string): { cancelled: boolean } {
    const active = this.#active.get(this.#absolute(path));
    if (!active || active.finishing || active.abort.signal.aborted) return { cancelled: false };
    active.abort.abort();
    active.changed = true;
    this.#changed();
    return { cancelled: true };
  }

  async audit(path: string, rehash = false): Promise<AuditView> {
    const key = this.#idle(path, 'A run of this mirror is going on already; audit it once the run has ended.');
    const active = this.#begin(key, 'audit', false);
    this.#changed();
    const t0 = Date.now();
    const work = audit({ dest: key, rehash, ...this.#access(active), onFinishing: () => this.#finishing(active) });
    active.done = work.catch(() => undefined);
    const seconds = () => Math.round((Date.now() - t0) / 100) / 10;
    const base = { path: key, kind: 'audit' as const, mode: null, created: 0, updated: 0, deleted: 0, skipped: 0, bytes: 0 };
    try {
      const report = await work;
      // The engine kept the report in the mirror's state; the view is that saved one (its time and duration).
      const saved = this.#savedAudit(key);
      const view: AuditView = saved ?? { path: key, at: new Date().toISOString(), rehash, seconds: seconds(), report };
      // The lists hold the first few of each kind only; the counts hold them all.
      const counted = report.counts ?? { missing: report.missing.length, extra: report.extra.length, changed: report.changed.length, unverifiable: report.unverifiable.length };
      const notInSync = counted.missing + counted.extra + counted.changed + counted.unverifiable;
      this.#finish(active);
      this.#changed();
      const headline = report.inSync ? `In sync: ${plural(report.inSyncCount, 'resource')} match the Source` : `Not in sync: ${plural(notInSync, 'difference')}`;
      this.#d.events.emit('audit.ended', {
        ...base,
        status: 'completed',
        message: `${headline}.`,
        summary: { headline, changes: false, rest: '' },
        unchanged: report.inSyncCount,
        failed: notInSync,
        seconds: view.seconds,
        audit: view,
      });
      return view;
    } catch (error) {
      this.#finish(active);
      this.#changed();
      const cancelled = active.abort.signal.aborted;
      const message = cancelled ? 'Audit cancelled.' : (error as Error).message;
      this.#d.events.emit('audit.ended', { ...base, status: cancelled ? 'cancelled' : 'error', message, summary: sentenceSummary(message), unchanged: 0, failed: 0, seconds: seconds(), audit: null });
      throw cancelled ? new MirrorError(message) : plain(error);
    }
  }

  /** The last audit's report, kept in the mirror's own state: it is there after a restart, and after `rsdesk audit`. */
  auditReport(path: string): AuditView | null {
    return this.#savedAudit(this.#known(path));
  }

  /**
   * Writes the kept report of run `runId` to a file, every item of it (or every item the table's filter lets through),
   * read from the mirror's state: the window holds only the first 10,000 of each kind.
   */
  async exportAudit(args: {
    path: string;
    runId: number;
    format: 'json' | 'csv';
    file?: string;
    filter?: AuditFilter | null;
  }): Promise<{ file: string | null; rows: number }> {
    const key = this.#known(args.path);
    const options = this.#d.store.mirrors.get(key)!.options;
    let file: string;
    let replace = false;
    if (args.file !== undefined) file = this.#absoluteFile(args.file);
    else if (this.#d.chooseSaveFile) {
      const saved = this.#savedAudit(key);
      const chosen = await this.#d.chooseSaveFile(auditFileName(key, saved?.at ?? new Date().toISOString(), args.format), args.format);
      if (chosen === null) return { file: null, rows: 0 };
      file = this.#absoluteFile(chosen);
      // The save dialog asked before letting the person choose a file that is there already.
      replace = true;
    } else throw new InvalidArgumentsError('Give the full path of the file to write.');
    // Its state folder is the mirror's own: a file written there could take the place of its state.
    const inState = relative(join(key, STATE_DIR), file);
    if (inState === '' || (!inState.startsWith('..') && !isAbsolute(inState))) {
      throw new InvalidArgumentsError(`${file} is inside the mirror's own state folder (${STATE_DIR}): choose a file elsewhere.`);
    }
    let source: string | null = null;
    try {
      const binding = readBinding(key);
      source = binding ? followed(binding) : null;
    } catch {
      // A state that cannot be read: the export says so, naming the folder.
    }
    const filter = args.filter && (args.filter.status !== 'all' || args.filter.text.trim() !== '') ? { status: args.filter.status, text: args.filter.text.trim() } : null;
    // Cancel stops every export of this mirror under way (the window shows one at a time).
    const stop = new AbortController();
    let exports = this.#exports.get(key);
    if (exports === undefined) this.#exports.set(key, (exports = new Set()));
    exports.add(stop);
    try {
      const { rows } = await exportAudit({
        mirror: key,
        signal: stop.signal,
        runId: args.runId,
        format: args.format,
        file,
        filter,
        replace,
        deletePolicy: options.deletePolicy,
        source,
        progressIntervalMs: this.#d.progressIntervalMs,
        onProgress: (read, total) => this.#d.events.emit('audit.exportProgress', { path: key, runId: args.runId, file, read, total }),
      });
      return { file, rows };
    } finally {
      exports.delete(stop);
      if (exports.size === 0) this.#exports.delete(key);
    }
  }

  cancelExport(path: string): { cancelled: boolean } {
    const exports = this.#exports.get(this.#absolute(path));
    if (exports === undefined) return { cancelled: false };
    for (const stop of exports) stop.abort();
    return { cancelled: true };
  }

  #absoluteFile(file: string): string {
    let trimmed = file.trim();
    if (trimmed === '~' || /^~[\\/]/.test(trimmed)) trimmed = join(homedir(), trimmed.slice(1));
    if (!isAbsolute(trimmed)) throw new InvalidArgumentsError(`Give the file's full path (${JSON.stringify(trimmed.slice(0, 200))} is relative).`);
    return normalize(trimmed);
  }

  #savedAudit(path: string): AuditView | null {
    try {
      const saved = lastAudit(path);
      return saved === null ? null : { path, at: saved.at, rehash: saved.rehash, seconds: saved.seconds, report: saved.report };
    } catch {
      // The folder is gone or no longer a mirror: the mirror's status says so; there is no report to show.
      return null;
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#scheduler);
    const runs = [...this.#active.values()];
    // A sync (a retry too) is paused rather than cancelled: the next start of the app offers to resume it, and the
    // mirror's schedule takes it up by itself (unlike a person's pause, which waits for Resume).
    for (const run of runs) {
      if (run.kind === 'sync') run.pause.abort('Paused: the app was closed while the run went on; Resume takes it up where it stopped.');
      else run.abort.abort();
    }
    await Promise.allSettled(runs.map((r) => r.done));
  }

  // ---- inside ----

  #absolute(path: string): string {
    return absoluteFolder(path);
  }

  /** The remembered mirror's path, or NotFoundError. */
  #known(path: string): string {
    const key = this.#absolute(path);
    if (!this.#d.store.mirrors.get(key)) throw new NotFoundError(`The app has no mirror in ${key}.`);
    return key;
  }

  #read(path: string): { status: FolderStatus | null; problem: string | null } {
    try {
      const status = readFolder(path);
      return { status, problem: status === null ? `The folder ${path} is gone or is no longer a mirror (no ${STATE_DIR}/state.sqlite).` : null };
    } catch (error) {
      return { status: null, problem: `The mirror's state in ${path} cannot be read: ${(error as Error).message}` };
    }
  }

  /** A run the journal says is running, but that no process runs any more, is shown as what it is: interrupted. */
  #shown(path: string, r: RunRecord, folder: FolderStatus | null): MirrorRun {
    const run = toRun(r);
    if (run.status === 'running' && !this.#active.has(path) && !folder?.heldBy) return { ...run, status: 'interrupted' };
    return run;
  }

  #summary(path: string, options: MirrorOptions, addedAt: string, read = this.#read(path)): MirrorSummary {
    const folder = read.status;
    const binding = folder?.binding ?? null;
    const runs = folder?.runs ?? [];
    const lastSync = runs.filter((r) => r.kind !== 'audit').at(-1);
    const lastAudit = runs.filter((r) => r.kind === 'audit').at(-1);
    const lastRun = lastSync ? this.#shown(path, lastSync, folder) : null;
    const active = this.#active.get(path);
    // What Resume takes up: the interrupted sync the next sync resumes, or a newer interrupted retry.
    const next = toResume(folder);
    const resumableNow = !active && next !== null;
    let status: MirrorStatus;
    let problem = read.problem;
    if (active) status = active.kind === 'audit' ? 'auditing' : active.abort.signal.aborted ? 'cancelling' : active.pause.signal.aborted ? 'pausing' : 'running';
    else if (folder === null) status = 'missing';
    else if (folder.heldBy) {
      status = 'busy';
      problem = `In use by ${folder.heldBy.command} (process ${folder.heldBy.pid}); only one program at a time may write a mirror.`;
    } else if (resumableNow) status = pausedMessage(next.run.message) ? 'paused' : 'interrupted';
    else status = 'ready';
    if (!active && folder !== null && binding === null && problem === null) problem = unboundStateMessage(path);
    // The Source's wait holds only the run it paused, while that run is still the one to take up.
    const asked = folder?.sourceWait ?? null;
    const sourceWait = asked !== null && resumableNow && next.run.id === asked.runId && Date.parse(asked.until) > this.#now() ? asked.until : null;
    return {
      path,
      name: basename(path) || path,
      url: binding?.url ?? null,
      capabilityListUrl: binding?.capabilityListUrl ?? null,
      resourceListUrl: binding?.resourceListUrl ?? null,
      changeListUrl: binding?.changeListUrl ?? null,
      options,
      addedAt,
      status,
      problem,
      checkpoint: folder?.checkpoint?.at ?? null,
      needsSync: folder?.needsSync ? { from: folder.needsSync.from, until: folder.needsSync.until, since: folder.needsSync.since } : null,
      liveHold: folder ? readLiveHold(path, folder) : null,
      resources: folder?.resources ?? 0,
      lastRun,
      lastAudit: lastAudit ? this.#shown(path, lastAudit, folder) : null,
      resumable: resumableNow,
      nextSync: (status === 'ready' || (resumableNow && !pausedByPerson(next.run.message))) && problem === null ? this.#nextSync(path, options, addedAt, lastSync ?? null, sourceWait) : null,
      sourceWait,
      putOff: this.#putOffOf(path, options, lastSync ?? null),
      progress: active ? this.#progress(active) : null,
    };
  }

  /** The scheduled sync put off, while no sync (of rsdesk, say) has ended since and the mirror still has a schedule. */
  #putOffOf(path: string, options: MirrorOptions, lastSync: RunRecord | null): MirrorSummary['putOff'] {
    const refused = this.#refused.get(path);
    if (refused === undefined || !(options.syncEveryHours > 0)) return null;
    if (lastSync?.endedAt && Date.parse(lastSync.endedAt) > refused.at) return null;
    return { at: new Date(refused.at).toISOString(), because: refused.because };
  }

  #nextSync(path: string, options: MirrorOptions, addedAt: string, lastSync: RunRecord | null, sourceWait: string | null): string | null {
    const at = nextSyncAt(options.syncEveryHours, lastSync, addedAt, this.#refused.get(path)?.at, options.syncAtMinute, sourceWait === null ? null : Date.parse(sourceWait));
    return at === null ? null : new Date(at).toISOString();
  }

  #begin(path: string, kind: 'sync' | 'audit', dryRun: boolean, retry = false): Active {
    const active: Active = {
      path,
      kind,
      dryRun,
      retry,
      abort: new AbortController(),
      pause: new AbortController(),
      finishing: false,
      startedAt: Date.now(),
      resourcesAtStart: kind === 'sync' && !dryRun ? inventorySize(path) : 0,
      latest: null,
      samples: [],
      changed: true,
      timer: null,
      done: Promise.resolve(),
      notes: [],
      notesLeftOut: 0,
    };
    this.#active.set(path, active);
    active.timer = setInterval(() => this.#tick(active), this.#interval);
    active.timer.unref?.();
    this.#tick(active);
    return active;
  }

  /** Sends the latest progress when something changed since the last one: the batching of progress events. */
  #tick(active: Active): void {
    const now = Date.now();
    const p = active.latest;
    if (p) {
      active.samples.push({ t: now, done: p.settled, bytes: p.bytesFetched });
      while (active.samples.length > 2 && now - active.samples[0]!.t > RATE_WINDOW_MS) active.samples.shift();
    }
    if (!active.changed) return;
    active.changed = false;
    this.#d.events.emit('mirror.progress', this.#progress(active));
  }

  #progress(active: Active): MirrorProgress {
    const p = active.latest;
    const now = Date.now();
    const first = active.samples[0];
    const last = active.samples.at(-1);
    const span = first && last ? (last.t - first.t) / 1000 : 0;
    const rate = span >= 0.5 ? (last!.done - first!.done) / span : 0;
    const byteRate = span >= 0.5 ? (last!.bytes - first!.bytes) / span : 0;
    const done = p?.settled ?? 0;
    const total = Math.max(p?.listed ?? 0, done);
    const totalKnown = p?.listComplete ?? false;
    const bytesTotal = Math.max(p?.listedBytes ?? 0, 0);
    const bytesDone = p?.bytesFetched ?? 0;
    let etaSeconds: number | null = null;
    // Only once the list is read whole: a total still growing gives a time left that stays "a few seconds" for minutes.
    if (totalKnown && rate > 0) etaSeconds = Math.round((total - done) / rate);
    else if (totalKnown && bytesTotal > bytesDone && byteRate > 0) etaSeconds = Math.round((bytesTotal - bytesDone) / byteRate);
    return {
      path: active.path,
      kind: active.kind,
      mode: p?.mode ?? null,
      dryRun: active.dryRun,
      phase: active.kind === 'audit' ? 'audit' : (p?.phase ?? 'discovery'),
      pausing: active.pause.signal.aborted,
      cancelling: active.abort.signal.aborted,
      retry: active.retry,
      done,
      total,
      totalKnown,
      bytesDone,
      bytesTotal,
      rate: Math.round(rate * 10) / 10,
      byteRate: Math.round(byteRate),
      etaSeconds,
      elapsedSeconds: Math.round((now - active.startedAt) / 1000),
      created: p?.created ?? 0,
      updated: p?.updated ?? 0,
      deleted: p?.deleted ?? 0,
      unchanged: p?.unchanged ?? 0,
      skipped: p?.skipped ?? 0,
      failed: p?.failed ?? 0,
      resources: active.kind === 'sync' && !active.dryRun ? active.resourcesAtStart + (p?.inventoryChange ?? 0) : null,
      latestFailure: p?.latestFailure ?? null,
    };
  }

  #finish(active: Active): void {
    if (active.timer) clearInterval(active.timer);
    active.timer = null;
    if (this.#active.get(active.path) === active) this.#active.delete(active.path);
  }

  #end(active: Active, end: MirrorRunEnd): void {
    // The last progress (the bar at its end), then the end itself.
    active.changed = true;
    this.#tick(active);
    this.#finish(active);
    this.#d.events.emit('mirror.ended', end);
    this.#changed();
  }

  /** Origin → the Authorization of a mirror of it with credentials of its own kept here; remade after any change. */
  #originAuth: Map<string, string> | null = null;

  /**
   * The credentials the app's browser sends to `origin`: those signed in with for that origin (sources.signIn), else
   * the user name and password or own token of a mirror of that Source, when one has them and the secret is kept on
   * this computer (the first such mirror in the list); else null.
   */
  sourceHeadersFor(origin: string): SourceHeaders | null {
    const signedIn = this.#d.signIns?.authorizationFor(origin) ?? null;
    if (signedIn !== null) return { origin, authorization: signedIn };
    if (this.#originAuth === null) {
      const found = new Map<string, string>();
      for (const m of this.#d.store.mirrors.list()) {
        try {
          const binding = readBinding(m.path);
          const auth = binding?.settings?.auth;
          if (!hasOwnCredentials(binding?.settings) || binding?.id === undefined || found.has(binding.settings!.origin)) continue;
          const secret = this.#d.secretStore?.get(secretKey(binding.id)) ?? null;
          if (secret === null) continue;
          found.set(binding.settings!.origin, authorizationOf(auth?.scheme === 'basic' ? { scheme: 'basic', user: auth.user, password: secret } : { scheme: 'bearer', token: secret }));
        } catch {
          // A mirror folder that cannot be read gives nothing.
        }
      }
      this.#originAuth = found;
    }
    const authorization = this.#originAuth.get(origin);
    return authorization === undefined ? null : { origin, authorization };
  }

  #changed(): void {
    this.#originAuth = null;
    if (this.#closed) return;
    this.#d.events.emit('mirrors.changed', { mirrors: this.list() });
  }
}

function isEmptyFolder(path: string): boolean {
  try {
    return readdirSync(path).length === 0;
  } catch {
    // Not a folder (a file): the engine's mkdir says so when it is tried.
    return false;
  }
}

/**
 * The summary of an end whose message is one the engine or the system wrote (an error), not one made here: its
 * first sentence is the headline, the rest is kept for the screen.
 */
function sentenceSummary(message: string): RunEndSummary {
  const end = /[.;](\s+|$)/.exec(message);
  if (end === null) return { headline: message.trim(), changes: false, rest: '' };
  return { headline: message.slice(0, end.index).trim(), changes: false, rest: message.slice(end.index + end[0].length).trim() };
}

function countsText(r: RunCounts): string {
  const skipped = r.skipped > 0 ? `, ${plural(r.skipped, 'skipped', 'skipped')}` : '';
  return `${plural(r.created, 'created', 'created')}, ${plural(r.updated, 'updated', 'updated')}, ${plural(r.deleted, 'deleted', 'deleted')}, ${plural(r.unchanged, 'unchanged', 'unchanged')}${skipped}`;
}

/** A dry run records no run: paused, it leaves nothing for Resume (which takes up the last recorded run, if any). */
const DRY_RUN_PAUSED = 'A dry run writes nothing, so there is nothing to resume: start it again to see the whole of it.';

function endOf(path: string, r: SyncResult, active: Active, policy: DeletePolicy): MirrorRunEnd {
  const status = r.paused ? 'paused' : r.failed > 0 ? 'failed' : 'completed';
  const what = r.dryRun ? 'Dry run' : r.mode === 'baseline' ? 'Baseline' : 'Incremental sync';
  const counts = countsText(r);
  // With a policy that removes them, resources kept were held back: more than the Source lists (unlisted.ts).
  const heldBack = policy !== 'keep' && r.wouldDeleteCount > 0;
  const kept =
    r.wouldDeleteCount === 0
      ? ''
      : heldBack
        ? ` ${plural(r.wouldDeleteCount, 'resource')} the Source no longer lists ${r.wouldDeleteCount === 1 ? 'was' : 'were'} not ${policy === 'delete' ? 'deleted' : 'quarantined'}: more than the Source lists now.`
        : ` ${plural(r.wouldDeleteCount, 'resource')} the Source no longer lists ${r.wouldDeleteCount === 1 ? 'was' : 'were'} kept, as this mirror keeps what the Source deletes (the Options tab changes that).`;
  const summary: RunEndSummary =
    status === 'paused'
      ? r.runId === null && !r.dryRun
        ? { headline: "Paused before the run began, while the Source's lists were being read: nothing was fetched, and no run was recorded", changes: false, rest: '' }
        : { headline: `Paused after ${plural(active.latest?.settled ?? 0, 'resource')}`, changes: false, rest: pauseWhy(r.pausedBecause) ?? (r.dryRun ? DRY_RUN_PAUSED : 'Resume takes it up where it stopped.') }
      : status === 'failed'
        ? { headline: `${what} ended with ${plural(r.failed, 'failure')}`, changes: false, rest: `Retry fetches what failed again.${kept}` }
        : { headline: `${what} completed`, changes: true, rest: kept.trim() };
  const message =
    status === 'paused'
      ? r.runId === null && !r.dryRun
        ? `${summary.headline}.`
        : `${summary.headline}${r.pausedBecause === null ? ';' : '.'} ${summary.rest}`
      : `${summary.headline}: ${counts}.${status === 'failed' ? ` ${summary.rest}` : kept}`;
  return {
    notes: notesOf(active),
    kept: r.wouldDeleteCount,
    heldBack,
    path,
    kind: 'sync',
    status,
    message,
    summary,
    mode: r.mode,
    created: r.created,
    updated: r.updated,
    deleted: r.deleted,
    unchanged: r.unchanged,
    skipped: r.skipped,
    failed: r.failed,
    bytes: r.bytes,
    seconds: r.seconds,
  };
}

/**
 * Why a run paused by itself (the Source refused everything, or asked to wait), as the rest of its end's sentence;
 * null for a person's pause. Without it the app said only "Paused after 0 resources", hiding the Source's answer.
 */
function pauseWhy(pausedBecause: string | null): string | null {
  if (pausedBecause === null) return null;
  const why = pausedBecause.replace(/^Paused: /, '');
  return why.charAt(0).toUpperCase() + why.slice(1);
}

function retryEnd(path: string, r: RetryResult, active: Active): MirrorRunEnd {
  const cancelled = active.abort.signal.aborted;
  const status = cancelled ? 'cancelled' : r.paused ? 'paused' : r.failed > 0 ? 'failed' : 'completed';
  const what = `Retry of ${plural(r.asked, 'resource')} of ${runsWords(r.ofRuns)}`;
  const counts = countsText(r);
  // Past the 10,000 a retry takes at once, the rest still stand: said, with what takes them.
  const left = r.leftOver > 0 ? `${plural(r.leftOver, 'more failure')} still stand${r.leftOver === 1 ? 's' : ''}: Retry all failed again takes them.` : '';
  const then = (said: string) => [said, left].filter(Boolean).join(' ');
  const summary: RunEndSummary = cancelled
    ? { headline: `${what} cancelled`, changes: false, rest: then('What was verified stays.') }
    : status === 'paused'
      ? { headline: `${what} paused after ${plural(active.latest?.settled ?? 0, 'resource')}`, changes: false, rest: then(pauseWhy(r.pausedBecause) ?? 'Resume fetches the rest, not what was verified.') }
      : status === 'failed'
        ? { headline: `${what}: ${plural(r.failed, 'failed again', 'failed again')}`, changes: false, rest: then('The Failures tab says why.') }
        : { headline: `${what} completed`, changes: true, rest: left };
  const message = cancelled
    ? `${summary.headline}. ${summary.rest}`
    : status === 'paused'
      ? `${summary.headline}${r.pausedBecause === null ? ';' : '.'} ${summary.rest}`
      : status === 'failed'
        ? `${summary.headline}; ${counts}. ${summary.rest}`
        : `${summary.headline}: ${counts}.${left ? ` ${left}` : ''}`;
  return {
    path,
    kind: 'sync',
    status,
    message,
    summary,
    mode: active.latest?.mode ?? null,
    created: r.created,
    updated: r.updated,
    deleted: r.deleted,
    unchanged: r.unchanged,
    skipped: r.skipped,
    failed: r.failed,
    bytes: r.bytes,
    seconds: r.seconds,
  };
}

/**
 * The run Resume takes up: the interrupted sync that the next sync resumes (sync.ts), or an interrupted retry newer
 * than it (`retry`: its id), which a sync never takes up. Null when there is none.
 */
function toResume(folder: FolderStatus | null): { run: RunRecord; retry?: number } | null {
  if (folder === null) return null;
  const sync = folder.runs.filter(resumable).at(-1);
  const retry = folder.retryToResume === null ? undefined : folder.runs.find((r) => r.id === folder.retryToResume);
  if (retry !== undefined && (sync?.status !== 'interrupted' || retry.id > sync.id)) return { run: retry, retry: retry.id };
  return sync?.status === 'interrupted' ? { run: sync } : null;
}

function failedEnd(path: string, active: Active, error: unknown): MirrorRunEnd {
  const cancelled = active.abort.signal.aborted;
  const p = active.latest;
  const message = cancelled
    ? 'Cancelled. What was verified stays; the next run does not fetch it again.'
    : isDiskFull(error) && !(error instanceof DiskFullError)
      ? diskFullMessage(path, true)
      : error instanceof Error
        ? error.message
        : String(error);
  return {
    path,
    kind: 'sync',
    status: cancelled ? 'cancelled' : 'error',
    message,
    summary: cancelled ? { headline: 'Cancelled', changes: false, rest: 'What was verified stays; the next run does not fetch it again.' } : sentenceSummary(message),
    mode: p?.mode ?? null,
    created: p?.created ?? 0,
    updated: p?.updated ?? 0,
    deleted: p?.deleted ?? 0,
    unchanged: p?.unchanged ?? 0,
    skipped: p?.skipped ?? 0,
    failed: p?.failed ?? 0,
    bytes: p?.bytes ?? 0,
    seconds: Math.round((Date.now() - active.startedAt) / 100) / 10,
  };
}
