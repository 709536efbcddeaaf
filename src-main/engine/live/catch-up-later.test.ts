// A gap's catch-up leaves alone the resources that the notifications after the gap change again: fetched during the
// catch-up, they already had their later version (410 for one deleted since, a length mismatch for one updated since).
import { afterEach, describe, expect, it } from 'vitest';
import { mirrored, sourceBytes, startRig, waitFor, type Rig } from './test-support.ts';

let rig: Rig;
afterEach(async () => {
  await rig?.close();
});

async function subscribe(r: Rig): Promise<void> {
  await r.engine.subscribe({ dest: r.dest, topic: r.topic, hub: r.hubUrl });
  await waitFor(r, 'subscribed');
  await r.fixture.hub.settled();
}

describe("a gap's catch-up", () => {
  it('does not fetch a resource that the notification after the gap deletes, and says why', async () => {
    rig = await startRig();
    await subscribe(rig);
    const requestsBefore = rig.fixture.requests.length;
    rig.fixture.hub.faults.drop = 2;
    const [lost] = rig.fixture.change('update', 1, 3);
    const [other] = rig.fixture.change('update', 1, 4);
    const [after] = rig.fixture.change('delete', 1, 3);
    await rig.fixture.hub.settled();
    const caught = await waitFor(rig, 'caught-up');
    const applied = await waitFor(rig, 'applied', (e) => e.changes.some((c) => c.uri === after.loc));
    // Before: failed 1, "HTTP 410 for …/3.txt", mended a moment later by the deletion.
    expect(caught.failed).toBe(0);
    expect(caught.failures).toEqual([]);
    expect(caught.covered).toBe(1);
    expect(caught.coveredChanges).toEqual([
      {
        uri: lost.loc,
        change: 'updated',
        datetime: lost.datetime,
        outcome: 'covered',
        reason: `not fetched: a later notification deletes it (deleted, ${after.datetime}), and applying it next covers this change`,
      },
    ]);
    // The rest of the gap is applied as before.
    expect(caught.updated).toBe(1);
    expect(mirrored(rig, other.id)?.equals(sourceBytes(rig, other.id))).toBe(true);
    expect(applied.changes.map((c) => [c.uri, c.outcome])).toEqual([[after.loc, 'kept']]);
    // Nothing of the gap's resource was requested since the baseline.
    const gets = rig.fixture.requests.slice(requestsBefore).filter((r) => r.path === rig.fixture.state.pathOf(lost.id));
    expect(gets).toHaveLength(0);
    const run = rig.engine.feed(rig.dest)!.state.db.prepare('SELECT status FROM runs WHERE id = ?').get(caught.runId) as { status: string };
    expect(run.status).toBe('completed');
  });

  it('does not fetch a resource updated again after the gap, and fetches it once, as the later notification lists it', async () => {
    rig = await startRig();
    await subscribe(rig);
    rig.fixture.hub.faults.drop = 1;
    const [lost] = rig.fixture.change('update', 1, 5);
    const [after] = rig.fixture.change('update', 1, 5);
    await rig.fixture.hub.settled();
    const caught = await waitFor(rig, 'caught-up');
    await waitFor(rig, 'applied', (e) => e.changes.some((c) => c.uri === after.loc && c.outcome === 'updated'));
    // Before: failed 1 (the listed length and hash were those of the version the gap made, the bytes the later one's).
    expect(caught.failed).toBe(0);
    expect(caught.coveredChanges.map((c) => [c.uri, c.outcome])).toEqual([[lost.loc, 'covered']]);
    expect(mirrored(rig, after.id)?.equals(sourceBytes(rig, after.id))).toBe(true);
  });
});
