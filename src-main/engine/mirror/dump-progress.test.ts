import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appliedInPackage, clearDumpProgress, donePackages, heldAt, markAppliedInPackage, markPackageDone } from './dump-progress.ts';
import { MirrorState, stateDirOf } from './state.ts';

describe('dump progress', () => {
  let dest: string;
  let state: MirrorState;
  beforeEach(() => {
    dest = mkdtempSync(join(tmpdir(), 'dump-progress-'));
    state = new MirrorState(stateDirOf(dest));
  });
  afterEach(() => {
    state.close();
    rmSync(dest, { recursive: true, force: true });
  });

  const DUMP = 'http://127.0.0.1:1/dump.xml';
  const pkg = (i: number) => `http://127.0.0.1:1/packages/p${i}.zip`;
  const stored = () => (state.db.prepare('SELECT SUM(LENGTH(key) + LENGTH(value)) AS n FROM meta').get() as { n: number }).n;

  it('records each package done in a row of its own: marking one more costs the same whatever the number done', () => {
    markPackageDone(state, 1, DUMP, pkg(0));
    const header = () => (state.db.prepare("SELECT value FROM meta WHERE key = 'dump-progress'").get() as { value: string }).value;
    const first = header();
    let before = stored();
    for (let i = 1; i < 3_000; i++) {
      markPackageDone(state, 1, DUMP, pkg(i));
      const now = stored();
      // One row more, of one package's URL: nothing written again for the others.
      expect(now - before).toBe('dump-progress:done:'.length + pkg(i).length);
      before = now;
    }
    expect(header()).toBe(first);
    expect(donePackages(state, 1, DUMP)).toEqual(new Set(Array.from({ length: 3_000 }, (_, i) => pkg(i))));
    // Marked twice (a package named again), still one.
    markPackageDone(state, 1, DUMP, pkg(7));
    expect(donePackages(state, 1, DUMP).size).toBe(3_000);
  });

  it('belongs to one run and one dump: another run starts afresh, and clearing removes every row', () => {
    markPackageDone(state, 1, DUMP, pkg(1), 5_000);
    markPackageDone(state, 1, DUMP, pkg(2), 3_000);
    expect(heldAt(state, 1, DUMP)).toBe(3_000);
    expect(donePackages(state, 2, DUMP)).toEqual(new Set());
    expect(donePackages(state, 1, 'http://127.0.0.1:1/other.xml')).toEqual(new Set());
    markPackageDone(state, 2, DUMP, pkg(3));
    expect(donePackages(state, 2, DUMP)).toEqual(new Set([pkg(3)]));
    expect(heldAt(state, 2, DUMP)).toBeNull();
    expect(donePackages(state, 1, DUMP)).toEqual(new Set());
    clearDumpProgress(state);
    expect(donePackages(state, 2, DUMP)).toEqual(new Set());
    expect(state.db.prepare("SELECT COUNT(*) AS n FROM meta WHERE key LIKE 'dump-progress%'").get()).toEqual({ n: 0 });
  });

  it("a package under way belongs to its run too: another run's packages done are not taken as this one's", () => {
    markPackageDone(state, 1, DUMP, pkg(1));
    markAppliedInPackage(state, 2, DUMP, pkg(2), [0, 1, 2, 5]);
    expect(donePackages(state, 2, DUMP)).toEqual(new Set());
    const applied = appliedInPackage(state, 2, DUMP, pkg(2));
    expect([0, 1, 2, 3, 4, 5].map(applied)).toEqual([true, true, true, false, false, true]);
    markPackageDone(state, 2, DUMP, pkg(2));
    expect(donePackages(state, 2, DUMP)).toEqual(new Set([pkg(2)]));
  });

  it("reads the list an earlier version kept in one row, so that a run it interrupted resumes", () => {
    state.db
      .prepare("INSERT INTO meta (key, value) VALUES ('dump-progress', ?)")
      .run(JSON.stringify({ runId: 4, dumpUrl: DUMP, done: [pkg(1), pkg(2)], heldAtMs: 9 }));
    expect(donePackages(state, 4, DUMP)).toEqual(new Set([pkg(1), pkg(2)]));
    markPackageDone(state, 4, DUMP, pkg(3));
    expect(donePackages(state, 4, DUMP)).toEqual(new Set([pkg(1), pkg(2), pkg(3)]));
    expect(heldAt(state, 4, DUMP)).toBe(9);
  });
});
