// rsdesk runs --json prints every failure of every run, streamed from the journal a piece at a time and waiting for
// a slow reader between pieces: built whole, a state of 50 runs × 20,000 failures was held in memory twice over.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MirrorState, stateDirOf } from '../engine/mirror/state.ts';
import type { Io } from './io.ts';
import { main } from './rsdesk.ts';

/** A mirror whose journal holds `runs` runs of `failures` failures each, and a finding on the first. */
function journal(runs: number, failures: number): string {
  const dest = mkdtempSync(join(tmpdir(), 'rsdesk-runs-json-'));
  const state = new MirrorState(stateDirOf(dest));
  try {
    state.setCheckpoint({ at: '2026-01-01T00:00:00Z', from: 'http://127.0.0.1/changelist.xml' });
    for (let r = 0; r < runs; r++) {
      const run = state.startRun('incremental', 'lists', 'http://127.0.0.1/changelist.xml');
      const list = Array.from({ length: failures }, (_, i) => ({ uri: `http://127.0.0.1/r/${r}/${i}`, reason: `HTTP 404 "quoted" \\ ${i}` }));
      state.transaction(() => state.addToRun(run.id, { failed: failures }, list));
      if (r === 0) state.addRunFindings(run.id, [{ document: 'http://127.0.0.1/changelist.xml', severity: 'error', code: 'x', message: 'a finding' }], 10);
      state.endRun(run.id, 'failed', {}, `${failures} failed`);
    }
  } finally {
    state.close();
  }
  return dest;
}

describe('rsdesk runs --json', () => {
  it('streams every failure of every run in pieces, waiting for the reader, as one valid document', async () => {
    const dest = journal(3, 3000);
    const pieces: string[] = [];
    let waits = 0;
    const io: Io = { out: (t) => void pieces.push(t), err: () => {}, drained: async () => void waits++ };
    expect(await main(['runs', '--dest', dest, '--json'], io)).toBe(0);
    // 9,000 failures of ~70 bytes: several pieces, none much past the 64 KiB a piece is cut at.
    expect(pieces.length).toBeGreaterThan(5);
    expect(waits).toBe(pieces.length - 1);
    for (const p of pieces) expect(p.length).toBeLessThan(70_000);
    const json = JSON.parse(pieces.join(''));
    const state = MirrorState.forReading(stateDirOf(dest));
    try {
      // As the whole document was printed before: each run as the journal has it, its failures and findings after it.
      const expected = { checkpoint: state.checkpoint()!.at, needsSync: null, runs: state.runs().map((r) => ({ ...r, failures: state.failures(r.id), findings: state.runFindings(r.id) })) };
      expect(pieces.join('')).toBe(`${JSON.stringify(expected)}\n`);
      expect(json.runs).toHaveLength(3);
      expect(json.runs[2].failures).toHaveLength(3000);
      expect(json.runs[0].findings).toEqual([expect.objectContaining({ message: 'a finding' })]);
    } finally {
      state.close();
    }
  });

  it('gives phase times to the millisecond, not as float sums (2.8970000000000002)', async () => {
    const dest = journal(0, 0);
    const state = new MirrorState(stateDirOf(dest));
    try {
      const run = state.startRun('baseline', 'auto', 'http://127.0.0.1/resourcelist.xml');
      // A fetch phase summed over two parts of a resumed run, as sync.ts adds them.
      state.endRun(run.id, 'completed', { discovery: 0.142, fetch: 1.7 + 1.197 });
    } finally {
      state.close();
    }
    let out = '';
    expect(await main(['runs', '--dest', dest, '--json'], { out: (t) => void (out += t), err: () => {} })).toBe(0);
    expect(out).toContain('"phases":{"discovery":0.142,"fetch":2.897}');
  });

  it('a mirror with no runs gives an empty list', async () => {
    const dest = journal(0, 0);
    let out = '';
    expect(await main(['runs', '--dest', dest, '--json'], { out: (t) => void (out += t), err: () => {} })).toBe(0);
    expect(JSON.parse(out)).toEqual({ checkpoint: '2026-01-01T00:00:00Z', needsSync: null, runs: [] });
  });
});
