// rsdesk retry on a mirror the live side feeds: each batch of notifications is a run, most with nothing failed, so
// "the last run" is seldom the one whose failures are to be retried. Without --run, every failure still standing is
// retried, whatever run it is of, in one retry run.
import { afterEach, describe, expect, it } from 'vitest';
import { liveHold } from '../engine/live/checkpoint.ts';
import { mirrored, sourceBytes, startRig, waitFor, type Rig } from '../engine/live/test-support.ts';
import { MirrorState, stateDirOf } from '../engine/mirror/state.ts';
import { runRsdesk } from './run-rsdesk.ts';

let rig: Rig;
afterEach(async () => {
  await rig?.close();
});

describe('rsdesk retry after live notifications', () => {
  it('retries the failure of an earlier live run when the last ones had none', async () => {
    rig = await startRig();
    await rig.engine.subscribe({ dest: rig.dest, topic: rig.topic, hub: rig.hubUrl });
    await waitFor(rig, 'subscribed');
    await rig.fixture.hub.settled();
    const path = rig.fixture.state.pathOf(3);
    rig.fixture.setBroken(path, { status: 404 });
    const [failed] = rig.fixture.change('update', 1, 3);
    const first = await waitFor(rig, 'applied', (e) => e.changes.some((c) => c.uri === failed.loc && c.outcome === 'failed'));
    rig.fixture.setBroken(path, null);
    for (const id of [4, 5]) {
      const [record] = rig.fixture.change('update', 1, id);
      await waitFor(rig, 'applied', (e) => e.changes.some((c) => c.uri === record.loc && c.outcome === 'updated'));
    }
    await rig.engine.closeMirror(rig.dest);

    const retry = await runRsdesk(['retry', '--dest', rig.dest], { env: { HTTP_PROXY: '', http_proxy: '' } });
    expect(retry.code, retry.stderr).toBe(0);
    expect(retry.stdout).toContain(`1 resource that failed in run ${first.runId}`);
    expect(mirrored(rig, 3)!.equals(sourceBytes(rig, 3))).toBe(true);
  });

  it('retries the failures of several live runs in one retry, and the checkpoint moves on at once', async () => {
    rig = await startRig();
    await rig.engine.subscribe({ dest: rig.dest, topic: rig.topic, hub: rig.hubUrl });
    await waitFor(rig, 'subscribed');
    await rig.fixture.hub.settled();
    const failedRuns: number[] = [];
    let lastDatetime = '';
    for (const id of [3, 6]) {
      rig.fixture.setBroken(rig.fixture.state.pathOf(id), { status: 404 });
      const [record] = rig.fixture.change('update', 1, id);
      const applied = await waitFor(rig, 'applied', (e) => e.changes.some((c) => c.uri === record.loc && c.outcome === 'failed'));
      failedRuns.push(applied.runId);
      const [ok] = rig.fixture.change('update', 1, id + 1);
      await waitFor(rig, 'applied', (e) => e.changes.some((c) => c.uri === ok.loc && c.outcome === 'updated'));
      lastDatetime = ok.datetime;
    }
    expect(new Set(failedRuns).size).toBe(2);
    await rig.engine.closeMirror(rig.dest);
    const state = () => new MirrorState(stateDirOf(rig.dest));
    const s0 = state();
    expect(liveHold(s0)?.failed).toHaveLength(2);
    s0.close();
    for (const id of [3, 6]) rig.fixture.setBroken(rig.fixture.state.pathOf(id), null);

    const env = { HTTP_PROXY: '', http_proxy: '' };
    const retry = await runRsdesk(['retry', '--dest', rig.dest], { env });
    expect(retry.code, retry.stderr).toBe(0);
    expect(retry.stdout).toContain(`2 resources that failed in runs ${failedRuns[0]} and ${failedRuns[1]}`);
    expect(retry.stdout).toContain('the mirror is in sync up to');
    for (const id of [3, 6]) expect(mirrored(rig, id)!.equals(sourceBytes(rig, id))).toBe(true);
    const s1 = state();
    // One retry run for both, and the checkpoint where the live side had got to.
    expect(s1.runs().filter((r) => r.mode === 'retry')).toHaveLength(1);
    expect(liveHold(s1)).toBeNull();
    expect(s1.standingFailures(10)).toEqual({ total: 0, failures: [] });
    expect(Date.parse(s1.checkpoint()!.at)).toBe(Date.parse(lastDatetime));
    s1.close();

    // Nothing stands any more: said in one line, and no failure of the command (exit 0).
    const again = await runRsdesk(['retry', '--dest', rig.dest, '--all'], { env });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('No failure of this mirror stands');
    const both = await runRsdesk(['retry', '--dest', rig.dest, '--all', '--run', '1'], { env });
    expect(both.code).toBe(2);
  });
});
