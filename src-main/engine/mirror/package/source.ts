// The Source side of dumps for the mirror: which packages a Resource Dump / Change Dump (or its Index) lists, and
// one package fetched, read and cleaned up. The mirror decides which packages to apply (a Change Dump's `from` /
// `until` against its checkpoint) and supplies the sink that writes through its atomic-write path.
import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { clip } from '../../clip.ts';
import { parseW3cDatetime, type Entry } from '../../documents/index.ts';
import { HttpStatusError, type Http } from '../../http/index.ts';
import { loadDocument, XML_ACCEPT } from '../../load.ts';
import { downloadPackage, type DownloadResult } from './download.ts';
import { readPackage, type ReadPackageOptions } from './extract.ts';
import type { DumpKind, PackageReport } from './model.ts';

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
}

const ms = (value: string | undefined): number | undefined => (value === undefined ? undefined : (parseW3cDatetime(value) ?? undefined));

/**
 * Every package a Resource Dump or Change Dump lists, in document order; an Index is followed child by child (one
 * level, as §10.2/§12.2 allow). A Dump whose packages are listed out of chronological order is returned as listed:
 * the order packages are applied in is the caller's, by `fromMs`.
 */
export async function dumpPackages(http: Http, url: string, options: { signal?: AbortSignal } = {}): Promise<DumpListing> {
  const packages: DumpPackage[] = [];
  const problems: string[] = [];
  const children: string[] = [];
  const top = await loadDocument(http, url, {
    signal: options.signal,
    onEntry: (entry) => {
      collect(entry, url);
    },
  });
  const capability = top.summary.capability;
  if (capability !== 'resourcedump' && capability !== 'changedump') {
    throw new Error(`${clip(url)} is a ${capability}, not a Resource Dump or Change Dump`);
  }
  const kind: DumpKind = capability;
  // Entries of an index are its child Dumps, not packages: moved over once the document says it is an index.
  if (top.summary.isIndex) children.push(...packages.splice(0).map((p) => p.entry.loc));
  for (const child of children) {
    try {
      const doc = await loadDocument(http, child, { signal: options.signal, onEntry: (entry) => collect(entry, child) });
      if (doc.summary.capability !== kind || doc.summary.isIndex) {
        problems.push(`${clip(child)} is listed in the ${kind} index but is a ${doc.summary.capability}${doc.summary.isIndex ? ' index' : ''}; its entries were not used`);
        packages.splice(packages.length - doc.summary.entries, doc.summary.entries);
      }
    } catch (err) {
      problems.push(`${clip(child)} could not be read: ${(err as Error).message}`);
    }
  }
  return { kind, md: top.summary.md, packages, problems };

  function collect(entry: Entry, dumpUrl: string): void {
    packages.push({ entry, dumpUrl, fromMs: ms(entry.md.from), untilMs: ms(entry.md.until), atMs: ms(entry.md.at) });
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
  downloading?: Promise<DownloadResult>;
}

type DownloadOf = Pick<FetchPackageOptions, 'http' | 'package' | 'workDir' | 'signal' | 'deadlineAt' | 'onDownloadProgress'>;

function startDownload(options: DownloadOf): Promise<DownloadResult> {
  const { entry } = options.package;
  return downloadPackage({
    http: options.http,
    url: entry.loc,
    dest: packagePath(options.workDir, entry.loc),
    length: entry.md.length,
    hash: entry.md.hash,
    signal: options.signal,
    deadlineAt: options.deadlineAt,
    onProgress: options.onDownloadProgress,
  });
}

/**
 * Downloads the next package of a Dump while the current one is read, so that the network and the disk work at the
 * same time (reading a package is bound by inflating, hashing and writing; downloading by the network). At most one
 * package ahead: two packages on disk at a time. A download that fails is reported when its package's turn comes,
 * as if it had been downloaded then; one left unfinished by a stop is resumed by the next run like any other.
 */
export class PackagePrefetch {
  #ahead: { loc: string; download: Promise<DownloadResult>; stop: AbortController } | null = null;

  /**
   * The download of `current` (already under way, or started now); once it is done, `next` (the package to be read
   * after it, if any) starts downloading while `current` is read.
   */
  downloadFor(current: DownloadOf, next: DownloadOf | null): Promise<DownloadResult> {
    const download = this.take(current.package) ?? startDownload(current);
    if (next !== null) {
      download.then(
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
    // Handled when it is taken; never an unhandled rejection meanwhile.
    download.catch(() => undefined);
    this.#ahead = { loc: options.package.entry.loc, download, stop };
  }

  /** The download started for `pkg`, if any (taken: it is the caller's now). */
  take(pkg: DumpPackage): Promise<DownloadResult> | undefined {
    if (this.#ahead?.loc !== pkg.entry.loc) return undefined;
    const { download } = this.#ahead;
    this.#ahead = null;
    return download;
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
    await ahead.download.catch(() => undefined);
  }
}

/** Where a package downloads: named after its URL, so an interrupted download is found again by the next run. */
export function packagePath(workDir: string, loc: string): string {
  return join(workDir, `package-${createHash('sha256').update(loc).digest('hex').slice(0, 24)}.zip`);
}

/**
 * Downloads one package (resuming a download left by an earlier run), reads it with its manifest checked against
 * the Dump's rel="contents" copy, then removes it. Rejects when the package cannot be had or read at all
 * (PackageDownloadError, NetworkError, PackageError); bad entries are outcomes in the report.
 */
export async function fetchPackage(options: FetchPackageOptions): Promise<{ download: DownloadResult; report: PackageReport }> {
  const { http, signal } = options;
  const { entry } = options.package;
  const download = await (options.downloading ?? startDownload(options));
  const contents = entry.links.find((l) => l.rel === 'contents');
  try {
    const report = await readPackage(download.path, {
      ...options,
      url: entry.loc,
      contentsCopy: contents === undefined ? undefined : { url: contents.href, body: fetchBody(http, contents.href, signal) },
    });
    return { download, report };
  } finally {
    if (!options.keepPackage) await rm(download.path, { force: true });
  }
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
