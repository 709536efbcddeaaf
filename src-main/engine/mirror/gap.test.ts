// Changes the live side knew it missed (a gap in the notifications, no Change List to catch up from) are shown until
// a sync brings the mirror in step past their end, then forgotten.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { runsCommand } from '../../cli/mirror-commands.ts';
import { readFolder } from './folder.ts';
import { MirrorState, stateDirOf, type NeedsSync } from './state.ts';
import { sync } from './sync.ts';

let fixture: FixtureSource;
let dest: string;

beforeEach(async () => {
  fixture = await startFixtureSource({ resources: 6, changeListSize: 3 });
  dest = mkdtempSync(join(tmpdir(), 'gap-'));
});
afterEach(async () => {
  await fixture.close();
});

function markNeedsSync(needs: NeedsSync): void {
  const state = new MirrorState(stateDirOf(dest));
  try {
    state.setNeedsSync(needs);
  } finally {
    state.close();
  }
}

async function runsText(json = false): Promise<string> {
  let out = '';
  await runsCommand({ dest, json }, { out: (t) => void (out += t), err: () => {} });
  return out;
}

describe('changes the live side missed', () => {
  it('are shown by the folder status and rsdesk runs until an incremental sync brings the mirror past them', async () => {
    const url = fixture.url + fixture.paths.dataset1.capabilityList;
    await sync({ url, dest, timeoutMs: 2_000 });
    // Before the time this sync reads the Change List, after the baseline's Resource List (2025-01-01).
    const missed = { from: '2025-05-01T00:00:00.000Z', until: '2025-06-01T00:00:00.000Z', since: '2025-06-01T00:01:00.000Z', reason: 'a gap in the change notifications' };
    markNeedsSync(missed);
    expect(readFolder(dest)!.needsSync).toEqual(missed);
    expect(await runsText()).toContain(
      `Needs a sync: live notifications showed that the changes made from ${missed.from} to ${missed.until} did not reach this mirror, ` +
        `and no Change List could give them (found ${missed.since}). rsdesk sync --dest ${dest} brings it up to date.`,
    );
    expect(JSON.parse(await runsText(true)).needsSync).toEqual(missed);

    // A baseline whose Resource List is older than the missed changes cannot have brought them.
    expect(await sync({ url, dest, mode: 'baseline', timeoutMs: 2_000 })).toMatchObject({ mode: 'baseline', failed: 0 });
    expect(readFolder(dest)!.needsSync).toEqual(missed);

    // An incremental run that read the Change Lists whole after them did.
    expect(await sync({ url, dest, mode: 'incremental', timeoutMs: 2_000 })).toMatchObject({ mode: 'incremental', failed: 0 });
    expect(readFolder(dest)!.needsSync).toBeNull();
    expect(await runsText()).not.toContain('Needs a sync');
    expect(JSON.parse(await runsText(true)).needsSync).toBeNull();
  });

  it('stay while the mirror is not in step past their end', async () => {
    const url = fixture.url + fixture.paths.dataset1.capabilityList;
    await sync({ url, dest, timeoutMs: 2_000 });
    const missed = { from: '2099-01-01T00:00:00.000Z', until: '2099-01-02T00:00:00.000Z', since: '2099-01-02T00:00:00.000Z', reason: 'a gap in the change notifications' };
    markNeedsSync(missed);
    expect(await sync({ url, dest, mode: 'incremental', timeoutMs: 2_000 })).toMatchObject({ mode: 'incremental', failed: 0 });
    expect(readFolder(dest)!.needsSync).toEqual(missed);
  });
});
