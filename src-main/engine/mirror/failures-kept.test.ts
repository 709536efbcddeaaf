// A run holds no more than the first of its failures (`keptFailures`, MAX_KEPT_FAILURES unless told): the rest are
// counted, and the run journal has them all. Made to happen here with a bound of a few failures against the fixture
// Source: what the run decides (its status, its checkpoint) and every failure it reports must be as when all are held.
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { resultFailures } from './folder.ts';
import { MirrorState, stateDirOf } from './state.ts';
import { sync, type SyncOptions } from './sync.ts';

let fixture: FixtureSource;
let dest: string;
beforeEach(async () => {
  fixture = await startFixtureSource({ resources: 12, changeListSize: 20 });
  dest = mkdtempSync(join(tmpdir(), 'failures-kept-'));
});
afterEach(async () => {
  await fixture.close();
});

const run = (options: Partial<SyncOptions> = {}) => sync({ url: fixture.url + fixture.paths.dataset1.capabilityList, dest, batchSize: 3, timeoutMs: 2_000, ...options });
const fileOf = (id: number) => join(dest, new URL(fixture.url).host.replace(':', '_'), ...fixture.state.pathOf(id).split('/').filter(Boolean));

function journal(runId: number) {
  const state = new MirrorState(stateDirOf(dest));
  try {
    return state.failures(runId);
  } finally {
    state.close();
  }
}

describe('a run with more failures than it keeps', () => {
  it('lists the first, counts them all, ends failed, and gives every one from its journal', async () => {
    // Not those with a mirror location (every fifth), which is tried when their own address fails.
    const broken = fixture.state.live().map((r) => r.id).filter((id) => id % 5 !== 0).slice(0, 6);
    expect(broken).toHaveLength(6);
    for (const id of broken) fixture.setBroken(fixture.state.pathOf(id), { status: 404 });
    const result = await run({ keptFailures: 2 });
    expect(result).toMatchObject({ mode: 'baseline', failed: 6, created: 6, failureCount: 6, journalBefore: 0 });
    expect(result.failures).toHaveLength(2);
    const all = journal(result.runId!);
    expect(all.map((f) => f.uri).sort()).toEqual(broken.map((id) => fixture.state.locOf(id)).sort());
    expect(result.failures).toEqual(all.slice(0, 2));
    // Every failure, in the order recorded, as `rsdesk sync --json` prints them.
    expect([...resultFailures(dest, result)]).toEqual(all);
    const state = new MirrorState(stateDirOf(dest));
    try {
      expect(state.run(result.runId!)).toMatchObject({ status: 'failed', failed: 6 });
      // Not complete: no checkpoint, and the next sync is a baseline again.
      expect(state.checkpoint()).toBeNull();
    } finally {
      state.close();
    }
  });

  it('an incremental run holds its checkpoint back for failures past those it keeps and past the URIs it holds in memory', async () => {
    await run();
    const before = (await run({ mode: 'incremental' })).checkpoint;
    const changed = [...new Set(fixture.change('update', 6).map((c) => c.id))].filter((id) => id % 5 !== 0);
    for (const id of changed) fixture.setBroken(fixture.state.pathOf(id), { status: 404 });
    const held = await run({ keptFailures: 1, inMemoryUris: 1 });
    expect(held).toMatchObject({ mode: 'incremental', failed: changed.length, failureCount: changed.length });
    expect(changed.length).toBeGreaterThan(1);
    expect(held.failures).toHaveLength(1);
    expect(held.checkpoint).toBe(before);
    // Mended: the checkpoint moves past them.
    for (const id of changed) fixture.setBroken(fixture.state.pathOf(id), null);
    const mended = await run({ keptFailures: 1, inMemoryUris: 1 });
    expect(mended).toMatchObject({ mode: 'incremental', failed: 0, updated: changed.length });
    expect(mended.checkpoint).not.toBe(before);
  });

  it('a dry run, which records nothing, lists those it keeps and counts the rest', async () => {
    // Files not made by this mirror where three resources go: a dry run says each would fail.
    for (const id of [1, 3, 6]) {
      mkdirSync(dirname(fileOf(id)), { recursive: true });
      writeFileSync(fileOf(id), 'my own notes');
    }
    const dry = await run({ dryRun: true, keptFailures: 2 });
    expect(dry).toMatchObject({ dryRun: true, failed: 3, failureCount: 3, journalBefore: null, runId: null });
    expect([...resultFailures(dest, dry)]).toEqual(dry.failures);
    expect(dry.failures).toHaveLength(2);
    expect(dry.failures[0]!.reason).toMatch(/^a file not made by this mirror is already at /);
  });
});
