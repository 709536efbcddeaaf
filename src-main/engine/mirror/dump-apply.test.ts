// The bridge between a dump package and the mirror, on its own: what it does with a bitstream the disk refused.
import { describe, expect, it } from 'vitest';
import type { Applier } from './apply.ts';
import { packageApplier } from './dump-apply.ts';
import type { ManifestEntry } from './package/index.ts';

function stubApplier() {
  const calls = { failed: [] as { uri: string; reason: string }[], diskFull: 0, settled: 0 };
  const applier = {
    fail: (uri: string, reason: string) => void calls.failed.push({ uri, reason }),
    diskFull: () => void calls.diskFull++,
    settledOne: () => void calls.settled++,
    settle: async () => undefined,
  } as unknown as Applier;
  return { applier, calls };
}

const entry = (loc: string) => ({ loc, md: {}, ln: [], hashes: {}, hashProblems: [] }) as unknown as ManifestEntry;

describe('packageApplier', () => {
  it('stops the run on a bitstream the full disk refused, said plainly, instead of failing each after it the same way', async () => {
    const { applier, calls } = stubApplier();
    const bridge = packageApplier(applier);
    // As the extraction thread words it.
    await bridge.outcome({ status: 'failed', entry: entry('http://127.0.0.1:9/r2'), code: 'sink-failed', reason: 'r2: ENOSPC: no space left on device, write' });
    expect(calls.diskFull).toBe(1);
    expect(calls.failed).toEqual([{ uri: 'http://127.0.0.1:9/r2', reason: 'http://127.0.0.1:9/r2 could not be stored: the disk is full' }]);

    // Any other failure is the bitstream's own, as the reader said it.
    await bridge.outcome({ status: 'failed', entry: entry('http://127.0.0.1:9/r3'), code: 'size-mismatch', reason: 'r3 is 12 bytes, the manifest says 10' });
    expect(calls.diskFull).toBe(1);
    expect(calls.failed.at(-1)).toEqual({ uri: 'http://127.0.0.1:9/r3', reason: 'r3 is 12 bytes, the manifest says 10' });
    // Nor does a name the Source chose stop the run by saying the disk is full.
    await bridge.outcome({ status: 'failed', entry: entry('http://127.0.0.1:9/r4'), code: 'corrupt', reason: 'a: ENOSPC: no space left on device, write: incorrect header check' });
    await bridge.outcome({ status: 'failed', entry: entry('http://127.0.0.1:9/r5'), code: 'size-mismatch', reason: '/x ENOSPC: no space left on device, write' });
    // A damaged package is the package's fault, whatever its entry is named: the extraction thread says a failure
    // to write as one (extract-thread.ts).
    await bridge.outcome({ status: 'failed', entry: entry('http://127.0.0.1:9/r6'), code: 'corrupt', reason: 'x: ENOSPC: no space left on device, write' });
    expect(calls.diskFull).toBe(1);
    expect(calls.settled).toBe(5);
  });
});
