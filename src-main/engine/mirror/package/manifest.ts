// The package's manifest.xml (§11.2 Resource Dump Manifest, §13.2 Change Dump Manifest), read with the project's one
// streaming reader. Its entries are kept (they are bounded by the 50 MB document limit) because bitstreams are
// handed out in manifest order, Change Dump bitstreams by datetime.
import { parseHashes, parseW3cDatetime, readDocument, type DocumentSummary, type Entry } from '../../documents/index.ts';
import { newAfter } from '../change-timeline.ts';
import { canonicalUri } from '../uri.ts';
import { PackageError, type DumpKind, type ManifestEntry } from './model.ts';
import { zipNameOfPath } from './names.ts';

export interface Manifest {
  summary: DocumentSummary;
  entries: ManifestEntry[];
}

export const MANIFEST_CAPABILITY: Record<DumpKind, string> = {
  resourcedump: 'resourcedump-manifest',
  changedump: 'changedump-manifest',
};

function toManifestEntry(entry: Entry): ManifestEntry {
  const { hashes, problems } = entry.md.hash === undefined ? { hashes: {}, problems: [] } : parseHashes(entry.md.hash);
  // Known by the form of its URI the mirror keeps (uri.ts), as a list's entries are.
  const out: ManifestEntry = { ...entry, loc: canonicalUri(entry.loc), hashes, hashProblems: problems };
  if (entry.md.path !== undefined) out.zipName = zipNameOfPath(entry.md.path).name;
  const change = entry.md.change;
  if (change === 'created' || change === 'updated' || change === 'deleted') out.change = change;
  if (entry.md.datetime !== undefined) {
    const ms = parseW3cDatetime(entry.md.datetime);
    if (ms !== null) out.datetimeMs = ms;
  }
  if (entry.md.length !== undefined && /^\s*\d+\s*$/.test(entry.md.length)) out.length = Number(entry.md.length);
  return out;
}

export async function readManifest(
  input: AsyncIterable<Uint8Array>,
  options: { url: string; maxBytes: number; maxEntries?: number; signal?: AbortSignal },
): Promise<Manifest> {
  const entries: ManifestEntry[] = [];
  const maxEntries = options.maxEntries ?? Number.POSITIVE_INFINITY;
  const summary = await readDocument(input, {
    url: options.url,
    maxBytes: options.maxBytes,
    signal: options.signal,
    onEntry: (entry) => {
      if (entries.length >= maxEntries) {
        throw new PackageError(
          'too-many-entries',
          `The manifest lists more than ${maxEntries.toLocaleString('en')} entries (a document may hold 50,000); the package is not read`,
        );
      }
      entries.push(toManifestEntry(entry));
    },
  });
  newAfter(entries).forEach((ms, i) => {
    if (ms !== undefined) entries[i]!.newAfterMs = ms;
  });
  return { summary, entries };
}

/**
 * The order bitstreams are applied in: a Resource Dump Manifest's document order; a Change Dump Manifest's by
 * `datetime` (stable, so several changes of one URI at the same instant keep their order), or document order when
 * some entry has no valid datetime (§13.2: entries should be in chronological order anyway).
 */
export function applicationOrder(kind: DumpKind, entries: ManifestEntry[]): ManifestEntry[] {
  if (kind === 'resourcedump') return entries;
  if (entries.some((e) => e.datetimeMs === undefined)) return entries;
  return entries
    .map((entry, position) => ({ entry, position }))
    .sort((a, b) => a.entry.datetimeMs! - b.entry.datetimeMs! || a.position - b.position)
    .map((x) => x.entry);
}

/**
 * Marks every change in `ordered` (a Change Dump Manifest's entries in application order) that a later change of the
 * same URI follows. Only the last change per URI matters, as in a Change List; applying each in turn made every
 * repeated URI wait for the batch before it to be durable (2,000 changes of one URI took 14 s).
 */
export function markSuperseded(ordered: ManifestEntry[]): void {
  const seen = new Set<string>();
  for (let i = ordered.length - 1; i >= 0; i--) {
    const entry = ordered[i]!;
    if (seen.has(entry.loc)) entry.superseded = true;
    else seen.add(entry.loc);
  }
}

/** What identifies an entry when comparing the package's manifest with the Dump's `contents` copy. */
function key(entry: Entry): string {
  const md = entry.md;
  return JSON.stringify([canonicalUri(entry.loc), md.path ?? null, md.change ?? null, md.datetime ?? null, md.hash ?? null, md.length ?? null]);
}

/**
 * Differences between the manifest inside the package and the copy the Dump links with rel="contents" (§11.1:
 * the Source should make sure they correspond). Entries are compared as a multiset; at most `max` are described, and
 * `total` counts them all.
 */
export function compareManifests(inPackage: Entry[], copy: Entry[], max = 20): { differences: string[]; total: number } {
  const counts = new Map<string, number>();
  for (const e of copy) counts.set(key(e), (counts.get(key(e)) ?? 0) + 1);
  const differences: string[] = [];
  let extra = 0;
  for (const e of inPackage) {
    const k = key(e);
    const n = counts.get(k) ?? 0;
    if (n > 0) counts.set(k, n - 1);
    else if (differences.length < max) differences.push(`${e.loc} (path ${e.md.path ?? 'none'}) is in the package's manifest but not the same in the linked copy`);
    else extra++;
  }
  for (const [k, n] of counts) {
    for (let i = 0; i < n; i++) {
      if (differences.length < max) differences.push(`${(JSON.parse(k) as string[])[0]} is in the linked copy of the manifest but not the same in the package's`);
      else extra++;
    }
  }
  const total = differences.length + extra;
  if (extra > 0) differences.push(`…and ${extra.toLocaleString('en')} more differences`);
  return { differences, total };
}
