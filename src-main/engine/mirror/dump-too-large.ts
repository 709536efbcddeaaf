// A Resource Dump package the disk has no room for (above the run's reserve, disk-reserve.ts) is passed over, and the
// run goes on with the other packages: each is asked for room in turn, and a smaller one may fit. Stopping the whole
// run there (as it did) left every later package unapplied for want of room for one of them, though each was
// independent of it (§11.2). What the package holds is then, when its manifest is known (it was downloaded, or the
// Dump links a copy with rel="contents"):
//   - fetched one by one from each resource's URI, when the Source publishes a Resource List (its resources are
//     served one by one) and the disk has room for them without the package (which took the room twice: its own
//     file and what it extracts to);
//   - otherwise listed, resource by resource, as failed and not mirrored, so the run says what is missing and a
//     later sync (or a retry, from the Resource List) brings it.
// With no manifest known, the package alone is the failure. Either way a package not used leaves the run incomplete
// (nothing deleted, no checkpoint) unless its resources were all taken in hand one by one.
import { clip } from '../clip.ts';
import type { Entry } from '../documents/index.ts';
import type { Http } from '../http/client.ts';
import { loadDocument } from '../load.ts';
import type { Applier } from './apply.ts';
import type { PackageRoom } from './disk-reserve.ts';
import { entryProblem } from './entries.ts';
import type { MetadataFetcher } from './metadata.ts';
import type { DumpPackage } from './package/index.ts';
import { canonicalEntry } from './uri.ts';
import { WorkSlots } from './work-slots.ts';

/** A package's extraction refused for want of room: the sentence why, and the manifest's entries. */
export class NoRoomForPackage extends Error {
  readonly entries: Entry[];
  constructor(message: string, entries: Entry[]) {
    super(message);
    this.name = 'NoRoomForPackage';
    this.entries = entries;
  }
}

export interface WithoutPackageOptions {
  http: Http;
  applier: Applier;
  room?: PackageRoom;
  signal?: AbortSignal;
  /** A pause: no new resource is begun (those begun finish), and the package stays to be read by the resumed run. */
  pauseSignal?: AbortSignal;
  onNote?: (note: string) => void;
  metadata?: MetadataFetcher;
  /** The Source publishes a Resource List: its resources may be fetched one by one. */
  oneByOne: boolean;
  /** Resources fetched at once. */
  concurrency: number;
}

/**
 * Deals with the package `pkg`, refused with `why` (its manifest's entries when they are known): see above.
 * `count` counts a URI as listed (false when it was already: a URI of an earlier package is not fetched twice).
 * Resolves true when every resource of the package was taken in hand one by one.
 */
export async function withoutPackage(o: WithoutPackageOptions, pkg: DumpPackage, why: string, known: Entry[] | null, count: (loc: string) => boolean): Promise<boolean> {
  const loc = pkg.entry.loc;
  const entries = known ?? (await contentsCopy(o, pkg));
  if (entries === null) {
    o.applier.failForRoom(loc, `${why} The package was not used; the Dump's other packages are, as far as they fit. Free some space and sync again to mirror what it holds.`);
    return false;
  }
  const mine: Entry[] = [];
  for (const entry of entries) {
    const problem = entryProblem(entry);
    if (problem !== null) {
      o.applier.fail(entry.loc || loc, problem, true);
      continue;
    }
    canonicalEntry(entry);
    if (count(entry.loc)) mine.push(entry);
  }
  let refusal: string | null = o.oneByOne ? null : 'the Source publishes no Resource List to fetch its resources from one by one.';
  if (refusal === null && o.room !== undefined) {
    let bytes = 0;
    let sized = 0;
    for (const entry of mine) {
      const length = entry.md.length === undefined || !/^\s*\d+\s*$/.test(entry.md.length) ? undefined : Number(entry.md.length);
      if (length === undefined || !o.applier.wanted(entry)) continue;
      bytes += length;
      sized++;
    }
    const basis = `(by the lengths its manifest gives ${sized.toLocaleString('en')} of its ${mine.length.toLocaleString('en')} resources)`;
    const lacks = bytes > 0 ? await o.room.lacks(bytes, 'fetching its resources one by one', basis) : null;
    if (lacks !== null) refusal = lacks;
  }
  if (refusal !== null) {
    for (const entry of mine) {
      o.applier.failForRoom(entry.loc, `Not mirrored: ${why} Its package was not used, and ${refusal} Free some space and sync again.`);
      o.applier.settledOne();
    }
    return false;
  }
  o.onNote?.(`${why} The package was not used; its ${mine.length.toLocaleString('en')} resource${mine.length === 1 ? ' is' : 's are'} fetched one by one from ${mine.length === 1 ? 'its URI' : 'their URIs'} instead.`);
  const slots = new WorkSlots(Math.max(2, o.concurrency));
  for (const entry of mine) {
    if (o.signal?.aborted || o.pauseSignal?.aborted) break;
    await o.metadata?.note(entry);
    const wait = slots.add(o.applier.apply(entry));
    if (wait) await wait;
  }
  await slots.allSettled();
  return !o.signal?.aborted && !o.pauseSignal?.aborted;
}

/** The entries of the Dump's rel="contents" copy of the package's manifest, or null when there is none to read. */
async function contentsCopy(o: WithoutPackageOptions, pkg: DumpPackage): Promise<Entry[] | null> {
  const contents = pkg.entry.links.find((l) => l.rel === 'contents');
  if (contents === undefined) return null;
  const entries: Entry[] = [];
  try {
    const doc = await loadDocument(o.http, contents.href, { signal: o.signal, onEntry: (entry) => void entries.push(entry) });
    if (doc.summary.capability !== 'resourcedump-manifest') {
      o.onNote?.(`${clip(contents.href)}, linked as the manifest of ${clip(pkg.entry.loc)}, is a ${doc.summary.capability}, not a Resource Dump Manifest; not used.`);
      return null;
    }
  } catch (err) {
    if (o.signal?.aborted) throw err;
    o.onNote?.(`The manifest of ${clip(pkg.entry.loc)} (${clip(contents.href)}) could not be read: ${(err as Error).message}`);
    return null;
  }
  return entries;
}
