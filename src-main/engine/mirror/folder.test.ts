// A run left `running` by a process that was killed reads as interrupted, in the app's summary and after an audit.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { audit } from './audit.ts';
import { readFolder } from './folder.ts';
import { MirrorState, stateDirOf } from './state.ts';
import { sync } from './sync.ts';

let fixture: FixtureSource;
let dest: string;

beforeEach(async () => {
  fixture = await startFixtureSource({ resources: 6, changeListSize: 3 });
  dest = mkdtempSync(join(tmpdir(), 'folder-'));
});
afterEach(async () => {
  await fixture.close();
});

/** A pid that is not running: one of a process that has ended. */
function deadPid(): number {
  return Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
}

describe('runs left running by a killed process', () => {
  it('read as interrupted while no process holds the mirror, and an audit records them so', async () => {
    await sync({ url: fixture.url + fixture.paths.dataset1.capabilityList, dest, timeoutMs: 2_000 });
    const state = new MirrorState(stateDirOf(dest));
    const killed = state.startRun('incremental', 'auto', null);
    state.db.prepare('UPDATE runs SET pid = ? WHERE id = ?').run(deadPid(), killed.id);
    state.close();
    expect(readFolder(dest)!.runs.find((r) => r.id === killed.id)?.status).toBe('interrupted');
    await audit({ dest, timeoutMs: 2_000 });
    const after = new MirrorState(stateDirOf(dest));
    try {
      expect(after.run(killed.id)?.status).toBe('interrupted');
    } finally {
      after.close();
    }
  });
});
