// How the live side moves the mirror's checkpoint (checkpoint.ts), on a real mirror state: never past a failure
// standing, on as soon as it is mended, and on from where a sync left it.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MirrorState, stateDirOf } from '../mirror/state.ts';
import { advanceCheckpoint, liveHold, MAX_HELD_FAILURES, releaseMended, standingLiveHold } from './checkpoint.ts';

const T = Date.parse('2026-01-01T00:00:00Z');
const iso = (s: number) => new Date(T + s * 1000).toISOString();
const topic = 'http://example.org/topic';

function mirror(atS: number) {
  const state = new MirrorState(stateDirOf(mkdtempSync(join(tmpdir(), 'live-checkpoint-'))));
  state.setCheckpoint({ at: iso(atS), from: 'http://example.org/resourcelist.xml' });
  return state;
}
const at = (state: MirrorState) => (Date.parse(state.checkpoint()!.at) - T) / 1000;
const batch = (fromS: number, untilS: number, failed: { uri: string; s: number }[] = [], applied: string[] = []) => ({
  fromMs: T + fromS * 1000,
  until: iso(untilS),
  topic,
  failed: failed.map((f) => ({ uri: f.uri, runId: 5, ms: T + f.s * 1000 })),
  applied,
});

describe('the checkpoint the live side keeps', () => {
  it('goes to the earliest failure standing, and on to what was applied once it is mended', () => {
    const state = mirror(10);
    advanceCheckpoint(state, batch(10, 20, [{ uri: 'http://x/b', s: 17 }, { uri: 'http://x/a', s: 15 }]));
    expect(at(state)).toBe(15);
    advanceCheckpoint(state, batch(20, 30, [], ['http://x/a']));
    expect(at(state)).toBe(17);
    advanceCheckpoint(state, batch(30, 40, [], ['http://x/b']));
    expect(at(state)).toBe(40);
    expect(liveHold(state)).toBeNull();
    state.close();
  });

  it('stays before a hole it cannot fill', () => {
    const state = mirror(10);
    advanceCheckpoint(state, batch(10, 20));
    advanceCheckpoint(state, batch(25, 30));
    expect(at(state)).toBe(20);
    state.close();
  });

  it('goes on from where a sync moved it, counting what the live side applied after that', () => {
    const state = mirror(10);
    advanceCheckpoint(state, batch(10, 20, [{ uri: 'http://x/a', s: 15 }]));
    advanceCheckpoint(state, batch(20, 30));
    expect(at(state)).toBe(15);
    // A sync (its Change List read before the live side's last notifications) mends the failure and moves the
    // checkpoint to 25: the live side's next batch starts at 30.
    state.setCheckpoint({ at: iso(25), from: 'http://example.org/changelist.xml' });
    advanceCheckpoint(state, batch(30, 40));
    expect(at(state)).toBe(40);
    // Moved back (a baseline of an older list): what the live side applied before no longer counts.
    state.setCheckpoint({ at: iso(35), from: 'http://example.org/resourcelist.xml' });
    advanceCheckpoint(state, batch(50, 60));
    expect(at(state)).toBe(35);
    state.close();
  });

  it('with more failures than it lists, waits for a sync', () => {
    const state = mirror(10);
    const many = Array.from({ length: MAX_HELD_FAILURES + 1 }, (_, i) => ({ uri: `http://x/${i}`, s: 20 - (i === MAX_HELD_FAILURES ? 5 : 0) }));
    advanceCheckpoint(state, batch(10, 20, many));
    expect(at(state)).toBe(10);
    advanceCheckpoint(state, batch(20, 30, [], many.map((f) => f.uri)));
    expect(at(state)).toBe(10);
    expect(liveHold(state)?.overflow).toBe(true);
    state.close();
  });

  it('moves at once when a retry mends failures, as far as those still standing allow', () => {
    const state = mirror(10);
    advanceCheckpoint(state, batch(10, 20, [{ uri: 'http://x/a', s: 15 }, { uri: 'http://x/b', s: 17 }]));
    advanceCheckpoint(state, batch(20, 30));
    expect(at(state)).toBe(15);
    expect(releaseMended(state)).toBeNull();
    const mended = (uri: string) =>
      state.put({ uri, path: uri.slice(7), length: 1, digests: {}, lastmod: null, etag: null, lastModified: null, type: null, status: 'verified', verifiedAt: iso(40), runId: 6 });
    mended('http://x/a');
    expect(releaseMended(state)).toBe(iso(17));
    expect(at(state)).toBe(17);
    expect(state.checkpoint()!.from).toBe(topic);
    mended('http://x/b');
    expect(releaseMended(state)).toBe(iso(30));
    expect(at(state)).toBe(30);
    expect(liveHold(state)).toBeNull();
    // The next batch goes on from there.
    advanceCheckpoint(state, batch(30, 40));
    expect(at(state)).toBe(40);
    state.close();
  });

  it('past the cap, a retry does not move it: the unlisted failures are not known', () => {
    const state = mirror(10);
    const many = Array.from({ length: MAX_HELD_FAILURES + 1 }, (_, i) => ({ uri: `http://x/${i}`, s: 15 }));
    advanceCheckpoint(state, batch(10, 20, many));
    state.put({ uri: 'http://x/0', path: 'x/0', length: 1, digests: {}, lastmod: null, etag: null, lastModified: null, type: null, status: 'verified', verifiedAt: iso(40), runId: 6 });
    expect(releaseMended(state)).toBeNull();
    expect(at(state)).toBe(10);
    state.close();
  });

  it('as a view shows it, leaves out failures a later run mended, before the next batch moves the checkpoint', () => {
    const state = mirror(10);
    advanceCheckpoint(state, batch(10, 20, [{ uri: 'http://x/a', s: 15 }, { uri: 'http://x/b', s: 17 }]));
    expect(standingLiveHold(state)?.failed.map((f) => f.uri)).toEqual(['http://x/a', 'http://x/b']);
    // A retry (run 6) mirrors a: the stored record still lists it until the next live batch.
    state.put({ uri: 'http://x/a', path: 'x/a', length: 1, digests: {}, lastmod: null, etag: null, lastModified: null, type: null, status: 'verified', verifiedAt: iso(30), runId: 6 });
    expect(liveHold(state)?.failed).toHaveLength(2);
    expect(standingLiveHold(state)?.failed.map((f) => f.uri)).toEqual(['http://x/b']);
    state.close();
  });
});
