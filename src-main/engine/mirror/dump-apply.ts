// The bridge between a dump package and the mirror: each bitstream the package reader hands out (already checked
// against the manifest and the ZIP while it streams) goes to a temporary file outside the visible tree, and only a
// verified one is prepared and staged into the Applier's durable batches when its outcome is reported, so it is
// recorded only after fixity and fsync, exactly like a downloaded resource. Nothing reaches the Applier before the
// outcome: a package read while it downloads holds its outcomes until its own fixity is known, and an outcome
// discarded then only costs its temporary file. A bitstream the mirror does not need (the local copy already
// matches, not mirrored, done already in this run, before the checkpoint) is read to its end and dropped.
import { rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { clip } from '../clip.ts';
import type { Applier } from './apply.ts';
import { endsWithDiskFull } from './disk-full.ts';
import { judge } from './fixity.ts';
import type { BitstreamFiles, BitstreamSink, EntryOutcome, ManifestEntry } from './package/index.ts';

export interface PackageApplier {
  sink: BitstreamSink;
  /** The same as files extracted off the main thread (Resource Dumps: their bitstreams need no ordering). */
  files: BitstreamFiles;
  /** Small bitstreams, verified in memory: written by the file thread, awaited only when their batch is committed. */
  verifiedBytes: (entry: ManifestEntry, bytes: Buffer) => null;
  /** Records one outcome of the package reader (verified, unverifiable or failed; deletions are the caller's). */
  outcome(outcome: EntryOutcome): Promise<void>;
  /** An outcome that will not be recorded (its package is read again, or could not be used): its file goes. */
  discard(outcome: EntryOutcome): Promise<void>;
}

async function drain(stream: Readable): Promise<void> {
  // Reading to the end lets the reader finish its checks; the bytes go nowhere.
  for await (const _chunk of stream);
}

export function packageApplier(applier: Applier, options: { skip?: (entry: ManifestEntry) => boolean } = {}): PackageApplier {
  const written = new Map<ManifestEntry, string>();
  // Files of small bitstreams still being written on the file thread: a run awaits them only when it commits them.
  const writing = new Map<ManifestEntry, Promise<void>>();
  const removeTemp = async (entry: ManifestEntry, temp: string | undefined): Promise<void> => {
    const pending = writing.get(entry);
    writing.delete(entry);
    // Not before its write is over: else the write would make it again.
    if (pending !== undefined) await pending.catch(() => undefined);
    if (temp !== undefined) await rm(temp, { force: true });
  };
  const sink: BitstreamSink = async (entry, stream) => {
    if (options.skip?.(entry) || !applier.wanted(entry)) {
      await drain(stream);
      return null;
    }
    // Written like a download: a small bitstream in one go, a large one in 1 MiB slices with backpressure.
    const file = applier.tempFile();
    try {
      for await (const chunk of stream) {
        const wait = file.add(chunk as Buffer);
        if (wait) await wait;
      }
      await file.close();
    } catch (err) {
      await file.discard();
      throw err;
    }
    written.set(entry, file.path);
    return null;
  };
  const files: BitstreamFiles = {
    pathFor: (entry) => (options.skip?.(entry) || !applier.wanted(entry) ? null : applier.tempPath()),
    written: (entry, path) => {
      written.set(entry, path);
      return null;
    },
  };
  const verifiedBytes = (entry: ManifestEntry, bytes: Buffer): null => {
    if (options.skip?.(entry) || !applier.wanted(entry)) return null;
    const file = applier.tempFile();
    file.add(bytes);
    const done = file.close(true);
    done.catch(() => undefined);
    written.set(entry, file.path);
    writing.set(entry, done);
    return null;
  };
  const outcome = async (o: EntryOutcome): Promise<void> => {
    const temp = written.get(o.entry);
    written.delete(o.entry);
    if (o.status === 'verified' && !options.skip?.(o.entry) && (await applier.adoptSame(o.entry, o.length, o.digests))) {
      await removeTemp(o.entry, temp);
    } else if (o.status === 'verified' || o.status === 'unverifiable') {
      // One not wanted is prepared all the same: prepare is what records it as unchanged or not mirrored.
      const target = options.skip?.(o.entry) ? null : applier.prepare(o.entry);
      if (target === null) {
        await removeTemp(o.entry, temp);
      } else if (temp !== undefined) {
        const pending = writing.get(o.entry);
        writing.delete(o.entry);
        applier.stageFile(target, temp, judge(target.expected, o.length, o.digests), pending);
      } else {
        applier.fail(o.entry.loc, `${clip(o.entry.loc)} changed in the mirror while its package was read; it was not extracted, and the next run fetches it`);
      }
    } else if (o.status === 'failed') {
      await removeTemp(o.entry, temp);
      // Every bitstream after it would fail the same way: the run stops, as at the disk's reserve. Judged for a failure
      // to write only, by how its reason ends (the system's error): a reason begins with names the Source chose, which
      // must not stop a run by saying "no space left on device".
      const full = o.code === 'sink-failed' && endsWithDiskFull(o.reason);
      if (full) applier.diskFull();
      applier.fail(o.entry.loc, full ? `${clip(o.entry.loc)} could not be stored: the disk is full` : o.reason);
    }
    // Every outcome (a deletion too) is one entry done: the run view's counters move as the package applies.
    applier.settledOne();
    await applier.settle();
  };
  const discard = async (o: EntryOutcome): Promise<void> => {
    const temp = written.get(o.entry);
    written.delete(o.entry);
    await removeTemp(o.entry, temp);
  };
  return { sink, files, verifiedBytes, outcome, discard };
}
