// Applies one listed resource to the mirror: decide whether its local copy already matches (no request at all),
// ask conditionally when the inventory knows its validators, else download it (mirror locations by `pri`, then
// `loc`) through the fixity meter into a temporary file that the durable writer puts in place; and apply deletions by
// the mirror's policy. Counts and failures reach the run journal in the same transaction as the rows.
import { existsSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, truncateSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { clip } from '../clip.ts';
import { parseW3cDatetime } from '../documents/datetime.ts';
import type { Entry } from '../documents/model.ts';
import { NetworkError, formatDuration, toNetworkError } from '../http/errors.ts';
import { eachChunk } from './body.ts';
import { checkFolders, storedPathProblem } from './within-folder.ts';
import { hasDiskFullCode, isDiskFull } from './disk-full.ts';
import { DurableWriter, type TempFile } from './durable.ts';
import { SourceRefusing } from './refusal-watch.ts';
import { FetchFailure, httpDate, ResourceSignals, type Fetcher } from './fetcher.ts';
import { slowBodyWindow } from './slow-body.ts';
import { FixityMeter, expectationOf, judge, meterFile, promisesAnything, recordedMatches, type Digests, type Expectation, type FixityResult } from './fixity.ts';
import { LocalPaths, PathClaims, caseKey } from './local-path.ts';
import { requestUri } from './uri.ts';
import { RunInventory } from './run-inventory.ts';
import { ListedUris } from './listed-uris.ts';
import type { InventoryRow, InventoryStatus, MirrorState, RunCounts } from './state.ts';

export type DeletePolicy = 'keep' | 'delete' | 'quarantine';
export const QUARANTINE_DIR = 'quarantine';

export interface Failure {
  uri: string;
  reason: string;
  /**
   * The entry itself is at fault (breaks a MUST of the spec: no loc, an unknown change, a malformed hash), or the
   * mirror's own rules leave it out (a URI on a host not allowed): retrying cannot help, so it does not hold the
   * checkpoint back. (The journal records it like any other failure.)
   */
  permanent?: boolean;
  /**
   * Not mirrored for want of disk space (a dump package that did not fit): fetching again helps only once space is
   * freed, and a retry, which fetches one by one from the lists, not at all for a Source that offers only dumps.
   */
  needsRoom?: boolean;
}

export interface ApplyOptions {
  dest: string;
  stateDir: string;
  state: MirrorState;
  runId: number;
  fetcher: Fetcher;
  paths: LocalPaths;
  deletePolicy: DeletePolicy;
  dryRun: boolean;
  /** The least time between the starts of two requests, across all those in flight (politeness). */
  delayMs?: number;
  signal?: AbortSignal;
  /** A pause: a resource still waiting for its turn (a delay between requests) is left for the resumed run. */
  pauseSignal?: AbortSignal;
  /** Batch size of durable writes. */
  batchSize?: number;
  /** URIs the run's inventory lookups remember before they ask the store (run-inventory.ts; tests set a few). */
  inMemoryUris?: number;
  /** Failures `failures` lists one by one (default MAX_KEPT_FAILURES; tests set a few). */
  keptFailures?: number;
  onProgress?: (counts: RunCounts) => void;
  /** Called when one resource is done (fetched, skipped or failed), before its batch is durable: live progress. */
  onSettled?: () => void;
  /** A resource's file could not be written for a full disk: the caller stops the run (through `signal`). */
  onDiskFull?: () => void;
}

interface Pending {
  row: InventoryRow | null;
  /** Its file replaces a copy the inventory holds: that copy's status, put back if the new one cannot be put in place. */
  replaces?: InventoryStatus;
  /** Remove this URI's row (a deletion). */
  removeUri?: string;
  /** Run in the transaction that commits this record, and so everything staged before it. */
  onCommit?: () => void;
  /** The deletion's file, at this path in the mirror, removed (or quarantined) as its batch is put in place. */
  removes?: { path: string; status: InventoryStatus };
  counts: Partial<RunCounts>;
  failure?: Failure;
}

/** URIs a run's result names of those it kept or would remove (the rest are counted). */
export const MAX_NAMED = 10_000;

/** Failures of entries that break the spec listed one by one in a run; the rest are counted. */
export const MAX_LISTED_ENTRY_FAILURES = 1000;

/**
 * Failures of a run its Applier holds one by one (for its result and messages); the rest are counted, and the run
 * journal holds them all (state.failuresPast). Held all, a run of 200,000 failures peaked at 482 MB.
 */
export const MAX_KEPT_FAILURES = 10_000;

export class Applier {
  readonly counts: RunCounts = { created: 0, updated: 0, deleted: 0, unchanged: 0, skipped: 0, failed: 0, bytes: 0 };
  /** The run's failures in the order recorded: the first `keptFailures` (MAX_KEPT_FAILURES) of `failureCount`. */
  readonly failures: Failure[] = [];
  /**
   * This part's failures a later run may mend, the first `keptFailures` of them: what the live side's hold on the
   * checkpoint lists (checkpoint.ts). Kept apart from `failures`, where failures that never mend could take every place.
   */
  readonly retriableKept: Failure[] = [];
  /**
   * The run's failures the journal held when this run part began (a resumed run's earlier part left them): those
   * after them are this part's, `failures` and the rest (state.failuresPast). Null in a dry run, which records none.
   */
  readonly journalBefore: number | null;
  /**
   * URIs a keep policy left in place (what `delete` would have removed): the first MAX_NAMED of them, and
   * `wouldDeleteCount` counts them all (a Source that stopped listing millions would otherwise fill the memory).
   */
  readonly wouldDelete: string[] = [];
  wouldDeleteCount = 0;
  /**
   * URIs a dry run would have deleted or quarantined by its policy: what a dry run is for is to name them (the first
   * MAX_NAMED; `wouldRemoveCount` counts them all).
   */
  readonly wouldRemove: string[] = [];
  wouldRemoveCount = 0;

  /** Read by what sweeps the resources a Source no longer lists (unlisted.ts), which may hold them back. */
  get deletePolicy(): DeletePolicy {
    return this.#o.deletePolicy;
  }

  get dryRun(): boolean {
    return this.#o.dryRun;
  }
  /** Live progress, ahead of the durable counts: resources done and bytes fetched, committed or not yet. */
  readonly live: RunCounts & { settled: number } = { settled: 0, bytes: 0, created: 0, updated: 0, deleted: 0, unchanged: 0, skipped: 0, failed: 0 };
  /**
   * Inventory rows this run added less those it removed, committed or not yet: what the mirror holds moves by this
   * much. Not `created − deleted`: a file an interrupted run left is recorded as unchanged, an unverifiable one as
   * failed, and both add a row.
   */
  #inventoryChange = 0;
  /** The last failure, as soon as it happens: what the progress shows (a Source that went down says so at once). */
  #latestFailure: Failure | null = null;
  #carriedFailures = 0;
  #failureCount = 0;
  /** Failures recorded by this run part that a later run may mend (not `permanent`). */
  #retriable = 0;
  /** Their URIs, which hold the checkpoint back (in a temporary database past `inMemoryUris`). */
  readonly #retriableUris: ListedUris;
  readonly #keptFailures: number;
  #roomFailures = 0;
  /** Failures of entries that break the spec in this run, listed one by one and past those (see `fail`). */
  #listedEntryFailures = 0;
  #unlistedEntryFailures = 0;
  /** Unlisted ones counted and not yet staged. */
  #unlistedPending = 0;
  readonly #o: ApplyOptions;
  readonly #claims: PathClaims;
  /** Inventory lookups, answered without a query where this run knows the answer (run-inventory.ts). */
  readonly #rows: RunInventory;
  readonly #writer: DurableWriter<Pending>;
  /** URIs of new files in the batch being put in place, until it is committed. */
  readonly #placing = new Set<string>();
  /** Paths of files an interrupted run put in place and did not record (a dry run only: a real one records them). */
  readonly #leftInPlace: Set<string>;
  readonly #now = new Date().toISOString();
  /** Each download's signal: the run's, and the resource's deadline. */
  readonly #signals: ResourceSignals;
  readonly #pacer: Pacer | null;
  /** Damaged copies being repaired (`repair`): what to say when the Source no longer has one. */
  readonly #repairs = new Map<string, (reason: string) => void>();
  /**
   * One URI may rightly change more than once in this run (a Change Dump's bitstreams in turn, then the Change List):
   * the shortcut that skips what this run did already (for a resumed run) is then off.
   */
  repeatable = false;

  constructor(options: ApplyOptions) {
    this.#o = options;
    this.#keptFailures = options.keptFailures ?? MAX_KEPT_FAILURES;
    this.#retriableUris = new ListedUris(options.inMemoryUris);
    this.journalBefore = options.dryRun ? null : options.state.failureCount(options.runId);
    // Before the inventory is first asked (RunInventory notes whether it starts empty).
    this.#leftInPlace = takeOverLeftInPlace(options);
    // Paths the inventory holds are looked up as needed, never loaded whole (a mirror may hold millions).
    this.#rows = new RunInventory(options.state, options.inMemoryUris);
    this.#signals = new ResourceSignals(options.fetcher.deadlineMs, options.signal, slowBodyWindow(options.fetcher.timeoutMs));
    // A pause ends a wait for a turn too (else it waits for every turn already taken); a cancel, as ever.
    const stops = [options.signal, options.pauseSignal].filter((x): x is AbortSignal => x !== undefined);
    this.#pacer = options.delayMs ? new Pacer(options.delayMs, stops.length > 1 ? AbortSignal.any(stops) : stops[0]) : null;
    this.#claims = new PathClaims(this.#rows);
    this.#rows.attach(this.#claims);
    this.#writer = new DurableWriter<Pending>({
      tmpDir: join(options.stateDir, 'tmp'),
      root: options.dest,
      batchSize: options.batchSize,
      commit: (done, failed) => this.#commit(done, failed),
      // A crash between putting a new version in place and recording it must not leave the old version's row saying
      // "verified": it says damaged, and the next sync fetches it again.
      // So with a deletion: its row says damaged before its file goes, in the same transaction, and the run that
      // resumes applies it again.
      beforeRename: (records, others) => {
        const removals = others.filter((r) => r.removes !== undefined);
        const replaced = records.filter((r) => r.replaces !== undefined && r.row !== null).map((r) => r.row!.uri);
        const marked = [...replaced, ...removals.map((r) => r.removeUri!)];
        if (marked.length > 0 && !options.dryRun) options.state.markDamaged(marked);
        for (const r of records) if (r.replaces === undefined && r.row !== null) this.#placing.add(r.row.uri);
        for (const r of removals) this.#remove(r);
      },
      // Nor leave a new file that no row knows, which the next run would take for someone else's and leave alone.
      ...(options.dryRun ? {} : { intentFile: join(options.stateDir, PLACING_FILE), intent: placingLines }),
    });
  }

  #commit(done: Pending[], failed: { record: Pending; reason: string }[]): void {
    const state = this.#o.state;
    for (const p of done) if (p.row) this.#placing.delete(p.row.uri);
    for (const f of failed) if (f.record.row) this.#placing.delete(f.record.row.uri);
    const add: Partial<RunCounts> = {};
    const failures: Failure[] = [];
    const sum = (c: Partial<RunCounts>) => {
      for (const k in c) add[k as keyof RunCounts] = (add[k as keyof RunCounts] ?? 0) + c[k as keyof RunCounts]!;
    };
    state.transaction(() => {
      for (const p of done) {
        if (p.row) {
          state.put(p.row);
          this.#rows.recorded(p.row.uri, p.row.path);
        }
        if (p.removeUri) state.remove(p.removeUri);
        // Its row is gone (or, its file kept, back as it was): the store answers for its path again.
        if (p.removes) this.#rows.removalSettled(p.removes.path);
        p.onCommit?.();
        sum(p.counts);
        if (p.failure) failures.push(p.failure);
      }
      for (const f of failed) {
        sum({ failed: 1 });
        failures.push({ uri: f.record.row?.uri ?? '', reason: f.reason });
      }
      // A dry run has no run in the journal (its counts and failures are only reported).
      if (!this.#o.dryRun) state.addToRun(this.#o.runId, add, failures);
      // A copy that could not be put in place over its older one: that one was marked damaged before the renames
      // (`beforeRename`) and is still there as it was.
      for (const f of failed) if (f.record.replaces !== undefined && f.record.row !== null) state.setStatus(f.record.row.uri, f.record.replaces);
    });
    if (failures.length > 0) this.#latestFailure = failures.at(-1)!;
    for (const [k, v] of Object.entries(add) as [keyof RunCounts, number][]) this.counts[k] += v;
    for (const f of failures) {
      this.#failureCount++;
      // Counted here, not from `failures`, which holds only the first keptFailures: past them, the run's message
      // said fewer failed for want of disk space than did (and with none among the first, suggested a retry).
      if (f.needsRoom === true) this.#roomFailures++;
      if (this.failures.length < this.#keptFailures) this.failures.push(f);
      if (!f.permanent) {
        this.#retriable++;
        this.#retriableUris.add(f.uri);
        if (this.retriableKept.length < this.#keptFailures) this.retriableKept.push(f);
      }
    }
    this.#o.onProgress?.({ ...this.counts });
  }

  /**
   * A resumed run goes on counting from what its interrupted part recorded, so its result, its progress and its
   * journal give one set of numbers (the part before already is in the journal: nothing is recorded again).
   */
  carry(prior: RunCounts): void {
    for (const k of ['created', 'updated', 'deleted', 'unchanged', 'skipped', 'failed', 'bytes'] as const) {
      this.counts[k] += prior[k];
      this.live[k] += prior[k];
    }
  }

  /** Counts (and a failure) with no file: recorded with the next batch. */
  #note(counts: Partial<RunCounts>, failure?: Failure, row: InventoryRow | null = null): void {
    this.#count(counts);
    if (failure !== undefined) this.#latestFailure = failure;
    this.#writer.stage({ temp: null, final: '', record: { row, counts, failure } });
  }

  /**
   * Folders that did not exist when this run first looked: whatever they hold now, this run put there, so a new
   * resource's path in one needs no look for a copy left by an earlier run (one system call fewer per file in a
   * fresh mirror). Bounded; forgetting only costs that look again.
   */
  readonly #folderExisted = new Map<string, boolean>();

  #mayHoldOlderFiles(path: string): boolean {
    const folder = dirname(path);
    let existed = this.#folderExisted.get(folder);
    if (existed === undefined) {
      if (this.#folderExisted.size >= 100_000) this.#folderExisted.clear();
      existed = existsSync(folder);
      this.#folderExisted.set(folder, existed);
    }
    return existed;
  }

  /** A file with no row that is still the mirror's own: being put in place by this run, or left by a stopped one. */
  #ours(uri: string, rel: string): boolean {
    return this.#placing.has(uri) || this.#leftInPlace.has(rel);
  }

  /** The inventory held no row when this run began: whatever it holds now, this run recorded. */
  get startedEmpty(): boolean {
    return this.#rows.startedEmpty;
  }

  /** Applies a created/updated (or listed) resource. Never rejects: a failure is recorded against its URI. */
  async apply(entry: Entry): Promise<void> {
    const uri = entry.loc;
    try {
      await this.#apply(entry);
    } catch (err) {
      // A cancelled run: what was cut off is not a failure of the resource; the next run fetches it. Nor is one a
      // pause stopped before it started.
      if (this.#o.signal?.aborted || err instanceof NotStarted || err instanceof SourceRefusing) return;
      const reason = err instanceof Error ? err.message : String(err);
      this.#note({ failed: 1 }, { uri, reason: clip(reason, 500) });
    }
    this.settledOne();
    await this.#writer.drained();
  }

  /**
   * One more resource (or change) done, for the live progress. `apply` counts its own; writers that come through
   * `prepare`/`stageFile`/`fail`/`delete` (dump packages, deletions) call it once per entry they finish.
   */
  settledOne(): void {
    this.live.settled++;
    this.#o.onSettled?.();
  }

  async #apply(entry: Entry): Promise<void> {
    const o = this.#o;
    const uri = entry.loc;
    const existing = this.#rows.get(uri);
    const live = existing !== null && existing.status !== 'deleted' && existing.status !== 'quarantined' ? existing : null;
    const expected = expectationOf(entry.md);
    // Done already in this run (a resumed run): never fetched twice, unless the Source changed it again since.
    if (live && live.runId === o.runId && !this.repeatable && !anotherVersion(entry, expected, live)) return;
    let rel: string;
    if (live) {
      rel = live.path;
      const problem = storedPathProblem(rel);
      if (problem !== null) throw new Error(problem);
    } else {
      const mapped = o.paths.map(uri);
      if (!mapped.ok) {
        this.#note({ skipped: 1 }, { uri, reason: `not mirrored: ${mapped.reason}`, permanent: true });
        return;
      }
      rel = o.dryRun ? mapped.path : this.#claims.claim(mapped.path, uri);
    }
    const final = join(o.dest, rel);
    const lastmodMs = entry.lastmod ? (parseW3cDatetime(entry.lastmod) ?? undefined) : undefined;
    const base = { uri, path: rel, lastmod: entry.lastmod ?? null, type: entry.md.type ?? null, runId: o.runId };

    // The local copy already matches what the list promises: no request at all.
    if (live && recordedMatches(expected, live.length, live.digests) && intact(live, final)) {
      this.#note({ unchanged: 1 }, undefined, o.dryRun ? null : { ...live, ...base, etag: live.etag, lastModified: live.lastModified, verifiedAt: live.verifiedAt });
      return;
    }
    if (!live && this.#mayHoldOlderFiles(final) && isFile(final)) {
      // A file no row knows: one this run is putting in place (the URI is listed twice), one an interrupted run left
      // (dry run), or someone else's, which is never replaced. Byte for byte what the list promises (the files of a
      // mirror whose state was lost, say), it is taken as the copy.
      const local = Object.keys(expected.hashes).length > 0 ? await meterFile(final, expected) : null;
      if (local?.status === 'verified') {
        this.#note({ unchanged: 1 }, undefined, o.dryRun ? null : row(base, local, null, null, this.#now));
        if (!o.dryRun) this.#inventoryChange++;
        return;
      }
      if (!this.#ours(uri, rel)) {
        this.#note({ failed: 1 }, { uri, reason: foreign(rel) });
        return;
      }
    }
    if (live?.status === 'damaged' && Object.keys(expected.hashes).length > 0 && isFile(final)) {
      // A file an interrupted run put in place before it recorded it, or a damaged copy since mended: checked, not
      // downloaded.
      const local = await meterFile(final, expected);
      if (local.status === 'verified') {
        // Put there by an interrupted part of this run (a new file it listed in `placing`: a row with nothing
        // recorded; or a new version over the recorded one): counted as that part would have counted it.
        const counted = leftUnrecorded(live) ? 'created' : recordedMatches(expected, live.length, live.digests) ? 'unchanged' : 'updated';
        this.#note({ [counted]: 1 }, undefined, o.dryRun ? null : row(base, local, live.etag, live.lastModified, this.#now));
        return;
      }
    }
    if (o.dryRun) {
      this.#note(live ? { updated: 1 } : { created: 1 });
      return;
    }

    const conditional: Record<string, string> = {};
    // Asked conditionally only while the local copy is as it was mirrored: a "not modified" says nothing of a file
    // damaged since (another size, or bytes an audit found changed).
    if (live && intact(live, final)) {
      if (live.etag) conditional['if-none-match'] = live.etag;
      if (live.lastModified) conditional['if-modified-since'] = live.lastModified;
    }
    // Its own address as its Source spelled it (uri.ts), which the row's `uri` may not be.
    const own = requestUri(entry);
    const locations = entry.links.length === 0 ? [own] : [...duplicates(entry), own];
    const problems: string[] = [];
    for (const location of locations) {
      const useConditional = location === own && !problems.includes('304') ? conditional : {};
      const got = await this.#download(location, useConditional, expected, lastmodMs, own);
      if (got.kind === 'not-modified') {
        // The Source says unchanged; trusted only when nothing the list promises contradicts the recorded copy.
        const fits = live !== null && (Object.keys(expected.hashes).length === 0 || recordedMatches(expected, live.length, live.digests));
        if (fits) {
          if (expected.problems.length > 0) {
            // Not modified, but the entry's hash or length cannot be checked: kept, and said.
            const reason = `kept but not verified: ${expected.problems.join('; ')}`;
            this.#note({ failed: 1 }, { uri, reason, permanent: true }, { ...live, ...base, status: 'unverifiable', verifiedAt: this.#now });
            return;
          }
          this.#note({ unchanged: 1 }, undefined, { ...live, ...base, verifiedAt: this.#now });
          return;
        }
        problems.push('304');
        const again = await this.#download(own, {}, expected, lastmodMs, own);
        if (again.kind === 'file') return this.#stage(again, final, undefined, base, live);
        if (again.kind === 'failed') problems.push(again.reason);
        else problems.push('the server answered 304 Not Modified to a request that was not conditional');
        break;
      }
      // The mtime was given as the file was written.
      if (got.kind === 'file') return this.#stage(got, final, undefined, base, live);
      // Named so a reader tells the Source's other copies (rel="duplicate") from the resource's own address.
      problems.push(location !== own ? `its copy at ${location}: ${got.reason}` : locations.length > 1 ? `its own address: ${got.reason}` : got.reason);
    }
    const reasons = problems.filter((p) => p !== '304');
    const gone = this.#repairs.get(uri);
    if (gone !== undefined && /^HTTP (404|410) /.test(reasons.at(-1) ?? '')) {
      // A damaged copy of what the Source no longer has: nothing to fetch it from, and nothing a retry would mend.
      gone(reasons.at(-1)!);
      this.#note({ skipped: 1 });
      return;
    }
    this.#note({ failed: 1 }, { uri, reason: clip(reasons.join('; '), 1000) });
  }

  /**
   * Fetches again a copy an audit found damaged, as `apply` does; when the Source no longer has it (404, 410) that is
   * said through `onGone`, counted as skipped and not as failed, and the copy stays marked damaged.
   */
  async repair(entry: Entry, onGone: (reason: string) => void): Promise<void> {
    this.#repairs.set(entry.loc, onGone);
    try {
      await this.apply(entry);
    } finally {
      this.#repairs.delete(entry.loc);
    }
  }

  #stage(got: Downloaded & { kind: 'file' }, final: string, mtimeMs: number | undefined, base: RowBase, live: InventoryRow | null): void {
    const unverifiable = got.fixity.status === 'unverifiable';
    const record: Pending = {
      row: row(base, got.fixity, got.etag, got.lastModified, this.#now),
      replaces: live?.status,
      // A hash or length that cannot be checked (malformed, an unknown algorithm): the bytes are kept, marked
      // unverifiable in the inventory, and the entry is reported as failed with the reason.
      counts: { [unverifiable ? 'failed' : live && !leftUnrecorded(live) ? 'updated' : 'created']: 1, bytes: got.fixity.length },
      failure: unverifiable ? { uri: base.uri, reason: `kept but not verified: ${got.fixity.reasons.join('; ')}`, permanent: true } : undefined,
    };
    this.#count(record.counts);
    if (!live) this.#inventoryChange++;
    this.#writer.stage({ temp: got.temp, final, mtimeMs, record, bytes: got.fixity.length, written: got.written });
  }

  /** `home`: the resource's own address; a copy elsewhere (rel="duplicate") may not reach further inside a network. */
  async #download(url: string, headers: Record<string, string>, expected: Expectation, mtimeMs: number | undefined, home: string): Promise<Downloaded> {
    const o = this.#o;
    // Before the resource's deadline starts: a turn may be long in coming with a long delay and many in flight.
    const paced = this.#pacer?.turn();
    if (paced !== undefined) {
      try {
        await paced;
      } catch (err) {
        if (o.pauseSignal?.aborted && !o.signal?.aborted) throw new NotStarted();
        throw err;
      }
    }
    const inFlight = this.#signals.start();
    const { signal } = inFlight;
    let file: TempFile | null = null;
    try {
      const response = await o.fetcher.get(url, headers, signal, home);
      if (response.status === 304) {
        response.body.destroy();
        return { kind: 'not-modified' };
      }
      if (response.status < 200 || response.status > 299) {
        response.body.destroy();
        return { kind: 'failed', reason: `HTTP ${response.status} for ${clip(response.url)}` };
      }
      // A part, or a delta, of the representation (the mirror asks for neither): kept as the whole file where the list
      // gives no hash or length to tell.
      if (response.status === 206 || response.status === 226) {
        response.body.destroy();
        return { kind: 'failed', reason: `HTTP ${response.status} for ${clip(response.url)}: the server sent ${response.status === 206 ? 'a part' : 'changes'} of the resource, not the resource, though the whole was asked for; not kept` };
      }
      // None is asked for (no Accept-Encoding), and the bytes are kept as sent: a .gz stored with Content-Encoding: gzip
      // is listed with the hash of those bytes, and a coded bomb stays harmless. When they do not match the list, the
      // reason names the coding.
      const coding = (response.headers['content-encoding'] ?? '').trim().toLowerCase();
      const coded = coding !== '' && coding !== 'identity' ? ` (the server sent it with Content-Encoding: ${clip(coding, 40)}, which was not asked for and is not decoded)` : '';
      const declared = response.headers['content-length'];
      if (expected.length !== undefined && declared !== undefined && !coded && Number(declared) !== expected.length) {
        response.body.destroy();
        return { kind: 'failed', reason: `the server announces ${declared} bytes, the list says ${expected.length}; not downloaded` };
      }
      inFlight.receiving(expected.length ?? (declared !== undefined && /^\d{1,15}$/.test(declared.trim()) ? Number(declared) : undefined));
      const meter = new FixityMeter(expected);
      file = this.#writer.tempFile(mtimeMs);
      const into = file;
      await eachChunk(response.body, (chunk) => {
        inFlight.received(chunk.length);
        meter.update(chunk);
        // (eachChunk destroys the body when this throws.)
        if (meter.overLength) throw new FetchFailure(`more bytes than the ${expected.length!.toLocaleString('en')} the list gives; stopped${coded}`);
        return into.add(chunk);
      });
      const fixity = meter.finish();
      if (fixity.status === 'mismatch') throw new FetchFailure(`fixity mismatch: ${fixity.reasons.join('; ')}${coded}`);
      // Not awaited: the next download starts while this file is written; its batch waits for it (and fails it alone
      // if the disk refuses it).
      const written = file.close(true);
      written.catch((err: unknown) => {
        if (isDiskFull(err)) o.onDiskFull?.();
      });
      const result: Downloaded = { kind: 'file', temp: file.path, written, fixity, etag: response.headers.etag ?? null, lastModified: httpDate(response.headers['last-modified']) };
      file = null;
      return result;
    } catch (err) {
      // The resources after it would each fail on the same full disk: the run stops, and this one is fetched again by
      // the next run, as one cut off by a cancel is.
      // (By its code: the message of a failed fetch may hold what the Source wrote.)
      if (hasDiskFullCode(err)) o.onDiskFull?.();
      // The run pauses for a Source that refused everything too long: not this resource's failure, the resumed run's.
      if (o.signal?.aborted || err instanceof SourceRefusing) throw err;
      // The deadline or the rate check stopped it: their reason, not the cut-off body's.
      const reason = signal.aborted && !(err instanceof FetchFailure)
        ? (signal.reason instanceof NetworkError ? signal.reason.message : `did not finish within ${formatDuration(o.fetcher.deadlineMs)}`)
        : err instanceof FetchFailure || err instanceof NetworkError ? err.message : toNetworkError(err, url, o.fetcher.timeoutMs, 'body').message;
      return { kind: 'failed', reason };
    } finally {
      inFlight.done();
      if (file !== null) await file.discard();
    }
  }

  /**
   * Records a failure of an entry that cannot be applied at all (`permanent`: the entry itself breaks the spec).
   * Past the first MAX_LISTED_ENTRY_FAILURES of those in a run, they are counted and not listed one by one: 50 MB of
   * "<url/>" is eight million entries without a loc, which made as many failure rows, held in memory as well.
   */
  fail(uri: string, reason: string, permanent = false): void {
    if (permanent) {
      if (this.#listedEntryFailures >= MAX_LISTED_ENTRY_FAILURES) return this.failUnlisted(1);
      this.#listedEntryFailures++;
    }
    this.#note({ failed: 1 }, { uri, reason, ...(permanent ? { permanent } : {}) });
  }

  /** Records a resource (or a package) not mirrored for want of disk space (Failure.needsRoom). */
  failForRoom(uri: string, reason: string): void {
    this.#note({ failed: 1 }, { uri, reason, needsRoom: true });
  }

  /** Failures of this part of the run for want of disk space (among `retriableFailures`). */
  get roomFailures(): number {
    return this.#roomFailures;
  }

  /**
   * Entries that break the spec past the listed ones: failed, not listed, and recorded in the journal a few thousand
   * at a time (a record each, that is a transaction per batch of them, took 20 s for six million).
   */
  failUnlisted(count: number): void {
    if (count <= 0) return;
    this.#unlistedEntryFailures += count;
    this.#count({ failed: count });
    this.#unlistedPending += count;
    if (this.#unlistedPending >= 10_000) this.#stageUnlisted();
  }

  #stageUnlisted(): void {
    if (this.#unlistedPending === 0) return;
    this.#writer.stage({ temp: null, final: '', record: { row: null, counts: { failed: this.#unlistedPending } } });
    this.#unlistedPending = 0;
  }

  /** Failed entries that break the spec and are not among `failures` (past the first MAX_LISTED_ENTRY_FAILURES). */
  get unlistedEntryFailures(): number {
    return this.#unlistedEntryFailures;
  }

  /** Failures that a later run may mend (network, HTTP, fixity): they hold the checkpoint back. */
  get retriableFailures(): number {
    return this.#carriedFailures + this.#retriable;
  }

  /** Whether `retriableKept` lists every failure of this part that a later run may mend. */
  get retriableAllKept(): boolean {
    return this.retriableKept.length === this.#retriable;
  }

  /** Failures this run part recorded, listed in `failures` or not. */
  get failureCount(): number {
    return this.#failureCount;
  }

  /** Whether this run part recorded a failure of `uri` that a later run may mend. */
  failedRetriably(uri: string): boolean {
    return this.#retriableUris.has(uri);
  }

  /** Lets go of what the run kept of its failures (a temporary database, past `inMemoryUris` of them). */
  close(): void {
    this.#retriableUris.close();
  }

  /** Failures a resumed dump run's interrupted part recorded in packages it does not read again (see `carry`). */
  carryFailures(n: number): void {
    this.#carriedFailures += n;
  }

  /** A write of this run found the disk full (a dump's bitstream): the caller stops the run. */
  diskFull(): void {
    this.#o.onDiskFull?.();
  }

  /** Applies the deletion policy to a URI the Source no longer has; false when the mirror holds no copy of it. */
  delete(uri: string): boolean {
    const o = this.#o;
    const live = this.#rows.get(uri);
    if (!live || live.status === 'deleted' || live.status === 'quarantined') return false;
    if (o.deletePolicy === 'keep' || o.dryRun) {
      if (o.deletePolicy === 'keep') this.keptBack(uri);
      else {
        if (this.wouldRemoveCount++ < MAX_NAMED) this.wouldRemove.push(uri);
        this.#note({ deleted: 1 });
      }
      return true;
    }
    // The file goes when its batch is put in place (#remove), once its row says damaged: a kill before the batch
    // commits never leaves a row saying verified for a file that is gone.
    this.#rows.removed();
    this.#claims.remove(live.path);
    this.#count({ deleted: 1 });
    this.#inventoryChange--;
    this.#writer.stage({ temp: null, final: '', record: { row: null, removeUri: uri, counts: { deleted: 1 }, removes: { path: live.path, status: live.status } } });
    return true;
  }

  /** A URI the Source no longer has whose copy stays (the policy keep, or a mass deletion held back): would-delete. */
  keptBack(uri: string): void {
    if (this.wouldDeleteCount++ < MAX_NAMED) this.wouldDelete.push(uri);
  }

  /** Removes (or quarantines) a deletion's file, its row marked damaged already; a failure makes it a failure. */
  #remove(p: Pending): void {
    const o = this.#o;
    const uri = p.removeUri!;
    const { path, status } = p.removes!;
    const file = join(o.dest, ...path.split('/'));
    try {
      const problem = storedPathProblem(path);
      if (problem !== null) throw new Error(problem);
      checkFolders(o.dest, dirname(file));
      if (o.deletePolicy === 'quarantine') {
        const parts = path.split('/');
        const wanted = join(quarantineFolder(join(o.stateDir, QUARANTINE_DIR), parts.slice(0, -1)), parts.at(-1)!);
        checkFolders(o.dest, dirname(wanted));
        mkdirSync(dirname(wanted), { recursive: true });
        if (existsSync(file)) renameSync(file, quarantinePlace(wanted, o.runId));
      } else rmSync(file, { force: true });
    } catch (err) {
      // The copy stays, as it was: its row too.
      o.state.setStatus(uri, status);
      this.#count({ deleted: -1, failed: 1 });
      this.#inventoryChange++;
      p.removeUri = undefined;
      p.counts = { failed: 1 };
      p.failure = { uri, reason: `could not be ${o.deletePolicy === 'delete' ? 'deleted' : 'quarantined'}: ${(err as Error).message}` };
    }
  }

  /**
   * The counts progress shows: each outcome as soon as its resource is settled (ahead of the durable counts, which
   * move per batch), the bytes committed, and the bytes fetched so far.
   */
  progressCounts(): RunCounts & { settled: number; bytesFetched: number; inventoryChange: number; latestFailure: { uri: string; reason: string } | null } {
    const { created, updated, deleted, unchanged, skipped, failed, settled, bytes } = this.live;
    const f = this.#latestFailure;
    return {
      created,
      updated,
      deleted,
      unchanged,
      skipped,
      failed,
      bytes: this.counts.bytes,
      settled,
      bytesFetched: bytes,
      inventoryChange: this.#inventoryChange,
      latestFailure: f === null ? null : { uri: f.uri, reason: f.reason },
    };
  }

  /** Live counts, as soon as a resource is settled (the durable ones follow with its batch). */
  #count(counts: Partial<RunCounts>): void {
    for (const k in counts) this.live[k as keyof RunCounts] += counts[k as keyof RunCounts]!;
  }

  /** Runs `fn` in the transaction that commits what is staged so far (a Change Dump's progress through a package). */
  whenCommitted(fn: () => void): void {
    this.#writer.stage({ temp: null, final: '', record: { row: null, counts: {}, onCommit: fn } });
  }

  /** Commits everything staged. */
  async finish(): Promise<void> {
    this.#stageUnlisted();
    await this.#writer.flush();
  }

  // ---- Bytes that come from elsewhere than a download of the resource (dump packages, JSON Patch): the same path
  // claims, unchanged-copy check, durable batches and journal as a download. See dump-baseline.ts, json-patch.ts.

  /**
   * Decides what a resource needs before its bytes are written: null when nothing is to be written (done already in
   * this run, not mirrored, the local copy already matches, or a dry run; each is counted here), else where to write.
   */
  prepare(entry: Pick<Entry, 'loc' | 'lastmod' | 'md'>): WriteTarget | null {
    const o = this.#o;
    const uri = entry.loc;
    const existing = this.#rows.get(uri);
    const live = existing !== null && existing.status !== 'deleted' && existing.status !== 'quarantined' ? existing : null;
    const expected = expectationOf(entry.md);
    if (live && live.runId === o.runId && o.runId !== -1 && !this.repeatable && !anotherVersion(entry, expected, live)) return null;
    let rel: string;
    if (live) {
      rel = live.path;
      const problem = storedPathProblem(rel);
      if (problem !== null) {
        this.#note({ failed: 1 }, { uri, reason: problem });
        return null;
      }
    } else {
      const mapped = o.paths.map(uri);
      if (!mapped.ok) {
        this.#note({ skipped: 1 }, { uri, reason: `not mirrored: ${mapped.reason}`, permanent: true });
        return null;
      }
      rel = o.dryRun ? mapped.path : this.#claims.claim(mapped.path, uri);
    }
    const final = join(o.dest, rel);
    const base = { uri, path: rel, lastmod: entry.lastmod ?? null, type: entry.md.type ?? null, runId: o.runId };
    if (!live && this.#mayHoldOlderFiles(final) && isFile(final) && !this.#ours(uri, rel)) {
      this.#note({ failed: 1 }, { uri, reason: foreign(rel) });
      return null;
    }
    if (live && recordedMatches(expected, live.length, live.digests) && intact(live, final)) {
      this.#note({ unchanged: 1 }, undefined, o.dryRun ? null : { ...live, ...base, verifiedAt: this.#now });
      return null;
    }
    if (o.dryRun) {
      this.#note(live ? { updated: 1 } : { created: 1 });
      return null;
    }
    const mtimeMs = entry.lastmod ? (parseW3cDatetime(entry.lastmod) ?? undefined) : undefined;
    return { uri, final, base, live, mtimeMs, expected };
  }

  /**
   * A bitstream verified in a package whose resource the inventory does not know, while a file at its path holds
   * exactly its bytes (the files of a mirror whose state was lost, say): that file is taken as the copy and recorded
   * unchanged, as a download would take it, instead of being failed as someone else's by `prepare`. True when taken.
   */
  async adoptSame(entry: Pick<Entry, 'loc' | 'lastmod' | 'md'>, length: number, digests: Digests): Promise<boolean> {
    const o = this.#o;
    const uri = entry.loc;
    if (o.dryRun || Object.keys(digests).length === 0 || this.#rows.get(uri) !== null) return false;
    const mapped = o.paths.map(uri);
    if (!mapped.ok) return false;
    const final = join(o.dest, mapped.path);
    if (!this.#mayHoldOlderFiles(final) || !isFile(final)) return false;
    const local = await meterFile(final, { length, hashes: digests, problems: [] });
    if (local.status !== 'verified' || this.#rows.get(uri) !== null) return false;
    const rel = this.#claims.claim(mapped.path, uri);
    if (rel !== mapped.path) return false;
    const base = { uri, path: rel, lastmod: entry.lastmod ?? null, type: entry.md.type ?? null, runId: o.runId };
    this.#note({ unchanged: 1 }, undefined, row(base, judge(expectationOf(entry.md), local.length, local.digests), null, null, this.#now));
    this.#inventoryChange++;
    return true;
  }

  /**
   * Whether `prepare` would give a target, without its effects (nothing counted, claimed or recorded): false for a
   * resource done already in this run, one whose local copy matches, one that cannot be mirrored, or a dry run.
   * A dump package read while it downloads writes only what is wanted, and prepares it once the package is verified.
   */
  wanted(entry: Pick<Entry, 'loc' | 'lastmod' | 'md'>): boolean {
    const o = this.#o;
    if (o.dryRun) return false;
    const existing = this.#rows.get(entry.loc);
    const live = existing !== null && existing.status !== 'deleted' && existing.status !== 'quarantined' ? existing : null;
    if (live === null) return o.paths.map(entry.loc).ok;
    const expected = expectationOf(entry.md);
    if (live.runId === o.runId && o.runId !== -1 && !this.repeatable && !anotherVersion(entry, expected, live)) return false;
    // (Wanted, so that prepare fails it saying why.)
    if (storedPathProblem(live.path) !== null) return true;
    const final = join(o.dest, ...live.path.split('/'));
    return !(recordedMatches(expected, live.length, live.digests) && intact(live, final));
  }

  /** A new temporary file path, outside the visible tree (thrown away by the next run if never staged). */
  tempPath(): string {
    return this.#writer.tempPath();
  }

  /** A new temporary file written in the thread pool (a small one in one go), outside the visible tree. */
  tempFile(): TempFile {
    return this.#writer.tempFile();
  }

  /**
   * Puts a temporary file in place through the durable batches; a mismatch fails it instead. `written`: the file is
   * still being written, and is awaited when its batch is flushed.
   */
  stageFile(target: WriteTarget, temp: string, fixity: FixityResult, written?: Promise<void>): void {
    if (fixity.status === 'mismatch') {
      const remove = () => rmSync(temp, { force: true });
      if (written === undefined) remove();
      else void written.then(remove, remove);
      this.#note({ failed: 1 }, { uri: target.uri, reason: clip(`fixity mismatch: ${fixity.reasons.join('; ')}`, 1000) });
      return;
    }
    this.#stage({ kind: 'file', temp, fixity, etag: null, lastModified: null, written }, target.final, target.mtimeMs, target.base, target.live);
  }

  /** Waits while too many files are staged (backpressure for writers other than `apply`). */
  async settle(): Promise<void> {
    await this.#writer.drained();
  }
}

/** Where a resource's bytes go, from `Applier.prepare`. */
export interface WriteTarget {
  uri: string;
  final: string;
  base: RowBase;
  live: InventoryRow | null;
  mtimeMs: number | undefined;
  /** What the entry promises (hash, length). */
  expected: Expectation;
}

type RowBase = { uri: string; path: string; lastmod: string | null; type: string | null; runId: number };

type Downloaded =
  | { kind: 'file'; temp: string; written?: Promise<void>; fixity: FixityResult; etag: string | null; lastModified: string | null }
  | { kind: 'not-modified' }
  | { kind: 'failed'; reason: string };

function row(
  base: RowBase,
  fixity: FixityResult,
  etag: string | null,
  lastModified: string | null,
  now: string,
): InventoryRow {
  const status = fixity.status === 'verified' ? 'verified' : fixity.status === 'unverifiable' ? 'unverifiable' : 'unchecked';
  return { ...base, length: fixity.length, digests: fixity.digests, etag, lastModified, status, verifiedAt: now };
}

/** `rs:ln rel="duplicate"` http(s) locations by `pri` (lowest first; absent = 999999), in document order otherwise. */
export function duplicates(entry: Entry): string[] {
  return entry.links
    .map((l, i) => ({ l, i, pri: /^\d{1,6}$/.test(l.pri ?? '') ? Number(l.pri) : 999_999 }))
    .filter(({ l }) => l.rel === 'duplicate' && /^https?:\/\//i.test(l.href))
    .sort((a, b) => a.pri - b.pri || a.i - b.i)
    .map(({ l }) => l.href);
}

function sizeIs(path: string, length: number | null): boolean {
  try {
    const s = statSync(path);
    return s.isFile() && (length === null || s.size === length);
  } catch {
    return false;
  }
}

/** A resource that a pause stopped before its request started: not a failure, and not done. */
class NotStarted extends Error {}

/**
 * Spaces the starts of requests at least `ms` apart, however many resources are in flight: the pause between
 * requests a person sets for a Source is between any two of them, not per connection.
 */
class Pacer {
  #next = 0;
  readonly #ms: number;
  readonly #stop: AbortSignal | undefined;

  constructor(ms: number, stop: AbortSignal | undefined) {
    this.#ms = ms;
    this.#stop = stop;
  }

  /** Resolves at this request's turn (undefined when it may start now); rejects when `stop` aborts meanwhile. */
  turn(): Promise<void> | undefined {
    const now = Date.now();
    const at = Math.max(now, this.#next);
    this.#next = at + this.#ms;
    return at > now ? sleep(at - now, undefined, { signal: this.#stop }) : undefined;
  }
}

/**
 * What an entry says of its resource (hash, length, lastmod) contradicts the copy the inventory recorded: it is another
 * version. A resumed run skips what its interrupted part applied, but not a change the Source made since (the lists
 * read again list a newer version): skipped, the copy stayed old while the checkpoint moved past the change.
 */
function anotherVersion(entry: Pick<Entry, 'lastmod'>, expected: Expectation, live: InventoryRow): boolean {
  if (promisesAnything(expected) && expected.problems.length === 0 && !recordedMatches(expected, live.length, live.digests)) return true;
  if (entry.lastmod === undefined || live.lastmod === null) return false;
  const listed = parseW3cDatetime(entry.lastmod);
  const recorded = parseW3cDatetime(live.lastmod);
  return listed !== null && recorded !== null && listed !== recorded;
}

/** The recorded copy is still there as it was mirrored, as far as its size and the last audit tell. */
function intact(live: InventoryRow, final: string): boolean {
  if (live.status === 'damaged') return false;
  // Not through a link: a copy replaced by a link to a file of the same size elsewhere was counted unchanged.
  try {
    const s = lstatSync(final);
    return s.isFile() && (live.length === null || s.size === live.length);
  } catch {
    return false;
  }
}

function isFile(path: string): boolean {
  return sizeIs(path, null);
}

/**
 * Where a quarantined file goes: its own path in the quarantine folder, or, when an earlier copy of the same path is
 * there already (a resource deleted, created again, deleted again), beside it with the run's number before its
 * extension (`a%run12.txt`, then `a%run12-2.txt`…), so that no quarantined copy is ever written over. (`%r` is no
 * escape, so no mirrored name looks like that.)
 */
export function quarantinePlace(wanted: string, runId: number): string {
  if (!existsSync(wanted)) return wanted;
  const name = basename(wanted);
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 && name.length - dot <= 10 && !name.slice(dot).includes('%') ? name.slice(dot) : '';
  const stem = join(dirname(wanted), name.slice(0, name.length - ext.length));
  for (let n = 1; ; n++) {
    const place = `${stem}%run${runId}${n === 1 ? '' : `-${n}`}${ext}`;
    if (!existsSync(place)) return place;
  }
}

/**
 * The folder in the quarantine for a path's folders. A name that a quarantined file took there earlier (`a` deleted,
 * then `a/b` created and deleted) becomes `a%dir`, as in the mirror itself, so the later copy is not refused for ever
 * (and its failure does not hold the checkpoint back on every run).
 */
export function quarantineFolder(root: string, folders: readonly string[]): string {
  let at = root;
  for (const folder of folders) {
    let name = folder;
    for (;;) {
      let stat;
      try {
        stat = lstatSync(join(at, name));
      } catch {
        break;
      }
      // A folder, or a link (refused by checkFolders, as anywhere in the mirror).
      if (stat.isDirectory() || stat.isSymbolicLink()) break;
      name = `${name}%dir`;
    }
    at = join(at, name);
  }
  return at;
}

/** The durable writer's intent file (durable.ts), in the mirror's own folder: new files being put in place. */
export const PLACING_FILE = 'placing';

/** One JSON line per new file being put in place: its URI and path. */
function placingLines(records: Pending[]): string {
  let text = '';
  for (const r of records) if (r.replaces === undefined && r.row !== null) text += `${JSON.stringify([r.row.uri, r.row.path])}\n`;
  return text;
}

/** The row `takeOverLeftInPlace` gives a new file an interrupted run put in place unrecorded: nothing is known of it. */
function leftUnrecorded(live: InventoryRow): boolean {
  return live.status === 'damaged' && live.length === null && Object.keys(live.digests).length === 0;
}

/**
 * The new files an interrupted run was putting in place when it stopped, as its intent file lists them: those that
 * are there and that no row knows get a row marked damaged (checked, or fetched again, by `apply`), so that they are
 * never taken for someone else's. A dry run records nothing: it is given their paths.
 */
function takeOverLeftInPlace(o: ApplyOptions): Set<string> {
  const file = join(o.stateDir, PLACING_FILE);
  let text: string;
  let noted: number;
  try {
    text = readFileSync(file, 'utf8');
    noted = statSync(file).mtimeMs;
  } catch {
    return new Set();
  }
  const left: { uri: string; path: string }[] = [];
  for (const line of text.split('\n')) {
    try {
      const [uri, path] = JSON.parse(line) as [unknown, unknown];
      if (typeof uri === 'string' && typeof path === 'string' && putThereThen(join(o.dest, path), noted)) left.push({ uri, path });
    } catch {
      // The line being written when the process died.
    }
  }
  if (o.dryRun) return new Set(left.map((l) => l.path));
  o.state.transaction(() => {
    for (const { uri, path } of left) {
      if (o.state.get(uri) !== null || o.state.fileByKey(caseKey(path)) !== undefined) continue;
      o.state.put({ uri, path, length: null, digests: {}, lastmod: null, etag: null, lastModified: null, type: null, status: 'damaged', verifiedAt: null, runId: null });
    }
  });
  truncateSync(file);
  return new Set();
}

/**
 * Whether a file is one the interrupted run put there: its rename (which sets its ctime; its mtime is the resource's
 * lastmod) came within a minute of the run's last note of what it was placing. A file someone put at such a path
 * after the run died, whose rename failed, is not taken over.
 */
function putThereThen(path: string, noted: number): boolean {
  try {
    const stat = lstatSync(path);
    return stat.isFile() && stat.ctimeMs <= noted + PLACED_WITHIN_MS;
  } catch {
    return false;
  }
}

const PLACED_WITHIN_MS = 60_000;

/**
 * Why a resource with no copy in the mirror was not written: a file that no row of the inventory knows is where it
 * goes, and every file the mirror puts in place is known first (a row, or its intent file: PLACING_FILE), so that one
 * is someone else's.
 */
function foreign(rel: string): string {
  return `a file not made by this mirror is already at ${rel}; it was left as it is (move it elsewhere, and the next sync fetches this resource)`;
}
