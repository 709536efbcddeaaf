// Reads one downloaded package: its central directory, its manifest.xml (checked against the Dump's rel="contents"
// copy when there is one), then every manifest entry in application order, each bitstream streamed to the caller's
// sink through a fixity check. Memory stays bounded whatever the package's size: file data only ever passes
// through in 1 MiB slices, with backpressure from the sink. One bad entry fails alone; only a package that cannot
// be read at all (not a ZIP, no usable manifest) rejects with a PackageError.
import { hash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { crc32, inflateRawSync } from 'node:zlib';
import type { Readable } from 'node:stream';
import { clip } from '../../clip.ts';
import { DocumentError, type HashAlgorithm } from '../../documents/index.ts';
import type { PackageBytes } from './bytes.ts';
import { applicationOrder, compareManifests, MANIFEST_CAPABILITY, markSuperseded, readManifest, type Manifest } from './manifest.ts';
import {
  DEFAULT_LIMITS,
  PackageError,
  type DumpKind,
  type EntryFailureCode,
  type EntryOutcome,
  type ManifestEntry,
  type PackageLimits,
  type PackageReport,
} from './model.ts';
import { unsafeName } from './names.ts';
import { extractThreads } from './extract-thread.ts';
import { checkBitstream, crcNeeded, FixityError, nodeAlgorithm, VerifyStream, type Expected } from './verify.ts';
import { readZipDirectory, type DataRange, type ZipDirectory, type ZipItem } from './zip-directory.ts';

/**
 * Receives one bitstream. It must read `stream` to its end before resolving (e.g. `pipeline(stream, file)`); the
 * stream ends only if the bytes are verified and errors otherwise, so whatever was written from an errored stream
 * must be thrown away. What it resolves to is passed back in the outcome (`sinkResult`).
 */
export type BitstreamSink = (entry: ManifestEntry, stream: Readable) => Promise<unknown>;

/**
 * Receives bitstreams as files instead: each is extracted and verified on an extraction thread straight into the
 * path `pathFor` gives (extract-thread.ts), when the package's bytes are in a file. `written` is told once the file
 * holds the verified bytes (not yet durable); what it returns is the outcome's `sinkResult`. A bitstream that fails
 * leaves no file. Entries whose bytes are not in a file (fetched ahead of a download) still go to `sink`.
 */
export interface BitstreamFiles {
  /** A new temporary path for this entry's bytes, or null to verify them without keeping them. */
  pathFor(entry: ManifestEntry): string | null;
  written(entry: ManifestEntry, path: string): unknown;
}

/** Bitstreams up to this size (stored and uncompressed) take the small path (ReadPackageOptions.verifiedBytes). */
export const SMALL_BITSTREAM = 64 * 1024;

export interface ReadPackageOptions {
  kind: DumpKind;
  /** The package's URL, for messages. */
  url: string;
  sink: BitstreamSink;
  /** Bitstreams to files, extracted off the main thread (see BitstreamFiles); `sink` serves what cannot go this way. */
  files?: BitstreamFiles;
  /**
   * Small bitstreams (SMALL_BITSTREAM) instead: read, inflated and verified here, in memory, since a stream or a job
   * on an extraction thread costs more than the work. Given their verified bytes, to keep (or not); what it resolves
   * to is the outcome's `sinkResult`. Called in application order, as `sink` is.
   */
  verifiedBytes?: (entry: ManifestEntry, bytes: Buffer) => unknown;
  /** Change Dumps: called, in order, for each `deleted` entry (they carry no bitstream). */
  onDeleted?: (entry: ManifestEntry) => void | Promise<void>;
  /** Called with each outcome as soon as it is known (progress). */
  onOutcome?: (outcome: EntryOutcome) => void | Promise<void>;
  /**
   * Called with the manifest's entries once it is read, before any bitstream is handed out (again if read again);
   * awaited, and a rejection stops the reading of the package. `inPackage` gives the uncompressed size the package's
   * central directory gives an entry's bitstream, or undefined when nothing of it will be extracted (not in the
   * package, refused, a deletion): what its extraction writes, whether or not the manifest gives a length.
   */
  onManifest?: (entries: ManifestEntry[], inPackage: (entry: ManifestEntry) => number | undefined) => void | Promise<void>;
  /** The bytes of the Dump's rel="contents" copy of the manifest, when there is one. */
  contentsCopy?: { url: string; body: AsyncIterable<Uint8Array> };
  /** Digests to compute besides those the manifest gives (to record them); default md5 when the manifest gives none. */
  alsoCompute?: HashAlgorithm[];
  limits?: Partial<PackageLimits>;
  /** The run's budget across its packages (shared by every package of one run). */
  budget?: ExtractBudget;
  /**
   * Resource Dumps: bitstreams handed to the sink at once (default 2), so the sink must cope with several at a
   * time. Change Dumps are always one at a time, in order.
   */
  concurrency?: number;
  signal?: AbortSignal;
}

/**
 * Uncompressed bytes handed out across the packages of one run, held to max(1 GiB, 100 × those packages' sizes): each
 * package keeps within its own limit, but a Dump (Index) of many small packages, or one ZIP entry that a manifest
 * names hundreds of times, would otherwise write gigabytes from a few kilobytes.
 */
export class ExtractBudget {
  extracted = 0;
  packageBytes = 0;
  readonly #floor: number;

  constructor(floor = 1024 ** 3) {
    this.#floor = floor;
  }

  get limit(): number {
    return Math.max(this.#floor, 100 * this.packageBytes);
  }
}

const MANIFEST_NAME = 'manifest.xml';

function failed(entry: ManifestEntry, code: EntryFailureCode, reason: string): EntryOutcome {
  return { status: 'failed', entry, code, reason };
}

/** Reads a package from a file, or from PackageBytes (a package still downloading; the caller closes them). */
export async function readPackage(from: string | PackageBytes, options: ReadPackageOptions): Promise<PackageReport> {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  // The central directory is read twice, so that only what the manifest names is ever held: first for manifest.xml,
  // then for the entries the manifest names.
  const first = await readZipDirectory(from, limits, (key) => key === MANIFEST_NAME, true);
  let manifest: Manifest;
  try {
    manifest = await readPackageManifest(first, limits, options);
  } finally {
    await first.close();
  }
  if (typeof from !== 'string') from.entriesPhase?.();
  const names = new Set<string>([MANIFEST_NAME]);
  for (const entry of manifest.entries) if (entry.zipName !== undefined && entry.change !== 'deleted') names.add(entry.zipName);
  const dir = await readZipDirectory(from, limits, (key) => names.has(key), true);
  try {
    await options.onManifest?.(manifest.entries, (entry) => sizeInPackage(entry, dir));
    return await readWithDirectory(dir, manifest, limits, options);
  } finally {
    await dir.close();
  }
}

async function readWithDirectory(dir: ZipDirectory, manifest: Manifest, limits: PackageLimits, options: ReadPackageOptions): Promise<PackageReport> {
  const { kind, url, signal } = options;
  const expected = MANIFEST_CAPABILITY[kind];
  if (manifest.summary.capability !== expected) {
    throw new PackageError(
      'wrong-manifest',
      `The package's manifest.xml is a ${manifest.summary.capability}, not the ${expected} a ${kind === 'resourcedump' ? 'Resource Dump' : 'Change Dump'} package must contain`,
    );
  }

  const contentsMismatch: string[] = [];
  let contentsMismatchCount = 0;
  if (options.contentsCopy !== undefined) {
    try {
      const copy = await readManifest(options.contentsCopy.body, { url: options.contentsCopy.url, maxBytes: limits.maxManifestBytes, maxEntries: limits.maxManifestEntries, signal });
      const compared = compareManifests(manifest.entries, copy.entries);
      contentsMismatch.push(...compared.differences);
      contentsMismatchCount = compared.total;
    } catch (err) {
      contentsMismatch.push(`The linked copy of the manifest (${clip(options.contentsCopy.url)}) could not be read: ${(err as Error).message}`);
      contentsMismatchCount = 1;
    }
  }

  const maxTotal = limits.maxTotalBytes ?? Math.max(1024 ** 3, 100 * dir.fileSize);
  const report: PackageReport = {
    manifest: {
      capability: manifest.summary.capability,
      md: manifest.summary.md,
      entries: manifest.summary.entries,
      findings: manifest.summary.findings,
    },
    outcomes: [],
    refusedZipEntries: dir.refused,
    refusedLeftOut: dir.refusedLeftOut,
    unlisted: dir.unlisted,
    unlistedLeftOut: dir.unlistedLeftOut,
    contentsMismatch,
    contentsMismatchCount,
    counts: { verified: 0, unverifiable: 0, deleted: 0, failed: 0, bytes: 0 },
  };

  let total = 0;
  const budget = options.budget;
  if (budget !== undefined) budget.packageBytes += dir.fileSize;
  // Each entry with the slot of its outcome in the report: a Change Dump's in application order, a Resource Dump's
  // in manifest order.
  const ordered =
    kind === 'resourcedump' ? packageOrder(manifest.entries, dir) : applicationOrder(kind, manifest.entries).map((entry, slot) => ({ entry, slot }));
  if (kind === 'changedump') markSuperseded(ordered.map((o) => o.entry));
  const outcomes: EntryOutcome[] = new Array(ordered.length);
  const one = async (entry: ManifestEntry): Promise<EntryOutcome> => {
    const plan = planEntry(kind, entry, dir, url);
    if ('status' in plan) {
      if (plan.status === 'deleted') await options.onDeleted?.(entry);
      return plan;
    }
    if (total + plan.item.entry.uncompressedSize > maxTotal) {
      return failed(entry, 'total-limit', `Not extracted: the package's bitstreams would exceed the limit of ${maxTotal.toLocaleString('en')} bytes uncompressed`);
    }
    if (budget !== undefined && budget.extracted + plan.item.entry.uncompressedSize > budget.limit) {
      return failed(
        entry,
        'total-limit',
        `Not extracted: the bitstreams of this run's packages would exceed ${budget.limit.toLocaleString('en')} bytes uncompressed (100 times the ${budget.packageBytes.toLocaleString('en')} bytes of the packages, at least 1 GiB)`,
      );
    }
    total += plan.item.entry.uncompressedSize;
    if (budget !== undefined) budget.extracted += plan.item.entry.uncompressedSize;
    return deliver(dir, plan.item, entry, options);
  };
  // A Change Dump's bitstreams are applied strictly in order; a Resource Dump's are independent, and two at a time
  // keep both cores busy (one hashing while the other's bytes are inflated and written in the thread pool).
  const concurrency = kind === 'changedump' ? 1 : Math.max(1, options.concurrency ?? 2);
  let next = 0;
  let stopped = false;
  const worker = async (): Promise<void> => {
    while (next < ordered.length && !stopped) {
      if (signal?.aborted) throw new PackageError('aborted', `Reading ${url} was cancelled`, { cause: signal.reason });
      const i = next++;
      const outcome = await one(ordered[i]!.entry);
      outcomes[ordered[i]!.slot] = outcome;
      if (outcome.status === 'failed') report.counts.failed++;
      else if (outcome.status === 'deleted') report.counts.deleted++;
      else {
        report.counts[outcome.status]++;
        report.counts.bytes += outcome.length;
      }
      await options.onOutcome?.(outcome);
    }
  };
  // Every worker is waited for, even after one failed: nothing may still be writing once this returns.
  const guarded = () =>
    worker().catch((err: unknown) => {
      stopped = true;
      throw err;
    });
  const ends = await Promise.allSettled(Array.from({ length: Math.min(concurrency, ordered.length) }, guarded));
  const rejected = ends.find((e) => e.status === 'rejected');
  if (rejected) throw rejected.reason;
  report.outcomes = outcomes;

  return report;
}

/**
 * A Resource Dump's bitstreams are independent (§11.2), so they are read in the order they lie in the package:
 * one pass front to back, which a package still downloading can follow as its bytes arrive. Outcomes still come
 * in manifest order in the report. Entries not in the package keep their place at the front (they fail at once).
 */
function packageOrder(entries: ManifestEntry[], dir: ZipDirectory): { entry: ManifestEntry; slot: number }[] {
  const offset = (e: ManifestEntry): number => (e.zipName === undefined ? -1 : (dir.items.get(e.zipName)?.entry.relativeOffsetOfLocalHeader ?? -1));
  return entries
    .map((entry, slot) => ({ entry, slot, at: offset(entry) }))
    .sort((a, b) => a.at - b.at || a.slot - b.slot)
    .map(({ entry, slot }) => ({ entry, slot }));
}

async function readPackageManifest(dir: ZipDirectory, limits: PackageLimits, options: ReadPackageOptions): Promise<Manifest> {
  const item = dir.items.get(MANIFEST_NAME);
  if (item === undefined) {
    throw new PackageError('no-manifest', `The package has no manifest.xml at its top level (§11.2/§13.2 require one)`);
  }
  if (item.refusal) throw new PackageError('manifest-refused', `The package's manifest.xml cannot be used. ${item.refusal.reason}`);
  const manifestUrl = `${options.url}#manifest.xml`;
  try {
    const data = await dir.openData(item);
    const verify = new VerifyStream({ length: item.entry.uncompressedSize, crc32: item.entry.crc32, hashes: {}, label: 'manifest.xml' });
    data.on('error', (err) => verify.destroy(err));
    return await readManifest(data.pipe(verify), { url: manifestUrl, maxBytes: limits.maxManifestBytes, maxEntries: limits.maxManifestEntries, signal: options.signal });
  } catch (err) {
    if (err instanceof DocumentError || err instanceof FixityError) {
      throw new PackageError('manifest-refused', `The package's manifest.xml was refused: ${err.message}`, { cause: err });
    }
    throw err;
  }
}

/** The uncompressed size the central directory gives `entry`'s bitstream, unless nothing of it will be extracted. */
function sizeInPackage(entry: ManifestEntry, dir: ZipDirectory): number | undefined {
  if (entry.change === 'deleted' || entry.zipName === undefined || unsafeName(entry.zipName) !== null) return undefined;
  const item = dir.items.get(entry.zipName);
  return item === undefined || item.refusal !== undefined ? undefined : item.entry.uncompressedSize;
}

/** An outcome decided without reading any bytes, or the ZIP entry to extract. */
function planEntry(kind: DumpKind, entry: ManifestEntry, dir: ZipDirectory, url: string): EntryOutcome | { item: ZipItem } {
  if (kind === 'changedump') {
    if (entry.change === undefined) {
      const what = entry.md.change === undefined ? 'has no "change" attribute' : `has an unknown change ${clip(JSON.stringify(entry.md.change))}`;
      return failed(entry, 'bad-change', `Manifest entry for ${clip(entry.loc)} ${what} (§13.2: created, updated or deleted)`);
    }
    // Deletions carry no bitstream; a path given anyway is not followed.
    if (entry.change === 'deleted') return { status: 'deleted', entry };
  }
  if (entry.zipName === undefined) {
    return failed(entry, 'missing-path', `Manifest entry for ${clip(entry.loc)} has no "path", so its bitstream cannot be found`);
  }
  const unsafe = unsafeName(entry.zipName);
  if (unsafe !== null) return failed(entry, 'path-escapes', `Refused: the manifest's path for ${clip(entry.loc)} has ${unsafe}`);
  const item = dir.items.get(entry.zipName);
  if (item === undefined) {
    return failed(entry, 'not-in-package', `${clip(entry.md.path ?? '')} (for ${clip(entry.loc)}) is in the manifest but not in the package ${clip(url)}`);
  }
  if (item.refusal) return failed(entry, item.refusal.code, item.refusal.reason);
  if (entry.length !== undefined && entry.length !== item.entry.uncompressedSize) {
    return failed(
      entry,
      'length-mismatch',
      `${clip(entry.md.path ?? '')}: the manifest says ${entry.length.toLocaleString('en')} bytes, the package holds ${item.entry.uncompressedSize.toLocaleString('en')}`,
    );
  }
  return { item };
}

async function deliver(dir: ZipDirectory, item: ZipItem, entry: ManifestEntry, options: ReadPackageOptions): Promise<EntryOutcome> {
  const problems = [...entry.hashProblems];
  if (entry.md.length !== undefined && entry.length === undefined) problems.push(`"length" ${clip(JSON.stringify(entry.md.length))} is not a number`);
  const hasHash = Object.keys(entry.hashes).length > 0;
  const alsoCompute = options.alsoCompute ?? (hasHash ? [] : ['md5']);
  const expected: Expected = { length: item.entry.uncompressedSize, crc32: item.entry.crc32, hashes: entry.hashes, alsoCompute, label: entry.md.path ?? item.name };
  const small = item.entry.uncompressedSize <= SMALL_BITSTREAM && item.entry.compressedSize <= SMALL_BITSTREAM;
  if (small && options.verifiedBytes !== undefined) return deliverSmall(dir, item, entry, options.verifiedBytes, expected, problems, options.signal);
  if (options.files !== undefined && extractThreads.available) {
    const outcome = await deliverToFile(dir, item, entry, options.files, expected, problems, options.signal);
    if (outcome !== null) return outcome;
  }
  let data: Readable;
  try {
    data = await dir.openData(item);
  } catch (err) {
    if (err instanceof FixityError) return failed(entry, err.code, err.message);
    throw err;
  }
  const verify = new VerifyStream({
    length: item.entry.uncompressedSize,
    crc32: item.entry.crc32,
    hashes: entry.hashes,
    alsoCompute,
    label: entry.md.path ?? item.name,
  });
  // Kept in an object: TypeScript does not see the assignment in the listener.
  const seen: { error: Error | null } = { error: null };
  verify.on('error', (err) => {
    seen.error ??= err;
  });
  data.on('error', (err) => verify.destroy(err instanceof FixityError ? err : new FixityError('corrupt', `${item.name}: ${err.message}`)));
  verify.on('close', () => data.destroy());
  const onAbort = () => verify.destroy(new Error('cancelled'));
  options.signal?.addEventListener('abort', onAbort, { once: true });
  data.pipe(verify);
  let sinkResult: unknown;
  try {
    sinkResult = await options.sink(entry, verify);
  } catch (err) {
    if (seen.error instanceof FixityError) return failed(entry, seen.error.code, seen.error.message);
    return failed(entry, 'sink-failed', `${clip(entry.loc)} could not be stored: ${(err as Error).message}`);
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
  if (seen.error !== null) {
    const err = seen.error;
    return err instanceof FixityError ? failed(entry, err.code, err.message) : failed(entry, 'corrupt', err.message);
  }
  if (!verify.readableEnded || verify.digests === null) {
    verify.destroy();
    return failed(entry, 'sink-incomplete', `${clip(entry.loc)}: the sink stopped before the end of the bitstream; nothing was verified`);
  }
  return {
    status: problems.length > 0 ? 'unverifiable' : 'verified',
    entry,
    length: verify.bytes,
    digests: verify.digests,
    problems,
    sinkResult,
  };
}

/** One bitstream extracted on an extraction thread into a file; null when its bytes are not all in a file. */
async function deliverToFile(
  dir: ZipDirectory,
  item: ZipItem,
  entry: ManifestEntry,
  files: BitstreamFiles,
  expected: Expected,
  problems: string[],
  signal: AbortSignal | undefined,
): Promise<EntryOutcome | null> {
  let fd: number | null;
  let range: DataRange;
  try {
    range = await dir.locate(item);
    fd = (await dir.bytes.fileRange?.(range.start, range.end)) ?? null;
  } catch (err) {
    if (signal?.aborted) throw err;
    if (err instanceof FixityError) return failed(entry, err.code, err.message);
    // As when the stream of its bytes fails: the package (still downloading) can no longer be read this way.
    return failed(entry, 'corrupt', `${item.name}: ${(err as Error).message}`);
  }
  if (fd === null) return null;
  const algorithms = [...new Set([...(Object.keys(expected.hashes) as HashAlgorithm[]), ...(expected.alsoCompute ?? [])])];
  const out = files.pathFor(entry);
  const result = await extractThreads.run({ fd, ...range, length: expected.length, algorithms: algorithms.map(nodeAlgorithm), crc: crcNeeded(expected), out }, signal);
  const discard = async () => {
    if (out !== null) await rm(out, { force: true });
  };
  if (!result.ok) {
    await discard();
    if (signal?.aborted) throw new PackageError('aborted', `Reading the package was cancelled`, { cause: signal.reason });
    if (result.code === 'size-mismatch') return failed(entry, 'size-mismatch', `${expected.label}: ${result.message}`);
    if (result.code === 'sink-failed') return failed(entry, 'sink-failed', `${clip(entry.loc)} could not be stored: ${result.message}`);
    return failed(entry, 'corrupt', `${item.name}: ${result.message}`);
  }
  const digests: Partial<Record<HashAlgorithm, string>> = {};
  algorithms.forEach((algorithm, i) => (digests[algorithm] = result.digests[i]));
  const failure = checkBitstream(expected, result.bytes, result.crc, digests);
  if (failure !== null) {
    await discard();
    return failed(entry, failure.code, failure.message);
  }
  let sinkResult: unknown = null;
  if (out !== null) {
    try {
      sinkResult = await files.written(entry, out);
    } catch (err) {
      await discard();
      return failed(entry, 'sink-failed', `${clip(entry.loc)} could not be stored: ${(err as Error).message}`);
    }
  }
  return { status: problems.length > 0 ? 'unverifiable' : 'verified', entry, length: result.bytes, digests, problems, sinkResult };
}

/** One small bitstream read, inflated and verified here, in memory; its bytes go to `verifiedBytes`. */
async function deliverSmall(
  dir: ZipDirectory,
  item: ZipItem,
  entry: ManifestEntry,
  verifiedBytes: NonNullable<ReadPackageOptions['verifiedBytes']>,
  expected: Expected,
  problems: string[],
  signal: AbortSignal | undefined,
): Promise<EntryOutcome> {
  let range: DataRange;
  let stored: Buffer;
  try {
    range = await dir.locate(item);
    stored = await dir.readRange(range);
  } catch (err) {
    if (signal?.aborted) throw err;
    if (err instanceof FixityError) return failed(entry, err.code, err.message);
    return failed(entry, 'corrupt', `${item.name}: ${(err as Error).message}`);
  }
  let bytes: Buffer;
  if (range.method === 0) bytes = stored;
  else {
    const tooMany = () => failed(entry, 'size-mismatch', `${expected.label}: more bytes than the ${expected.length.toLocaleString('en')} the package declares; stopped reading`);
    try {
      // One byte more than declared is enough to know there are too many, without inflating a bomb further.
      bytes = inflateRawSync(stored, { maxOutputLength: expected.length + 1 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return tooMany();
      return failed(entry, 'corrupt', `${item.name}: ${(err as Error).message}`);
    }
    if (bytes.length > expected.length) return tooMany();
  }
  const digests: Partial<Record<HashAlgorithm, string>> = {};
  for (const algorithm of new Set([...(Object.keys(expected.hashes) as HashAlgorithm[]), ...(expected.alsoCompute ?? [])])) {
    digests[algorithm] = hash(nodeAlgorithm(algorithm), bytes, 'hex');
  }
  const failure = checkBitstream(expected, bytes.length, crcNeeded(expected) ? crc32(bytes) : 0, digests);
  if (failure !== null) return failed(entry, failure.code, failure.message);
  let sinkResult: unknown;
  try {
    sinkResult = await verifiedBytes(entry, bytes);
  } catch (err) {
    return failed(entry, 'sink-failed', `${clip(entry.loc)} could not be stored: ${(err as Error).message}`);
  }
  return { status: problems.length > 0 ? 'unverifiable' : 'verified', entry, length: bytes.length, digests, problems, sinkResult };
}
