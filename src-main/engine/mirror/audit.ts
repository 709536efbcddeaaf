// Audit (core spec §5.2): compare the mirror with the Source's current Resource List, plus the Change List's changes
// since that list's `at`: in sync / missing / extra (files under the mirror that no listed URI maps to) / changed
// (hash, length or lastmod) / unverifiable. `rehash` reads every local file again instead of trusting the inventory.
import { existsSync, lstatSync, opendirSync, type Dir, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { clip } from '../clip.ts';
import { parseW3cDatetime } from '../documents/datetime.ts';
import type { HashAlgorithm } from '../documents/model.ts';
import { Http } from '../http/client.ts';
import { expectationOf, meterFile, recordedMatches, type Expectation, type FixityResult } from './fixity.ts';
import { ListedResources, type FoundStatus } from './audit-listed.ts';
import { compareChanges, type Timed } from './change-timeline.ts';
import { readResourceList } from './resource-list.ts';
import { readChangeLists } from './change-lists.ts';
import { acquireLock, openLocked } from './lock.ts';
import { caseKey, LocalPaths } from './local-path.ts';
import { keepAsMetadata, metadataOf } from './metadata.ts';
import { explainStateError, MirrorState, STATE_DIR, stateDirOf, UnboundStateError, type Binding, type InventoryRow, type RunRecord, type SavedAudit } from './state.ts';
import { tidyState } from './reclaim.ts';
import type { ProxyEnv } from '../http/dispatcher.ts';
import type { SecretStore } from './secrets.ts';
import { accessOf, sourceHeadersOf, type AskAgain, type Credentials } from './settings.ts';
import { storedPathProblem } from './within-folder.ts';

export interface AuditReport {
  inSync: boolean;
  /** Listed URIs the mirror does not hold. */
  missing: string[];
  /** Local files (relative paths) that no listed URI maps to. */
  extra: string[];
  changed: { uri: string; reason: string }[];
  unverifiable: { uri: string; reason: string }[];
  /** Listed URIs found in sync. */
  inSyncCount: number;
  /**
   * URIs the Source no longer lists whose files the mirror keeps (the deletion policy `keep`): listed apart from the
   * extra files, which the inventory does not know; they do not make the mirror out of sync.
   */
  kept?: string[];
  /** What the audit could not do as it should, and what it did instead (e.g. a Change List it could not read). */
  notes?: string[];
  /**
   * How many differences of each kind there are. The lists above hold the first `reportLimit` of each kind (10,000
   * unless told) and a note says when one was cut; the report saved in the mirror's state holds them all.
   */
  counts?: AuditCounts;
  /** The audit's run, whose whole report the mirror's state keeps. */
  runId?: number;
}

export type AuditCounts = Record<FoundStatus, number>;

/** Differences of each kind an audit's report holds in memory, is sent to the app's window, and `lastAudit` reads. */
export const REPORT_LIMIT = 10_000;

/** The order in which a report lists its differences. */
export const FOUND_ORDER: readonly FoundStatus[] = ['missing', 'extra', 'changed', 'unverifiable', 'kept'];

const KIND_NAMES: Record<FoundStatus, [string, string]> = {
  missing: ['missing resource', 'missing resources'],
  extra: ['extra file', 'extra files'],
  changed: ['changed resource', 'changed resources'],
  unverifiable: ['unverifiable resource', 'unverifiable resources'],
  kept: ['kept resource', 'kept resources'],
};

/** How the note on a report's cut lists begins (the CLI's text, which says it per list, leaves it out). */
export const CUT_NOTE_START = 'This report is too long to show whole';

/** Says which lists of a report hold only their first `limit` items, and where the whole report is; null when none was cut. */
export function cutNote(counts: AuditCounts, limit: number, dest: string): string | null {
  const cut = FOUND_ORDER.filter((s) => counts[s] > limit).map((s) => `the first ${limit.toLocaleString('en-US')} of ${counts[s].toLocaleString('en-US')} ${KIND_NAMES[s][1]}`);
  if (cut.length === 0) return null;
  return (
    `${CUT_NOTE_START}: it shows ${cut.join(', ')}. The whole report is kept with the mirror: ` +
    `the app's Export buttons write every item, and so does rsdesk audit --last --json --dest "${dest}".`
  );
}

export interface AuditOptions {
  dest: string;
  rehash?: boolean;
  token?: string | null;
  /** Credentials given now (else those the mirror keeps in `secretStore`). */
  credentials?: Credentials | null;
  secretStore?: SecretStore;
  /** What to say when the mirror needs credentials this computer does not keep (default: the CLI's options). */
  askAgain?: AskAgain;
  proxyEnv?: ProxyEnv;
  timeoutMs?: number;
  userAgent?: string;
  signal?: AbortSignal;
  /**
   * Called once, synchronously, when every comparison is done and the audit is about to record its report: a cancel
   * after it stops nothing, and the audit ends completed (the app answers such a Cancel false).
   */
  onFinishing?: () => void;
  /** Differences recorded in the run's journal besides the report (which holds them all). Default 1,000. */
  journalLimit?: number;
  /** Differences of each kind the returned report holds (the saved report holds them all). Default REPORT_LIMIT. */
  reportLimit?: number;
}

export async function audit(options: AuditOptions): Promise<AuditReport> {
  const stateDir = stateDirOf(options.dest);
  if (!existsSync(join(stateDir, 'state.sqlite'))) throw new Error(`${options.dest} is not a mirror (no ${STATE_DIR}/state.sqlite)`);
  const lock = acquireLock(stateDir, 'rsdesk audit', options.dest);
  const state = openLocked(lock, () => new MirrorState(stateDir));
  let binding: Binding | null;
  let http: Http;
  try {
    // A run whose process was killed is interrupted, not running (the next sync resumes it all the same).
    state.markInterrupted();
    binding = state.binding();
    // Before a run is recorded in it: the state is to be rebuilt by a sync, not given a failed audit.
    if (binding === null) throw new UnboundStateError(options.dest);
    // The mirror's own settings: its credentials go to its Source's origin only.
    const given = options.credentials !== undefined ? options.credentials : options.token ? { scheme: 'bearer' as const, token: options.token } : undefined;
    const origin = binding ? new URL(binding.capabilityListUrl ?? binding.url).origin : 'null';
    const { settings, credentials } = accessOf(binding?.settings, origin, binding?.id, given, options.secretStore, options.askAgain);
    http = new Http({
      sourceHeaders: sourceHeadersOf(settings, credentials),
      timeoutMs: options.timeoutMs ?? settings.timeoutMs ?? undefined,
      userAgent: options.userAgent,
      proxy: settings.proxy,
      proxyEnv: options.proxyEnv,
    });
  } catch (err) {
    state.close();
    lock.release();
    throw explainStateError(state.path, err);
  }
  const t0 = Date.now();
  let run: RunRecord;
  let listed: ListedResources;
  // Once every comparison is done (onFinishing): a cancel after that changes nothing.
  let decided = false;
  try {
    run = state.startRun('audit', options.rehash ? 'rehash' : 'inventory', binding?.resourceListUrl ?? null);
    try {
      listed = new ListedResources();
    } catch (err) {
      state.endRun(run.id, 'failed', {}, clip((err as Error).message, 500));
      throw err;
    }
  } catch (err) {
    // The lock goes with the error: kept, it held the mirror "in use by rsdesk audit" until this process ended (the
    // app's, for the rest of its session).
    await http.close();
    state.close();
    lock.release();
    throw explainStateError(state.path, err);
  }
  try {
    if (binding === null || binding.resourceListUrl === null) throw new Error(`The mirror has no Resource List to audit against`);
    const notes: string[] = [];
    // Read as a sync reads it: else the audit took the parts of a sloppy Source's index for missing resources, and
    // every mirrored resource for one no longer listed.
    const top = await readResourceList(http, binding.resourceListUrl, { signal: options.signal, onEntry: (e) => listed.add(e), onNote: (n) => void notes.push(n) });
    const at = top.summary.md.at ? parseW3cDatetime(top.summary.md.at) : null;
    if (binding.changeListUrl !== null && at !== null) {
      try {
        await applyChanges(http, binding.changeListUrl, at, listed, options.signal, (n) => void notes.push(n));
      } catch (err) {
        if (options.signal?.aborted) throw err;
        // As a sync does with a Change List it cannot read: carry on, and say what that means.
        notes.push(
          `The Change List ${clip(binding.changeListUrl)} could not be read (${clip((err as Error).message, 300)}); the mirror is compared with the ` +
            `Resource List as of ${top.summary.md.at} alone, so resources changed since may show as changed, missing, extra or kept.`,
        );
      }
    }

    const report: AuditReport = {
      inSync: false,
      missing: [],
      extra: [],
      changed: [],
      unverifiable: [],
      inSyncCount: 0,
      kept: [],
      counts: { missing: 0, extra: 0, changed: 0, unverifiable: 0, kept: 0 },
      ...(notes.length > 0 ? { notes } : {}),
    };
    const shown = options.reportLimit ?? REPORT_LIMIT;
    // Every difference goes to the temporary database (and from there to the saved report); the report returned holds
    // the first `shown` of each kind, and their counts.
    const found = (status: FoundStatus, item: string, reason: string | null = null) => {
      listed.addFound(status, item, reason);
      if (report.counts![status]++ >= shown) return;
      if (status === 'changed' || status === 'unverifiable') report[status].push({ uri: item, reason: reason ?? '' });
      else report[status]!.push(item);
    };
    const paths = new LocalPaths({ sourceUrl: binding.capabilityListUrl ?? binding.resourceListUrl, maps: binding.maps, allowHosts: binding.allowHosts });
    const folders = new FolderCheck(options.dest);
    let outOfScope = 0;
    let firstOutOfScope = '';
    for (const entry of listed.entries()) {
      // Checked between files: with --rehash this loop reads the whole mirror, and a cancel must not wait for it.
      stopIfCancelled(options.signal);
      const row = state.get(entry.loc);
      if (row === null || row.status === 'deleted' || row.status === 'quarantined') {
        const mapped = row === null ? paths.map(entry.loc) : null;
        if (mapped !== null && !mapped.ok) {
          // Never mirrored by the mirror's own rules (another host not allowed, a URI that is not http): a sync skips
          // it and completes, so it is not missing, or the mirror could never be in sync.
          if (outOfScope++ === 0) firstOutOfScope = `${clip(entry.loc)}: ${mapped.reason}`;
          continue;
        }
        found('missing', entry.loc);
        continue;
      }
      listed.addPath(row.path);
      const file = join(options.dest, ...row.path.split('/'));
      const detour = folders.detour(row.path);
      if (detour !== null) {
        // A folder on the way was replaced by a link, or the recorded path leads out: the file there is not in the
        // mirror's folder (and is not read).
        listed.addDamaged(entry.loc);
        found('changed', entry.loc, `${detour}; ${DAMAGED_NOW}`);
        continue;
      }
      let size: number;
      try {
        const stat = lstatSync(file);
        if (!stat.isFile()) {
          // Never what the mirror wrote: a link (maybe leading out of the mirror), a FIFO, a folder.
          listed.addDamaged(entry.loc);
          found('changed', entry.loc, `the local copy is not a regular file (${stat.isSymbolicLink() ? 'a symbolic link' : 'a FIFO, a device or a folder'}); ${DAMAGED_NOW}`);
          continue;
        }
        size = stat.size;
      } catch {
        // Recorded but gone from the folder: the next sync fetches it again, incremental too.
        listed.addDamaged(entry.loc);
        found('missing', entry.loc);
        continue;
      }
      if (row.status === 'damaged' && !options.rehash) {
        found('changed', entry.loc, DAMAGED_BEFORE);
        continue;
      }
      const expected = expectationOf(entry.md);
      if (options.rehash) {
        // The digests recorded when it was mirrored are computed too: what tells damage from a change at the Source.
        const local = await meterLocal(file, expected, Object.keys(row.digests) as HashAlgorithm[], options.signal);
        if (typeof local === 'string') {
          listed.addDamaged(entry.loc);
          found('changed', entry.loc, `${local}; ${DAMAGED_NOW}`);
          continue;
        }
        const harmed = differsFromRecord(local, row);
        if (harmed) listed.addDamaged(entry.loc);
        if (local.status === 'mismatch') found('changed', entry.loc, local.reasons.join('; ') + (harmed ? `; ${DAMAGED_NOW}` : ''));
        else if (harmed) found('changed', entry.loc, `the local file differs from what was mirrored; ${DAMAGED_NOW}`);
        else if (local.status === 'unverifiable') found('unverifiable', entry.loc, local.reasons.join('; '));
        else report.inSyncCount++;
        continue;
      }
      if (expected.problems.length > 0) {
        found('unverifiable', entry.loc, expected.problems.join('; '));
        continue;
      }
      if (row.length !== null && size !== row.length) {
        listed.addDamaged(entry.loc);
        found('changed', entry.loc, `the local file has ${size} bytes, ${row.length} were mirrored; ${DAMAGED_NOW}`);
        continue;
      }
      const hasFixity = expected.length !== undefined || Object.keys(expected.hashes).length > 0;
      if (hasFixity && !recordedMatches(expected, row.length, row.digests)) {
        if (onlyUnrecorded(expected.hashes, row)) {
          // The list gives a hash in an algorithm the mirror did not record (e.g. sha-256 now, md5 then), and nothing
          // recorded disagrees: the file itself tells.
          const local = await meterLocal(file, expected, undefined, options.signal);
          if (typeof local === 'string') {
            listed.addDamaged(entry.loc);
            found('changed', entry.loc, `${local}; ${DAMAGED_NOW}`);
          } else if (local.status === 'verified') report.inSyncCount++;
          else found('changed', entry.loc, local.reasons.join('; '));
          continue;
        }
        found('changed', entry.loc, 'the list gives another hash or length than the mirrored copy');
        continue;
      }
      if (!hasFixity && entry.lastmod !== undefined && !sameTime(entry.lastmod, row.lastmod)) {
        found('changed', entry.loc, `lastmod is ${entry.lastmod}, the mirrored copy's ${row.lastmod ?? 'unknown'}`);
        continue;
      }
      report.inSyncCount++;
    }
    // Metadata mirrored beside a listed resource (--with-metadata) is not extra.
    const described = metadataOf(state);
    for (const uri of described.keys()) {
      const row = state.get(uri);
      if (row !== null && keepAsMetadata(described, uri, (u) => listed.has(u))) listed.addPath(row.path);
    }
    const unreadable: string[] = [];
    for (const rel of walk(options.dest, '', unreadable)) {
      stopIfCancelled(options.signal);
      if (listed.hasPath(rel)) continue;
      const held = state.fileByKey(caseKey(rel));
      const row = held !== undefined && held.path === rel ? state.get(held.uri) : null;
      if (row !== null && row.status !== 'deleted' && row.status !== 'quarantined' && !listed.has(row.uri)) found('kept', row.uri);
      // Extra: a file in a folder the mirror writes into (its host's, a --map's) that no listed resource maps to.
      // A file beside them (a note someone keeps at the top of the mirror's folder) is not the mirror's.
      else if (row !== null || paths.inMappedFolder(rel)) found('extra', rel);
    }
    if (unreadable.length > 0) {
      notes.push(`${unreadable.length} folder${unreadable.length === 1 ? '' : 's'} in the mirror could not be read, so files in ${unreadable.length === 1 ? 'it' : 'them'} that no listed resource maps to are not known (the first: ${unreadable[0]}).`);
    }
    if (outOfScope > 0) {
      notes.push(
        `${outOfScope} listed resource${outOfScope === 1 ? ' is' : 's are'} not mirrored by this mirror's own rules, as a sync skips ${outOfScope === 1 ? 'it' : 'them'}, ` +
          `and ${outOfScope === 1 ? 'was' : 'were'} not compared (the first: ${firstOutOfScope}).`,
      );
    }
    if (notes.length > 0) report.notes = notes;
    const counts = report.counts!;
    const differing = counts.missing + counts.extra + counts.changed + counts.unverifiable;
    report.inSync = differing === 0;
    // From here to its end the audit only records: nothing awaited, so a cancel either came before (and stops it here)
    // or comes after it ended.
    stopIfCancelled(options.signal);
    options.onFinishing?.();
    decided = true;
    for (const uris of listed.damaged()) state.markDamaged(uris);
    const limit = options.journalLimit ?? 1_000;
    // Every difference counts, extra files and unverifiable copies too.
    // The report holds every difference (audit_items); the run's journal the first few of them, so that audits of a
    // Source far out of step do not add a million rows each to state.sqlite.
    const journal = [
      ...[...listed.found('missing', limit)].map((f) => ({ uri: f.item, reason: 'missing' })),
      ...[...listed.found('changed', limit)].map((f) => ({ uri: f.item, reason: `changed: ${f.reason}` })),
      ...[...listed.found('extra', limit)].map((f) => ({ uri: f.item, reason: 'extra: a file that no listed resource maps to' })),
      ...[...listed.found('unverifiable', limit)].map((f) => ({ uri: f.item, reason: `unverifiable: ${f.reason}` })),
    ].slice(0, limit);
    state.transaction(() => state.addToRun(run.id, { unchanged: report.inSyncCount, failed: differing }, journal));
    const seconds = Math.round((Date.now() - t0) / 100) / 10;
    const ended = state.endRun(run.id, 'completed', { audit: (Date.now() - t0) / 1000 }, report.inSync ? 'in sync' : 'not in sync');
    // Kept with its run: the report is there after a restart (the app's Audit tab, `rsdesk audit --last`).
    // Saved whole, from the temporary database: every difference, not only those the returned report holds.
    const items = function* () {
      for (const status of FOUND_ORDER) for (const f of listed.found(status)) yield { status, item: f.item, reason: f.reason };
    };
    state.saveAudit({ runId: run.id, at: ended.endedAt ?? new Date().toISOString(), rehash: options.rehash ?? false, seconds, report }, items());
    report.runId = run.id;
    const cut = cutNote(counts, shown, options.dest);
    if (cut !== null) report.notes = [...(report.notes ?? []), cut];
    return report;
  } catch (err) {
    // A cancelled audit is recorded as such (as a sync is), not as one that failed on whatever it was reading then.
    const cancelled = !decided && options.signal?.aborted === true;
    const why = explainStateError(state.path, err, true);
    try {
      state.endRun(run.id, cancelled ? 'cancelled' : 'failed', { audit: (Date.now() - t0) / 1000 }, cancelled ? 'Cancelled before the end; no report is kept' : clip((why as Error).message, 500));
    } catch {
      // A state that cannot be written (locked, full): the run shows as interrupted once the next run opens it.
    }
    throw cancelled ? new Error('Audit cancelled.') : why;
  } finally {
    listed.close();
    await http.close();
    // Under the lock: the space of the reports dropped for this one goes back to the disk (reclaim.ts).
    const stopped = () => options.signal?.aborted === true;
    if (!stopped()) await tidyState(state.db, state.path, { stopped });
    state.close();
    lock.release();
  }
}

/**
 * The same instant, however written: a Change List and a Resource List (or two versions of one) may write
 * `2024-01-01T00:00:00Z` and `2024-01-01T00:00:00.000+00:00`, and a sync takes those for the same time too.
 */
function sameTime(listed: string, recorded: string | null): boolean {
  if (recorded === null) return false;
  const a = parseW3cDatetime(listed);
  return a !== null ? a === parseW3cDatetime(recorded) : listed === recorded;
}

/**
 * Whether the folders on a file's way are real folders of the mirror, not links: the last name is checked by lstat
 * (a link there is "not a regular file"), but a link in place of a folder would lead the audit (and --rehash's
 * reading) out of the mirror, to files that may well match. Each folder is looked at once.
 */
class FolderCheck {
  readonly #root: string;
  /** Folder (relative path) → what is wrong with it, or null when it is a real folder. */
  readonly #seen = new Map<string, string | null>();

  constructor(root: string) {
    this.#root = root;
  }

  /** What leads the path `rel` out of the mirror's folder (the path itself, or a link on the way), or null. */
  detour(rel: string): string | null {
    const problem = storedPathProblem(rel);
    if (problem !== null) return problem;
    const parts = rel.split('/');
    let dir = '';
    for (const part of parts.slice(0, -1)) {
      dir = dir === '' ? part : `${dir}/${part}`;
      let problem = this.#seen.get(dir);
      if (problem === undefined) {
        problem = null;
        try {
          const stat = lstatSync(join(this.#root, ...dir.split('/')));
          if (stat.isSymbolicLink()) problem = `its folder ${dir} is a symbolic link; the mirror does not read or write through links`;
          else if (!stat.isDirectory()) problem = `${dir} is a file where the mirror has a folder`;
        } catch {
          // Gone: the file is missing, as its own lstat says.
        }
        this.#seen.set(dir, problem);
      }
      if (problem !== null) return problem;
    }
    return null;
  }
}

/**
 * A local file's fixity, or why it could not be read: a read error of the disk (what an audit reading every file
 * again is there to find), a file removed or made unreadable since it was looked at. One such file is a difference
 * of its own, not the end of the audit.
 */
async function meterLocal(file: string, expected: Expectation, alsoCompute: HashAlgorithm[] | undefined, signal: AbortSignal | undefined): Promise<FixityResult | string> {
  try {
    return await meterFile(file, expected, alsoCompute, signal);
  } catch (err) {
    if (signal?.aborted) throw err;
    return `the local copy cannot be read (${clip((err as Error).message, 300)})`;
  }
}

function stopIfCancelled(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new Error('Audit cancelled.');
}

const DAMAGED_NOW = 'the next sync fetches it again';
const DAMAGED_BEFORE = 'an earlier audit found the local file changed since it was mirrored; the next sync fetches it again';

/** Every digest the list gives that the mirror recorded agrees, and some it gives were never recorded. */
function onlyUnrecorded(hashes: Partial<Record<HashAlgorithm, string>>, row: InventoryRow): boolean {
  const algorithms = Object.keys(hashes) as HashAlgorithm[];
  return algorithms.some((a) => row.digests[a] === undefined) && algorithms.every((a) => row.digests[a] === undefined || row.digests[a] === hashes[a]);
}

/** The local bytes are not those verified when the resource was mirrored (another length, or a recorded digest differs). */
function differsFromRecord(local: FixityResult, row: InventoryRow): boolean {
  if (row.length !== null && local.length !== row.length) return true;
  return (Object.keys(local.digests) as HashAlgorithm[]).some((a) => row.digests[a] !== undefined && row.digests[a] !== local.digests[a]);
}

/**
 * Changes at or after `at` bring the list up to date: deletions drop a URI, creations and updates replace it. Read
 * as a sync reads them (change-lists.ts).
 */
async function applyChanges(http: Http, url: string, at: number, listed: ListedResources, signal: AbortSignal | undefined, onUnread: (note: string) => void): Promise<void> {
  const changes: Timed[] = [];
  // What it could not read is said in the report (a list skipped as a loop): before, the audit said nothing of such a
  // list, and the resources it changed showed as changed or missing with no reason given.
  await readChangeLists(http, url, {
    since: at,
    signal,
    onChange: (change) => void changes.push(change),
    onUnread,
    loopMeans: (one) => `so the mirror is compared without ${one ? 'its' : 'their'} changes: resources ${one ? 'it' : 'they'} changed may show as changed, missing or extra.`,
  });
  changes.sort(compareChanges);
  for (const { entry: e } of changes) {
    if (e.md.change === 'deleted') listed.delete(e.loc);
    else if (e.md.change === 'created' || e.md.change === 'updated') listed.set(e);
  }
}

/**
 * Relative paths of every file in the mirror's visible tree. A folder is read an entry at a time (a folder of a
 * million files is never held whole) and one at a time: its files are yielded as they are read, and the names of its
 * subfolders kept to be walked once it is closed (so no more than one folder is open, however deep the tree).
 */
function* walk(root: string, rel: string, unreadable: string[]): Generator<string> {
  let dir: Dir;
  try {
    dir = opendirSync(join(root, rel));
  } catch (err) {
    // A folder inside that cannot be read (no permission, removed meanwhile) is said, not the end of the audit.
    if (rel === '') throw err;
    unreadable.push(`${rel} (${clip((err as Error).message, 200)})`);
    return;
  }
  const folders: string[] = [];
  try {
    for (;;) {
      let d: Dirent | null;
      try {
        d = dir.readSync();
      } catch (err) {
        // Cut off part way (a read error of the disk, the folder removed): what was read is compared, the rest said.
        if (rel === '') throw err;
        unreadable.push(`${rel} (${clip((err as Error).message, 200)})`);
        break;
      }
      if (d === null) break;
      if (rel === '' && d.name === STATE_DIR) continue;
      const path = rel === '' ? d.name : `${rel}/${d.name}`;
      if (d.isDirectory()) folders.push(path);
      else yield path;
    }
  } finally {
    dir.closeSync();
  }
  for (const folder of folders) yield* walk(root, folder, unreadable);
}

/**
 * The newest audit report kept in the mirror's state (null when it was never audited, or only before reports were
 * kept), with the first `limit` differences of each kind (the counts give them all; a note says what was cut).
 */
export function lastAudit(dest: string, limit = REPORT_LIMIT): SavedAudit | null {
  const stateDir = stateDirOf(dest);
  if (!existsSync(join(stateDir, 'state.sqlite'))) throw new Error(`${dest} is not a mirror (no ${STATE_DIR}/state.sqlite)`);
  const state = MirrorState.forReading(stateDir);
  try {
    const saved = state.audit(undefined, limit);
    const cut = saved?.report.counts ? cutNote(saved.report.counts, limit, dest) : null;
    if (saved !== null && cut !== null) saved.report.notes = [...(saved.report.notes ?? []), cut];
    return saved;
  } finally {
    state.close();
  }
}

/** Every difference of one kind in the saved report of run `runId`, in the order found, read a page at a time. */
export function* savedAuditItems(dest: string, runId: number, status: FoundStatus | 'note'): Generator<{ item: string; reason: string | null }> {
  const state = MirrorState.forReading(stateDirOf(dest));
  try {
    yield* state.auditItems(runId, status);
  } finally {
    state.close();
  }
}

/** A saved report read from one snapshot of the mirror's state (see readSavedAudit). */
export interface SavedAuditReader {
  /** Its time and counts (its lists are empty: `items` reads them). */
  audit: SavedAudit;
  /** What the audit had to do without, as saved with it. */
  notes: string[];
  items(status: FoundStatus): Generator<{ item: string; reason: string | null }>;
  close(): void;
}

/**
 * The saved report of run `runId`, read a page at a time from one snapshot of the mirror's state: an audit that ends
 * meanwhile and drops the oldest kept report cannot cut it half-way. null when the mirror no longer keeps that report
 * (newer audits replaced it). The caller closes it.
 */
export function readSavedAudit(dest: string, runId: number): SavedAuditReader | null {
  const stateDir = stateDirOf(dest);
  if (!existsSync(join(stateDir, 'state.sqlite'))) throw new Error(`${dest} is not a mirror (no ${STATE_DIR}/state.sqlite)`);
  const state = MirrorState.forReading(stateDir);
  let reading = false;
  const close = () => {
    if (reading) state.db.exec('COMMIT');
    reading = false;
    state.close();
  };
  try {
    state.db.exec('BEGIN');
    reading = true;
    const saved = state.audit(runId, 0);
    if (saved === null) {
      close();
      return null;
    }
    const notes = [...state.auditItems(runId, 'note')].map((n) => n.item);
    return { audit: saved, notes, items: (status) => state.auditItems(runId, status), close };
  } catch (err) {
    close();
    throw err;
  }
}
