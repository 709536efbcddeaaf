// Retrying chosen failures of a run against the fixture Source: only those resources are fetched again, as a run of
// their own in the journal, checked against what the lists say now; URIs that did not fail are refused.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { formatRetry } from '../../cli/mirror-commands.ts';
import { readFailures, readFolder } from './folder.ts';
import { resumeRetry, retryResources } from './retry.ts';
import { MirrorState, stateDirOf } from './state.ts';
import { sync } from './sync.ts';

let fixture: FixtureSource;
let dest: string;

beforeEach(async () => {
  fixture = await startFixtureSource({ resources: 20, changeListSize: 20 });
  dest = mkdtempSync(join(tmpdir(), 'mirror-retry-'));
});
afterEach(async () => {
  fixture.setResourceDelay(0);
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
  it('completes a baseline once the last of its failures is mended: its checkpoint is set, and the next sync is incremental', async () => {
    for (const id of [3, 5]) breakResource(id, true);
    const first = await sync({ url: capabilityList(), dest, timeoutMs: 2_000 });
    expect(first).toMatchObject({ mode: 'baseline', failed: 2, checkpoint: null });
    const checkpoint = () => {
      const state = new MirrorState(stateDirOf(dest));
      try {
        return state.checkpoint();
      } finally {
        state.close();
      }
    };
    // One mended of two, the other failing again: no checkpoint yet.
    breakResource(3, false);
    const partly = await retryResources({ dest, runId: first.runId! });
    expect(partly).toMatchObject({ created: 1, failed: 1, completedBaseline: null });
    expect(checkpoint()).toBeNull();
    // The last one: the baseline is complete, as if nothing had failed.
    breakResource(5, false);
    const last = await retryResources({ dest, runId: partly.runId });
    expect(last).toMatchObject({ created: 1, failed: 0, completedBaseline: { runId: first.runId } });
    expect(checkpoint()).toMatchObject({ at: last.completedBaseline!.at });
    expect(runs().at(-1)!.message).toContain(`that was the last failure of run ${first.runId}, whose baseline is complete now: the mirror is in sync up to ${last.completedBaseline!.at}`);
    expect(formatRetry(last, dest)).toContain(`That was the last failure of run ${first.runId}: its baseline is complete now`);
    expect(await sync({ dest, timeoutMs: 2_000 })).toMatchObject({ mode: 'incremental', failed: 0 });
  });

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

  it('settles a failure whose resource the Source has deleted since and the mirror never had: nothing to do, said so', async () => {
    breakResource(4, true);
    await sync({ url: capabilityList(), dest, timeoutMs: 2_000 });
    const failedRun = runs()[0]!;
    const uri = fixture.state.locOf(4);
    breakResource(4, false);
    fixture.state.change('delete', 1, 4);
    const before = resourceRequests().length;
    const retried = await retryResources({ dest, runId: failedRun.id });
    expect(retried).toMatchObject({ asked: 1, failed: 0, gone: [uri] });
    expect(resourceRequests().length).toBe(before);
    expect(runs().at(-1)).toMatchObject({ mode: 'retry', status: 'completed', message: `retried 1 resource of run ${failedRun.id}: 1 was deleted at the Source and is not in the mirror, so there was nothing to do; that was the last failure of run ${failedRun.id}, whose baseline is complete now: the mirror is in sync up to ${retried.completedBaseline!.at}` });
    // It stands no more: "retry all failed" does not ask for it again and again.
    expect(readFailures(dest, failedRun.id)).toMatchObject({ total: 1, open: 0, failures: [{ uri, fixedBy: retried.runId, gone: true }] });
    // rsdesk retry names it.
    expect(formatRetry(retried, dest)).toContain(`Deleted at the Source since, and not in the mirror (nothing to do; settled):\n  ${uri}\n`);
    await expect(retryResources({ dest, runId: failedRun.id })).rejects.toThrow(/there is nothing to retry/);
  });

  it('applies the deletion policy to a failure whose resource the Source has deleted since and the mirror holds: keep settles it as would-delete', async () => {
    await sync({ url: capabilityList(), dest, timeoutMs: 2_000 });
    // Updated at the Source, its fetch failing: the incremental run records the failure, the old copy stays.
    fixture.state.change('update', 1, 3);
    breakResource(3, true);
    const failing = await sync({ dest, timeoutMs: 2_000 });
    expect(failing).toMatchObject({ mode: 'incremental', failed: 1 });
    const uri = fixture.state.locOf(3);
    breakResource(3, false);
    fixture.state.change('delete', 1, 3);
    const before = resourceRequests().length;
    const retried = await retryResources({ dest, runId: failing.runId!, deletePolicy: 'keep' });
    expect(retried).toMatchObject({ asked: 1, failed: 0, deleted: 0, gone: [], kept: [uri] });
    expect(resourceRequests().length).toBe(before);
    // The copy stays, as keep says; the failure is settled by the deletion, so "retry all failed" does not ask again.
    expect(readFileSync(fileOf(3)).length).toBeGreaterThan(0);
    expect(readFailures(dest, failing.runId!)).toMatchObject({ total: 1, open: 0, failures: [{ uri, fixedBy: retried.runId, gone: true }] });
    expect(runs().at(-1)).toMatchObject({ mode: 'retry', status: 'completed', message: `retried 1 resource of run ${failing.runId}: 1 was deleted at the Source; its copy stays in the mirror (deletion policy keep), and the next sync reports it as would-delete` });
    expect(formatRetry(retried, dest)).toContain(`Deleted at the Source since; the mirror keeps its copy (deletion policy keep; settled):\n  ${uri}\n`);
    await expect(retryResources({ dest, runId: failing.runId! })).rejects.toThrow(/there is nothing to retry/);
    // The next sync says of it what keep says, and nothing fails.
    expect(await sync({ dest, timeoutMs: 2_000 })).toMatchObject({ mode: 'incremental', failed: 0, wouldDelete: [uri] });
  });

  it('applies the deletion policy delete to a failure whose resource the Source has deleted since: the copy goes, the failure is settled', async () => {
    await sync({ url: capabilityList(), dest, timeoutMs: 2_000 });
    fixture.state.change('update', 1, 3);
    breakResource(3, true);
    const failing = await sync({ dest, timeoutMs: 2_000 });
    expect(failing).toMatchObject({ mode: 'incremental', failed: 1 });
    breakResource(3, false);
    const file = fileOf(3);
    fixture.state.change('delete', 1, 3);
    const retried = await retryResources({ dest, runId: failing.runId!, deletePolicy: 'delete' });
    expect(retried).toMatchObject({ asked: 1, failed: 0, deleted: 1, gone: [], kept: [] });
    expect(existsSync(file)).toBe(false);
    expect(readFailures(dest, failing.runId!)).toMatchObject({ total: 1, open: 0, failures: [{ fixedBy: retried.runId }] });
    await expect(retryResources({ dest, runId: failing.runId! })).rejects.toThrow(/there is nothing to retry/);
  });

  it('is paused as a sync is, and resumed for what it has not settled only', async () => {
    const broken = [3, 5, 7, 9, 11];
    for (const id of broken) breakResource(id, true);
    await sync({ url: capabilityList(), dest, timeoutMs: 2_000 });
    const failedRun = runs()[0]!;
    for (const id of broken) breakResource(id, false);
    fixture.setResourceDelay(100);
    const before = resourceRequests().length;
    // Paused once the first resource is settled: those in flight finish and are recorded, no other is started.
    const pause = new AbortController();
    const first = await retryResources({ dest, runId: failedRun.id, concurrency: 1, pauseSignal: pause.signal, onProgress: (p) => p.settled >= 1 && pause.abort() });
    expect(first).toMatchObject({ paused: true, resumed: false, asked: 5, failed: 0, of: failedRun.id });
    expect(first.created).toBeGreaterThanOrEqual(1);
    expect(first.created).toBeLessThan(5);
    expect(resourceRequests().slice(before)).toHaveLength(first.created);
    expect(runs().at(-1)).toMatchObject({ id: first.runId, mode: 'retry', status: 'interrupted', message: 'Paused', created: first.created });
    expect(readFolder(dest)!.retryToResume).toBe(first.runId);

    // Resumed: the same run, only what the paused part did not verify is fetched, and the counts are the whole run's.
    const second = await resumeRetry({ dest, retryRunId: first.runId });
    expect(second).toMatchObject({ runId: first.runId, paused: false, resumed: true, asked: 5, created: 5, failed: 0 });
    expect(resourceRequests().slice(before).sort()).toEqual(broken.map((id) => fixture.state.pathOf(id)).sort());
    expect(runs().map((r) => r.mode)).toEqual(['auto', 'retry']);
    expect(runs().at(-1)).toMatchObject({ status: 'completed', created: 5, message: expect.stringMatching(new RegExp(`^retried 5 resources of run ${failedRun.id}; that was the last failure of run ${failedRun.id}, whose baseline is complete now`)) });
    expect(readFolder(dest)!.retryToResume).toBeNull();
    expect(readFailures(dest, failedRun.id)).toMatchObject({ total: 5, open: 0 });
    for (const id of broken) expect(readFileSync(fileOf(id)).equals(fixture.state.representation(id, fixture.state.resources.get(id)!.version).body)).toBe(true);
    await expect(resumeRetry({ dest, retryRunId: first.runId })).rejects.toThrow(`Run ${first.runId} is completed, not interrupted: there is nothing to resume.`);
  });

  it('a pause or a cancel that comes while the last batch is recorded stops nothing: the retry ends as what it is', async () => {
    const broken = [3, 5, 7];
    for (const id of broken) breakResource(id, true);
    await sync({ url: capabilityList(), dest, timeoutMs: 2_000 });
    const failedRun = runs()[0]!;
    for (const id of broken) breakResource(id, false);
    const pause = new AbortController();
    const uris = [3, 5].map((id) => fixture.state.locOf(id));
    const paused = await retryResources({ dest, runId: failedRun.id, uris, pauseSignal: pause.signal, onProgress: (p) => void (p.phase === 'finishing' && pause.abort()) });
    expect(pause.signal.aborted).toBe(true);
    expect(paused).toMatchObject({ paused: false, created: 2, failed: 0 });
    expect(runs().at(-1)).toMatchObject({ mode: 'retry', status: 'completed', created: 2 });
    expect(readFolder(dest)!.retryToResume).toBeNull();

    const cancel = new AbortController();
    const cancelled = await retryResources({ dest, runId: failedRun.id, signal: cancel.signal, onProgress: (p) => void (p.phase === 'finishing' && cancel.abort()) });
    expect(cancel.signal.aborted).toBe(true);
    expect(cancelled).toMatchObject({ asked: 1, created: 1, failed: 0 });
    expect(runs().at(-1)).toMatchObject({ mode: 'retry', status: 'completed', created: 1 });
    expect(readFailures(dest, failedRun.id)).toMatchObject({ total: 3, open: 0 });
  });

  it('paused, is not taken up by a sync; resumed after it, fetches nothing the sync verified', async () => {
    const broken = [3, 5, 7, 9];
    for (const id of broken) breakResource(id, true);
    await sync({ url: capabilityList(), dest, timeoutMs: 2_000 });
    const failedRun = runs()[0]!;
    for (const id of broken) breakResource(id, false);
    fixture.setResourceDelay(50);
    const pause = new AbortController();
    const first = await retryResources({ dest, runId: failedRun.id, concurrency: 1, pauseSignal: pause.signal, onProgress: (p) => p.settled >= 1 && pause.abort() });
    expect(first).toMatchObject({ paused: true });
    expect(first.created).toBeLessThan(4);

    const notes: string[] = [];
    const synced = await sync({ dest, timeoutMs: 2_000, onNote: (n) => notes.push(n) });
    expect(synced).toMatchObject({ resumed: false, failed: 0 });
    expect(synced.runId).not.toBe(first.runId);
    expect(notes.some((n) => n.startsWith('Resuming run'))).toBe(false);
    expect(runs().find((r) => r.id === first.runId)).toMatchObject({ mode: 'retry', status: 'interrupted', message: 'Paused' });

    const before = resourceRequests().length;
    const second = await resumeRetry({ dest, retryRunId: first.runId });
    expect(second).toMatchObject({ runId: first.runId, resumed: true, created: first.created, failed: 0 });
    expect(resourceRequests().slice(before)).toEqual([]);
    expect(runs().find((r) => r.id === first.runId)).toMatchObject({ status: 'completed' });
  });

  it('killed before it fetched anything, is taken up again for all it was asked for', async () => {
    const broken = [3, 5, 7];
    for (const id of broken) breakResource(id, true);
    await sync({ url: capabilityList(), dest, timeoutMs: 2_000 });
    const failedRun = runs()[0]!;
    for (const id of broken) breakResource(id, false);
    // A retry whose process was killed before it fetched anything: left "running", taken up for all it asked for.
    const state = new MirrorState(stateDirOf(dest));
    const killed = state.startRun('baseline', 'retry', null);
    state.recordRetry(killed.id, failedRun.id, broken.map((id) => fixture.state.locOf(id)));
    state.db.prepare('UPDATE runs SET pid = 999999999 WHERE id = ?').run(killed.id);
    state.close();
    expect(readFolder(dest)!.retryToResume).toBe(killed.id);
    const before = resourceRequests().length;
    const resumed = await resumeRetry({ dest, retryRunId: killed.id });
    expect(resumed).toMatchObject({ runId: killed.id, resumed: true, asked: 3, created: 3, failed: 0 });
    expect(resourceRequests().slice(before).sort()).toEqual(broken.map((id) => fixture.state.pathOf(id)).sort());
  });

  it('paused while the Source stalls its lists, ends at once and fetches nothing', async () => {
    breakResource(4, true);
    await sync({ url: capabilityList(), dest, timeoutMs: 2_000 });
    breakResource(4, false);
    const failedRun = runs()[0]!;
    const list = fixture.paths.dataset1.resourceList;
    fixture.setBroken(list, 'hang');
    const asked = fixture.requests.filter((r) => r.path === list).length;
    const pause = new AbortController();
    const poll = () => (fixture.requests.filter((r) => r.path === list).length > asked ? pause.abort() : setTimeout(poll, 10));
    poll();
    const before = resourceRequests().length;
    const t0 = Date.now();
    const first = await retryResources({ dest, runId: failedRun.id, timeoutMs: 30_000, pauseSignal: pause.signal });
    expect(Date.now() - t0).toBeLessThan(3_000);
    expect(first).toMatchObject({ paused: true, created: 0, failed: 0 });
    expect(runs().at(-1)).toMatchObject({ mode: 'retry', status: 'interrupted', message: 'Paused' });
    fixture.setBroken(list, null);
    expect(await resumeRetry({ dest, retryRunId: first.runId })).toMatchObject({ runId: first.runId, created: 1, failed: 0 });
    expect(resourceRequests().slice(before)).toEqual([fixture.state.pathOf(4)]);
  });

  it("stops at the disk's reserve as a sync does, says so, and keeps what it verified", async () => {
    const broken = [3, 5, 7, 9, 11];
    for (const id of broken) breakResource(id, true);
    await sync({ url: capabilityList(), dest, timeoutMs: 2_000 });
    const failedRun = runs()[0]!;
    for (const id of broken) breakResource(id, false);
    fixture.setResourceDelay(50);
    let free = 50 * 1024 ** 3;
    const before = resourceRequests().length;
    const error = await retryResources({
      dest,
      runId: failedRun.id,
      concurrency: 1,
      diskSpace: { probe: async () => ({ free }), everyMs: 10 },
      // Some other program fills the disk once the first resource is in.
      onProgress: (p) => {
        if (p.settled >= 1) free = 700 * 1024 ** 2;
      },
    }).catch((err: unknown) => err);
    const message = `The disk holding ${dest} has only 700 MiB free, so the run stopped to leave at least 1 GiB for the rest of the computer. What was verified stays. Free some space and run it again.`;
    expect((error as Error).message).toBe(message);
    const retry = runs().at(-1)!;
    expect(retry).toMatchObject({ mode: 'retry', status: 'failed', message });
    expect(retry.created).toBeGreaterThanOrEqual(1);
    expect(resourceRequests().length - before).toBeLessThan(broken.length);
    expect(readFailures(dest, failedRun.id).open).toBe(broken.length - retry.created);
  });
});
