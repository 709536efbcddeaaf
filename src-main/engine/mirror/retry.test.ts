// Retrying chosen failures of a run against the fixture Source: only those resources are fetched again, as a run of
// their own in the journal, checked against what the lists say now; URIs that did not fail are refused.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { readFailures } from './folder.ts';
import { retryResources } from './retry.ts';
import { MirrorState, stateDirOf } from './state.ts';
import { sync } from './sync.ts';

let fixture: FixtureSource;
let dest: string;

beforeEach(async () => {
  fixture = await startFixtureSource({ resources: 20, changeListSize: 20 });
  dest = mkdtempSync(join(tmpdir(), 'mirror-retry-'));
});
afterEach(async () => {
  await fixture.close();
});

const capabilityList = () => fixture.url + fixture.paths.dataset1.capabilityList;
const host = () => new URL(fixture.url).host.replace(':', '_');
const fileOf = (id: number) => join(dest, host(), ...fixture.state.pathOf(id).split('/').filter(Boolean));
// A resource with mirror locations (rel="duplicate") is asked for there first: counted as the resource.
const resourceRequests = () => fixture.requests.filter((r) => /\/res\/\d+/.test(r.path)).map((r) => r.path.replace(/^\/mirror\//, '/'));

function breakResource(id: number, broken: boolean): void {
  const path = fixture.state.pathOf(id);
  fixture.setBroken(path, broken ? { status: 404 } : null);
  fixture.setBroken(`/mirror${path}`, broken ? { status: 404 } : null);
}

function runs() {
  const state = new MirrorState(stateDirOf(dest));
  try {
    return state.runs().map((r) => ({ ...r, failures: state.failures(r.id) }));
  } finally {
    state.close();
  }
}

describe('retry of failed resources', () => {
  it('fetches only the chosen one, then only the failed ones, each retry a run of its own', async () => {
    for (const id of [3, 5, 7]) breakResource(id, true);
    const first = await sync({ url: capabilityList(), dest, timeoutMs: 2_000 });
    expect(first).toMatchObject({ created: 17, failed: 3 });
    const failedRun = runs()[0]!;
    expect(failedRun.failures.map((f) => f.uri).sort()).toEqual([3, 5, 7].map((id) => fixture.state.locOf(id)).sort());
    for (const id of [3, 5, 7]) breakResource(id, false);

    // One resource: only it is fetched; the journal gets a retry run.
    let before = resourceRequests().length;
    const one = await retryResources({ dest, runId: failedRun.id, uris: [fixture.state.locOf(3)] });
    expect(one).toMatchObject({ asked: 1, created: 1, failed: 0 });
    expect(resourceRequests().slice(before)).toEqual([fixture.state.pathOf(3)]);
    const r3 = fixture.state.resources.get(3)!;
    expect(readFileSync(fileOf(3)).equals(fixture.state.representation(3, r3.version).body)).toBe(true);
    expect(runs().at(-1)).toMatchObject({ id: one.runId, kind: 'baseline', mode: 'retry', status: 'completed', created: 1, failed: 0 });

    // 3 is mirrored since, by the retry: it stands no more, and "all failed" leaves it out.
    expect(readFailures(dest, failedRun.id)).toMatchObject({ total: 3, open: 2 });
    expect(readFailures(dest, failedRun.id).failures.find((f) => f.uri === fixture.state.locOf(3))?.fixedBy).toBe(one.runId);
    before = resourceRequests().length;
    const all = await retryResources({ dest, runId: failedRun.id });
    expect(all).toMatchObject({ asked: 2, created: 2, unchanged: 0, failed: 0 });
    expect(resourceRequests().slice(before).sort()).toEqual([fixture.state.pathOf(5), fixture.state.pathOf(7)].sort());
    expect(runs().map((r) => r.mode)).toEqual(['auto', 'retry', 'retry']);
    // The failed run keeps its record, every failure of it mirrored since; the mirror is whole.
    expect(runs()[0]!.failures).toHaveLength(3);
    expect(readFailures(dest, failedRun.id)).toMatchObject({ total: 3, open: 0 });
    await expect(retryResources({ dest, runId: failedRun.id })).rejects.toThrow(/has been mirrored since; there is nothing to retry/);
    for (const r of fixture.state.live()) expect(readFileSync(fileOf(r.id)).equals(fixture.state.representation(r.id, r.version).body)).toBe(true);
  });

  it('records a resource that fails again, and refuses URIs that did not fail in that run', async () => {
    breakResource(4, true);
    await sync({ url: capabilityList(), dest, timeoutMs: 2_000 });
    const failedRun = runs()[0]!;
    await expect(retryResources({ dest, runId: failedRun.id, uris: [fixture.state.locOf(2)] })).rejects.toThrow(/did not fail in run 1; only its failures can be retried/);
    await expect(retryResources({ dest, runId: 99, uris: [fixture.state.locOf(4)] })).rejects.toThrow('This mirror has no run 99.');
    const again = await retryResources({ dest, runId: failedRun.id });
    expect(again).toMatchObject({ asked: 1, failed: 1 });
    expect(again.failures[0]!.reason).toMatch(/HTTP 404/);
    expect(runs().at(-1)).toMatchObject({ mode: 'retry', status: 'failed', message: '1 of 1 retried resource failed again' });
    breakResource(4, false);
  });
});
