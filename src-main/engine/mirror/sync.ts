// A sync run of one mirror: lock the folder, open its state, bind it to a Source list (by discovery, once), pick the
// mode (auto: resume an interrupted run, else a baseline for a new mirror and incremental afterwards), run it, journal
// it. Baseline: from a Resource List or Resource List Index; the list's `at` becomes the checkpoint only when the run
// completes without a failure. Incremental: see incremental.ts.
import { randomUUID } from 'node:crypto';
import { accessSync, constants, existsSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { clip } from '../clip.ts';
import { parseW3cDatetime } from '../documents/datetime.ts';
import type { DiscoveryResult } from '../../contract/types.ts';
import { discover, normalizeStartUrl } from '../discovery/discover.ts';
import type { Entry, Finding } from '../documents/model.ts';
import { Http } from '../http/client.ts';
import type { ProxyEnv, ProxySetting } from '../http/dispatcher.ts';
import { loadDocument } from '../load.ts';
import { Applier, MAX_LISTED_ENTRY_FAILURES, type DeletePolicy, type Failure } from './apply.ts';
import { Fetcher } from './fetcher.ts';
import { chooseDumps, type DumpChoice } from './dump-choice.ts';
import { runDumpBaseline } from './dump-baseline.ts';
import { clearDumpProgress } from './dump-progress.ts';
import { sweepUnlisted } from './unlisted.ts';
import { ListedUris } from './listed-uris.ts';
import { diskFullMessage, isDiskFull } from './disk-full.ts';
import { runDumpIncremental } from './dump-incremental.ts';
import { JsonPatcher } from './json-patch.ts';
import { keepAsMetadata, metadataOf, MetadataFetcher } from './metadata.ts';
import { runIncremental, type IncrementalResult } from './incremental.ts';
import { LocalPaths, normalizePrefix, type MapRule, type PathMap } from './local-path.ts';
import { entryLabel, entryProblem } from './entries.ts';
import { canonicalEntry } from './uri.ts';
import { acquireLock, openLocked } from './lock.ts';
import { DeferredSecrets, type SecretStore } from './secrets.ts';
import { keptSettingsProblems, mergeSettings, resolveCredentials, sourceHeadersOf, SettingsError, type AskAgain, type Credentials, type SourceSettings } from './settings.ts';
import { ReadAhead } from './read-ahead.ts';
import { readResourceList } from './resource-list.ts';
import { DiskReserve, type DiskSpaceProbe } from './disk-reserve.ts';
import { WorkSlots } from './work-slots.ts';
import { repairDamaged } from './repair.ts';
import { afterBaseline, afterIncremental } from './gap.ts';
import { CLOCK_SLACK_MS } from './change-timeline.ts';
import { explainStateError, MirrorState, STATE_DIR, STATE_FILE, stateDirOf, unboundStateMessage, type Binding, type RunCounts, type RunFinding, type RunRecord } from './state.ts';
import { tidyState } from './reclaim.ts';
import { completePathMoves } from './respell.ts';
import { earlyNote, pausedMessage, pauseMessage, RefusalWatch, sourceWaitOf } from './refusal-watch.ts';
import { makeFolders } from './make-folders.ts';
import { ListFindings } from './list-findings.ts';
import { WatchedHttp } from './watched-http.ts';
import { REFUSAL_SECONDS } from '../../contract/limits.ts';

export type SyncMode = 'auto' | 'baseline' | 'incremental';

export interface SyncOptions {
  /** Anything discovery accepts; optional when the mirror is already bound. */
  url?: string;
  dest: string;
  capabilityListUrl?: string;
  maps?: PathMap[];
  allowHosts?: string[];
  mode?: SyncMode;
  useDumps?: boolean;
  /** Resource Dump packages at least this large are read while they download (default 4 MiB; tests set 0). */
  dumpReadAheadFrom?: number;
  /** A package download that looks like ending within this many seconds is waited for instead (default 1.5; tests set 0). */
  dumpQuickDownloadSeconds?: number;
  /** Also mirror the metadata resources entries link with rel="describedby" (metadata.ts). */
  withMetadata?: boolean;
  deletePolicy?: DeletePolicy;
  /**
   * Let a baseline delete (or quarantine) more resources than the Source lists (unlisted.ts): true however many, a
   * number at most that many. Without it such a run keeps them all and says why: a Resource List served empty or cut
   * short by mistake would otherwise empty the mirror.
   */
  allowMassDelete?: boolean | number;
  dryRun?: boolean;
  concurrency?: number;
  delayMs?: number;
  timeoutMs?: number;
  /** How long the Source may refuse every request before the run pauses (refusal-watch.ts); kept with the mirror. */
  refusalLimitMs?: number;
  /** Extra request headers for the Source's origin (replace the mirror's). */
  headers?: Record<string, string>;
  proxy?: ProxySetting;
  /** Where a `env` proxy setting reads from. Default process.env. */
  proxyEnv?: ProxyEnv;
  /** Bearer token for the Source (same as `credentials: { scheme: 'bearer', token }`). */
  token?: string | null;
  /** Credentials for the Source's origin; kept in `secretStore` for next time. `null` forgets them. */
  credentials?: Credentials | null;
  /**
   * The URL `credentials` were written in (`http://user:password@host/…`, without them): they are meant for its
   * origin, and the run is refused when the mirror's Source is at another.
   */
  credentialsFrom?: string;
  /** Where credentials are kept between runs (never in the mirror folder). Without one they last this run only. */
  secretStore?: SecretStore;
  /** What to say when the mirror needs credentials this computer does not keep (default: the CLI's options). */
  askAgain?: AskAgain;
  userAgent?: string;
  /** Files per durable batch (tests use small ones). */
  batchSize?: number;
  /**
   * URIs a baseline holds in memory (those listed, those recorded) before it asks the mirror's state and a temporary
   * database instead (default 100,000: listed-uris.ts, run-inventory.ts; tests set a few).
   */
  inMemoryUris?: number;
  /** Failures the result lists one by one (default MAX_KEPT_FAILURES, apply.ts; tests set a few). */
  keptFailures?: number;
  signal?: AbortSignal;
  /** How the free space of the mirror's disk is read, and how often (disk-reserve.ts; tests give their own). */
  diskSpace?: { probe?: DiskSpaceProbe; everyMs?: number };
  /**
   * Pause: once aborted, no new resource is started, those in flight finish and are recorded, and the run ends
   * `interrupted` (message "Paused") with no checkpoint moved: the next `auto` sync resumes it.
   */
  pauseSignal?: AbortSignal;
  /**
   * Called once, synchronously, at the moment the run's end is decided: every resource has settled and every step
   * was taken (what is left is recording them). A pause or a cancel that came before takes; one that comes after
   * stops nothing, and the run ends as what it is. The app answers a later Pause or Cancel with false from then on.
   */
  onFinishing?: () => void;
  /** Called when counts change (per resource done and per durable batch): callers throttle. */
  onProgress?: (progress: SyncProgress) => void;
  /** Called with what is happening, for people (stderr of the CLI). */
  onNote?: (note: string) => void;
}

export type SyncPhase = 'discovery' | 'lists' | 'fetch' | 'finishing';

export interface SyncProgress extends RunCounts {
  mode: 'baseline' | 'incremental';
  phase: SyncPhase;
  /** Resources (or changes) listed so far. */
  listed: number;
  /** True once every list was read: `listed` is the total. */
  listComplete: boolean;
  /** Sum of the `rs:md length` of the resources listed so far that give one. */
  listedBytes: number;
  /** Resources done (fetched, found unchanged, skipped or failed), durable or not yet. */
  settled: number;
  /** Bytes downloaded so far in this run, durable or not yet. */
  bytesFetched: number;
  /** Inventory rows this run added less those it removed, durable or not yet. */
  inventoryChange: number;
  /** The run's last failure so far. */
  latestFailure: { uri: string; reason: string } | null;
}

export interface SyncResult extends RunCounts {
  mode: 'baseline' | 'incremental';
  seconds: number;
  /** The run's failures, the first MAX_KEPT_FAILURES (or `keptFailures`) of `failureCount`: runFailures gives them all. */
  failures: Failure[];
  /** Failures of this run (of its part in this process, when resumed). */
  failureCount: number;
  /** Failures of the run its journal held before this part (see Applier.journalBefore); null in a dry run. */
  journalBefore: number | null;
  /** URIs the Source no longer has, kept by the `keep` policy: the first MAX_NAMED (apply.ts) of `wouldDeleteCount`. */
  wouldDelete: string[];
  wouldDeleteCount: number;
  /**
   * In a dry run: the URIs the `delete` or `quarantine` policy would have removed (counted in `deleted`): the first
   * MAX_NAMED of `wouldRemoveCount`.
   */
  wouldRemove: string[];
  wouldRemoveCount: number;
  /**
   * The run was paused (pauseSignal): it ended `interrupted` and the next auto sync resumes it. Paused before a run
   * began (while the Source's lists were being found, or a dump's list of packages read), `runId` is null: no run
   * was recorded, nothing fetched.
   */
  paused: boolean;
  /**
   * Why the run paused itself: the Source refused every request for longer than the mirror's limit (refusal-watch.ts);
   * says what it answered and when to try again. Null otherwise.
   */
  pausedBecause: string | null;
  /**
   * What the list reader found against the spec in the Resource Lists and Change Lists this run read: the first
   * MAX_RUN_FINDINGS (list-findings.ts) of `findingCount`. Kept in the run's journal too.
   */
  findings: RunFinding[];
  findingCount: number;
  /** Where the resources came from: the lists, or the dumps' packages (`--use-dumps`). */
  from: 'lists' | 'dumps';
  /** Resources brought up to date by a JSON Patch instead of a full fetch (counted in `updated` too). */
  patched: number;
  /** Metadata resources (rel="describedby") handed to the fetch with --with-metadata (counted in the counts too). */
  metadata: number;
  runId: number | null;
  resumed: boolean;
  dryRun: boolean;
  checkpoint: string | null;
}

export class SyncError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SyncError';
  }
}

/**
 * The mirror's folder, made with its parents. Refused in plain words when it cannot be: Node's own "EACCES: permission
 * denied, mkdir '/srv/x'" was all rsdesk said of a --dest under a folder its user may not write.
 */
function makeFolder(dest: string): void {
  try {
    makeFolders(dest);
  } catch (err) {
    let code = (err as NodeJS.ErrnoException).code;
    // ENOENT for a folder whose parent is there: the nearest folder there says why (a read-only file system), or it is
    // a file system that takes no new folders (/proc, /sys).
    if (code === 'ENOENT') code = writeProblem(dest) ?? 'ENOENT';
    const failed = (err as NodeJS.ErrnoException).path ?? dest;
    const why =
      code === 'EACCES' || code === 'EPERM'
        ? 'permission denied'
        : code === 'EROFS'
          ? 'it is on a read-only file system'
          : code === 'ENOTDIR'
            ? 'a part of its path is a file'
            : code === 'ENOENT'
              ? `${dirname(failed)} takes no new folders`
              : null;
    if (why === null) throw err;
    throw new SyncError(`The folder ${dest} cannot be made for the mirror (${why}): give a folder this user can write, or make it first.`);
  }
}

/** The error code of writing in the nearest folder above `path` that is there, or undefined when it can be written. */
function writeProblem(path: string): string | undefined {
  let dir = dirname(path);
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  try {
    accessSync(dir, constants.W_OK);
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code;
  }
}

export async function sync(options: SyncOptions): Promise<SyncResult> {
  const dest = options.dest;
  const holder = enclosingStateDir(dest);
  if (holder !== null) {
    throw new SyncError(`${dest} is inside ${holder}, the own folder of the mirror in ${dirname(holder)}, whose runs empty parts of it: choose a folder outside it`);
  }
  const destExisted = existsSync(dest);
  if (destExisted && !statSync(dest).isDirectory()) throw new SyncError(`${dest} is a file, not a folder: give a folder for the mirror`);
  makeFolder(dest);
  // A run stops before it fills the disk, through the same signal as a cancel (what was verified stays), and says so.
  const cancel = options.signal;
  const reserve = options.dryRun === true ? null : new DiskReserve(dest, options.diskSpace);
  if (reserve !== null) options = { ...options, signal: cancel ? AbortSignal.any([cancel, reserve.signal]) : reserve.signal };
  const stateDir = stateDirOf(dest);
  // A folder that was not a mirror stays none when this run binds nothing (it failed first, or was a dry run).
  const fresh = !existsSync(stateDir);
  const hadState = existsSync(join(stateDir, STATE_FILE));
  let bound = false;
  let secrets: DeferredSecrets | null = null;
  const lock = acquireLock(stateDir, 'rsdesk sync', dest);
  if (lock.tookOver) options.onNote?.(`Took over the lock left by process ${lock.tookOver.pid}, which is no longer running.`);
  const state = openLocked(lock, () => new MirrorState(stateDir));
  let http: WatchedHttp | null = null;
  try {
    const interrupted = state.markInterrupted();
    const t0 = Date.now();
    const zero = { created: 0, updated: 0, deleted: 0, unchanged: 0, skipped: 0, failed: 0, bytes: 0 };
    const startMode = options.mode === 'incremental' ? 'incremental' : 'baseline';
    options.onProgress?.({ ...zero, mode: startMode, phase: 'discovery', listed: 0, listComplete: false, listedBytes: 0, settled: 0, bytesFetched: 0, inventoryChange: 0, latestFailure: null });
    let binding = state.binding();
    // Settings (and where credentials may go) first: discovery already needs them.
    const rebind = binding === null || (options.url !== undefined && options.url !== binding.url) || options.capabilityListUrl !== undefined;
    if (rebind && options.url === undefined) throw new SyncError(hadState ? unboundStateMessage(dest) : `${dest} is not a mirror yet: give the URL of a Source to mirror`);
    let origin: string;
    try {
      // A bare host name ("example.org") is a start URL too, as discovery takes it.
      origin = rebind
        ? new URL(normalizeStartUrl(options.capabilityListUrl ?? options.url!)).origin
        : (binding!.settings?.origin ?? new URL(binding!.capabilityListUrl ?? normalizeStartUrl(binding!.url)).origin);
    } catch (err) {
      throw new SyncError(err instanceof Error ? err.message : String(err));
    }
    if (options.credentialsFrom !== undefined && new URL(options.credentialsFrom).origin !== origin) {
      throw new SyncError(
        `The user name and password in ${clip(options.credentialsFrom)} are for ${new URL(options.credentialsFrom).origin}, but this mirror's Source is at ${origin}, where they are not sent. ` +
          `Give them with --basic USER:PASSWORD if they are its own.`,
      );
    }
    const mirrorId = binding?.id ?? randomUUID();
    const given = options.credentials !== undefined ? options.credentials : options.token ? { scheme: 'bearer' as const, token: options.token } : undefined;
    const old = binding?.settings;
    const damaged = keptSettingsProblems(old);
    if (damaged.length > 0) {
      const words = damaged.length === 1 ? damaged[0] : `${damaged.slice(0, -1).join(', ')} and ${damaged.at(-1)}`;
      const how = damaged.includes('extra headers') ? (damaged.length === 1 ? 'sends only those that can be sent' : 'uses the default instead (of the extra headers, those that can be sent)') : 'uses the default instead';
      options.onNote?.(`The ${words} kept in this mirror's folder ${damaged.length === 1 ? 'is' : 'are'} not valid (was the folder edited by hand?): this run ${how}.`);
    }
    const oldHeaders = damaged.includes('extra headers') ? {} : (old?.headers ?? {});
    if (old !== undefined && old.origin !== origin && (old.auth || Object.keys(oldHeaders).length > 0)) {
      const what = [old.auth ? (old.auth.scheme === 'bearer' ? 'token' : 'password') : null, Object.keys(oldHeaders).length > 0 ? 'extra headers' : null].filter(Boolean).join(' and ');
      options.onNote?.(`The ${what} kept for ${old.origin} ${what.includes(' and ') ? 'are' : 'is'} not sent to ${origin}, another origin: give them again for it if it needs them.`);
    }
    const settings: SourceSettings = mergeSettings(
      binding?.settings,
      origin,
      { headers: options.headers, concurrency: options.concurrency, delayMs: options.delayMs, timeoutMs: options.timeoutMs, proxy: options.proxy, refusalLimitMs: options.refusalLimitMs },
      given,
    );
    let credentials: Credentials | null;
    // A secret given to this run is kept (and said to be) only once the run binds the folder: not by a dry run, nor
    // by a run refused for another Source, which would have sent it to the first.
    secrets = options.secretStore ? new DeferredSecrets(options.secretStore) : null;
    try {
      credentials = resolveCredentials(settings, mirrorId, given, secrets ?? undefined, secrets ? (n) => secrets!.note(n) : options.onNote, options.askAgain);
    } catch (err) {
      throw err instanceof SettingsError ? new SyncError(err.message) : err;
    }
    http = new WatchedHttp({
      sourceHeaders: sourceHeadersOf(settings, credentials),
      timeoutMs: settings.timeoutMs ?? undefined,
      userAgent: options.userAgent,
      proxy: settings.proxy,
      proxyEnv: options.proxyEnv,
    });
    // Discovery, the Capability List read again and a dump's list of packages stop at once on a cancel or a pause (a
    // Source that stalls would otherwise hold them until its timeout): no run has begun, and none is recorded.
    const pause = options.pauseSignal;
    const discovering = pause && options.signal ? AbortSignal.any([options.signal, pause]) : (pause ?? options.signal);
    // The interrupted run an auto sync takes up (Resume, in the app). A cancel that comes before it is taken up is a
    // cancel of that run: it ends cancelled, as it would a moment later, not left paused to be taken up again.
    const lastInterrupted = interrupted.filter(resumable).at(-1) ?? state.runs().filter((r) => r.status === 'interrupted' && resumable(r)).at(-1);
    const wanted = options.mode ?? 'auto';
    const toTakeUp = wanted === 'auto' && lastInterrupted?.status === 'interrupted' && newest(state, lastInterrupted) ? lastInterrupted : null;
    const stoppedBeforeRun = (err: unknown): SyncResult => {
      if (cancel?.aborted && toTakeUp !== null && options.dryRun !== true) {
        state.cancelInterrupted(toTakeUp.id, 'Cancelled before it was taken up again; what was verified stays');
        throw new SyncError(`Cancelled before run ${toTakeUp.id} was taken up again, while the Source's lists were being read; what it verified stays.`);
      }
      if (cancel?.aborted) throw new SyncError("Cancelled before the run began, while the Source's lists were being read; nothing was fetched.");
      if (!pause?.aborted) throw err;
      return {
        ...zero, mode: startMode, seconds: Math.round((Date.now() - t0) / 10) / 100, failures: [], failureCount: 0, journalBefore: null, wouldDelete: [], wouldDeleteCount: 0, wouldRemove: [], wouldRemoveCount: 0, paused: true, pausedBecause: null, findings: [], findingCount: 0, from: 'lists',
        patched: 0, metadata: 0, runId: null, resumed: false, dryRun: options.dryRun ?? false, checkpoint: state.checkpoint()?.at ?? null,
      };
    };
    try {
      if (rebind) {
        const next = await bind(http, { ...options, signal: discovering }, binding);
        // Another Source (or another Capability List of it) in a folder that mirrors one already: refused, as the app
        // refuses it. Its inventory, checkpoint and files belong to the first.
        if (binding !== null && !sameSource(binding, next)) {
          throw new SyncError(`${dest} is a mirror of ${boundTo(binding)} already, and ${clip(options.capabilityListUrl ?? options.url!)} leads to ${boundTo(next)}. Choose another folder for it.`);
        }
        binding = next;
      } else if (options.maps !== undefined || options.allowHosts !== undefined) {
        binding = { ...binding!, maps: options.maps ?? binding!.maps, allowHosts: options.allowHosts ?? binding!.allowHosts };
      }
      binding = { ...binding!, id: mirrorId, settings };
      binding = settleMapRule(state, binding, options.onNote);
      // The Capability List says which lists are current: a closed Change List is followed by another (§12.1), a Source
      // may move its lists. Read again at each run, as cheap as one small document; not for a mirror of one list.
      const startUrl = normalizeStartUrl(binding.url);
      const oneList = startUrl === binding.resourceListUrl || startUrl === binding.changeListUrl;
      if (!rebind && !oneList && binding.capabilityListUrl !== null) binding = await refreshLists(http, binding, { ...options, signal: discovering });
    } catch (err) {
      // Nothing is bound yet: a folder that was not a mirror stays none.
      return stoppedBeforeRun(err);
    }
    const discoverySeconds = (Date.now() - t0) / 1000;

    const checkpoint = state.checkpoint();
    // Not a datetime (the state edited: year 99999, a number): no change can be read from it, a baseline sets it right.
    const unreadable = checkpoint !== null && parseW3cDatetime(checkpoint.at) === null;
    // An audit is not resumed by a sync: it is taken again by the next audit, if asked. Nor is a retry: what it did not
    // fetch again still stands as failures of the run it retried, and taken up as a sync it would run a whole sync
    // (a baseline, for a baseline's failures) in its name. Nor a run of live notifications: the live side takes it up
    // itself, with the notifications its inbox keeps for it.
    let mode: 'baseline' | 'incremental';
    let resume: RunRecord | null = null;
    const useDumps = options.useDumps ?? false;
    // With --use-dumps a Change Dump alone makes incremental syncs possible, a Resource Dump alone a baseline.
    const hasChanges = binding.changeListUrl !== null || (useDumps && binding.changeDumpUrl !== null);
    const canBaseline = binding.resourceListUrl !== null || (useDumps && binding.resourceDumpUrl !== null);
    if (wanted === 'baseline') mode = 'baseline';
    else if (wanted === 'incremental') {
      if (checkpoint === null) throw new SyncError(`${dest} has no checkpoint yet (no baseline completed): run a baseline first`);
      if (unreadable) throw new SyncError(`The mirror's checkpoint "${clip(checkpoint.at)}" is not a date and time: run a baseline (--mode baseline, or auto), which sets it right`);
      if (!hasChanges) throw new SyncError(`${noChangesHere(binding, useDumps)}; use --mode baseline`);
      mode = 'incremental';
      if (state.baselineNeeded() !== null) options.onNote?.(`${state.baselineNeeded()} This run applies the changes listed only; run sync with --mode baseline (or auto) for the rest.`);
    } else if (toTakeUp !== null) {
      mode = toTakeUp.kind === 'incremental' && hasChanges && checkpoint !== null && !unreadable ? 'incremental' : 'baseline';
      resume = toTakeUp;
    } else if (checkpoint !== null && hasChanges && isFuture(checkpoint.at)) {
      // Left by a version that trusted a datetime in the future: no change would ever be read again.
      mode = 'baseline';
      options.onNote?.(`The mirror's checkpoint ${checkpoint.at} is in the future (a Source's datetime taken as it was): this run is a baseline compared with the inventory, which sets it right.`);
    } else if (checkpoint !== null && hasChanges && unreadable && canBaseline) {
      mode = 'baseline';
      options.onNote?.(`The mirror's checkpoint "${clip(checkpoint.at)}" is not a date and time: this run is a baseline compared with the inventory, which sets it right.`);
    } else if (checkpoint !== null && hasChanges && state.baselineNeeded() !== null && canBaseline) {
      mode = 'baseline';
      options.onNote?.(`${state.baselineNeeded()} This run is that baseline: only what differs from the inventory is fetched.`);
    } else if (checkpoint === null || !hasChanges) {
      mode = 'baseline';
      if (checkpoint !== null) {
        options.onNote?.(
          `${noChangesHere(binding, useDumps)}: a new baseline is compared with the inventory instead. ` +
            'Only resources whose listed hash or length differ from the local copy are fetched (those the list gives neither ' +
            'for are asked for conditionally); what the Source no longer lists goes by the deletion policy.',
        );
      }
    } else mode = 'incremental';
    if (mode === 'baseline' && binding.resourceListUrl === null && !(useDumps && binding.resourceDumpUrl !== null)) {
      throw new SyncError(
        binding.capabilityListUrl === null && binding.changeListUrl !== null
          ? `This mirror follows the Change List ${binding.changeListUrl} alone, and no Capability List names a Resource List for its first baseline: give the Capability List's URL instead`
          : `The Source offers no Resource List for this mirror (${binding.capabilityListUrl ?? binding.url}); a baseline needs one`,
      );
    }

    const dryRun = options.dryRun ?? false;
    // Dumps when asked for and offered (an interrupted dump run resumes from its dump); else the lists, said so.
    let dumps: DumpChoice;
    try {
      dumps = await chooseDumps({ http, binding, mode, useDumps, resume, signal: discovering, onNote: options.onNote });
    } catch (err) {
      return stoppedBeforeRun(err);
    }
    // Bound only now that the run begins: a run refused before (--mode incremental on a new folder, a Source without
    // the list the mode needs) left a new folder bound to that Source, and the corrected command, for another
    // Capability List, was then refused as "a mirror of … already". A dry run changes nothing, its binding included.
    if (!dryRun) {
      state.setBinding(binding);
      bound = true;
      secrets?.commit(options.onNote);
      // The files of a mirror made before this version's names take them, before anything is applied (respell.ts).
      await completePathMoves(state.db, dest, options.onNote);
    }
    const listUrl = dumps.url ?? (mode === 'baseline' ? binding.resourceListUrl : binding.changeListUrl);
    const run = dryRun ? null : resume ? state.resumeRun(resume.id, dumps.url !== null) : state.startRun(mode, wanted, listUrl);
    reserve?.start();
    // A run paused by the person keeps the message "Paused" until it is resumed (a kill meanwhile clears it).
    if (resume) options.onNote?.(`Resuming run ${resume.id} (${pausedMessage(resume.message) ? 'paused' : 'interrupted'} ${resume.kind}); what it verified is not fetched again.`);
    const early = earlyNote(state.sourceWait(), dryRun ? 'dry run' : 'run');
    if (early !== null) options.onNote?.(early);
    // A Source refusing everything pauses the run, as a person's pause does, once it has for the mirror's limit.
    const watch = new RefusalWatch(settings.refusalLimitMs ?? REFUSAL_SECONDS.default * 1000, undefined, undefined, dryRun);
    options = { ...options, pauseSignal: options.pauseSignal ? AbortSignal.any([options.pauseSignal, watch.signal]) : watch.signal };
    // The lists (and a dump's packages) are watched too: a Source refusing them is waited out up to the same limit.
    http.watchWith(watch);
    const fetcher = new Fetcher({
      watch,
      concurrency: settings.concurrency ?? undefined,
      timeoutMs: settings.timeoutMs ?? undefined,
      userAgent: options.userAgent,
      source: sourceHeadersOf(settings, credentials),
      proxy: settings.proxy,
      proxyEnv: options.proxyEnv,
    });
    const applier: Applier = new Applier({
      dest,
      stateDir,
      state,
      runId: run?.id ?? -1,
      fetcher,
      paths: new LocalPaths({ sourceUrl: binding.capabilityListUrl ?? listUrl ?? binding.url, maps: binding.maps, allowHosts: binding.allowHosts }),
      deletePolicy: options.deletePolicy ?? 'keep',
      dryRun,
      delayMs: settings.delayMs ?? undefined,
      signal: options.signal,
      pauseSignal: options.pauseSignal,
      batchSize: options.batchSize,
      inMemoryUris: options.inMemoryUris,
      keptFailures: options.keptFailures,
      onProgress: () => report(),
      onSettled: () => report(),
      onDiskFull: () => reserve?.full(),
    });
    if (resume && run) {
      applier.carry(run);
      // A dump run's packages finished before the interruption are not read again: their failures stand.
      if (dumps.url !== null) applier.carryFailures(state.failureCount(run.id));
    }
    const findings = new ListFindings(dryRun ? null : state, run?.id ?? null);
    const onFindings = (document: string, found: Finding[]) => findings.add(document, found);
    const patcher = new JsonPatcher({ applier, fetcher, state, dest, dryRun, signal: options.signal, onNote: options.onNote });
    const metadata = new MetadataFetcher({ state, applier, enabled: options.withMetadata ?? false, concurrency: settings.concurrency ?? 8, dryRun });
    const applyChange = async (entry: Entry) => {
      await metadata.note(entry);
      return patcher.apply(entry);
    };
    const onDeleted = (uri: string) => metadata.deleted(uri);
    let listed = 0;
    let listedBytes = 0;
    let listComplete = false;
    let phase: SyncPhase = 'lists';
    // A dump's bytes are its packages': what was downloaded of what the Dump lists (its bitstreams arrive in bulk).
    let packageBytes: { done: number; total: number } | null = null;
    const report = (): void => {
      const counts = applier.progressCounts();
      options.onProgress?.({
        ...counts,
        mode,
        phase,
        listed,
        listComplete,
        listedBytes: packageBytes?.total ?? listedBytes,
        bytesFetched: packageBytes?.done ?? counts.bytesFetched,
      });
    };
    report();
    const paused = () => options.pauseSignal?.aborted === true && options.signal?.aborted !== true;
    const phases: Record<string, number> = { discovery: discoverySeconds };
    // A resumed run's journal keeps the time of its earlier parts too: each phase's time in all, not the last part's.
    const earlier = resume && run ? run.phases : {};
    const inAll = (): Record<string, number> => {
      const sum: Record<string, number> = { ...earlier };
      for (const [phase, seconds] of Object.entries(phases)) sum[phase] = (sum[phase] ?? 0) + seconds;
      return sum;
    };
    let newCheckpoint: { at: string; from: string } | null = null;
    /** What the Change List part of an incremental run read (gap.ts). */
    let listsRead: IncrementalResult | null = null;
    let status: 'completed' | 'failed' | 'cancelled' | 'interrupted' = 'completed';
    let message: string | null = null;
    // Whether a cancel took, once the run's end is decided (null before): one that comes later changes nothing.
    let cancelTook: boolean | null = null;
    const onListed = (n: number, bytes = 0, complete = false) => {
      listed = n;
      listedBytes += bytes;
      if (complete) {
        listComplete = true;
        phase = 'fetch';
      }
      report();
    };
    try {
      try {
        // A dump's packages are listed already: what comes now is applying them (listed grows as their entries do).
        if (dumps.listing !== null) phase = 'fetch';
        if (mode === 'baseline' && dumps.listing !== null) {
          const result = await runDumpBaseline({
            http, applier, state, stateDir, dumpUrl: dumps.url!, runId: run?.id ?? null, dryRun, signal: options.signal, pauseSignal: options.pauseSignal, phases,
            onNote: options.onNote, onFindings, onListed: (n) => onListed(n), listing: dumps.listing, allowMassDelete: options.allowMassDelete, metadata, readAheadFrom: options.dumpReadAheadFrom, quickDownloadSeconds: options.dumpQuickDownloadSeconds,
            onPackageBytes: (done, total) => {
              packageBytes = { done, total };
              report();
            },
            room: reserve ?? undefined, oneByOne: binding.resourceListUrl !== null, concurrency: settings.concurrency ?? undefined, inMemoryUris: options.inMemoryUris,
          });
          newCheckpoint = result.at === null ? null : { at: notInTheFuture(result.at, 'The Resource Dump', options.onNote), from: dumps.url! };
          if (result.at === null && result.complete) options.onNote?.(`The Resource Dump gives no "at"; the mirror gets no checkpoint, so the next sync is a baseline again.`);
        } else if (mode === 'baseline') {
          const result = await baseline(http, listUrl!, applier, state, { ...options, concurrency: settings.concurrency ?? undefined }, phases, onListed, metadata, onFindings);
          newCheckpoint = result.at === null ? null : { at: notInTheFuture(result.at, 'The Resource List', options.onNote), from: listUrl! };
          if (result.at === null && !paused()) options.onNote?.(`The Resource List gives no "at"; the mirror gets no checkpoint, so the next sync is a baseline again.`);
        } else if (dumps.listing !== null) {
          applier.repeatable = true;
          const result = await runDumpIncremental({
            http, applier, state, stateDir, dumpUrl: dumps.url!, listing: dumps.listing, checkpoint: checkpoint!, runId: run?.id ?? null, dryRun,
            signal: options.signal, pauseSignal: options.pauseSignal, phases, onNote: options.onNote, onFindings, changeListCovers: binding.changeListUrl !== null, metadata,
            onListed: (n) => onListed(n), room: reserve ?? undefined,
          });
          listed = result.changes;
          newCheckpoint = result.checkpoint;
          // What the Change Dump does not hold yet (changes after its last package) comes from the Change List.
          if (binding.changeListUrl !== null && !options.signal?.aborted) {
            await applier.finish();
            // A change the Change List gives again, as the dump applied it in this run, is not applied (nor counted)
            // twice: neither at the instant where the two meet, nor by a resumed run for what its killed part applied
            // from the Change List. A newer version is (`anotherVersion`).
            applier.repeatable = false;
            options.onNote?.(`Changes after ${result.checkpoint.at} come from the Change List.`);
            const fromDump = result.changes;
            const rest = await runIncremental({ http, applier, state, changeListUrl: binding.changeListUrl, checkpoint: result.checkpoint, signal: options.signal, pauseSignal: options.pauseSignal, onListed: (n) => onListed(fromDump + n, 0, true), onNote: options.onNote, phases, concurrency: settings.concurrency ?? 8, applyChange, onDeleted, onFindings, inMemoryUris: options.inMemoryUris });
            listed += rest.changes;
            newCheckpoint = rest.checkpoint;
            listsRead = rest;
          }
        } else {
          const result = await runIncremental({ http, applier, state, changeListUrl: listUrl!, checkpoint: checkpoint!, signal: options.signal, pauseSignal: options.pauseSignal, onListed: (n) => onListed(n, 0, true), onNote: options.onNote, phases, concurrency: settings.concurrency ?? 8, applyChange, onDeleted, onFindings, inMemoryUris: options.inMemoryUris });
          listed = result.changes;
          newCheckpoint = result.checkpoint;
          listsRead = result;
        }
        if (mode === 'incremental' && !paused()) await metadata.run();
        // Local copies an audit found damaged come again, whatever the changes say (a baseline fetches them anyway).
        if (mode === 'incremental' && !dryRun && !paused() && options.signal?.aborted !== true) {
          await repairDamaged(state, applier, settings.concurrency ?? 8, options.onNote, options.inMemoryUris);
        }
      } catch (err) {
        // Paused while a list was still being read: what was started finishes below, the run stays resumable.
        if (!paused()) throw err;
      }
      // The run's end is decided here, at one moment (onFinishing tells the caller): every resource has settled and
      // every step was taken; what is left is recording them durably. A pause or a cancel that came before takes; one
      // that comes after stops nothing, and the run is what it is (completed, or failed): else a Ctrl-C while the last
      // batch was written left a finished run to resume and its checkpoint unmoved. A cancel takes even once the last
      // resource settled: those it cut off in flight (or in a wait the Source asked for) were dropped as no failure,
      // and recorded completed, with its checkpoint moved, the mirror lacked them for good.
      const cut = paused();
      cancelTook = cancel?.aborted === true;
      phase = 'finishing';
      options.onFinishing?.();
      if (cancelTook) throw new SyncError('Cancelled; what was verified stays');
      // Stopped for the disk between two steps, with no error on the way: ends as a cancel does, not completed.
      if (reserve?.stopped) throw reserve.stopped;
      report();
      const t = Date.now();
      await applier.finish();
      phases.fetch = (phases.fetch ?? 0) + (Date.now() - t) / 1000;
      if (cut) {
        status = 'interrupted';
        message = watch.stopped?.message ?? pauseMessage(options.pauseSignal);
        newCheckpoint = null;
      } else if (applier.counts.failed > 0) {
        // Failures the entries themselves cause (no loc, a malformed hash…) are reported but hold nothing back.
        const failed = applier.counts.failed;
        if (applier.retriableFailures > 0) {
          status = 'failed';
          message = failedMessage(failed, applier.roomFailures, mode === 'baseline' ? binding.resourceListUrl !== null : binding.changeListUrl !== null);
        } else {
          message = `${failed.toLocaleString('en')} entr${failed === 1 ? 'y' : 'ies'} of the Source's lists could not be applied: ${failed === 1 ? 'it breaks' : 'they break'} the spec, and fetching again cannot mend that`;
        }
      }
    } catch (caught) {
      const err = explainStateError(state.path, caught, true);
      await applier.finish().catch(() => undefined);
      status = (cancelTook ?? cancel?.aborted) ? 'cancelled' : 'failed';
      // Whatever was being read when the cancel (or the disk's reserve) came is beside the point.
      message =
        status === 'cancelled'
          ? 'Cancelled; what was verified stays'
          : reserve?.stopped
            ? reserve.stopped.message
            : isDiskFull(err)
              ? diskFullMessage(dest, true)
              : err instanceof Error
                ? err.message
                : String(err);
      try {
        if (run) state.endRun(run.id, status, inAll(), message);
        if (run) state.setSourceWait(null);
      } catch (recording) {
        // A disk too full to record the end: the run shows as interrupted, and the next sync resumes it.
        if (!isDiskFull(recording)) throw recording;
      }
      throw err instanceof SyncError ? err : new SyncError(message);
    } finally {
      applier.close();
      http.watchWith(null);
      watch.close();
      await fetcher.close();
    }
    // The checkpoint moves only past what was applied: a baseline with failures leaves it where it was.
    if (!dryRun && newCheckpoint !== null && (mode === 'incremental' || status === 'completed')) state.setCheckpoint(newCheckpoint);
    // A baseline whose only failures a retry may mend: the retry that mends the last of them completes it.
    if (!dryRun && run && status !== 'interrupted') {
      state.setUnfinishedBaseline(mode === 'baseline' && status === 'failed' && newCheckpoint !== null ? { ...newCheckpoint, runId: run.id, readAt: t0 } : null);
    }
    if (listsRead !== null && status !== 'interrupted') {
      afterIncremental(state, {
        result: listsRead,
        checkpointMs: parseW3cDatetime(checkpoint!.at) ?? 0,
        complete: status === 'completed' && applier.retriableFailures === 0 && !listsRead.listSkipped,
        dryRun,
        onNote: options.onNote,
      });
    } else if (!dryRun && mode === 'baseline' && status === 'completed' && newCheckpoint !== null) {
      afterBaseline(state, parseW3cDatetime(newCheckpoint.at) ?? 0, t0);
    }
    if (applier.unlistedEntryFailures > 0) {
      options.onNote?.(
        `${applier.unlistedEntryFailures.toLocaleString('en')} more entries break the spec (no loc, a loc that is not an http(s) URI, no valid change) ` +
          `and were not applied; they count among the failed, but only the first ${MAX_LISTED_ENTRY_FAILURES.toLocaleString('en')} such entries are listed one by one.`,
      );
    }
    if (run) state.endRun(run.id, status, inAll(), message);
    // The Source's Retry-After outlives the app: its schedule takes the run up no sooner (mirrors.ts, schedule.ts).
    if (run) state.setSourceWait(sourceWaitOf(watch, status, run.id));
    // A dump's packages are recorded as applied until the run ends: a run killed after them (reading the Change List
    // that follows a Change Dump, deleting what a Resource Dump no longer holds) resumes past them.
    if (run && status !== 'interrupted') clearDumpProgress(state);
    const c = applier.counts;
    return {
      mode,
      created: c.created,
      updated: c.updated,
      deleted: c.deleted,
      unchanged: c.unchanged,
      skipped: c.skipped,
      failed: c.failed,
      bytes: c.bytes,
      seconds: Math.round((Date.now() - t0) / 10) / 100,
      failures: applier.failures,
      failureCount: applier.failureCount,
      journalBefore: applier.journalBefore,
      wouldDelete: applier.wouldDelete,
      wouldDeleteCount: applier.wouldDeleteCount,
      wouldRemove: applier.wouldRemove,
      wouldRemoveCount: applier.wouldRemoveCount,
      paused: status === 'interrupted',
      pausedBecause: status === 'interrupted' ? (watch.stopped?.message ?? null) : null,
      findings: findings.first,
      findingCount: findings.count,
      from: dumps.listing !== null ? 'dumps' : 'lists',
      patched: patcher.patched,
      metadata: metadata.fetched,
      runId: run?.id ?? null,
      resumed: resume !== null,
      dryRun,
      checkpoint: state.checkpoint()?.at ?? null,
    };
  } catch (err) {
    // A state another program kept locked, or a disk found full while it was written: said plainly, naming the file.
    throw explainStateError(state.path, err, true);
  } finally {
    reserve?.stop();
    await http?.close();
    // Under the lock, so no other process is writing: the space this run's deletions freed goes back to the disk. Not
    // after a pause, a cancel or a disk found full, which stop at once (and stop it at its next step).
    const stopped = () => options.signal?.aborted === true || options.pauseSignal?.aborted === true;
    if ((!fresh || bound) && !stopped()) await tidyState(state.db, state.path, { onNote: options.onNote, stopped });
    state.close();
    // Before the lock goes (with the state folder): no other writer can have taken the folder meanwhile.
    if (fresh && !bound) unmake(dest, stateDir, destExisted);
    lock.release();
  }
}

/**
 * The message of a run that ended with failures a later run may mend. Those for want of disk space (a dump package
 * that did not fit) are mended only once space is freed, and never by a retry where the Source offers its resources
 * only in dumps (`listed` false: no list of the run's kind to fetch them from one by one): before, every such run
 * suggested a retry, which could not help.
 */
export function failedMessage(failed: number, forRoom: number, listed: boolean): string {
  const how = listed ? "sync again (or retry this run's failures)" : 'sync again: a retry cannot fetch them, as the Source offers them only in its dump packages';
  if (forRoom === 0) return `${failed.toLocaleString('en')} resource${failed === 1 ? '' : 's'} failed; the next sync, or a retry of this run's failures, fetches them again`;
  // A package failed for room is one failure, whatever it holds: "failed", not "resources".
  const some = forRoom >= failed ? `${failed.toLocaleString('en')} failed` : `${failed.toLocaleString('en')} failed, ${forRoom.toLocaleString('en')} of them`;
  const rest = forRoom >= failed ? '' : '. The next sync, or a retry of this run\'s failures, fetches the others again';
  return `${some} for want of disk space (a dump package did not fit): free some space, then ${how}${rest}`;
}

/** Why a mirror has no changes to follow: the Source offers none, or the mirror was made of a Resource List alone. */
function noChangesHere(binding: Binding, useDumps: boolean): string {
  const what = `Change List${useDumps ? ' nor Change Dump' : ''}`;
  if (binding.capabilityListUrl !== null && binding.resourceListUrl !== null && normalizeStartUrl(binding.url) === binding.resourceListUrl) {
    return `This mirror follows the Resource List ${binding.resourceListUrl} alone, without a ${what} (if its Capability List ${binding.capabilityListUrl} offers one, mirror that list instead to follow the changes)`;
  }
  return `The Source offers no ${what} for this mirror`;
}

/**
 * The mirror's own folder (`.resourcesync` holding a state) that `dest` is in, or is, if any. A mirror made there was
 * lost with the next run of the mirror around it (its `tmp` is emptied at each run) or mixed with its state.
 */
function enclosingStateDir(dest: string): string | null {
  for (let dir = resolve(dest); ; dir = dirname(dir)) {
    if (basename(dir).toLowerCase() === STATE_DIR && existsSync(join(dir, STATE_FILE))) return dir;
    if (dirname(dir) === dir) return null;
  }
}

/** Takes away what a run that bound nothing made of a folder: its state, and the folder itself when it made it. */
function unmake(dest: string, stateDir: string, destExisted: boolean): void {
  try {
    rmSync(stateDir, { recursive: true, force: true });
    if (!destExisted) rmdirSync(dest);
  } catch {
    // Something else was put there meanwhile: it stays.
  }
}

/** What a mirror is of, for messages: its Capability List, else the list it follows. */
function boundTo(binding: Binding): string {
  return binding.capabilityListUrl ?? binding.resourceListUrl ?? binding.changeListUrl ?? binding.url;
}

/**
 * The map rule of a mirror (Binding.mapRule), stamped on each of its maps (PathMap.rule). A new mirror matches at
 * segment boundaries. One made when a map's prefix matched as a bare string prefix (`http://h/data` mapping
 * `http://h/database/x` to `<dir>/base/x`) takes the segment rule too, unless its inventory holds a URI that the old
 * rule put under a map and the new one would not: such a mirror keeps the old rule, said once in a note, so that the
 * resources it has mirrored and the ones that come beside them later keep going where they went. Asked again when
 * its maps change while it keeps the old rule; never again once it has the new one.
 */
export function settleMapRule(state: MirrorState, binding: Binding, onNote?: (note: string) => void): Binding {
  const stamped = (rule: MapRule): Binding => ({ ...binding, mapRule: rule, maps: binding.maps.map((m) => ({ ...m, rule })) });
  if (binding.mapRule === 'segments') return stamped('segments');
  for (const map of binding.maps) {
    const prefix = normalizePrefix(map.prefix);
    if (prefix.endsWith('/') || prefix.endsWith('?')) continue;
    const uri = state.uriWithinSegment(prefix);
    if (uri === undefined) continue;
    // Said once, when the rule is first recorded.
    if (binding.mapRule === undefined) {
      onNote?.(
        `This mirror was made when a mapping matched any URI starting with its prefix, and it has mirrored ${clip(uri)} under ${clip(map.prefix)}=${map.dir || '.'}: its mappings keep that rule, so that what comes next goes where the rest went. (New mirrors match a prefix only up to a /, ? or #.)`,
      );
    }
    return stamped('prefix');
  }
  return stamped('segments');
}

/**
 * The same Capability List, or a list in common (a mirror of a Resource List alone, then the Capability List that
 * names it): a URL of another form for the same Source.
 */
function sameSource(a: Binding, b: Binding): boolean {
  if (a.capabilityListUrl !== null && a.capabilityListUrl === b.capabilityListUrl) return true;
  const lists = (x: Binding) => [x.resourceListUrl, x.changeListUrl].filter((u): u is string => u !== null);
  return lists(a).some((u) => lists(b).includes(u));
}

function newest(state: MirrorState, run: RunRecord): boolean {
  return !state.runs().some((r) => r.id > run.id && resumable(r) && r.status !== 'interrupted');
}

/** A run a sync takes up again when it was interrupted: a sync's, not an audit's, a retry's or the live side's. */
export function resumable(run: Pick<RunRecord, 'kind' | 'mode'>): boolean {
  return run.kind !== 'audit' && !NOT_A_SYNC.has(run.mode);
}

/** The modes of runs that are not syncs (retry.ts, the live side's apply-live.ts). */
const NOT_A_SYNC = new Set(['retry', 'live', 'live-catch-up', 'ping']);

/** Finds what the mirror is bound to: a list given directly, or the lists of one Capability List. */
export async function bind(http: Http, options: SyncOptions, old: Binding | null): Promise<Binding> {
  const url = options.url!;
  // A list is read only to its first entry here: the run reads it whole next.
  const result: DiscoveryResult = await discover(options.capabilityListUrl ?? url, { http, listsHeadOnly: true, signal: options.signal });
  const direct = result.routes.find((r) => r.route === 'document' && r.found);
  const base = {
    url,
    // A new mirror matches its maps' prefixes at segment boundaries; one made before keeps its rule (settleMapRule).
    maps: old === null ? (options.maps ?? []).map((m) => ({ ...m, rule: 'segments' as const })) : (options.maps ?? old.maps),
    mapRule: old === null ? 'segments' : old.mapRule,
    allowHosts: options.allowHosts ?? old?.allowHosts ?? [],
    createdAt: old?.createdAt ?? new Date().toISOString(),
  };
  const none = { resourceListUrl: null, changeListUrl: null, resourceDumpUrl: null, changeDumpUrl: null };
  if (options.capabilityListUrl === undefined && direct && (direct.capability === 'resourcelist' || direct.capability === 'changelist')) {
    const list = result.capabilityLists.find((c) => c.capabilities.some((x) => x.url === direct.url));
    if (direct.capability === 'resourcelist') return { ...base, ...none, capabilityListUrl: list?.url ?? null, resourceListUrl: direct.url };
    // A Change List alone cannot start a mirror: its first baseline comes from the Resource List beside it.
    const resourceListUrl = list?.capabilities.find((c) => c.capability === 'resourcelist')?.url ?? null;
    return { ...base, ...none, capabilityListUrl: list?.url ?? null, resourceListUrl, changeListUrl: direct.url };
  }
  let lists = result.capabilityLists;
  if (options.capabilityListUrl !== undefined) {
    lists = lists.filter((c) => c.url === options.capabilityListUrl);
    if (lists.length === 0 && direct?.capability === 'capabilitylist' && direct.url === options.capabilityListUrl) lists = [await unlisted(http, direct.url, options)];
    if (lists.length === 0) throw new SyncError(`${clip(options.capabilityListUrl)} is not a Capability List of this Source`);
  } else if (direct && direct.capability === 'capabilitylist') {
    lists = lists.filter((c) => c.url === direct.url);
    if (lists.length === 0) lists = [await unlisted(http, direct.url, options)];
  }
  // What the URL itself answered (a 401 for want of credentials, a 404…): that is what people can act on.
  const start = result.routes.find((r) => r.route === 'document');
  if (lists.length === 0) {
    throw new SyncError(`No ResourceSync Source found from ${clip(url)}${start && !start.found ? ` (${start.unreadable ? 'it could not be read' : 'it answered'}: ${clip(start.refused ?? start.message, 300)})` : ''}`);
  }
  // An error (a 404…) from a URL whose site led to a Source is said too: it may be a mistyped list. So is a document
  // that could not be read (it stalled, broke off, was cut short or refused): the mirror was asked for that list, and
  // following the site instead had mirrored some other list of the Source without a word.
  const answered = !start || start.found ? ''
    : start.status !== undefined && start.status >= 400 ? `${clip(url)} answered ${clip(start.message, 100)}. `
    : start.refused !== undefined ? `${clip(start.refused, 300)}. `
    : start.unreadable ? `${clip(url)} could not be read: ${clip(start.message, 300)}. `
    : '';
  if (lists.length > 1) {
    throw new SyncError(
      `${answered}The Source offers ${lists.length} Capability Lists; choose one with --capabilitylist:\n${lists.map((c) => `  ${c.url}`).join('\n')}`,
    );
  }
  const list = lists[0]!;
  if (answered !== '') options.onNote?.(`${answered}The mirror follows the Capability List ${list.url}, found from there.`);
  return { ...base, capabilityListUrl: list.url, ...listsNamed(list.capabilities) };
}

function isFuture(datetime: string): boolean {
  const ms = parseW3cDatetime(datetime);
  return ms !== null && ms > Date.now() + CLOCK_SLACK_MS;
}

/**
 * A list's `at` as a checkpoint: never later than now. A Source that dates its list in the future (year 9999) would
 * otherwise stop the mirror from ever reading a change again.
 */
function notInTheFuture(at: string, what: string, onNote?: (note: string) => void): string {
  const ms = parseW3cDatetime(at);
  if (ms === null || ms <= Date.now()) return at;
  const now = new Date().toISOString();
  if (ms > Date.now() + CLOCK_SLACK_MS) onNote?.(`${what} gives "at" ${at}, in the future; the mirror's checkpoint is now (${now}) instead.`);
  return now;
}

const LIST_NAMES = { resourceListUrl: 'Resource List', changeListUrl: 'Change List', resourceDumpUrl: 'Resource Dump', changeDumpUrl: 'Change Dump' } as const;

/**
 * The mirror's lists as its Capability List names them now. Said when they changed; when the Capability List cannot be
 * read, the lists the mirror knows are used, and that is said too.
 */
async function refreshLists(http: Http, binding: Binding, options: SyncOptions): Promise<Binding> {
  const url = binding.capabilityListUrl!;
  let now: ReturnType<typeof listsNamed>;
  try {
    now = listsNamed(await readCapabilityList(http, url, options.signal));
  } catch (err) {
    if (options.signal?.aborted) throw err;
    options.onNote?.(`The Capability List ${clip(url)} could not be read again (${clip((err as Error).message, 300)}); the lists it named before are used.`);
    return binding;
  }
  for (const key of Object.keys(LIST_NAMES) as (keyof typeof LIST_NAMES)[]) {
    if (now[key] === binding[key]) continue;
    const name = LIST_NAMES[key];
    options.onNote?.(
      now[key] === null
        ? `The Capability List no longer names a ${name} (it named ${clip(binding[key]!)}).`
        : binding[key] === null
          ? `The Capability List now names a ${name}: ${clip(now[key])}.`
          : `The Capability List now names the ${name} ${clip(now[key])} (it was ${clip(binding[key]!)}); the mirror follows it.`,
    );
  }
  return { ...binding, ...now };
}

/** A Capability List that discovery found but no Source Description lists (sloppy Sources): read as it is. */
async function unlisted(http: Http, url: string, options: SyncOptions): Promise<{ url: string; capabilities: { capability: string; url: string }[] }> {
  const capabilities = await readCapabilityList(http, url, options.signal);
  options.onNote?.(`${clip(url)} is not listed in the Source's Source Description; it is mirrored as it is.`);
  return { url, capabilities };
}

/** The capabilities a Capability List names, in its order. Throws when the document is something else. */
async function readCapabilityList(http: Http, url: string, signal?: AbortSignal): Promise<{ capability: string; url: string }[]> {
  const capabilities: { capability: string; url: string }[] = [];
  const doc = await loadDocument(http, url, { signal, onEntry: (e) => void (e.md.capability && capabilities.push({ capability: e.md.capability, url: e.loc })) });
  if (doc.summary.capability !== 'capabilitylist') throw new Error(`${clip(url)} is a ${doc.summary.capability}, not a Capability List`);
  return capabilities;
}

/** The lists a mirror follows, as a Capability List names them (the first of each kind). */
function listsNamed(capabilities: { capability: string; url: string }[]): Pick<Binding, keyof typeof LIST_NAMES> {
  const find = (capability: string) => capabilities.find((c) => c.capability === capability)?.url ?? null;
  return { resourceListUrl: find('resourcelist'), changeListUrl: find('changelist'), resourceDumpUrl: find('resourcedump'), changeDumpUrl: find('changedump') };
}

/**
 * Entries of the lists read ahead of the downloads (read-ahead.ts): a whole Resource List of the spec's 50,000, so
 * its total is known at once.
 */
const READ_AHEAD = 50_000;

/** Streams a Resource List (or each list of an Index) into the applier, `concurrency`×2 resources in flight. */
async function baseline(
  http: Http,
  listUrl: string,
  applier: Applier,
  state: MirrorState,
  options: SyncOptions,
  phases: Record<string, number>,
  onListed: (n: number, bytes?: number, complete?: boolean) => void,
  metadata: MetadataFetcher,
  onFindings: (document: string, findings: Finding[]) => void,
): Promise<{ at: string | null }> {
  const t0 = Date.now();
  const seen = new ListedUris(options.inMemoryUris);
  try {
    return await readAndApply(http, listUrl, applier, state, options, phases, onListed, metadata, seen, t0, onFindings);
  } finally {
    seen.close();
  }
}

async function readAndApply(
  http: Http,
  listUrl: string,
  applier: Applier,
  state: MirrorState,
  options: SyncOptions,
  phases: Record<string, number>,
  onListed: (n: number, bytes?: number, complete?: boolean) => void,
  metadata: MetadataFetcher,
  seen: ListedUris,
  t0: number,
  onFindings: (document: string, findings: Finding[]) => void,
): Promise<{ at: string | null }> {
  let repeated = 0;
  let firstRepeated: string | null = null;
  const inflight = new WorkSlots(Math.max(2, (options.concurrency ?? 8) * 2));
  // Reading the lists stops on a pause too (new work), while the resources in flight keep the run's own signal.
  const intake = options.pauseSignal && options.signal ? AbortSignal.any([options.signal, options.pauseSignal]) : (options.pauseSignal ?? options.signal);
  let listed = 0;
  const onEntry = async (entry: Entry, documentUrl: string) => {
    if (intake?.aborted) return;
    const problem = entryProblem(entry);
    if (problem !== null) return applier.fail(entryLabel(entry, documentUrl), problem, true);
    canonicalEntry(entry);
    if (!seen.add(entry.loc)) {
      repeated++;
      firstRepeated ??= entry.loc;
      return;
    }
    const length = Number(entry.md.length ?? 0);
    onListed(++listed, Number.isSafeInteger(length) && length > 0 ? length : 0);
    const wait = ahead.push(entry);
    if (wait) await wait;
  };
  const ahead = new ReadAhead<Entry>(READ_AHEAD, (entry) => {
    if (intake?.aborted) return undefined;
    const noted = metadata.note(entry);
    if (noted) return noted.then(() => inflight.add(applier.apply(entry)));
    return inflight.add(applier.apply(entry));
  });
  let top;
  try {
    top = await readResourceList(http, listUrl, { signal: intake, onEntry, onNote: options.onNote, onFindings });
    onListed(listed, 0, true);
    ahead.end();
    await ahead.done;
    // Read whole before a pause or cancel came: entries it left waiting were not started, and the run ends as the
    // one cut off while reading does.
    intake?.throwIfAborted();
  } catch (err) {
    // Whatever stopped the reading (a pause, a cancel, a bad list), what was started settles before the run ends.
    ahead.stop();
    await ahead.done.catch(() => undefined);
    await inflight.allSettled();
    // The journal of a run paused, cancelled or failed says how long it fetched, too.
    phases.fetch = (Date.now() - t0) / 1000;
    throw err;
  }
  if (repeated > 0) {
    // A list that contradicts itself (two hashes for one URI) would otherwise fail that resource with no hint why.
    options.onNote?.(`${repeated} entr${repeated === 1 ? 'y repeats a URI' : 'ies repeat URIs'} listed before (the first: ${clip(firstRepeated!)}); each URI is mirrored once, as its first entry describes it.`);
  }
  await inflight.all();
  if (!intake?.aborted) await metadata.run();
  phases.fetch = (Date.now() - t0) / 1000;
  // What the mirror holds that the Source no longer lists (metadata of a listed resource aside): the policy decides.
  // A run that started from an empty inventory recorded only listed resources and their metadata: nothing to look for.
  if (!intake?.aborted && !applier.startedEmpty) {
    const described = metadataOf(state);
    const listed = (uri: string) => seen.has(uri);
    // Read from the inventory a page at a time, as often as the policy needs (never the whole inventory at once).
    const unlisted = function* () {
      for (const uri of state.urisPaged()) if (!listed(uri) && !keepAsMetadata(described, uri, listed)) yield uri;
    };
    await sweepUnlisted(applier, state, unlisted, { listed: seen.size, allowMassDelete: options.allowMassDelete, onNote: options.onNote, onDelete: (uri) => metadata.deleted(uri) });
  }
  return { at: top.summary.md.at ?? null };
}
