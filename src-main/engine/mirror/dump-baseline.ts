// Baseline from a Resource Dump or Resource Dump Index (core spec §11): each package downloaded into the mirror's
// own work space (`.resourcesync/packages/`, resumable with Range), its manifest read (and compared with the Dump's
// rel="contents" copy), each bitstream streamed out by its `path` through the fixity checks into the same durable
// batches and inventory as a list baseline. Refused entries fail alone with their reason; a package that cannot be
// had or read at all fails alone too (then nothing is deleted and the run gets no checkpoint), and so does one the
// disk has no room for (dump-too-large.ts: its resources may be fetched one by one instead). A package applied
// completely is recorded, so a killed run, resumed, does not download it again.
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { clip } from '../clip.ts';
import { parseW3cDatetime, type Entry, type Finding } from '../documents/index.ts';
import type { Http } from '../http/client.ts';
import { loadDocument } from '../load.ts';
import { canonicalUri } from './uri.ts';
import type { Applier } from './apply.ts';
import { DEADLINE_BYTES_PER_SECOND } from './fetcher.ts';
import { packageApplier } from './dump-apply.ts';
import { donePackages, markPackageDone } from './dump-progress.ts';
import { keepAsMetadata, metadataOf, type MetadataFetcher } from './metadata.ts';
import { dumpPackages, ExtractBudget, fetchPackage, lengthOf, PackagePrefetch, prunePackages, type DumpListing, type DumpPackage, type ManifestEntry, type PackageReport } from './package/index.ts';
import { isNoRoom } from './package/source.ts';
import type { PackageRoom } from './disk-reserve.ts';
import { hasDiskFullCode } from './disk-full.ts';
import { NoRoomForPackage, withoutPackage } from './dump-too-large.ts';
import { formatBytes } from '../http/errors.ts';
import type { MirrorState } from './state.ts';
import { sweepUnlisted } from './unlisted.ts';
import { ListedUris } from './listed-uris.ts';
import { SourceRefusing } from './refusal-watch.ts';

export const PACKAGES_DIR = 'packages';
/**
 * Bitstreams of a Resource Dump package in flight at once (each passes in slices of at most 1 MiB). Four, not six:
 * six were no faster on the 1 GiB dump (354–361 against 350–352 MB/s in alternating runs) and held ~5 MB more; when
 * the extraction threads still inflated through zlib streams, six also kept more inflated buffers in flight (peak
 * RSS 238–279 MB against 227–245 MB).
 */
export const DUMP_CONCURRENCY = 4;

export interface DumpBaselineOptions {
  http: Http;
  applier: Applier;
  state: MirrorState;
  stateDir: string;
  dumpUrl: string;
  /** The run's id (null for a dry run). */
  runId: number | null;
  dryRun: boolean;
  signal?: AbortSignal;
  /** A pause: the package under way finishes, the next is not begun, and the run stays resumable from there. */
  pauseSignal?: AbortSignal;
  phases: Record<string, number>;
  onNote?: (note: string) => void;
  /** What the reader found against the spec in each package's manifest (manifestDocument names it). */
  onFindings?: (document: string, findings: Finding[]) => void;
  /** See SyncOptions.allowMassDelete. */
  allowMassDelete?: boolean | number;
  onListed?: (n: number) => void;
  /** The listing, when the caller read it already (to choose between dumps and lists). */
  listing?: DumpListing;
  /** Notes the describedby links of what the packages hold, and fetches them (--with-metadata). */
  metadata?: MetadataFetcher;
  /** Packages at least this large are read while they download (see fetchPackage). */
  readAheadFrom?: number;
  /** See FetchPackageOptions.quickDownloadSeconds. */
  quickDownloadSeconds?: number;
  /** Bytes of the packages downloaded so far in this run, of the total the Dump gives for those to download. */
  onPackageBytes?: (done: number, total: number) => void;
  /**
   * The disk's room above the run's reserve: a package that does not fit is not downloaded or extracted, and the run
   * goes on with the others (dump-too-large.ts).
   */
  room?: PackageRoom;
  /** The Source publishes a Resource List: the resources of a package that does not fit may be fetched one by one. */
  oneByOne?: boolean;
  /** Resources fetched at once when they are fetched one by one. */
  concurrency?: number;
  /** URIs held in memory (those listed, those failed) before a temporary database holds them (listed-uris.ts). */
  inMemoryUris?: number;
}

/** The earliest of several W3C datetimes: the moment the whole snapshot is known to be at least as new as. */
class Earliest {
  value: string | null = null;
  #ms = Infinity;
  add(at: string | undefined): void {
    const ms = at === undefined ? null : parseW3cDatetime(at);
    if (ms !== null && ms < this.#ms) {
      this.#ms = ms;
      this.value = at!;
    }
  }
}

/** How long one package may take: at least 30 minutes, more for a large one (at 256 KiB/s). */
export function packageDeadline(pkg: DumpPackage): number {
  const length = Number(pkg.entry.md.length ?? 0);
  const ms = Number.isFinite(length) ? (length / DEADLINE_BYTES_PER_SECOND) * 1000 : 0;
  // At most a week, whatever length the Dump claims (its timers would overflow past 24 days); the rate floor
  // (slow-body.ts) stops a package that trickles long before.
  return Date.now() + Math.min(7 * 86_400_000, Math.max(30 * 60_000, ms));
}

export async function runDumpBaseline(o: DumpBaselineOptions): Promise<{ at: string | null; complete: boolean }> {
  // The URIs the manifests list: past a bound they move to a temporary database, as a list baseline's do (a Dump of
  // millions of resources held them all in the heap).
  const seen = new ListedUris(o.inMemoryUris);
  try {
    return await applyDump(o, seen);
  } finally {
    seen.close();
  }
}

async function applyDump(o: DumpBaselineOptions, seen: ListedUris): Promise<{ at: string | null; complete: boolean }> {
  const t0 = Date.now();
  const listing = o.listing ?? (await dumpPackages(o.http, o.dumpUrl, { signal: o.signal }));
  if (listing.kind !== 'resourcedump') throw new Error(`${clip(o.dumpUrl)} is a Change Dump, not a Resource Dump`);
  o.phases.lists = (Date.now() - t0) / 1000;
  let complete = true;
  for (const note of listing.notes) o.onNote?.(note);
  // The Dump's own findings, as its manifests' are (notePackage): before, only the manifests' reached the run.
  for (const f of listing.findings) o.onFindings?.(f.document, f.findings);
  for (const problem of listing.problems) {
    o.applier.fail(o.dumpUrl, problem);
    complete = false;
  }
  const earliest = new Earliest();
  earliest.add(listing.md.at);
  let repeated = 0;
  let firstRepeated: string | null = null;
  let listed = 0;
  /** Counts a URI as listed; false when it was already. */
  const count = (loc: string): boolean => {
    if (!seen.add(loc)) return false;
    o.onListed?.(++listed);
    return true;
  };
  const done = o.runId === null ? new Set<string>() : donePackages(o.state, o.runId, o.dumpUrl);
  if (done.size > 0) o.onNote?.(`${done.size} package${done.size === 1 ? '' : 's'} of the Resource Dump applied before the interruption; not downloaded again.`);
  const workDir = join(o.stateDir, PACKAGES_DIR);
  if (!o.dryRun) {
    await mkdir(workDir, { recursive: true });
    const pruned = await prunePackages(workDir, listing.packages.map((p) => p.entry.loc));
    if (pruned > 0) o.onNote?.(`Removed the downloads of ${pruned} package${pruned === 1 ? '' : 's'} the Dump no longer lists, left by an earlier run.`);
  }
  const t1 = Date.now();

  const prefetch = new PackagePrefetch();
  const budget = new ExtractBudget();
  const rooms = new PackageRooms(o.room);
  const toRead = listing.packages.filter((p) => !done.has(p.entry.loc));
  const bytes = packageBytes(toRead, o.onPackageBytes);
  const downloadOf = (p: DumpPackage) => ({
    http: o.http,
    package: p,
    workDir,
    signal: o.signal,
    deadlineAt: packageDeadline(p),
    onDownloadProgress: (n: number) => bytes.progress(p.entry.loc, n),
    room: rooms.room,
  });
  try {
    for (const pkg of listing.packages) {
      if (o.signal?.aborted || o.pauseSignal?.aborted) break;
      const loc = pkg.entry.loc;
      earliest.add(pkg.entry.md.at);
      if (done.has(loc)) continue;
      if (o.dryRun) {
        if (!(await dryRunPackage(o, pkg, count))) complete = false;
        continue;
      }
      // A URI named again (later in this manifest, or by an earlier package's) is mirrored once, as its first entry
      // describes it, as a Resource List's is: applied again, whichever copy was read last stayed (several bitstreams
      // are in flight at once), and each copy counted as one more resource created.
      let repeats = new Set<ManifestEntry>();
      const bridge = packageApplier(o.applier, { skip: (entry) => repeats.has(entry) });
      const checked = rooms.next();
      let report: PackageReport;
      let problems: string[];
      try {
        let download: { problems: string[] };
        ({ report, download } = await fetchPackage({
          http: o.http,
          package: pkg,
          kind: 'resourcedump',
          workDir,
          sink: bridge.sink,
          files: bridge.files,
          verifiedBytes: bridge.verifiedBytes,
          // Read while it downloads, when the Source serves ranges; held outcomes dropped go through here.
          discard: bridge.discard,
          readAheadFrom: o.readAheadFrom,
          quickDownloadSeconds: o.quickDownloadSeconds,
          alsoCompute: ['md5'],
          budget,
          // Small bitstreams cost more in file operations than in bytes: several at once hide that latency.
          concurrency: DUMP_CONCURRENCY,
          onManifest: async (entries, inPackage) => {
            repeats = new Set();
            const here = new Set<string>();
            for (const entry of entries) {
              if (seen.has(entry.loc) || here.has(entry.loc)) repeats.add(entry);
              else here.add(entry.loc);
            }
            // What is extracted, and what is still to download of a package read while it downloads.
            const length = lengthOf(pkg);
            const toDownload = length === undefined ? 0 : Math.max(0, length - bytes.downloaded(loc));
            await checkRoom(o, rooms, loc, extractedBytes(o.applier, entries, (e) => repeats.has(e), inPackage), toDownload, entries);
          },
          onOutcome: async (outcome) => {
            if (repeats.has(outcome.entry)) {
              await bridge.discard(outcome);
              return;
            }
            count(outcome.entry.loc);
            if (outcome.status !== 'failed') await o.metadata?.note(outcome.entry);
            await bridge.outcome(outcome);
          },
          signal: o.signal,
          deadlineAt: packageDeadline(pkg),
          downloading: prefetch.downloadFor(downloadOf(pkg), nextOf(toRead, pkg, downloadOf), checked),
        }));
        problems = download.problems;
      } catch (err) {
        // A Source that refuses until the run pauses (refusal-watch.ts): the package is not failed but left to the
        // resumed run; before, it was recorded failed ("could not be used: Paused: …") in a run that then paused.
        if (o.signal?.aborted || err instanceof SourceRefusing) throw err;
        // No room for this package: passed over, and the others applied as far as they fit (dump-too-large.ts).
        if (isNoRoom(err) || err instanceof NoRoomForPackage) {
          const known = err instanceof NoRoomForPackage ? err.entries : null;
          const taken = await withoutPackage({ ...o, oneByOne: o.oneByOne ?? false, concurrency: o.concurrency ?? 8 }, pkg, err.message, known, count);
          await o.applier.finish();
          if (taken) markPackageDone(o.state, o.runId!, o.dumpUrl, loc);
          else complete = false;
          continue;
        }
        // Every package after it would fail the same way, and each fill the disk again first: the run stops. By the
        // error's code: its message may hold the package's URL.
        if (hasDiskFullCode(err)) o.room?.full();
        // The whole package is unusable; its entries are unknown, so nothing may be deleted on its account.
        complete = false;
        o.applier.fail(loc, `The package could not be used: ${(err as Error).message}`);
        await o.applier.finish();
        continue;
      }
      earliest.add(report.manifest.md.at);
      for (const problem of problems) o.onNote?.(problem);
      for (const entry of repeats) {
        repeated++;
        firstRepeated ??= entry.loc;
      }
      notePackage(o, loc, report);
      await o.applier.finish();
      markPackageDone(o.state, o.runId!, o.dumpUrl, loc);
    }
  } finally {
    await prefetch.settle();
  }
  if (repeated > 0) {
    o.onNote?.(`${repeated} entr${repeated === 1 ? 'y' : 'ies'} of the Resource Dump's manifests repeat${repeated === 1 ? 's' : ''} a URI listed before (the first: ${clip(firstRepeated!)}); each URI is mirrored once, as its first entry describes it.`);
  }
  await o.metadata?.run();
  await o.applier.finish();
  o.phases.fetch = (Date.now() - t1) / 1000;
  if (o.signal?.aborted || o.pauseSignal?.aborted) return { at: null, complete: false };

  // What the mirror holds that no manifest lists: the deletion policy decides, but only when every package was read
  // (an unreadable one may hold them). Rows touched by this run (a resumed one) and URIs that failed are kept.
  if (complete) {
    const failed = new ListedUris(o.inMemoryUris);
    try {
      if (o.runId !== null) for (const uri of o.state.failedUris(o.runId)) failed.add(uri);
      await sweepDumpUnlisted(o, seen, failed);
    } finally {
      failed.close();
    }
  } else o.onNote?.('Not every package of the Resource Dump could be used: nothing was deleted, and the mirror gets no new checkpoint.');
  if (!o.dryRun && complete) {
    // The packages stay recorded as applied until the run ends (sync.ts): one killed after them resumes past them.
    await rm(workDir, { recursive: true, force: true });
  }
  return { at: earliest.value, complete };
}

/**
 * What the mirror holds that no manifest lists, to the deletion policy: read from the inventory a page at a time, as
 * often as the policy needs (never the whole inventory at once, nor the URIs it gives). Rows this run recorded (in
 * packages a resumed run does not read again) count as listed; URIs that failed in this run are kept.
 */
async function sweepDumpUnlisted(o: DumpBaselineOptions, seen: ListedUris, failed: ListedUris): Promise<void> {
  const described = metadataOf(o.state);
  const listed = (uri: string) => seen.has(uri);
  const recordedBefore = (uri: string) => o.runId !== null && o.state.get(uri)?.runId === o.runId;
  const passedOver = (uri: string) => listed(uri) || failed.has(uri) || keepAsMetadata(described, uri, listed);
  let listedBefore = 0;
  for (const uri of o.state.urisPaged()) if (!passedOver(uri) && recordedBefore(uri)) listedBefore++;
  const unlisted = function* () {
    for (const uri of o.state.urisPaged()) if (!passedOver(uri) && !recordedBefore(uri)) yield uri;
  };
  await sweepUnlisted(o.applier, o.state, unlisted, { listed: seen.size + listedBefore, allowMassDelete: o.allowMassDelete, onNote: o.onNote, onDelete: (uri) => o.metadata?.deleted(uri) });
  await o.applier.finish();
}

/** A dry run reads the Dump's rel="contents" copy of each manifest instead of downloading the package. */
async function dryRunPackage(o: DumpBaselineOptions, pkg: DumpPackage, count: (loc: string) => boolean): Promise<boolean> {
  const contents = pkg.entry.links.find((l) => l.rel === 'contents');
  if (contents === undefined) {
    o.onNote?.(`${clip(pkg.entry.loc)} links no copy of its manifest (rel="contents"): a dry run cannot tell what it holds without downloading it.`);
    return false;
  }
  try {
    await loadDocument(o.http, contents.href, {
      signal: o.signal,
      onEntry: (entry: Entry) => {
        entry.loc = canonicalUri(entry.loc);
        // A URI named again is mirrored once, as in a real run.
        if (!count(entry.loc)) return;
        o.applier.prepare(entry);
        o.applier.settledOne();
      },
    });
    return true;
  } catch (err) {
    o.onNote?.(`The manifest of ${clip(pkg.entry.loc)} (${clip(contents.href)}) could not be read: ${(err as Error).message}`);
    return false;
  }
}

/** How a package's manifest is named among a run's findings: it has no URL of its own. */
export const manifestDocument = (loc: string) => `${loc} (its manifest.xml)`;

/**
 * Says what a package held besides its bitstreams: refused ZIP entries, files the manifest does not name, a copy that
 * differs; and hands on what its manifest breaks of the spec, as the lists' findings are (before, a sloppy manifest's
 * findings were dropped: a dump run reported none).
 */
export function notePackage(o: { onNote?: (note: string) => void; onFindings?: (document: string, findings: Finding[]) => void }, loc: string, report: PackageReport): void {
  o.onFindings?.(manifestDocument(loc), report.manifest.findings);
  const named = new Set(report.outcomes.filter((x) => x.status === 'failed').map((x) => x.entry.zipName));
  const refused = report.refusedZipEntries.filter((r) => !named.has(r.name.normalize('NFC')));
  if (refused.length > 0 || report.refusedLeftOut > 0) {
    o.onNote?.(`${clip(loc)}: ${refused.length + report.refusedLeftOut} ZIP entr${refused.length + report.refusedLeftOut === 1 ? 'y' : 'ies'} the manifest does not name were refused (${refused.slice(0, 3).map((r) => r.reason).join('; ')}).`);
  }
  const unlisted = report.unlisted.length + report.unlistedLeftOut;
  if (unlisted > 0) o.onNote?.(`${clip(loc)}: ${unlisted} file${unlisted === 1 ? '' : 's'} in the package that the manifest does not name were not extracted.`);
  if (report.contentsMismatch.length > 0) {
    // The first three, and how many more: the note said three and no more, whether there were 4 or 4,000.
    const shown = report.contentsMismatch.filter((d) => !d.startsWith('…and ')).slice(0, 3);
    const more = report.contentsMismatchCount - shown.length;
    o.onNote?.(
      `${clip(loc)}: the manifest in the package and the Dump's linked copy differ; the package's own was used. ${shown.join('; ')}` +
        (more > 0 ? `; …and ${more.toLocaleString('en')} more difference${more === 1 ? '' : 's'}` : ''),
    );
  }
}

/** What extracting a package writes, and by which sizes that is known (for the message when it does not fit). */
export interface ExtractedBytes {
  bytes: number;
  /** Bitstreams counted; of them, those the manifest gives a length for too. */
  bitstreams: number;
  byManifest: number;
}

/**
 * The bytes this run extracts of a package's bitstreams (the others are read and dropped): what the disk must have
 * room for before the package is read. Each bitstream the package holds and will be extracted (`inPackage`: the size
 * its central directory gives) counts the larger of that size and its manifest `length` (the two disagreeing fails
 * the entry anyway). By the manifest alone, a bitstream without a `length` counted nothing, so a package of such
 * entries passed the check whatever it held; and a `length` given for an entry the package does not hold (or
 * refuses) counted, though nothing of it is written: a manifest claiming terabytes for a missing file refused the
 * package.
 */
export function extractedBytes(applier: Applier, entries: ManifestEntry[], skip: (entry: ManifestEntry) => boolean, inPackage: (entry: ManifestEntry) => number | undefined): ExtractedBytes {
  const out: ExtractedBytes = { bytes: 0, bitstreams: 0, byManifest: 0 };
  for (const entry of entries) {
    if (entry.zipName === undefined || entry.change === 'deleted' || skip(entry)) continue;
    const size = inPackage(entry);
    if (size === undefined || !applier.wanted(entry)) continue;
    out.bitstreams++;
    if (entry.length !== undefined) out.byManifest++;
    out.bytes += Math.max(size, entry.length ?? 0);
  }
  return out;
}

/** Which sizes a package's room check went by, in words: "(by …)". */
export function extractedBasis(x: ExtractedBytes, toDownload = 0): string {
  const gives = x.byManifest === x.bitstreams ? 'which the manifest gives too' : x.byManifest === 0 ? 'which the manifest does not give' : `${x.byManifest.toLocaleString('en')} of which the manifest gives too`;
  const rest = toDownload > 0 ? `, and ${formatBytes(toDownload)} of the package still to download` : '';
  return `(by the sizes the package's ZIP directory gives its ${x.bitstreams.toLocaleString('en')} bitstream${x.bitstreams === 1 ? '' : 's'}, ${gives}${rest})`;
}

/**
 * The run's room as downloads see it. The package being read holds the room its check found it needs (its
 * bitstreams, the rest of its download) against the next package's download ahead, which starts only once that check
 * passed (`checked`): else each check passed alone and the two together filled the disk. A download ahead refused so
 * is asked again at its turn (PackagePrefetch.take), when nothing is held.
 */
export class PackageRooms {
  readonly room: PackageRoom | undefined;
  #held = 0;
  #resolve: () => void = () => undefined;

  constructor(room: PackageRoom | undefined) {
    this.room = room && {
      lacks: (needed, what, basis) => room.lacks(needed + this.#held, what, basis),
      full: () => room.full(),
    };
  }

  /** A new package is read: nothing held, its check to come. */
  next(): Promise<void> {
    this.#held = 0;
    return new Promise<void>((resolve) => (this.#resolve = resolve));
  }

  /** The package being read passed its check: it holds `bytes`, and the next may start downloading. */
  checked(bytes: number): void {
    this.#held = bytes;
    this.#resolve();
  }
}

/**
 * Refuses the package at `loc` (NoRoomForPackage, with the manifest's `entries`) when its extraction needs more room
 * than the disk has; else it takes that room (PackageRooms).
 */
export async function checkRoom(o: { room?: PackageRoom }, rooms: PackageRooms, loc: string, extracted: ExtractedBytes, toDownload: number, entries: ManifestEntry[]): Promise<void> {
  const needed = extracted.bytes + toDownload;
  const why = o.room === undefined || needed <= 0 ? null : await o.room.lacks(needed, `Extracting the package ${clip(loc)}`, extractedBasis(extracted, toDownload));
  if (why === null) return rooms.checked(needed);
  throw new NoRoomForPackage(why, entries);
}

/** Sums the packages' download progress for the run's progress (at most one report per 256 KiB). */
function packageBytes(toRead: DumpPackage[], report: ((done: number, total: number) => void) | undefined) {
  const total = toRead.reduce((n, p) => n + (lengthOf(p) ?? 0), 0);
  const each = new Map<string, number>();
  let done = 0;
  let reported = -Infinity;
  if (report && total > 0) report(0, total);
  return {
    /** Bytes of the package at `loc` downloaded so far in this run. */
    downloaded: (loc: string): number => each.get(loc) ?? 0,
    progress(loc: string, n: number): void {
      done += n - (each.get(loc) ?? 0);
      each.set(loc, n);
      if (report && (done - reported >= 256 * 1024 || done >= total)) {
        reported = done;
        report(done, Math.max(total, done));
      }
    },
  };
}

/** The package read after `pkg` (the next of `toRead`), to download while `pkg` is read; null for the last. */
export function nextOf<T>(toRead: DumpPackage[], pkg: DumpPackage, of: (p: DumpPackage) => T): T | null {
  const i = toRead.indexOf(pkg);
  return i >= 0 && i + 1 < toRead.length ? of(toRead[i + 1]!) : null;
}
