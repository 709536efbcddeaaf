// The Source side of dumps for the mirror: which packages a Resource Dump / Change Dump (or its Index) lists, and
// one package fetched, read and cleaned up. The mirror decides which packages to apply (a Change Dump's `from` /
// `until` against its checkpoint) and supplies the sink that writes through its atomic-write path.
import { createHash } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { clip } from '../../clip.ts';
import { parseW3cDatetime, type Entry } from '../../documents/index.ts';
import { HttpStatusError, type Http } from '../../http/index.ts';
import { formatBytes } from '../../http/errors.ts';
import { loadDocument, XML_ACCEPT } from '../../load.ts';
import { listKey } from '../entries.ts';
import type { PackageRoom } from '../disk-reserve.ts';
import { downloadPackage, PackageDownloadError, type DownloadResult } from './download.ts';
import { readPackage, type ReadPackageOptions } from './extract.ts';
import { GrowingPackage } from './growing.ts';
import type { DumpKind, EntryOutcome, PackageReport } from './model.ts';
import type { Finding } from '../../documents/model.ts';
import { PartProgress } from './part.ts';

export interface DumpPackage {
  /** The package's entry in its Dump: `loc`, rs:md `length`, `hash`, `at`/`from`/`until`, rs:ln `contents`. */
  entry: Entry;
  /** The Dump document that lists it. */
  dumpUrl: string;
  /** rs:md `from` / `until` (Change Dumps) or `at` (Resource Dumps) of the package, epoch ms. */
  fromMs?: number;
  untilMs?: number;
  atMs?: number;
}

export interface DumpListing {
  kind: DumpKind;
  /** The Dump's own rs:md (`at`, `from`, `until`, …) of the document at `url` (the Index when it is one). */
  md: Entry['md'];
  packages: DumpPackage[];
  /** Dump documents that could not be read, with the reason; the packages of the others are still listed. */
  problems: string[];
  /** What was made of a sloppy listing without losing anything (a package or child Dump named again): for people. */
  notes: string[];
  /** What the reader found against the spec in each Dump document read (the Index and its Dumps), for the run's findings. */
  findings: { document: string; findings: Finding[] }[];
}

const DUMP_WORDS: Record<DumpKind, string> = { resourcedump: 'Resource Dump', changedump: 'Change Dump' };

const ms = (value: string | undefined): number | undefined => (value === undefined ? undefined : (parseW3cDatetime(value) ?? undefined));

/**
 * Every package a Resource Dump or Change Dump lists, in document order; an Index is followed child by child (one
 * level, as §10.2/§12.2 allow). A Dump whose packages are listed out of chronological order is returned as listed:
 * the order packages are applied in is the caller's, by `fromMs`. Each package is listed once and each child Dump
 * read once: an index that names a Dump again (or itself), or a Dump that names a package again, would otherwise have
 * it downloaded and applied again (a Change Dump package read twice applies its changes over later packages'), and
 * two downloads of one package into the one file it is downloaded to break each other.
 */
export async function dumpPackages(http: Http, url: string, options: { signal?: AbortSignal } = {}): Promise<DumpListing> {
  const packages: DumpPackage[] = [];
  const problems: string[] = [];
  const notes: string[] = [];
  const listed = new Set<string>();
  let repeatedPackages = 0;
  const top: Entry[] = [];
  const doc = await loadDocument(http, url, {
    signal: options.signal,
    onEntry: (entry) => {
      top.push(entry);
    },
  });
  const capability = doc.summary.capability;
  if (capability !== 'resourcedump' && capability !== 'changedump') {
    throw new Error(`${clip(url)} is a ${capability}, not a Resource Dump or Change Dump`);
  }
  const kind: DumpKind = capability;
  const findings: DumpListing['findings'] = [{ document: url, findings: doc.summary.findings }];
  // Added one by one, not spread into push(): a Dump of some 120,000 packages or more overflowed the stack.
  if (!doc.summary.isIndex) for (const p of collect(top, url)) packages.push(p);
  else {
    // Entries of an index are its child Dumps, not packages.
    const own = new Set([listKey(url), listKey(doc.finalUrl)]);
    const read = new Set(own);
    let repeatedChildren = 0;
    for (const { loc: child } of top) {
      const key = listKey(child);
      if (read.has(key)) {
        repeatedChildren++;
        continue;
      }
      read.add(key);
      const entries: Entry[] = [];
      let landed = child;
      try {
        const childDoc = await loadDocument(http, child, { signal: options.signal, onResponse: (finalUrl) => void (landed = finalUrl), onEntry: (entry) => void entries.push(entry) });
        const landedKey = listKey(landed);
        if (landedKey !== key && read.has(landedKey)) {
          // A loop: read as this Dump, the index (or a Dump read before) gave nothing of what this one lists.
          problems.push(`${clip(child)}, named by the ${DUMP_WORDS[kind]} Index, redirects back to ${own.has(landedKey) ? 'the index' : `${clip(landed)}, read before`}; its packages were not read`);
        } else if (childDoc.summary.capability !== kind || childDoc.summary.isIndex) {
          problems.push(`${clip(child)} is listed in the ${kind} index but is a ${childDoc.summary.capability}${childDoc.summary.isIndex ? ' index' : ''}; its entries were not used`);
        } else {
          read.add(landedKey);
          findings.push({ document: child, findings: childDoc.summary.findings });
          for (const p of collect(entries, child)) packages.push(p);
        }
      } catch (err) {
        problems.push(`${clip(child)} could not be read: ${(err as Error).message}`);
      }
    }
    if (repeatedChildren > 0) notes.push(`The ${kind === 'resourcedump' ? 'Resource' : 'Change'} Dump Index names a Dump it names before, or itself, ${repeatedChildren} time${repeatedChildren === 1 ? '' : 's'}; each is read once.`);
  }
  if (repeatedPackages > 0) notes.push(`The ${kind === 'resourcedump' ? 'Resource' : 'Change'} Dump names a package it names before ${repeatedPackages} time${repeatedPackages === 1 ? '' : 's'}; each package is downloaded and applied once.`);
  return { kind, md: doc.summary.md, packages, problems, notes, findings };

  function collect(entries: Entry[], dumpUrl: string): DumpPackage[] {
    const out: DumpPackage[] = [];
    for (const entry of entries) {
      const key = listKey(entry.loc);
      if (listed.has(key)) {
        repeatedPackages++;
        continue;
      }
      listed.add(key);
      out.push({ entry, dumpUrl, fromMs: ms(entry.md.from), untilMs: ms(entry.md.until), atMs: ms(entry.md.at) });
    }
    return out;
  }
}

export interface FetchPackageOptions extends Omit<ReadPackageOptions, 'url' | 'contentsCopy'> {
  http: Http;
  package: DumpPackage;
  /** A folder of the mirror's own (outside its visible tree) where packages download; a later run resumes there. */
  workDir: string;
  /** Keep the package file after reading it (default: removed). */
  keepPackage?: boolean;
  /** Epoch ms by which the download must be done. */
  deadlineAt?: number;
  onDownloadProgress?: (bytes: number, total: number | null) => void;
  /** This package's download, already under way (see PackagePrefetch); otherwise it is downloaded here. */
  downloading?: Download;
  /** The disk's room above the run's reserve, asked before a package of known length is downloaded (download.ts). */
  room?: PackageRoom;
  /**
   * A Resource Dump package is read while it downloads when the server serves ranges (its end first, for the
   * directory), and its outcomes are held back until the download is complete and its length and hash hold; when
   * they do not, or what was fetched out of turn differs from the package downloaded, every held outcome is given
   * to `discard` (to remove what the sink wrote) and the package is read again from the file. Without `discard`
   * the package is read only once downloaded.
   */
  discard?: (outcome: EntryOutcome) => Promise<void>;
  /** Packages the Dump says are smaller than this are read only once downloaded (nothing to overlap). Default 4 MiB. */
  readAheadFrom?: number;
  /**
   * A download that looks like finishing within this many seconds is waited for, and the package read from the file
   * (default 1.5; 0: never waited for); one arriving faster than a package is extracted is waited for longer (see
   * FAST_TRANSFER). Reading while downloading pays when the network is slower than extraction; on a fast link it only
   * makes the two compete for the processor, and on a machine of two cores the download then slows to its share of
   * them while finished bitstreams wait for its end to be recorded.
   */
  quickDownloadSeconds?: number;
}

/**
 * A transfer at least this fast arrives faster than a package is extracted (the bench's 624 MiB package in 3.7 s on
 * two cores, ~170 MiB/s): read alongside, the extraction only trails it while the two share the processor. Such a
 * transfer is waited for if it looks like ending within `seconds`. Before, only the quick allowance counted, which the
 * 624 MiB package meets only above ~420 MiB/s: its download on 127.0.0.1 takes 0.8–3.1 s from run to run, and in
 * the bench sessions whose sync used 1.8 s more processor time than the reference that waits (read alongside), it
 * took 1.1–1.5 s longer. Not longer than `seconds`: a large package on a fast link is still read while it downloads.
 */
export const FAST_TRANSFER = { bytesPerSecond: 128 * 1024 * 1024, seconds: 5 };

/**
 * Whether `downloading` ends within about `seconds`, or within `fast.seconds` while it arrives at `fast.bytesPerSecond`
 * or more (it is watched for at most twice the allowance).
 */
export async function endsSoon(downloading: Download, length: number | undefined, seconds: number, signal?: AbortSignal, fast = FAST_TRANSFER): Promise<boolean> {
  if (seconds <= 0) return false;
  const part = downloading.part;
  const t0 = performance.now();
  // What had arrived at each look: the rate is judged over the last RATE_WINDOW_MS as well as since the start, since
  // a transfer speeds up after its first moments (here, a 624 MB package: ~330 MB/s over its first 0.3 s, ~590 MB/s
  // after; judged from the start alone it was read alongside, which took 0.4-1.1 s longer than waiting for it).
  const from = part.written;
  const seen: { at: number; written: number }[] = [{ at: t0, written: from }];
  // The allowance the transfer's rate earned at the last look (the quick one until it is judged fast).
  let allowance = seconds;
  for (;;) {
    if (part.done || part.failure !== null) return true;
    if (signal?.aborted) return true;
    const now = performance.now();
    const elapsed = (now - t0) / 1000;
    if (elapsed >= 2 * allowance) return false;
    seen.push({ at: now, written: part.written });
    while (seen.length > 2 && now - seen[1]!.at >= RATE_WINDOW_MS) seen.shift();
    // A rate is judged from half the allowance on (judged from a fifth, 0.3 s in, a transfer still gathering speed was
    // taken for a slow one in one bench run of two; a slow one is read alongside a few tenths of a second later);
    // without a length only a finished download counts.
    if (elapsed >= seconds / 2 && length !== undefined) {
      const since = seen[0]!;
      const recent = (part.written - since.written) / Math.max(1e-3, (now - since.at) / 1000);
      const rate = Math.max(recent, (part.written - from) / elapsed);
      // Judged again at every look: a transfer that slows down loses the longer allowance, and is read alongside.
      allowance = rate >= fast.bytesPerSecond ? Math.max(seconds, fast.seconds) : seconds;
      if (rate <= 0 || (length - part.written) / rate > allowance - elapsed) return false;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, 50);
      const stop = part.onChange(() => {
        if (part.done || part.failure !== null) done();
      });
      function done() {
        clearTimeout(timer);
        stop();
        resolve();
      }
    });
  }
}

const READ_AHEAD_FROM = 4 * 1024 * 1024;
const QUICK_DOWNLOAD_SECONDS = 1.5;
const RATE_WINDOW_MS = 150;

/** The Dump entry's `length`, when it is a number. */
export function lengthOf(pkg: DumpPackage): number | undefined {
  const length = pkg.entry.md.length;
  return length !== undefined && /^\s*\d+\s*$/.test(length) ? Number(length) : undefined;
}

/** A package's download under way: its result, and what it has written so far. */
export interface Download {
  result: Promise<DownloadResult>;
  part: PartProgress;
  /** Refused for want of room on the disk (set once that is known). */
  refused?: boolean;
}

type DownloadOf = Pick<FetchPackageOptions, 'http' | 'package' | 'workDir' | 'signal' | 'deadlineAt' | 'onDownloadProgress' | 'room'>;

/** Whether `err` is a package download refused before it began, for want of room on the disk. */
export function isNoRoom(err: unknown): err is PackageDownloadError {
  return err instanceof PackageDownloadError && err.code === 'no-room';
}

function startDownload(options: DownloadOf): Download {
  const { entry } = options.package;
  const part = new PartProgress();
  const result = downloadPackage({
    http: options.http,
    url: entry.loc,
    dest: packagePath(options.workDir, entry.loc),
    length: entry.md.length,
    hash: entry.md.hash,
    signal: options.signal,
    deadlineAt: options.deadlineAt,
    onProgress: options.onDownloadProgress,
    part,
    room:
      options.room &&
      ((needed, resumed) =>
        options.room!.lacks(
          needed,
          `Downloading the package ${clip(entry.loc)}`,
          `(by the length the Dump gives it${resumed > 0 ? `, less the ${formatBytes(resumed)} an earlier run downloaded` : ''}; what its bitstreams take once extracted is known only from the package)`,
        )),
  });
  const download: Download = { result, part };
  // Handled by whoever takes it; never an unhandled rejection meanwhile.
  result.catch((err: unknown) => {
    if (isNoRoom(err)) download.refused = true;
  });
  return download;
}

/**
 * Downloads the next package of a Dump while the current one is read, so that the network and the disk work at the
 * same time (reading a package is bound by inflating, hashing and writing; downloading by the network). At most one
 * package ahead: two packages on disk at a time. A download that fails is reported when its package's turn comes,
 * as if it had been downloaded then; one left unfinished by a stop is resumed by the next run like any other.
 */
export class PackagePrefetch {
  #ahead: { loc: string; download: Download; stop: AbortController } | null = null;

  /**
   * The download of `current` (already under way, or started now); once it is done, and `after` has resolved (the
   * room `current` takes is known: see dump-baseline.ts, PackageRooms), `next` (the package to be read after it, if
   * any) starts downloading while `current` is read.
   */
  downloadFor(current: DownloadOf, next: DownloadOf | null, after?: Promise<void>): Download {
    const download = this.take(current.package) ?? startDownload(current);
    if (next !== null) {
      Promise.all([download.result, after]).then(
        () => {
          if (!next.signal?.aborted) this.start(next);
        },
        () => undefined,
      );
    }
    return download;
  }

  /** Starts downloading `options.package` (unless it already is). */
  start(options: DownloadOf): void {
    if (this.#ahead?.loc === options.package.entry.loc) return;
    const stop = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
    const download = startDownload({ ...options, signal });
    this.#ahead = { loc: options.package.entry.loc, download, stop };
  }

  /** The download started for `pkg`, if any (taken: it is the caller's now). */
  take(pkg: DumpPackage): Download | undefined {
    if (this.#ahead?.loc !== pkg.entry.loc) return undefined;
    const { download } = this.#ahead;
    this.#ahead = null;
    // Refused while the package before it took its room (its file, its bitstreams): asked again now that it is done.
    return download.refused ? undefined : download;
  }

  /**
   * Stops a download nobody took (the run stopped early) and waits for it, so nothing keeps writing after the run;
   * what it brought stays in the work folder for the next run to resume.
   */
  async settle(): Promise<void> {
    const ahead = this.#ahead;
    this.#ahead = null;
    if (ahead === null) return;
    ahead.stop.abort(new Error('the run stopped before this package was read'));
    await ahead.download.result.catch(() => undefined);
  }
}

/** Where a package downloads: named after its URL, so an interrupted download is found again by the next run. */
export function packagePath(workDir: string, loc: string): string {
  return join(workDir, `package-${createHash('sha256').update(loc).digest('hex').slice(0, 24)}.zip`);
}

/**
 * Removes from the work folder what belongs to no package of `locs` (downloads, partial or whole, of packages the
 * Dump no longer lists): the folder is emptied only by a run that completes, so a Source whose package URLs change
 * from run to run while its transfers keep breaking off would otherwise fill it run after run. Resolves with how many
 * packages' files were removed.
 */
export async function prunePackages(workDir: string, locs: Iterable<string>): Promise<number> {
  const kept = new Set<string>();
  for (const loc of locs) kept.add(basename(packagePath(workDir, loc)));
  let names: string[];
  try {
    names = await readdir(workDir);
  } catch {
    return 0;
  }
  const removed = new Set<string>();
  for (const name of names) {
    const owner = name.replace(/\.part(\.json)?$/, '');
    if (kept.has(owner)) continue;
    await rm(join(workDir, name), { recursive: true, force: true });
    removed.add(owner);
  }
  return removed.size;
}

/**
 * Downloads one package (resuming a download left by an earlier run), reads it with its manifest checked against
 * the Dump's rel="contents" copy, then removes it. Rejects when the package cannot be had or read at all
 * (PackageDownloadError, NetworkError, PackageError); bad entries are outcomes in the report.
 */
export async function fetchPackage(options: FetchPackageOptions): Promise<{ download: DownloadResult; report: PackageReport }> {
  const { http, signal } = options;
  const { entry } = options.package;
  const downloading = options.downloading ?? startDownload(options);
  const contents = entry.links.find((l) => l.rel === 'contents');
  const contentsCopy = () => (contents === undefined ? undefined : { url: contents.href, body: fetchBody(http, contents.href, signal) });
  let download: DownloadResult | undefined;
  try {
    const length = lengthOf(options.package);
    if (
      options.kind === 'resourcedump' &&
      options.discard !== undefined &&
      (length === undefined || length >= (options.readAheadFrom ?? READ_AHEAD_FROM)) &&
      !(await endsSoon(downloading, length, options.quickDownloadSeconds ?? QUICK_DOWNLOAD_SECONDS, signal))
    ) {
      const read = await readWhileDownloading(options, downloading, contentsCopy);
      download = read.download;
      if (read.report !== null && download !== undefined) return { download, report: read.report };
    }
    download ??= await downloading.result;
    const report = await readPackage(download.path, { ...options, url: entry.loc, contentsCopy: contentsCopy() });
    return { download, report };
  } finally {
    if (!options.keepPackage) {
      download ??= await downloading.result.catch(() => undefined);
      if (download !== undefined) await rm(download.path, { force: true });
    }
  }
}

/**
 * Reads a Resource Dump package as it downloads (see FetchPackageOptions.discard). Resolves with the report, or
 * with a null report when the package must be read again from the file; rejects when the download fails (after
 * discarding every held outcome) or the run was stopped.
 */
async function readWhileDownloading(
  options: FetchPackageOptions,
  downloading: Download,
  contentsCopy: () => ReadPackageOptions['contentsCopy'],
): Promise<{ download?: DownloadResult; report: PackageReport | null }> {
  const { entry } = options.package;
  const length = lengthOf(options.package);
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  let growing: GrowingPackage;
  try {
    growing = await GrowingPackage.open({ http: options.http, url: entry.loc, part: downloading.part, length, signal });
  } catch {
    // No ranges (or the end could not be had): read the package once it is downloaded, as without streaming.
    if (options.signal?.aborted) throw options.signal.reason;
    return { report: null };
  }
  // Outcomes wait for the package's fixity: held until the download is verified, then passed on ('pass'); all
  // dropped if it fails, if what was read ahead differs from it, or if reading failed before ('drop').
  const at: { mode: 'hold' | 'pass' | 'drop'; readFailed: boolean } = { mode: 'hold', readFailed: false };
  const held: EntryOutcome[] = [];
  let flushing: Promise<void> = Promise.resolve();
  const verdict = downloading.result.then(
    async (download) => {
      if (at.readFailed || growing.invalid !== null || !(await growing.matches(download.path))) {
        at.mode = 'drop';
        stop.abort(new Error('the package is read again from the file'));
        return download;
      }
      at.mode = 'pass';
      flushing = (async () => {
        while (held.length > 0) await options.onOutcome?.(held.shift()!);
      })();
      return download;
    },
    (err: unknown) => {
      at.mode = 'drop';
      stop.abort(err);
      throw err;
    },
  );
  verdict.catch(() => undefined);
  let report: PackageReport | null = null;
  let readError: unknown = null;
  try {
    report = await readPackage(growing, {
      ...options,
      url: entry.loc,
      signal,
      contentsCopy: contentsCopy(),
      onOutcome: async (outcome) => {
        if (at.mode !== 'pass') {
          held.push(outcome);
          return;
        }
        await flushing;
        await options.onOutcome?.(outcome);
      },
    });
  } catch (err) {
    at.readFailed = true;
    readError = err;
  }
  let download: DownloadResult;
  try {
    download = await verdict;
    await flushing;
  } catch (err) {
    await discardAll(options, held);
    await growing.close();
    throw err;
  }
  await growing.close();
  if (options.signal?.aborted) {
    await discardAll(options, held);
    throw options.signal.reason;
  }
  if (at.mode === 'drop') {
    await discardAll(options, held);
    return { download, report: null };
  }
  // Passed on: what was read is the verified package's, so an error now is the package's own.
  if (readError !== null) throw readError;
  return { download, report };
}

async function discardAll(options: FetchPackageOptions, held: EntryOutcome[]): Promise<void> {
  for (const outcome of held.splice(0)) await options.discard?.(outcome).catch(() => undefined);
}

/** A document's bytes, fetched only when first read (so a failure shows up where the copy is compared). */
async function* fetchBody(http: Http, url: string, signal: AbortSignal | undefined): AsyncGenerator<Uint8Array> {
  const response = await http.get(url, { signal, accept: XML_ACCEPT, maxBytes: 50 * 1024 * 1024 });
  if (response.status < 200 || response.status > 299) {
    await response.discard();
    throw new HttpStatusError(response.status, response.statusText, response.url);
  }
  yield* response.body;
}
