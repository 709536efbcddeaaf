// A Resource Dump Index whose child Dump redirects back to the index, or to a Dump read before: a loop. Read as that
// Dump, it would give nothing of what it lists (or another Dump's packages again). The child is named as a failure of
// the run, the other packages are applied, nothing is deleted and the mirror gets no checkpoint, so the next sync
// reads it again. Against the fixture Source, with the loop made on demand.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { readFolder } from './folder.ts';
import { sync, type SyncOptions } from './sync.ts';

let fixture: FixtureSource;
let dest: string;

beforeEach(async () => {
  fixture = await startFixtureSource({ resources: 30, changeListSize: 20, dumpIndexes: true });
  dest = mkdtempSync(join(tmpdir(), 'dump-loop-'));
});
afterEach(async () => {
  await fixture.close();
});

const P = () => fixture.paths.dataset1;
const run = (options: Partial<SyncOptions> = {}) => sync({ url: fixture.url + P().capabilityList, dest, timeoutMs: 5_000, useDumps: true, proxyEnv: {}, ...options });
const packageGets = (part: number) => fixture.requests.filter((r) => r.path === P().resourceDumpPackage(part)).length;

describe('a Resource Dump Index whose Dump loops', () => {
  it('back to the index: that Dump is named as a failure, the other packages applied, no checkpoint; the next sync mends it', async () => {
    fixture.setBroken(P().resourceDumpChild(2), { status: 302, headers: { location: P().resourceDumpIndex } });
    const result = await run();
    expect(result).toMatchObject({ mode: 'baseline', from: 'dumps', failed: 1, checkpoint: null });
    expect(result.failures).toEqual([
      {
        uri: fixture.url + P().resourceDumpIndex,
        reason: `${fixture.url}${P().resourceDumpChild(2)}, named by the Resource Dump Index, redirects back to the index; its packages were not read`,
      },
    ]);
    expect(packageGets(1)).toBe(1);
    expect(packageGets(2)).toBe(0);
    expect(result.created).toBeGreaterThan(0);
    expect(result.created).toBeLessThan(30);
    expect(readFolder(dest)!.checkpoint).toBeNull();

    fixture.setBroken(P().resourceDumpChild(2), null);
    const next = await run();
    expect(next).toMatchObject({ mode: 'baseline', from: 'dumps', failed: 0, created: 30 - result.created });
    expect(next.checkpoint).not.toBeNull();
  });

  it('to a Dump read before: its packages are not taken twice; named the same way', async () => {
    fixture.setBroken(P().resourceDumpChild(2), { status: 301, headers: { location: P().resourceDumpChild(1) } });
    const result = await run();
    expect(result).toMatchObject({ mode: 'baseline', from: 'dumps', failed: 1, checkpoint: null });
    expect(result.failures[0]!.reason).toBe(
      `${fixture.url}${P().resourceDumpChild(2)}, named by the Resource Dump Index, redirects back to ${fixture.url}${P().resourceDumpChild(1)}, read before; its packages were not read`,
    );
    expect(packageGets(1)).toBe(1);
    expect(packageGets(2)).toBe(0);
  });
});
