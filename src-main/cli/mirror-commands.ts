// rsdesk sync / audit / runs: a local mirror of a Source, kept in a folder.
import { resolve } from 'node:path';
import { existsSync, statSync } from 'node:fs';
import { audit, CUT_NOTE_START, lastAudit, readSavedAudit, type AuditReport } from '../engine/mirror/audit.ts';
import { auditJson } from '../engine/mirror/audit-json.ts';
import type { FoundStatus } from '../engine/mirror/audit-listed.ts';
import { parseMap } from '../engine/mirror/local-path.ts';
import { isMirror, lockHolder, readFolder, resultFailures, runsAsSeen, type FailuresOfResult } from '../engine/mirror/folder.ts';
import { NothingToRetryError, resumeRetry, retryResources, retryStanding, runsWords, type RetryResult } from '../engine/mirror/retry.ts';
import { MirrorState, stateDirOf, STATE_FILE, type RunFinding } from '../engine/mirror/state.ts';
import { sync, type SyncMode, type SyncProgress, type SyncResult } from '../engine/mirror/sync.ts';
import type { DeletePolicy } from '../engine/mirror/apply.ts';
import { FileSecretStore, type SecretStore } from '../engine/mirror/secrets.ts';
import { parseBasic, parseHeaders, SettingsError, type Credentials } from '../engine/mirror/settings.ts';
import { parseProxySetting, type ProxySetting } from '../engine/http/dispatcher.ts';
import { splitUserinfo } from '../engine/http/userinfo.ts';
import { basicPasswordProblem, basicUserProblem, tokenProblem } from '../contract/credentials.ts';
import { join } from 'node:path';
import { jsonError, ProgressLine, type Io } from './io.ts';
import { defaultDataDir } from './paths.ts';
import { UsageError } from './usage.ts';
import { EXIT_FAILED, EXIT_OK, EXIT_TRY_LATER, SIGNAL_EXIT, type StopSignal } from './exit-codes.ts';

export interface SyncCommandOptions {
  url?: string;
  dest: string;
  capabilityList?: string;
  maps: string[];
  allowHosts: string[];
  mode?: string;
  useDumps: boolean;
  withMetadata?: boolean;
  delete?: string;
  dryRun: boolean;
  allowMassDelete?: boolean;
  concurrency?: number;
  delayMs?: number;
  json: boolean;
  /** No progress, no notes: stderr says something only when the exit code is not 0. */
  quiet?: boolean;
  token?: string;
  basic?: string;
  headers?: string[];
  proxy?: string;
  forgetCredentials?: boolean;
  timeoutMs?: number;
  refusalLimitMs?: number;
  userAgent: string;
}

/** Where the CLI keeps mirrors' credentials: the user's data folder, never the mirror folder. */
export function cliSecretStore(env: NodeJS.ProcessEnv = process.env): SecretStore {
  return new FileSecretStore(join(defaultDataDir(env), 'mirror-secrets.json'));
}

/** --token / --basic, else RSDESK_TOKEN / RSDESK_BASIC; undefined when none is given. */
export function credentialsFrom(token: string | undefined, basic: string | undefined, env: NodeJS.ProcessEnv = process.env): Credentials | undefined {
  if (token !== undefined && basic !== undefined) throw new UsageError('give either --token or --basic, not both');
  try {
    if (token !== undefined) {
      if (token === '') throw new UsageError('--token is empty');
      return checked({ scheme: 'bearer', token }, '--token');
    }
    if (basic !== undefined) return checked(parseBasic(basic), '--basic');
    if (env.RSDESK_TOKEN) return checked({ scheme: 'bearer', token: env.RSDESK_TOKEN }, 'RSDESK_TOKEN');
    if (env.RSDESK_BASIC) return checked(parseBasic(env.RSDESK_BASIC), 'RSDESK_BASIC');
  } catch (err) {
    if (err instanceof SettingsError) throw new UsageError(err.message);
    throw err;
  }
  return undefined;
}

/**
 * The app's rules for a credential (src-main/contract/credentials.ts), checked before anything is kept: a token with a
 * line break would replace the good one kept for the mirror, and every later request would fail.
 */
export function checked(c: Credentials, given: string): Credentials {
  const problem = c.scheme === 'bearer' ? tokenProblem(c.token) : (basicUserProblem(c.user) ?? basicPasswordProblem(c.password));
  if (problem !== null) throw new UsageError(`${problem} (${given}); nothing was kept. Give it without them.`);
  return c;
}

const MODES = ['auto', 'baseline', 'incremental'];
const POLICIES = ['keep', 'delete', 'quarantine'];

/**
 * The URLs of a sync without a user name and password in them (they would be kept in the mirror's binding and shown
 * in every message), and those as HTTP basic credentials for the Source's origin, as a browser takes them.
 */
export function urlsWithoutUserinfo(o: Pick<SyncCommandOptions, 'url' | 'capabilityList'>): { url?: string; capabilityList?: string; credentials?: Credentials; credentialsFrom?: string } {
  const url = o.url === undefined ? null : splitUserinfo(o.url);
  const capabilityList = o.capabilityList === undefined ? null : splitUserinfo(o.capabilityList);
  const found = [url, capabilityList].filter((u) => u !== null);
  const result = { url: url?.url ?? o.url, capabilityList: capabilityList?.url ?? o.capabilityList };
  if (found.length === 0) return result;
  const [first] = found;
  if (found.some((u) => u.user !== first!.user || u.password !== first!.password)) {
    throw new UsageError('the URLs carry two different user names or passwords: give the URLs without them, and the credentials once with --basic USER:PASSWORD');
  }
  if (first!.user === '' || first!.user.includes(':')) {
    throw new UsageError(`the URL ${first!.url} carries a password without a user name: give the URL without it, and the credentials with --basic USER:PASSWORD or --token`);
  }
  return { ...result, credentials: checked({ scheme: 'basic', user: first!.user, password: first!.password }, 'the URL'), credentialsFrom: first!.url };
}

export async function syncCommand(o: SyncCommandOptions, io: Io): Promise<number> {
  if (o.mode !== undefined && !MODES.includes(o.mode)) throw new UsageError(`--mode must be auto, baseline or incremental, not ${JSON.stringify(o.mode)}`);
  if (o.delete !== undefined && !POLICIES.includes(o.delete)) throw new UsageError(`--delete must be keep, delete or quarantine, not ${JSON.stringify(o.delete)}`);
  let maps;
  let headers: Record<string, string> | undefined;
  let proxy: ProxySetting | undefined;
  try {
    maps = o.maps.map(parseMap);
    if (o.headers && o.headers.length > 0) headers = parseHeaders(o.headers);
    if (o.proxy !== undefined) proxy = parseProxySetting(o.proxy);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const plainUrls = urlsWithoutUserinfo(o);
  if (plainUrls.credentials && (o.token !== undefined || o.basic !== undefined || o.forgetCredentials)) {
    throw new UsageError(`the URL ${plainUrls.capabilityList ?? plainUrls.url} carries a user name and password, and ${o.forgetCredentials ? '--forget-credentials' : o.token !== undefined ? '--token' : '--basic'} is given too: give the URL without them`);
  }
  let credentials: Credentials | null | undefined = plainUrls.credentials ?? credentialsFrom(o.token, o.basic);
  if (o.forgetCredentials) {
    if (credentials !== undefined) throw new UsageError('--forget-credentials cannot be given with credentials');
    credentials = null;
  }
  const dest = resolve(o.dest);
  // A command line that cannot work, said as one (exit 2, nothing made): it exited 1 as if something had failed.
  // (A folder with a mirror's state and no Source in it is the engine's to explain.)
  if (plainUrls.url === undefined && !isMirror(dest) && !isFile(dest)) {
    throw new UsageError(`${dest} is not a mirror yet, and a new mirror needs the URL of its Source: rsdesk sync <url> --dest ${dest} (a folder that is a mirror already needs none)`);
  }
  // Progress on stderr only when it is a terminal; --json output (stdout) is never mixed with it.
  const progress = new ProgressLine(io, o.quiet);
  const started = Date.now();
  // A dry run records no run and writes nothing: a stop leaves nothing to resume, and must not say it does.
  const stop = stopOnSignals(io, () => progress.clear(), o.dryRun ? {
    first: (signal) => `Stopping (${signal}): the dry run ends; it has written nothing, and leaves nothing to resume`,
    second: (signal) => `rsdesk: stopped at once (${signal}) before the dry run ended; nothing was changed.`,
  } : {
    first: (signal) => `Stopping (${signal}): the downloads under way finish, and what was verified is kept`,
    second: (signal) => `rsdesk: stopped at once (${signal}). The downloads under way and those not yet recorded are fetched again by the next rsdesk sync --dest ${dest}, which resumes the run.`,
  }, o.json, o.quiet);
  const result: SyncResult = await sync({
    url: plainUrls.url,
    dest,
    capabilityListUrl: plainUrls.capabilityList,
    maps: o.maps.length > 0 ? maps : undefined,
    allowHosts: o.allowHosts.length > 0 ? o.allowHosts : undefined,
    mode: (o.mode as SyncMode | undefined) ?? 'auto',
    useDumps: o.useDumps,
    withMetadata: o.withMetadata ?? false,
    deletePolicy: (o.delete as DeletePolicy | undefined) ?? 'keep',
    allowMassDelete: o.allowMassDelete,
    dryRun: o.dryRun,
    concurrency: o.concurrency,
    delayMs: o.delayMs,
    headers,
    proxy,
    credentials,
    credentialsFrom: plainUrls.credentialsFrom,
    secretStore: cliSecretStore(),
    timeoutMs: o.timeoutMs,
    refusalLimitMs: o.refusalLimitMs,
    userAgent: o.userAgent,
    pauseSignal: stop.signal,
    onNote: (note) => {
      // A note on every run (a mirror of a Resource List alone has one) had a plain cron line mail every run.
      if (o.quiet) return;
      progress.clear();
      io.err(`${note}\n`);
    },
    onProgress: progress.enabled
      ? (p) => {
          const done = p.created + p.updated + p.unchanged + p.failed + p.skipped;
          const seconds = (Date.now() - started) / 1000;
          const rate = seconds > 1 ? `, ${Math.round(done / seconds).toLocaleString('en')}/s` : '';
          // Bytes as they arrive (p.bytes counts only what batches committed); the total is "so far" while the
          // lists are still being read.
          progress.draw(
            `${p.mode === 'baseline' ? 'Baseline' : 'Incremental'}: ${done.toLocaleString('en')} of ${p.listed.toLocaleString('en')} listed${p.listComplete ? '' : ' so far'}, ` +
              `${p.failed.toLocaleString('en')} failed, ${formatBytes(p.bytesFetched)}${rate}`,
          );
        }
      : undefined,
  }).finally(() => {
    progress.clear();
    stop.dispose();
  });
  if (o.json) {
    const { mode, created, updated, deleted, unchanged, skipped, failed, bytes, seconds, pausedBecause, findings, findingCount } = result;
    // The issue's shape, plus `skipped` (the run journal counts it; without it the counts did not add up), and
    // `pausedBecause` when the run paused itself (a Source that refused everything): a script must not take it as done.
    const head = { mode, created, updated, deleted, unchanged, skipped, failed, bytes, seconds, ...(pausedBecause ? { pausedBecause } : {}),
      // What the Source's lists break (the first MAX_RUN_FINDINGS of findingCount), when they break anything.
      ...(findingCount > 0 ? { findings, findingCount } : {}) };
    await writeRunJson(dest, head, result, io);
  } else io.out(formatSync(result, dest, (o.delete as DeletePolicy | undefined) ?? 'keep'));
  if (stop.by !== null && result.paused) {
    io.err(
      result.dryRun
        ? `rsdesk: stopped (${stop.by}) before the dry run ended; nothing was changed.\n`
        : result.runId === null
          ? `rsdesk: stopped (${stop.by}) before the run began, while the Source's lists were being read; nothing was fetched, and no run was recorded.\n`
          : `rsdesk: stopped (${stop.by}). What was verified is kept; run ${result.runId} is left interrupted, and the next rsdesk sync --dest ${dest} resumes it.\n`,
    );
    return SIGNAL_EXIT[stop.by];
  }
  if (stop.by !== null && !o.quiet) io.err(`rsdesk: ${stop.by} came while the run was recording its last resources; nothing was left to fetch, so it ended as recorded above.\n`);
  return quietExit(result, dest, o.quiet, io);
}

/**
 * The run's exit code; with --quiet, the one line on stderr that says why it is not 0. A cron line mails whatever is
 * printed: with --quiet and stdout sent to a log, mail comes exactly when the exit code is not 0.
 */
function quietExit(r: { failed: number; pausedBecause: string | null; runId: number | null }, dest: string, quiet: boolean | undefined, io: Io): number {
  const code = runExit(r);
  if (!quiet || code === EXIT_OK) return code;
  io.err(
    r.failed > 0
      ? `rsdesk: ${r.failed.toLocaleString('en')} resource${r.failed === 1 ? '' : 's'} failed in ${r.runId === null ? 'the dry run' : `run ${r.runId}`} of ${dest} (stdout lists them); rsdesk retry --dest ${dest} fetches them again.\n`
      : `rsdesk: ${r.pausedBecause}\n`,
  );
  return code;
}


/** Whether `path` is there and is no folder: the engine says so in its own words. */
function isFile(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() === false;
}

/**
 * A run's exit code: 1 when anything failed; else 75 when it paused for a Source that refused everything (not done,
 * though nothing failed: the next run resumes it, later); else 0.
 */
function runExit(r: { failed: number; pausedBecause: string | null }): number {
  return r.failed > 0 ? EXIT_FAILED : r.pausedBecause !== null ? EXIT_TRY_LATER : EXIT_OK;
}

/** How long the downloads under way may take to finish after SIGTERM or SIGHUP, before the run stops at once. */
const TERM_GRACE_MS = 5_000;


/**
 * How the first stop message goes on, for the signal that came. Only Ctrl-C comes from a person at a terminal who can
 * press it again: after SIGTERM (systemd, docker stop, kill) or SIGHUP (a closed terminal or ssh session), "press
 * Ctrl-C again" spoke to no one.
 */
function howItStops(signal: StopSignal): string {
  if (signal === 'SIGINT') return '; press Ctrl-C again to stop at once.';
  const hangup = signal === 'SIGHUP' ? ' (a hangup: the terminal or ssh session it ran in was closed, or kill -HUP)' : '';
  return `${hangup}. If it has not stopped within ${TERM_GRACE_MS / 1000} s, or at a second ${signal}, it stops at once.`;
}

/**
 * Ctrl-C, SIGTERM or SIGHUP while a sync runs: no new resource is started, those under way finish and are recorded
 * with everything verified before them, and the run is left interrupted for the next sync to resume. Without this the
 * process died at once: up to a durable batch of verified downloads was lost, the lock was left behind and nothing
 * was said. A second signal stops at once (as a kill would), for a run whose downloads under way are long.
 */
function stopOnSignals(
  io: Io,
  clear: () => void,
  say: { first: (signal: string) => string; second: (signal: string) => string },
  json = false,
  quiet = false,
): { signal: AbortSignal; readonly by: StopSignal | null; dispose(): void } {
  const pause = new AbortController();
  let by: StopSignal | null = null;
  let grace: ReturnType<typeof setTimeout> | undefined;
  const on = (signal: StopSignal, late = false) => {
    clear();
    if (by === null) {
      by = signal;
      // --quiet: the stop is said once, at the end, with the exit code it explains; "Stopping…" is progress, and a
      // stop that came too late to stop anything ends 0, when --quiet promises an empty stderr.
      if (!quiet) io.err(`${say.first(signal)}${howItStops(signal)}\n`);
      pause.abort();
      // SIGTERM comes from a service manager or a container runtime (systemd, docker stop), which sends SIGKILL after
      // its own grace (docker: 10 s): without a deadline of ours, one large download under way got the run killed
      // mid-write with nothing said. A hangup has no one to press anything either. Ctrl-C has no such deadline: the
      // person can press it again.
      if (signal !== 'SIGINT') grace = setTimeout(() => on(signal, true), TERM_GRACE_MS).unref();
      return;
    }
    if (late) io.err(`rsdesk: not stopped within ${TERM_GRACE_MS / 1000} s of ${signal}.\n`);
    // The lock goes with the process ('exit'); the run it leaves is taken as interrupted by the next one.
    io.err(`${say.second(signal)}\n`);
    // --json: the command's document is not printed now; its reader gets what happened instead of nothing.
    if (json) io.out(`${jsonError(say.second(signal).replace(/^rsdesk: /, ''))}\n`);
    process.exit(SIGNAL_EXIT[signal]);
  };
  // SIGHUP's default killed the run at once when the terminal or ssh session it ran in closed: a baseline of hours
  // lost its last batch and left its lock. (nohup cannot prevent that for any Node program: Node sets an ignored
  // SIGHUP back to its default when it starts; docs/cli.md says what to use instead.)
  const handlers = (Object.keys(SIGNAL_EXIT) as StopSignal[]).map((signal) => [signal, () => on(signal)] as const);
  for (const [signal, handler] of handlers) process.on(signal, handler);
  return {
    signal: pause.signal,
    get by() {
      return by;
    },
    dispose() {
      clearTimeout(grace);
      for (const [signal, handler] of handlers) process.off(signal, handler);
    },
  };
}

export interface RetryCommandOptions {
  dest: string;
  /** The run whose failures are fetched again, or an interrupted retry to take up; absent: the last run. */
  runId?: number;
  /** Every failure still standing, whatever run it is of. */
  all?: boolean;
  json: boolean;
  /** No progress, no notes: stderr says something only when the exit code is not 0. */
  quiet?: boolean;
  concurrency?: number;
  token?: string;
  basic?: string;
  timeoutMs?: number;
  userAgent: string;
}

/**
 * What `rsdesk retry` does with a mirror: take up an interrupted retry, or retry the failures of a run. Without --run
 * the last run that is not an audit decides: an interrupted retry is taken up; the failures of a retry that ended are
 * those of the run it retried still standing (the ones that failed again among them), so retrying is the same run's
 * failures again and again until none stands. On a mirror the live side feeds (its last run a batch of notifications
 * with nothing failed), and with --all, every failure still standing, whatever run it is of.
 */
export function retryTarget(dest: string, runId: number | undefined, all = false): { resume: number } | { of: number } | { standing: true } {
  const folder = readFolder(dest);
  if (folder === null) throw new Error(`${dest} is not a mirror (no .resourcesync/state.sqlite)`);
  const interruptedRetry = (id: number) => {
    const run = folder.runs.find((r) => r.id === id);
    return run !== undefined && run.mode === 'retry' && run.status === 'interrupted';
  };
  if (runId !== undefined) return interruptedRetry(runId) ? { resume: runId } : { of: runId };
  const last = folder.runs.filter((r) => r.kind !== 'audit').at(-1);
  if (last === undefined) throw new Error(`${dest} has no run yet whose failures could be retried: run rsdesk sync --dest ${dest} first.`);
  // An interrupted retry is taken up first, --all or not: what it asked for is what stands.
  if (last.mode === 'retry' && interruptedRetry(last.id) && folder.retryToResume === last.id) return { resume: last.id };
  if (all) return { standing: true };
  // A mirror fed by change notifications has a run per batch of them, most with nothing failed, and its failures
  // spread over many of them: every failure still standing is retried at once (retrying them run by run took as many
  // commands, and "run N has no failures" named the wrong run).
  if (LIVE_MODES.has(last.mode) && last.failed === 0) return { standing: true };
  if (last.mode !== 'retry') return { of: last.id };
  const retried = retriedRuns(dest, last.id);
  // A retry of several runs' failures is followed by one of every failure still standing.
  if (retried !== null && retried.length > 1) return { standing: true };
  return { of: retried?.[0] ?? last.id };
}

/** Runs of the live side (rsdesk watch, the app's live view): a batch of notifications, a gap's catch-up, a ping's sync. */
const LIVE_MODES = new Set(['live', 'live-catch-up', 'ping']);

/** The runs a retry run retried (null for one recorded before retries kept what they were asked). */
function retriedRuns(dest: string, retryId: number): number[] | null {
  const state = MirrorState.forReading(stateDirOf(dest));
  try {
    return state.retryLeft(retryId)?.ofRuns ?? null;
  } finally {
    state.close();
  }
}

export async function retryCommand(o: RetryCommandOptions, io: Io): Promise<number> {
  const dest = resolve(o.dest);
  const credentials = credentialsFrom(o.token, o.basic);
  if (!isMirror(dest)) throw new Error(`${dest} is not a mirror (no .resourcesync/state.sqlite)`);
  // Whether there is anything to retry is checked under the mirror's lock (retry.ts), and said in one plain line.
  const target = retryTarget(dest, o.runId, o.all);
  const progress = new ProgressLine(io, o.quiet);
  const started = Date.now();
  const stop = stopOnSignals(io, () => progress.clear(), {
    first: (signal) => `Stopping (${signal}): the downloads under way finish, and what was verified is kept`,
    second: (signal) => `rsdesk: stopped at once (${signal}). The downloads under way and those not yet recorded are fetched again by the next rsdesk retry --dest ${dest}, which takes the retry up again.`,
  }, o.json, o.quiet);
  const common = {
    dest,
    concurrency: o.concurrency,
    credentials,
    secretStore: cliSecretStore(),
    timeoutMs: o.timeoutMs,
    userAgent: o.userAgent,
    pauseSignal: stop.signal,
    onProgress: progress.enabled
      ? (p: SyncProgress) => {
          const done = p.created + p.updated + p.unchanged + p.failed + p.skipped + p.deleted;
          const seconds = (Date.now() - started) / 1000;
          const rate = seconds > 1 ? `, ${Math.round(done / seconds).toLocaleString('en')}/s` : '';
          progress.draw(`Retry: ${p.settled.toLocaleString('en')} of ${p.listed.toLocaleString('en')}, ${p.failed.toLocaleString('en')} failed, ${formatBytes(p.bytesFetched)}${rate}`);
        }
      : undefined,
  };
  let result: RetryResult;
  try {
    result =
      'resume' in target ? await resumeRetry({ ...common, retryRunId: target.resume }) : 'standing' in target ? await retryStanding(common) : await retryResources({ ...common, runId: target.of });
  } catch (err) {
    // Nothing failed: not a failure of the command. A nightly `rsdesk retry` from cron or a timer exited 1 (a failed
    // unit, a mail) every night that had nothing to mend.
    if (!(err instanceof NothingToRetryError)) throw err;
    if (o.json) io.out(`${JSON.stringify({ mode: 'retry', created: 0, updated: 0, deleted: 0, unchanged: 0, skipped: 0, failed: 0, bytes: 0, seconds: 0, failures: [], nothingToRetry: err.message })}\n`);
    else io.out(`${err.message}\n`);
    return EXIT_OK;
  } finally {
    progress.clear();
    stop.dispose();
  }
  if (o.json) {
    const { created, updated, deleted, unchanged, skipped, failed, bytes, seconds, pausedBecause } = result;
    // The shape of rsdesk sync --json, so one reader takes both.
    await writeRunJson(dest, { mode: 'retry', created, updated, deleted, unchanged, skipped, failed, bytes, seconds, ...(pausedBecause ? { pausedBecause } : {}) }, result, io);
  } else io.out(formatRetry(result, dest));
  if (stop.by !== null && result.paused) {
    io.err(`rsdesk: stopped (${stop.by}). What was verified is kept; retry run ${result.runId} is left interrupted, and the next rsdesk retry --dest ${dest} takes it up again.\n`);
    return SIGNAL_EXIT[stop.by];
  }
  if (stop.by !== null && !o.quiet) io.err(`rsdesk: ${stop.by} came while the retry was recording its last resources; nothing was left to fetch, so it ended as recorded above.\n`);
  return quietExit(result, dest, o.quiet, io);
}

export function formatRetry(r: RetryResult, dest: string): string {
  const lines = [
    `Retry (run ${r.runId}${r.resumed ? ', taken up again' : ''}) of ${r.asked} resource${r.asked === 1 ? '' : 's'} that failed in ${runsWords(r.ofRuns)}, in ${r.seconds} s`,
    `  created ${r.created}, updated ${r.updated}, deleted ${r.deleted}, unchanged ${r.unchanged}, skipped ${r.skipped}, failed ${r.failed}; ${formatBytes(r.bytes)} downloaded`,
  ];
  if (r.failures.length > 0) {
    lines.push('Failed again:');
    const shown = r.failures.slice(0, 50);
    for (const f of shown) lines.push(`  ${f.uri}: ${f.reason}`);
    if (r.failureCount > shown.length) lines.push(`  … and ${r.failureCount - shown.length} more (rsdesk runs --dest ${dest} --json lists them all)`);
  }
  if (r.gone.length > 0) {
    lines.push('Deleted at the Source since, and not in the mirror (nothing to do; settled):');
    for (const uri of r.gone.slice(0, 50)) lines.push(`  ${uri}`);
    if (r.gone.length > 50) lines.push(`  … and ${r.gone.length - 50} more`);
  }
  if (r.kept.length > 0) {
    lines.push('Deleted at the Source since; the mirror keeps its copy (deletion policy keep; settled):');
    for (const uri of r.kept.slice(0, 50)) lines.push(`  ${uri}`);
    if (r.kept.length > 50) lines.push(`  … and ${r.kept.length - 50} more`);
  }
  if (r.completedBaseline !== null) {
    lines.push(`That was the last failure of run ${r.completedBaseline.runId}: its baseline is complete now, and the mirror is in sync up to ${r.completedBaseline.at}.`);
  }
  if (r.leftOver > 0) lines.push(`${r.leftOver.toLocaleString('en')} more failure${r.leftOver === 1 ? '' : 's'} still stand${r.leftOver === 1 ? 's' : ''}: at most ${r.asked.toLocaleString('en')} are retried at once, and the next rsdesk retry --dest ${dest} --all takes them.`);
  if (r.liveCheckpoint !== null) lines.push(`Failures of live notifications that held the checkpoint were mended: the mirror is in sync up to ${r.liveCheckpoint}.`);
  if (r.pausedBecause !== null) lines.push(r.pausedBecause);
  else if (r.paused) lines.push(`Stopped before the end: the next rsdesk retry --dest ${dest} takes it up again; what was verified is not fetched again.`);
  return `${lines.join('\n')}\n`;
}

export function formatSync(r: SyncResult, dest: string, policy: DeletePolicy = 'keep'): string {
  const lines = [
    `${r.dryRun ? 'Dry run, nothing changed: ' : ''}${r.mode === 'baseline' ? 'Baseline' : 'Incremental sync'} of ${dest}${r.from === 'dumps' ? (r.mode === 'baseline' ? ' from the Resource Dump' : ' from the Change Dump') : ''}${r.resumed ? ' (resumed)' : ''} in ${r.seconds} s`,
    `  created ${r.created}, updated ${r.updated}, deleted ${r.deleted}, unchanged ${r.unchanged}, skipped ${r.skipped}, failed ${r.failed}; ${formatBytes(r.bytes)} ${r.from === 'dumps' ? 'written' : 'downloaded'}`,
  ];
  if (r.patched > 0) lines.push(`  ${r.patched} of the updates applied as a JSON Patch to the mirror's copy`);
  if (r.metadata > 0) lines.push(`  ${r.metadata} metadata record(s) (rel="describedby") fetched or checked, counted above`);
  if (r.wouldDeleteCount > 0) {
    lines.push(
      policy === 'keep'
        ? `  ${r.wouldDeleteCount} resource(s) the Source no longer has were kept (--delete keep); --delete delete or quarantine would remove them:`
        : `  ${r.wouldDeleteCount} resource(s) the Source no longer lists were not removed, being more than it lists now; --allow-mass-delete removes them:`,
    );
    for (const uri of r.wouldDelete.slice(0, 20)) lines.push(`    ${uri}`);
    if (r.wouldDeleteCount > 20) lines.push(`    … and ${r.wouldDeleteCount - 20} more`);
  }
  if (r.wouldRemoveCount > 0) {
    lines.push(
      policy === 'quarantine'
        ? `  ${r.wouldRemoveCount} resource(s) the Source no longer has would be moved into .resourcesync/quarantine (--delete quarantine):`
        : `  ${r.wouldRemoveCount} resource(s) the Source no longer has would be deleted (--delete delete):`,
    );
    for (const uri of r.wouldRemove.slice(0, 20)) lines.push(`    ${uri}`);
    if (r.wouldRemoveCount > 20) lines.push(`    … and ${r.wouldRemoveCount - 20} more`);
  }
  if (r.findingCount > 0) lines.push(findingLines(r.findings, r.findingCount, 10, '  ', `rsdesk runs --dest ${dest} --json lists the first ${r.findings.length}`).trimEnd());
  if (r.failures.length > 0) {
    lines.push('Failures:');
    const shown = r.failures.slice(0, 50);
    for (const f of shown) lines.push(`  ${f.uri}: ${f.reason}`);
    // A dry run records none: no other command lists the rest of its failures.
    const more = r.failureCount - shown.length;
    if (more > 0) lines.push(`  … and ${more} more${r.dryRun ? '' : ` (rsdesk runs --dest ${dest} --json lists them all)`}`);
  }
  // Paused while the Source's lists were being found: no run began (a dry run never records one).
  if (r.paused && r.runId === null && !r.dryRun) lines.push('Stopped before the run began: nothing was fetched, and no run was recorded.');
  else if (r.pausedBecause !== null) lines.push(`${r.pausedBecause}${r.checkpoint ? ` Checkpoint still ${r.checkpoint}.` : ''}`);
  else if (r.paused) lines.push(`Stopped before the end${r.dryRun ? '' : ': the next sync resumes this run'}${r.checkpoint ? `; checkpoint still ${r.checkpoint}` : ''}.`);
  else lines.push(r.checkpoint ? `Checkpoint: ${r.checkpoint}` : 'No checkpoint yet: the next sync is a baseline again.');
  return `${lines.join('\n')}\n`;
}

/** What the list reader found in the lists a run read, in plain words: the first `shown`, then how many more. */
function findingLines(findings: RunFinding[], count: number, shown: number, indent: string, more: string): string {
  const lines = [`${indent}The Source's lists break the spec in ${count.toLocaleString('en')} place${count === 1 ? '' : 's'} (the run read on; rsdesk check tells more):`];
  for (const f of findings.slice(0, shown)) lines.push(`${indent}  ${f.severity === 'error' ? 'Error' : 'Warning'}: ${f.document}${f.line !== undefined ? ` line ${f.line}` : ''}: ${f.message}`);
  if (count > shown) lines.push(`${indent}  … and ${(count - shown).toLocaleString('en')} more (${more}${count > findings.length ? `; the others were counted, not kept` : ''})`);
  return `${lines.join('\n')}\n`;
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

export async function auditCommand(
  o: {
    dest: string;
    rehash: boolean;
    json: boolean;
    /** Stderr says something only when the exit code is not 0: the mirror is not in sync, or no report is kept. */
    quiet?: boolean;
    last?: boolean;
    token?: string;
    basic?: string;
    timeoutMs?: number;
    userAgent: string;
    /** Differences of each kind held in memory (REPORT_LIMIT unless told; lowered by tests): --json prints them all. */
    reportLimit?: number;
  },
  io: Io,
): Promise<number> {
  if (o.last) {
    // The report kept in the mirror's state by the last audit (of rsdesk or the app); nothing is fetched.
    const saved = lastAudit(resolve(o.dest), o.reportLimit);
    if (saved === null) {
      const none = `No audit report is kept for ${resolve(o.dest)} yet: run rsdesk audit --dest ${resolve(o.dest)} without --last.`;
      if (o.json) io.out('null\n');
      else io.out(`${none}\n`);
      if (o.quiet) io.err(`rsdesk: ${none}\n`);
      return 1;
    }
    if (!o.json) io.out(`Last audit: ${saved.at}${saved.rehash ? ' (every file hashed again)' : ''}, ${saved.seconds} s\n`);
    await printAudit(resolve(o.dest), { ...saved.report, runId: saved.runId }, o.json, io, saved.rehash, { at: saved.at, rehash: saved.rehash });
    return auditExit(resolve(o.dest), saved.report, o.quiet, io);
  }
  const credentials = credentialsFrom(o.token, o.basic);
  // Ctrl-C cancels the audit: its run is recorded cancelled and the lock released, instead of both left behind.
  const stop = stopOnSignals(io, () => undefined, {
    first: (signal) => `Stopping the audit (${signal})`,
    second: (signal) => `rsdesk: audit stopped at once (${signal}); no report is kept.`,
  }, o.json, o.quiet);
  let report: AuditReport;
  try {
    report = await audit({ dest: resolve(o.dest), rehash: o.rehash, credentials, secretStore: cliSecretStore(), timeoutMs: o.timeoutMs, userAgent: o.userAgent, signal: stop.signal, reportLimit: o.reportLimit });
  } catch (err) {
    if (stop.by === null) throw err;
    const stopped = `audit stopped (${stop.by}) before the end; no report is kept. Nothing in the mirror was changed.`;
    io.err(`rsdesk: ${stopped}\n`);
    if (o.json) io.out(`${jsonError(stopped)}\n`);
    return SIGNAL_EXIT[stop.by];
  } finally {
    stop.dispose();
  }
  // When it ended, as --last and the app's export say it: one shape for a script that reads both.
  const saved = report.runId === undefined ? null : readSavedAudit(resolve(o.dest), report.runId);
  const when = saved === null ? undefined : { at: saved.audit.at, rehash: saved.audit.rehash };
  saved?.close();
  await printAudit(resolve(o.dest), report, o.json, io, o.rehash, when);
  return auditExit(resolve(o.dest), report, o.quiet, io);
}

/** 0 only in sync; with --quiet, not in sync is said on stderr too, in one line (as quietExit says a run's failures). */
function auditExit(dest: string, report: AuditReport, quiet: boolean | undefined, io: Io): number {
  if (report.inSync) return EXIT_OK;
  if (quiet) {
    const c = report.counts ?? { missing: report.missing.length, extra: report.extra.length, changed: report.changed.length, unverifiable: report.unverifiable.length };
    const n = c.missing + c.extra + c.changed + c.unverifiable;
    io.err(`rsdesk: ${dest} is not in sync with its Source: ${n.toLocaleString('en')} difference${n === 1 ? '' : 's'} (stdout lists them).\n`);
  }
  return EXIT_FAILED;
}

async function printAudit(dest: string, report: AuditReport, json: boolean, io: Io, rehash: boolean, when?: { at: string; rehash: boolean }): Promise<void> {
  if (json) {
    await writeAuditJson(dest, report, io, when);
  } else {
    // Without --rehash the files were not read: say what "match" rests on.
    const basis = rehash ? 'every file read again' : 'by size and the hashes recorded when mirrored; --rehash reads every file again';
    const lines = [report.inSync ? `In sync: ${report.inSyncCount} resources match the Source (${basis}).` : `Not in sync (${report.inSyncCount} resources match, ${basis}):`];
    // The note on lists cut short speaks of the app's view; here each section says how many more --json lists.
    for (const note of report.notes ?? []) if (!note.startsWith(CUT_NOTE_START)) lines.push(`  Note: ${note}`);
    const section = (title: string, items: string[], count = items.length) => {
      if (count === 0) return;
      lines.push(`  ${title} (${count}):`);
      const shown = items.slice(0, 50);
      for (const item of shown) lines.push(`    ${item}`);
      if (count > shown.length) lines.push(`    … and ${count - shown.length} more (--json lists them all)`);
    };
    const counts = report.counts;
    section('missing', report.missing, counts?.missing);
    section('extra', report.extra, counts?.extra);
    section('changed', report.changed.slice(0, 50).map((c) => `${c.uri}: ${c.reason}`), counts?.changed ?? report.changed.length);
    section('unverifiable', report.unverifiable.slice(0, 50).map((c) => `${c.uri}: ${c.reason}`), counts?.unverifiable ?? report.unverifiable.length);
    section('kept, no longer listed by the Source (--delete delete or quarantine would remove them)', report.kept ?? [], counts?.kept);
    io.out(`${lines.join('\n')}\n`);
  }
}

/**
 * A run's result as one JSON object (`head`, then "failures"), its failures written a piece at a time: the result
 * lists only the first of them, and the rest are read from the run journal (resultFailures). A dry run records none:
 * past those it lists, "failuresNotListed" counts them.
 */
async function writeRunJson(dest: string, head: Record<string, unknown>, r: FailuresOfResult, io: Io): Promise<void> {
  let buffer = `${JSON.stringify(head).slice(0, -1)},"failures":[`;
  let written = 0;
  for (const { uri, reason } of resultFailures(dest, r)) {
    buffer += `${written++ === 0 ? '' : ','}${JSON.stringify({ uri, reason })}`;
    if (buffer.length >= 1 << 16) {
      io.out(buffer);
      buffer = '';
      // Else a pipe read slowly held every failure in memory meanwhile.
      await io.drained?.();
    }
  }
  const untold = r.failureCount - written;
  io.out(`${buffer}]${untold > 0 ? `,"failuresNotListed":${untold}` : ''}}\n`);
}

/**
 * The whole report as one JSON object (audit-json.ts, the writer of the app's export too), read from one snapshot of
 * the report kept in the mirror's state: the report in memory holds only the first items of each kind, and a million of
 * them need not be held to be printed. Each kind was read through a connection of its own, so an audit that ended
 * meanwhile in another process and dropped this report (a mirror keeps five) could cut it between kinds.
 */
async function writeAuditJson(dest: string, report: AuditReport, io: Io, when?: { at: string; rehash: boolean }): Promise<void> {
  const saved = report.runId === undefined ? null : readSavedAudit(dest, report.runId);
  const { inSync, inSyncCount } = report;
  const fromMemory = (status: FoundStatus): { item: string; reason: string | null }[] =>
    status === 'changed' || status === 'unverifiable' ? report[status].map((c) => ({ item: c.uri, reason: c.reason })) : (report[status] ?? []).map((item) => ({ item, reason: null }));
  const json = auditJson(
    saved === null
      ? { head: { ...when }, inSync, inSyncCount, items: fromMemory, notes: report.notes ?? [] }
      : { head: { ...when }, inSync, inSyncCount, items: (status) => saved.items(status), notes: saved.notes },
    0,
  );
  try {
    let buffer = '';
    for await (const text of json) {
      buffer += text;
      if (buffer.length >= 1 << 16) {
        io.out(buffer);
        buffer = '';
        // Else a pipe read slowly held the whole report in memory (~230 MB more for 1,000,000 items).
        await io.drained?.();
      }
    }
    io.out(buffer);
  } finally {
    saved?.close();
  }
}

/**
 * Every run with every failure of it, streamed from the journal a piece at a time: built whole, 50 runs of 20,000
 * failures each were held in memory twice over (the rows, then the text). One read transaction: a run that records
 * meanwhile in another process does not change the journal halfway through the document.
 */
async function writeRunsJson(dest: string, state: MirrorState, io: Io): Promise<void> {
  state.db.exec('BEGIN');
  try {
    let buffer = `${JSON.stringify({ checkpoint: state.checkpoint()?.at ?? null, needsSync: state.needsSync() }).slice(0, -1)},"runs":[`;
    const flush = async () => {
      io.out(buffer);
      buffer = '';
      // Else a pipe read slowly held every failure in memory meanwhile.
      await io.drained?.();
    };
    let first = true;
    for (const r of runsAsSeen(state.runs(), lockHolder(dest))) {
      buffer += `${first ? '' : ','}${JSON.stringify(r).slice(0, -1)},"failures":[`;
      first = false;
      let written = 0;
      for (const { uri, reason } of state.failuresPast(r.id, 0)) {
        buffer += `${written++ === 0 ? '' : ','}${JSON.stringify({ uri, reason })}`;
        if (buffer.length >= 1 << 16) await flush();
      }
      buffer += `],"findings":${JSON.stringify(state.runFindings(r.id))}}`;
      if (buffer.length >= 1 << 16) await flush();
    }
    io.out(`${buffer}]}\n`);
  } finally {
    state.db.exec('ROLLBACK');
  }
}

export async function runsCommand(o: { dest: string; json: boolean }, io: Io): Promise<number> {
  const dest = resolve(o.dest);
  if (!existsSync(`${stateDirOf(dest)}/${STATE_FILE}`)) throw new Error(`${dest} is not a mirror (no .resourcesync/state.sqlite)`);
  const state = MirrorState.forReading(stateDirOf(dest));
  try {
    if (o.json) {
      await writeRunsJson(dest, state, io);
      return 0;
    }
    const runs = runsAsSeen(state.runs(), lockHolder(dest)).map((r) => ({ ...r, findings: state.runFindings(r.id) }));
    if (runs.length === 0) io.out('No runs yet.\n');
    for (const r of runs) {
      const when = `${r.startedAt} → ${r.endedAt ?? '…'}`;
      if (r.kind === 'audit') {
        // An audit fetches and writes nothing: what it found is all it has to say.
        const how = r.mode === 'rehash' ? 'audit, every file read again' : 'audit';
        io.out(`#${r.id} ${how}: ${r.status}  ${when}  ${r.unchanged} in sync, ${r.failed} differing${r.message ? `  (${r.message})` : ''}\n`);
        continue;
      }
      io.out(
        `#${r.id} ${r.kind} (${r.mode}) ${r.status}  ${when}  created ${r.created}, updated ${r.updated}, ` +
          `deleted ${r.deleted}, unchanged ${r.unchanged}, failed ${r.failed}, ${formatBytes(r.bytes)}${r.message ? `  (${r.message})` : ''}\n`,
      );
      if (r.findingCount > 0) io.out(findingLines(r.findings, r.findingCount, 5, '    ', `rsdesk runs --dest ${dest} --json lists the first ${r.findings.length}`));
    }
    io.out(`Checkpoint: ${state.checkpoint()?.at ?? 'none'}\n`);
    const needs = state.needsSync();
    if (needs) {
      io.out(
        `Needs a sync: live notifications showed that the changes made from ${needs.from} to ${needs.until} did not reach this mirror, ` +
          `and no Change List could give them (found ${needs.since}). rsdesk sync --dest ${dest} brings it up to date.\n`,
      );
    }
    return 0;
  } finally {
    state.close();
  }
}
