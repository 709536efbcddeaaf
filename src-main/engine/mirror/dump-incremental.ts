// Incremental sync from a Change Dump or Change Dump Index (core spec §13): the packages whose period reaches past
// the checkpoint, oldest first; in each, the changes at or after the checkpoint in the order of their `datetime`,
// every one applied (several bitstreams of one URI in turn, the last one staying), deletions (no path) by the
// mirror's deletion policy. An entry that cannot be applied fails alone; a package that cannot be had stops the dump
// there, so changes are never applied out of order. The checkpoint advances only past changes that were applied.
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { clip } from '../clip.ts';
import { w3cPeriodEnd } from '../documents/datetime.ts';
import { canonicalUri } from './uri.ts';
import { CLOCK_SLACK_MS, newAfter } from './change-timeline.ts';
import { parseW3cDatetime, type Entry, type Finding } from '../documents/index.ts';
import type { Http } from '../http/client.ts';
import { loadDocument } from '../load.ts';
import type { Applier } from './apply.ts';
import { packageApplier } from './dump-apply.ts';
import { checkRoom, extractedBytes, nextOf, notePackage, packageDeadline, PackageRooms, PACKAGES_DIR } from './dump-baseline.ts';
import { NoRoomForPackage } from './dump-too-large.ts';
import type { PackageRoom } from './disk-reserve.ts';
import { hasDiskFullCode } from './disk-full.ts';
import { isNoRoom } from './package/source.ts';
import { appliedInPackage, donePackages, heldAt, markAppliedInPackage, markPackageDone } from './dump-progress.ts';
import type { MetadataFetcher } from './metadata.ts';
import { ExtractBudget, fetchPackage, PackagePrefetch, prunePackages, type DumpListing, type DumpPackage, type ManifestEntry } from './package/index.ts';
import type { Checkpoint, MirrorState } from './state.ts';
import { SourceRefusing } from './refusal-watch.ts';

export interface DumpIncrementalOptions {
  http: Http;
  applier: Applier;
  state: MirrorState;
  stateDir: string;
  dumpUrl: string;
  listing: DumpListing;
  checkpoint: Checkpoint;
  runId: number | null;
  dryRun: boolean;
  signal?: AbortSignal;
  /** A pause: the package under way finishes, the next is not begun, and the run stays resumable from there. */
  pauseSignal?: AbortSignal;
  phases: Record<string, number>;
  onNote?: (note: string) => void;
  /** What the reader found against the spec in each package's manifest. */
  onFindings?: (document: string, findings: Finding[]) => void;
  /** Notes the describedby links of the changed resources, and removes the metadata of deleted ones. */
  metadata?: MetadataFetcher;
  /** Whether a Change List will fetch what a package that cannot be had holds (then its failure is only a note). */
  changeListCovers: boolean;
  /** The changes considered so far (for the live progress). */
  onListed?: (n: number) => void;
  /** The disk's room above the run's reserve: a package that does not fit is not downloaded or extracted, and not used. */
  room?: PackageRoom;
}

export interface DumpIncrementalResult {
  /** Changes at or after the checkpoint that were considered. */
  changes: number;
  checkpoint: Checkpoint;
  /** False when a package could not be had: the packages after it were not read. */
  complete: boolean;
}

/**
 * Packages that may hold changes at or after the checkpoint, oldest first: by `from`, or in the order the Dump lists
 * them (§13.1: chronological) when some package gives none (`from` is optional there; taken as the epoch, a newer
 * package without one was applied first and the older ones after it undid its changes).
 */
export function packagesAfter(listing: DumpListing, checkpoint: Checkpoint, dumpUrl: string): DumpPackage[] {
  const since = parseW3cDatetime(checkpoint.at) ?? 0;
  // A checkpoint this dump set covers its own instant; one set by a list baseline does not (a change at `at` counts).
  const coveredThrough = (until: number) => until < since || (until === since && checkpoint.from === dumpUrl);
  const byFrom = listing.packages.every((p) => p.fromMs !== undefined);
  return listing.packages
    .map((p, i) => ({ p, i }))
    // By the end of the period `until` names ("2020-01-03": the whole day), as Change Lists are.
    .filter(({ p }) => p.entry.md.until === undefined || p.untilMs === undefined || !coveredThrough(w3cPeriodEnd(p.entry.md.until) ?? p.untilMs))
    .sort((a, b) => (byFrom ? a.p.fromMs! - b.p.fromMs! : 0) || a.i - b.i)
    .map(({ p }) => p);
}

export async function runDumpIncremental(o: DumpIncrementalOptions): Promise<DumpIncrementalResult> {
  const since = parseW3cDatetime(o.checkpoint.at);
  if (since === null) throw new Error(`The mirror's checkpoint "${clip(o.checkpoint.at)}" is not a datetime`);
  for (const note of o.listing.notes) o.onNote?.(note);
  // The Dump's own findings, as its manifests' are (notePackage): before, only the manifests' reached the run.
  for (const f of o.listing.findings) o.onFindings?.(f.document, f.findings);
  const packages = packagesAfter(o.listing, o.checkpoint, o.dumpUrl);
  const skipped = o.listing.packages.length - packages.length;
  if (skipped > 0) o.onNote?.(`${skipped} package${skipped === 1 ? '' : 's'} of the Change Dump end before the checkpoint; not downloaded.`);
  const done = o.runId === null ? new Set<string>() : donePackages(o.state, o.runId, o.dumpUrl);
  const held = o.runId === null ? null : heldAt(o.state, o.runId, o.dumpUrl);
  const workDir = join(o.stateDir, PACKAGES_DIR);
  if (!o.dryRun) {
    await mkdir(workDir, { recursive: true });
    const pruned = await prunePackages(workDir, o.listing.packages.map((p) => p.entry.loc));
    if (pruned > 0) o.onNote?.(`Removed the downloads of ${pruned} package${pruned === 1 ? '' : 's'} the Dump no longer lists, left by an earlier run.`);
  }
  const t0 = Date.now();

  // By the period a datetime names, and an undated change by the dated one after it (manifest.ts `newAfterMs`).
  const isNew = (e: Pick<ManifestEntry, 'newAfterMs'>) => e.newAfterMs === undefined || e.newAfterMs >= since;
  let changes = 0;
  let complete = true;
  // Checkpoint bookkeeping: the latest instant up to which every change was applied, frozen at the first failure,
  // and never past the earliest failed change: a manifest with an undated entry is applied in document order, so a
  // change dated before one already applied may fail after it.
  let latest = since;
  let frozen = false;
  let cap = Number.POSITIVE_INFINITY;
  // A package's `until` or a change's `datetime` after the Dump was read (year 9999) is the Source's error: it does not
  // move the checkpoint (to now at best, it would put the Change List changes the run reads after the Dump before it).
  let future = -Infinity;
  const reach = (ms: number | undefined) => {
    if (ms !== undefined && ms > t0) future = Math.max(future, ms);
    else if (!frozen && ms !== undefined && ms > latest) latest = ms;
  };
  const freeze = (failedAtMs: number | undefined) => {
    frozen = true;
    cap = Math.min(cap, failedAtMs ?? since);
  };
  // Resumed: failures in the packages finished before still hold the checkpoint.
  if (held !== null) freeze(held);
  // A Dump of the Index that could not be read holds changes of a period unknown: the checkpoint stays where it was, so
  // the Change List (or the next run) brings them; past them, they would never be read.
  for (const problem of o.listing.problems) {
    freeze(since);
    if (o.changeListCovers) o.onNote?.(`The Change Dump: ${problem}; the checkpoint stays, and its changes are fetched from the Change List.`);
    else o.applier.fail(o.dumpUrl, `${problem}; the checkpoint stays before its changes, so the next sync reads it again`);
  }

  const prefetch = new PackagePrefetch();
  const budget = new ExtractBudget();
  const rooms = new PackageRooms(o.room);
  const toRead = packages.filter((p) => !done.has(p.entry.loc));
  const downloadOf = (p: DumpPackage) => ({ http: o.http, package: p, workDir, signal: o.signal, deadlineAt: packageDeadline(p), room: rooms.room });
  try {
    for (const pkg of packages) {
      if (o.signal?.aborted || o.pauseSignal?.aborted) break;
      const loc = pkg.entry.loc;
      if (done.has(loc)) {
        reach(pkg.untilMs);
        continue;
      }
      if (o.dryRun) {
        if (!(await dryRunPackage(o, pkg, since, () => o.onListed?.(++changes)))) {
          complete = false;
          break;
        }
        reach(pkg.untilMs);
        continue;
      }
      let failedInPackage = false;
      const retriableBefore = o.applier.retriableFailures;
      // Resumed: the changes of this package an interrupted part applied and committed are not applied again.
      const applied = o.runId === null || o.dryRun ? () => false : appliedInPackage(o.state, o.runId, o.dumpUrl, loc);
      // A change a later one of its URI in this package follows is read (its bytes still checked) but not applied.
      const skip = (e: ManifestEntry) => !isNew(e) || applied(e.index) || e.superseded === true;
      // Each change applied is recorded as such in the transaction that commits it (and where a failure so far holds
      // the checkpoint).
      const markApplied = (index: number) => {
        if (o.dryRun || o.runId === null) return;
        const runId = o.runId;
        const transient = o.applier.retriableFailures > retriableBefore;
        const held = transient ? Math.min(cap, pkg.fromMs ?? since) : frozen ? cap : undefined;
        o.applier.whenCommitted(() => markAppliedInPackage(o.state, runId, o.dumpUrl, loc, [index], held));
      };
      const bridge = packageApplier(o.applier, { skip });
      const checked = rooms.next();
      try {
        await fetchPackage({
          http: o.http,
          package: pkg,
          kind: 'changedump',
          workDir,
          alsoCompute: ['md5'],
          budget,
          // Each URI is applied once per package (its last change), so no two of its changes wait on each other.
          sink: (entry, stream) => bridge.sink(entry, stream),
          verifiedBytes: (entry, bytes) => bridge.verifiedBytes(entry, bytes),
          onManifest: (entries, inPackage) => checkRoom(o, rooms, loc, extractedBytes(o.applier, entries, skip, inPackage), 0, entries),
          onDeleted: (entry) => {
            if (skip(entry)) return;
            o.applier.delete(entry.loc);
            o.metadata?.deleted(entry.loc);
          },
          onOutcome: async (outcome) => {
            if (!isNew(outcome.entry)) return;
            o.onListed?.(++changes);
            if (applied(outcome.entry.index)) {
              await bridge.discard(outcome);
              if (outcome.status !== 'failed') reach(outcome.entry.datetimeMs);
              return;
            }
            if (outcome.entry.superseded === true) {
              // Its bytes are never used: a bitstream that failed its checks does not fail the URI nor hold the
              // checkpoint (it would, run after run), but the Source hears of it.
              await bridge.discard(outcome);
              if (outcome.status === 'failed') {
                o.onNote?.(`${clip(outcome.entry.loc)}: an earlier change of it in ${clip(loc)} could not be read (${outcome.reason}); a later change of it in the same package replaces it, so it was not needed.`);
              }
              o.applier.settledOne();
              reach(outcome.entry.datetimeMs);
              markApplied(outcome.entry.index);
              return;
            }
            await bridge.outcome(outcome);
            if (outcome.status === 'failed') {
              failedInPackage = true;
              freeze(outcome.entry.newAfterMs ?? outcome.entry.datetimeMs);
            } else {
              reach(outcome.entry.datetimeMs);
              if (outcome.status !== 'deleted') await o.metadata?.note(outcome.entry);
            }
            markApplied(outcome.entry.index);
          },
          signal: o.signal,
          deadlineAt: packageDeadline(pkg),
          downloading: prefetch.downloadFor(downloadOf(pkg), nextOf(toRead, pkg, downloadOf), checked),
        }).then(({ download, report }) => {
          for (const problem of download.problems) o.onNote?.(problem);
          notePackage(o, loc, report);
        });
      } catch (err) {
        // A Source that refuses until the run pauses (refusal-watch.ts): the package is not failed but left to the
        // resumed run; before, it was recorded failed ("could not be used: Paused: …") in a run that then paused.
        if (o.signal?.aborted || err instanceof SourceRefusing) throw err;
        // No room for it (its download, or what it extracts to): not used, as a package that cannot be had. The run
        // is not stopped for it: the Change List (when there is one) brings its changes one by one, which needs no
        // room for the package itself; without one, the packages after it wait, as for any package not used.
        const noRoom = isNoRoom(err) || err instanceof NoRoomForPackage;
        // Every package after it would fail the same way, and each fill the disk again first: the run stops. By the
        // error's code: its message may hold the package's URL.
        if (!noRoom && hasDiskFullCode(err)) o.room?.full();
        complete = false;
        freeze(pkg.fromMs);
        const reason = noRoom ? `${(err as Error).message} The package was not used` : `The package could not be used: ${(err as Error).message}`;
        if (o.changeListCovers) o.onNote?.(`${clip(loc)}: ${reason}; its changes and those after it are fetched from the Change List instead.`);
        else if (noRoom) o.applier.failForRoom(loc, `${reason}; the packages after it were not applied, so changes stay in order. Free some space and sync again`);
        else o.applier.fail(loc, `${reason}; the packages after it were not applied, so changes stay in order`);
        await o.applier.finish();
        break;
      }
      await o.applier.finish();
      // A write the disk refused fails its change when the batch commits, after its outcome.
      if (!failedInPackage && o.applier.retriableFailures > retriableBefore) {
        failedInPackage = true;
        freeze(pkg.fromMs);
      }
      // Every change of the package applied: the checkpoint may move to the end of its period.
      if (!failedInPackage) reach(pkg.untilMs);
      // Done, failures and all (read again after later packages, its changes would undo theirs); where they hold the
      // checkpoint is kept with it, for a resumed run.
      markPackageDone(o.state, o.runId!, o.dumpUrl, loc, failedInPackage ? cap : undefined);
    }
  } finally {
    await prefetch.settle();
  }
  await o.applier.finish();
  o.phases.fetch = (Date.now() - t0) / 1000;
  if (!o.dryRun && complete && !o.signal?.aborted && !o.pauseSignal?.aborted) {
    // The packages stay recorded as applied until the run ends (sync.ts): one killed after them resumes past them.
    await rm(workDir, { recursive: true, force: true });
  }
  latest = Math.max(since, Math.min(latest, cap));
  if (future > t0 + CLOCK_SLACK_MS) {
    o.onNote?.(`The Change Dump gives datetimes in the future (up to ${new Date(future).toISOString()}); they do not move the checkpoint.`);
  }
  const checkpoint = latest === since ? o.checkpoint : { at: new Date(latest).toISOString(), from: o.dumpUrl };
  return { changes, checkpoint, complete };
}

/** A dry run reads the Dump's rel="contents" copies of the manifests instead of downloading packages. */
async function dryRunPackage(o: DumpIncrementalOptions, pkg: DumpPackage, since: number, count: () => void): Promise<boolean> {
  const contents = pkg.entry.links.find((l) => l.rel === 'contents');
  if (contents === undefined) {
    o.onNote?.(`${clip(pkg.entry.loc)} links no copy of its manifest (rel="contents"): a dry run cannot tell what it holds without downloading it.`);
    return false;
  }
  const entries: Entry[] = [];
  try {
    await loadDocument(o.http, contents.href, { signal: o.signal, onEntry: (e) => void entries.push({ ...e, loc: canonicalUri(e.loc) }) });
  } catch (err) {
    o.onNote?.(`The manifest of ${clip(pkg.entry.loc)} (${clip(contents.href)}) could not be read: ${(err as Error).message}`);
    return false;
  }
  // The changes after the checkpoint, judged as a real run judges them (undated ones by their place).
  const after = newAfter(entries);
  for (const [i, e] of entries.entries()) {
    if (after[i] !== undefined && after[i]! < since) continue;
    count();
    if (e.md.change === 'deleted') o.applier.delete(e.loc);
    else if (e.md.change === 'created' || e.md.change === 'updated') o.applier.prepare(e);
    else o.applier.fail(e.loc, `not applied: change="${clip(e.md.change ?? '', 40)}" is not created, updated or deleted`);
    o.applier.settledOne();
  }
  return true;
}
