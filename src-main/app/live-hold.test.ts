// The mirror summary's live hold: what holds the checkpoint, since when, and only the failures still standing.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { advanceCheckpoint } from '../engine/live/checkpoint.ts';
import { readFolder } from '../engine/mirror/folder.ts';
import { MirrorState, stateDirOf } from '../engine/mirror/state.ts';
import { readLiveHold } from './live-hold.ts';

const T = Date.parse('2026-01-01T00:00:00Z');
const iso = (s: number) => new Date(T + s * 1000).toISOString();

describe('the live hold a mirror view shows', () => {
  it('names where the checkpoint is held, since when, by how many failures in which runs; none once mended', () => {
    const dest = mkdtempSync(join(tmpdir(), 'live-hold-'));
    const state = new MirrorState(stateDirOf(dest));
    state.setCheckpoint({ at: iso(10), from: 'http://example.org/resourcelist.xml' });
    const r1 = state.startRun('incremental', 'live', null);
    const r2 = state.startRun('incremental', 'live', null);
    const failed = [{ uri: 'http://x/a', runId: r1.id, ms: T + 15_000 }, { uri: 'http://x/b', runId: r2.id, ms: T + 17_000 }];
    advanceCheckpoint(state, { fromMs: T + 10_000, until: iso(20), topic: 'http://example.org/topic', failed, applied: [] });
    expect(readLiveHold(dest, readFolder(dest)!)).toEqual({ at: iso(15), since: r1.startedAt, failures: 2, runIds: [r1.id, r2.id], overflow: false });
    // A retry mirrors both: nothing is shown as holding it, though the checkpoint moves only with the next batch.
    const retry = state.startRun('incremental', 'retry', null);
    for (const uri of ['http://x/a', 'http://x/b']) {
      state.put({ uri, path: uri.slice(7), length: 1, digests: {}, lastmod: null, etag: null, lastModified: null, type: null, status: 'verified', verifiedAt: iso(30), runId: retry.id });
    }
    expect(readLiveHold(dest, readFolder(dest)!)).toBeNull();
    state.close();
  });

  it('is null for a mirror the live side does not hold', () => {
    const dest = mkdtempSync(join(tmpdir(), 'live-hold-'));
    const state = new MirrorState(stateDirOf(dest));
    state.setCheckpoint({ at: iso(10), from: 'http://example.org/resourcelist.xml' });
    expect(readLiveHold(dest, readFolder(dest)!)).toBeNull();
    state.close();
  });
});
