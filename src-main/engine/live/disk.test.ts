// The disk's reserve guards live notifications too: a batch stops before the mirror's disk is full, the
// notifications it applied whole stay applied, the others wait in the inbox (none lost, none said applied that was
// not), the feed says why in plain words, and they are applied once there is room again. The free space is a probe.
import { request } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { acquireLock } from '../mirror/lock.ts';
import { stateDirOf } from '../mirror/state.ts';
import { mirrored, sourceBytes, startRig, waitFor, type Rig } from './test-support.ts';

// A disk that fills up on demand, between two looks at its free space: the mirror's small files, written by the file
// thread, are refused as a full disk refuses them.
const full = vi.hoisted(() => ({ on: false }));
vi.mock('../mirror/file-thread.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../mirror/file-thread.ts')>();
  const thread = real.fileThread;
  const write: typeof thread.write = (...args) =>
    full.on ? Promise.reject(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })) : thread.write(...args);
  const fileThread = new Proxy(thread, {
    get: (target, key) => {
      if (key === 'write') return write;
      const value = Reflect.get(target, key) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { ...real, fileThread };
});

const GiB = 1024 ** 3;
let rig: Rig | undefined;
afterEach(async () => {
  full.on = false;
  await rig?.close();
  rig = undefined;
});

describe('live notifications on a disk that fills up', () => {
  it('stop before the reserve, keep the rest in the inbox, and are applied once there is room', async () => {
    let free = 50 * GiB;
    let fullAfter = Infinity;
    const resourceGets = () => rig!.fixture.requests.filter((r) => /\/res\/\d+/.test(r.path)).length;
    rig = await startRig({
      fixture: { resources: 40 },
      engine: { concurrency: 1, diskSpace: { probe: async () => ({ free: resourceGets() >= fullAfter ? 0 : free }), everyMs: 2, recheckMs: 50 } },
    });
    const sub = await rig.engine.subscribe({ dest: rig.dest, topic: rig.topic, hub: rig.hubUrl });
    await waitFor(rig, 'subscribed');
    await rig.fixture.hub.settled();
    const store = rig.engine.feed(rig.dest)!.store;
    // Ten notifications wait behind another writer's lock, to be applied as one batch, one resource at a time.
    rig.fixture.setResourceDelay(30);
    const lock = acquireLock(stateDirOf(rig.dest), 'a test holding the mirror');
    const records = [];
    try {
      for (let i = 0; i < 10; i++) records.push(...rig.fixture.change('update', 1, i + 1));
      await rig.fixture.hub.settled();
      await waitFor(rig, 'notification', () => rig!.events.filter((e) => e.type === 'notification').length === 10);
      fullAfter = resourceGets() + 3;
    } finally {
      lock.release();
    }
    const stop = await waitFor(rig, 'error', (e) => /stopped being applied/.test(e.message));
    await rig.engine.idle();
    const notes = rig.events.filter((e) => e.type === 'notification');
    const applied = rig.events.filter((e) => e.type === 'applied');
    const head = applied.flatMap((a) => a.inboxIds);
    expect(head.length).toBeGreaterThan(0);
    expect(head.length).toBeLessThan(10);
    expect(head).toEqual(notes.slice(0, head.length).map((n) => n.inboxId));
    expect(stop.message).toBe(
      `The disk holding ${rig.dest} has only 0 bytes free, so live notifications stopped being applied to leave at least 1 GiB for the rest of the computer. ` +
        `What was verified stays; ${10 - head.length} notifications not yet applied wait in the inbox and are applied once space is free again.`,
    );
    expect(store.counts(sub.id)).toEqual({ applied: head.length, received: 10 - head.length });
    expect(store.subscription(sub.id)!.cursor).toBe(notes[head.length - 1].until);
    for (const r of records.slice(0, head.length)) expect(mirrored(rig, r.id)?.equals(sourceBytes(rig, r.id)), `resource ${r.id}`).toBe(true);
    const feed = rig.engine.feed(rig.dest)!;
    const stopped = feed.state.runs().filter((r) => r.mode === 'live' && r.status !== 'completed');
    expect(stopped).toHaveLength(1);
    expect(stopped[0].status).toBe('failed');
    expect(stopped[0].message).toMatch(/stopped being applied/);

    // Still no room: what arrives is stored, and no run starts.
    const runs = feed.state.runs().length;
    records.push(...rig.fixture.change('update', 1, 11));
    await rig.fixture.hub.settled();
    await new Promise((r) => setTimeout(r, 200));
    await rig.engine.idle();
    expect(feed.state.runs().length).toBe(runs);
    expect(store.counts(sub.id)).toEqual({ applied: head.length, received: 11 - head.length });
    expect(rig.events.filter((e) => e.type === 'error' && /stopped being applied/.test(e.message))).toHaveLength(1);

    // Room again: the rest are applied, in order, each once.
    fullAfter = Infinity;
    free = 50 * GiB;
    await waitFor(rig, 'applied', () => rig!.events.filter((e) => e.type === 'applied').flatMap((a) => a.inboxIds).length === 11);
    await rig.engine.idle();
    const all = rig.events.filter((e) => e.type === 'notification');
    expect(all.filter((n, i) => all.findIndex((m) => m.inboxId === n.inboxId) === i).map((n) => n.inboxId)).toEqual(
      rig.events.filter((e) => e.type === 'applied').flatMap((a) => a.inboxIds),
    );
    expect(store.counts(sub.id)).toEqual({ applied: 11 });
    expect(store.subscription(sub.id)!.cursor).toBe(all.at(-1)!.until);
    expect(rig.events.some((e) => e.type === 'gap')).toBe(false);
    for (const r of records) expect(mirrored(rig, r.id)?.equals(sourceBytes(rig, r.id)), `resource ${r.id}`).toBe(true);
  });

  it('stop when the disk fills between two looks, as at the reserve: the rest wait in the inbox, not applied with failures', async () => {
    let fullAfter = Infinity;
    const resourceGets = () => rig!.fixture.requests.filter((r) => /\/res\/\d+/.test(r.path)).length;
    rig = await startRig({
      fixture: { resources: 40 },
      engine: {
        concurrency: 1,
        diskSpace: {
          // The free space looked at says there is plenty; the disk is full once a few resources are in.
          probe: async () => {
            if (resourceGets() >= fullAfter) full.on = true;
            return { free: 50 * GiB };
          },
          everyMs: 2,
          recheckMs: 50,
        },
      },
    });
    const sub = await rig.engine.subscribe({ dest: rig.dest, topic: rig.topic, hub: rig.hubUrl });
    await waitFor(rig, 'subscribed');
    await rig.fixture.hub.settled();
    const store = rig.engine.feed(rig.dest)!.store;
    rig.fixture.setResourceDelay(30);
    const lock = acquireLock(stateDirOf(rig.dest), 'a test holding the mirror');
    try {
      for (let i = 0; i < 10; i++) rig.fixture.change('update', 1, i + 1);
      await rig.fixture.hub.settled();
      await waitFor(rig, 'notification', () => rig!.events.filter((e) => e.type === 'notification').length === 10);
      fullAfter = resourceGets() + 3;
    } finally {
      lock.release();
    }
    const stop = await waitFor(rig, 'error', (e) => /stopped being applied/.test(e.message));
    await rig.engine.idle();
    expect(stop.message).toMatch(/^The disk holding .* has only 0 bytes free, so live notifications stopped being applied/);
    const counts = store.counts(sub.id);
    expect(counts.received).toBeGreaterThan(0);
    expect((counts.applied ?? 0) + counts.received!).toBe(10);
  });

  it('are answered 503 once the inbox holds its share of waiting bodies on a low disk, and stored when the hub sends again with room', async () => {
    let free = 50 * GiB;
    // The hub tries again 1.5 s after a refusal: after the second for which the disk's state, once read, answers.
    rig = await startRig({ fixture: { resources: 10, hub: { retries: 1, retryDelayMs: 1_500 } }, engine: { diskSpace: { probe: async () => ({ free }), inboxBytes: 1, recheckMs: 50 } } });
    const sub = await rig.engine.subscribe({ dest: rig.dest, topic: rig.topic, hub: rig.hubUrl });
    await waitFor(rig, 'subscribed');
    await rig.fixture.hub.settled();
    // A first notification with room (the reserve is set from what is free then: 1 GiB).
    rig.fixture.change('update', 1);
    await waitFor(rig, 'applied');
    await rig.engine.idle();
    free = 0;
    // The disk's state read for a delivery answers for a second.
    await new Promise((r) => setTimeout(r, 1_000));
    const records = rig.fixture.change('update', 1, 2);
    const refused = await waitFor(rig, 'rejected', (e) => e.what === 'delivery');
    expect(refused.reason).toBe(
      `1 notification was not stored: the disk holding ${rig.dest} has only 0 bytes free (less than the 1 GiB kept for the rest of the computer), and while it is this low the inbox keeps at most 1 byte of notifications waiting to be applied. ` +
        'The hub was asked to send again later; what it gives up on is read from the Change List once there is room.',
    );
    const store = rig.engine.feed(rig.dest)!.store;
    expect(store.counts(sub.id)).toEqual({ applied: 1 });
    // Room again before the hub's next attempt.
    free = 50 * GiB;
    await rig.fixture.hub.settled();
    expect(rig.fixture.hub.deliveries.slice(-2).map((d) => [d.attempt, d.status])).toEqual([
      [1, 503],
      [2, 202],
    ]);
    await waitFor(rig, 'applied', () => rig!.events.filter((e) => e.type === 'applied').length === 2);
    await rig.engine.idle();
    expect(store.counts(sub.id)).toEqual({ applied: 2 });
    expect(mirrored(rig, records[0]!.id)?.equals(sourceBytes(rig, records[0]!.id))).toBe(true);
  });

  it('are answered 503 past the share on a low disk also when they come together, before any of them is stored', async () => {
    let free = 50 * GiB;
    rig = await startRig({ fixture: { resources: 10 }, engine: { diskSpace: { probe: async () => ({ free }), inboxBytes: 1_000, recheckMs: 50 } } });
    const sub = await rig.engine.subscribe({ dest: rig.dest, topic: rig.topic, hub: rig.hubUrl });
    await waitFor(rig, 'subscribed');
    await rig.fixture.hub.settled();
    rig.fixture.change('update', 1);
    await waitFor(rig, 'applied');
    await rig.engine.idle();
    free = 0;
    await new Promise((r) => setTimeout(r, 1_000));
    const feed = rig.engine.feed(rig.dest)!;
    // Five of 600 bytes at once (a hub delivers in parallel): the share of 1,000 bytes lets one in.
    const row = { ...feed.store.subscription(sub.id)!, secret: null };
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) => feed.deliver(row, { headers: { 'content-type': 'application/xml' }, body: Buffer.alloc(600, 48 + i) })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([202, 503, 503, 503, 503]);
    expect(feed.store.pendingBodyBytes()).toBeLessThanOrEqual(1_000);
  });

  it('stop a sync a ping asked for, as a sync stops: the run fails with the reason and the checkpoint stays', async () => {
    let fullAfter = Infinity;
    const resourceGets = () => rig!.fixture.requests.filter((r) => /\/res\/\d+/.test(r.path)).length;
    rig = await startRig({ fixture: { resources: 40, resourceDelayMs: 30 } });
    const feed = rig.engine.openMirror(rig.dest, {
      pingSync: true,
      concurrency: 1,
      diskSpace: { probe: async () => ({ free: resourceGets() >= fullAfter ? 0 : 50 * GiB }), everyMs: 2 },
    });
    const checkpoint = feed.state.checkpoint();
    rig.fixture.change('update', 8);
    fullAfter = resourceGets() + 2;
    const q = new URLSearchParams({ site_name: 'Fixture', site_uri: rig.fixture.url + '/' });
    await request(`${rig.engine.address}/ping?${q}`).then((r) => r.body.text());
    const error = await waitFor(rig, 'error', (e) => /ping asked for failed/.test(e.message));
    expect(error.message).toMatch(/^The sync a ping asked for failed: The disk holding .* has only 0 bytes free, so live notifications stopped being applied/);
    await rig.engine.idle();
    const run = feed.state.runs().find((r) => r.mode === 'ping')!;
    expect(run.status).toBe('failed');
    expect(run.message).toMatch(/stopped being applied/);
    expect(run.updated).toBeLessThan(8);
    expect(feed.state.checkpoint()).toEqual(checkpoint);
  });
});
