// rsdesk retry on a mirror the live side feeds: each batch of notifications is a run, most with nothing failed, so
// "the last run" is seldom the one whose failures are to be retried. Without --run, the latest run whose failures
// still stand is retried.
import { afterEach, describe, expect, it } from 'vitest';
import { mirrored, sourceBytes, startRig, waitFor, type Rig } from '../engine/live/test-support.ts';
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
});
