// What reading a Resource Dump or Change Dump package yields (core spec §11, §13): one outcome per manifest entry,
// the refusals of the package's own ZIP entries, and what was wrong with the package as a whole.
import type { Entry, Finding, HashAlgorithm } from '../../documents/model.ts';

/** Which kind of dump a package belongs to: decides the manifest capability expected and how entries are ordered. */
export type DumpKind = 'resourcedump' | 'changedump';

/** One `<url>` of the package's manifest, with what the package reader made of it. */
export interface ManifestEntry extends Entry {
  /** `path` without its leading slash, NFC: the ZIP name it is looked up by. Absent for deletions. */
  zipName?: string;
  /** `created` / `updated` / `deleted` in a Change Dump Manifest; absent in a Resource Dump Manifest. */
  change?: 'created' | 'updated' | 'deleted';
  /** Epoch ms of `datetime`, when present and valid. */
  datetimeMs?: number;
  /**
   * Whether the change is after a checkpoint is judged by this (Change Dump Manifests): the end of the period its
   * `datetime` names ("2020-01-03": the whole day), or for an undated entry that of the next dated entry in the manifest,
   * which it comes before (core spec §12.1, Example 19); absent when no dated entry follows.
   */
  newAfterMs?: number;
  /** Digests the manifest gives (lower-case hex), and every hash token that could not be used. */
  hashes: Partial<Record<HashAlgorithm, string>>;
  hashProblems: string[];
  /** `length`, when given and a valid integer. */
  length?: number;
  /**
   * A Change Dump Manifest's change of a URI that a later change of the same URI in the package follows, in
   * application order (`markSuperseded`): only the last one decides what the mirror holds.
   */
  superseded?: boolean;
}

/** Stable codes of refusals and failures, for programs; `reason` is the sentence for people. */
export type EntryFailureCode =
  | 'missing-path'
  | 'bad-change'
  | 'bad-length'
  | 'path-escapes'
  | 'not-in-package'
  | 'duplicate-name'
  | 'symlink'
  | 'encrypted'
  | 'unsupported-compression'
  | 'header-mismatch'
  | 'size-mismatch'
  | 'bomb'
  | 'total-limit'
  | 'length-mismatch'
  | 'hash-mismatch'
  | 'crc-mismatch'
  | 'corrupt'
  | 'sink-failed'
  | 'sink-incomplete';

/** How one manifest entry ended. */
export type EntryOutcome =
  | {
      status: 'verified' | 'unverifiable';
      entry: ManifestEntry;
      /** Bytes delivered to the sink. */
      length: number;
      /** Digests computed while streaming: every algorithm the manifest named, plus md5 when it named none. */
      digests: Partial<Record<HashAlgorithm, string>>;
      /** Why the bitstream is unverifiable (a malformed or unknown hash in the manifest); empty when verified. */
      problems: string[];
      /** What the sink resolved to (e.g. the temporary file it wrote). */
      sinkResult: unknown;
    }
  | { status: 'deleted'; entry: ManifestEntry }
  | { status: 'failed'; entry: ManifestEntry; code: EntryFailureCode; reason: string };

/** A ZIP entry refused on its own (whether or not the manifest names it). */
export interface ZipEntryRefusal {
  /** The name as stored (decoded for display). */
  name: string;
  code: EntryFailureCode;
  reason: string;
}

export interface PackageReport {
  /** The package's manifest: capability, its rs:md, its conformance findings. */
  manifest: { capability: string; md: Entry['md']; entries: number; findings: Finding[] };
  /** One per manifest entry, in the order they were handed out (Change Dumps: by datetime). */
  outcomes: EntryOutcome[];
  /** ZIP entries refused whatever the manifest says (escaping names, symlinks, duplicates, encryption, …): the first 100. */
  refusedZipEntries: ZipEntryRefusal[];
  /** How many more were refused than `refusedZipEntries` lists. */
  refusedLeftOut: number;
  /** Files in the package that the manifest does not name (not extracted): the first 100. */
  unlisted: string[];
  /** How many unlisted names were left out of `unlisted`. */
  unlistedLeftOut: number;
  /** Differences between the manifest in the package and the Dump's `rel="contents"` copy: the first 20 described. */
  contentsMismatch: string[];
  /** How many differences there are in all. */
  contentsMismatchCount: number;
  counts: { verified: number; unverifiable: number; deleted: number; failed: number; bytes: number };
}

/** The limits a package is read within; each one that cuts something off says so in the outcome. */
export interface PackageLimits {
  /** An entry whose uncompressed size is over `bombMinBytes` and over `bombRatio` × its compressed size is refused. */
  bombRatio: number;
  bombMinBytes: number;
  /** Total uncompressed bytes handed out for one package; default max(1 GiB, 100 × the package's size). */
  maxTotalBytes?: number;
  /** Central directory entries read at most. */
  maxZipEntries: number;
  /** The manifest's size limit (the document limit of §7). */
  maxManifestBytes: number;
  /**
   * Manifest entries read at most: twice the 50,000 a sitemap document may hold. Each costs the reading a few KiB
   * while the package is applied; a manifest of a million tiny entries within 50 MB would take gigabytes.
   */
  maxManifestEntries: number;
}

export const DEFAULT_LIMITS: PackageLimits = {
  bombRatio: 100,
  bombMinBytes: 4 * 1024 * 1024,
  maxZipEntries: 1_000_000,
  maxManifestBytes: 50 * 1024 * 1024,
  maxManifestEntries: 100_000,
};

/** The one error a whole package is refused with (not a ZIP, no manifest, a manifest of another kind, …). */
export class PackageError extends Error {
  code: 'not-zip' | 'no-manifest' | 'manifest-refused' | 'wrong-manifest' | 'too-many-entries' | 'io' | 'aborted';
  constructor(code: PackageError['code'], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PackageError';
    this.code = code;
  }
}
