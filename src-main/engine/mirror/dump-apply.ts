// The bridge between a dump package and the mirror: each bitstream the package reader hands out (already checked
// against the manifest and the ZIP while it streams) goes to a temporary file outside the visible tree, and only a
// verified one is staged into the Applier's durable batches, so it is recorded only after fixity and fsync, exactly
// like a downloaded resource. A bitstream the mirror does not need (the local copy already matches, not mirrored,
// done already in this run, before the checkpoint) is read to its end and dropped.
import { rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { Applier, WriteTarget } from './apply.ts';
import { judge } from './fixity.ts';
import type { BitstreamSink, EntryOutcome, ManifestEntry } from './package/index.ts';

export interface PackageApplier {
  sink: BitstreamSink;
  /** Records one outcome of the package reader (verified, unverifiable or failed; deletions are the caller's). */
  outcome(outcome: EntryOutcome): Promise<void>;
}

async function drain(stream: Readable): Promise<void> {
  // Reading to the end lets the reader finish its checks; the bytes go nowhere.
  for await (const _chunk of stream);
}

export function packageApplier(applier: Applier, options: { skip?: (entry: ManifestEntry) => boolean } = {}): PackageApplier {
  const written = new Map<ManifestEntry, { target: WriteTarget; temp: string }>();
  const sink: BitstreamSink = async (entry, stream) => {
    const target = options.skip?.(entry) ? null : applier.prepare(entry);
    if (target === null) {
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
    written.set(entry, { target, temp: file.path });
    return null;
  };
  const outcome = async (o: EntryOutcome): Promise<void> => {
    const w = written.get(o.entry);
    written.delete(o.entry);
    if (o.status === 'verified' || o.status === 'unverifiable') {
      if (w) applier.stageFile(w.target, w.temp, judge(w.target.expected, o.length, o.digests));
    } else if (o.status === 'failed') {
      if (w) await rm(w.temp, { force: true });
      applier.fail(o.entry.loc, o.reason);
    }
    // Every outcome (a deletion too) is one entry done: the run view's counters move as the package applies.
    applier.settledOne();
    await applier.settle();
  };
  return { sink, outcome };
}
