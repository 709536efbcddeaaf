// What a Resource Dump (or a Change Dump, or a Dump Index's Dump) itself breaks of the spec reaches the run's findings
// (its result, its journal, `rsdesk sync --json`) as its manifests' findings do. Before, a dump run reported only its
// manifests': the Dump document was read before the run began and its findings dropped. Against the fixture Source,
// which serves a sloppy copy of its own Dump on demand (its hashes' algorithm written in capitals, read as md5).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource, type FixtureSourceOptions } from '../../../e2e/fixture-source/index.ts';
import { MirrorState, stateDirOf } from './state.ts';
import { sync, type SyncOptions } from './sync.ts';

let fixture: FixtureSource;
let dest: string;

async function start(options: FixtureSourceOptions = {}): Promise<void> {
  fixture = await startFixtureSource({ resources: 12, changeListSize: 4, ...options });
  dest = mkdtempSync(join(tmpdir(), 'dump-findings-'));
}
afterEach(async () => {
  await fixture.close();
});

const P = () => fixture.paths.dataset1;
const run = (options: Partial<SyncOptions> = {}) => sync({ url: fixture.url + P().capabilityList, dest, timeoutMs: 5_000, useDumps: true, proxyEnv: {}, ...options });

/** Serves the fixture's own document at `path` with its packages' "md5:" written "MD5:" (a warning, read as md5). */
async function sloppy(path: string): Promise<void> {
  const body = (await (await fetch(fixture.url + path)).text()).replaceAll('hash="md5:', 'hash="MD5:');
  expect(body).toContain('hash="MD5:');
  fixture.setBroken(path, { status: 200, body, headers: { 'content-type': 'application/xml' } });
}

const hashFinding = (document: string) => expect.objectContaining({ document, code: 'invalid-hash', message: expect.stringContaining('"MD5": read as md5') });

describe("a Dump's own findings", () => {
  it('of a Resource Dump reach the run: its result, its journal', async () => {
    await start();
    await sloppy(P().resourceDump);
    const result = await run();
    expect(result).toMatchObject({ mode: 'baseline', from: 'dumps', failed: 0, created: 12 });
    expect(result.findings).toContainEqual(hashFinding(fixture.url + P().resourceDump));
    const state = new MirrorState(stateDirOf(dest));
    try {
      expect(state.runFindings(result.runId!)).toContainEqual(hashFinding(fixture.url + P().resourceDump));
    } finally {
      state.close();
    }
  });

  it("of a Resource Dump Index's Dump reach the run too, named by the Dump's URL", async () => {
    await start({ dumpIndexes: true });
    await sloppy(P().resourceDumpChild(2));
    const result = await run();
    expect(result).toMatchObject({ from: 'dumps', failed: 0, created: 12 });
    expect(result.findings).toContainEqual(hashFinding(fixture.url + P().resourceDumpChild(2)));
  });

  it('of a Change Dump reach the incremental run', async () => {
    await start();
    expect(await run()).toMatchObject({ mode: 'baseline', failed: 0 });
    for (let id = 1; id <= 8; id++) fixture.change('update', 1, id);
    await sloppy(P().changeDump);
    const result = await run();
    expect(result).toMatchObject({ mode: 'incremental', from: 'dumps', failed: 0, updated: 8 });
    expect(result.findings).toContainEqual(hashFinding(fixture.url + P().changeDump));
  });
});
