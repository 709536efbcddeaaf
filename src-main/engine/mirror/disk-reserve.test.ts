// The disk's reserve: a run stops, as a cancel stops it, once the mirror's disk has less free than the reserve, says
// so, keeps what it verified, and the next run takes up from there. The free space is a probe the tests set.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { DiskReserve, DiskReserveError, type DiskSpaceProbe } from './disk-reserve.ts';
import { MirrorState, stateDirOf } from './state.ts';
import { sync, SyncError } from './sync.ts';

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('DiskReserve', () => {
  it('keeps 1 GiB free, or half of what was free at the start when that is less', async () => {
    let free = 10 * GiB;
    const big = new DiskReserve('/m', { probe: async () => ({ free }), everyMs: 5 });
    big.start();
    await settle(20);
    free = 1.5 * GiB;
    await settle(20);
    expect(big.stopped).toBeNull();
    free = GiB - 1;
    await settle(20);
    expect(big.signal.aborted).toBe(true);
    expect(big.stopped).toBeInstanceOf(DiskReserveError);
    expect(big.stopped!.message).toBe(
      'The disk holding /m has only 1024 MiB free, so the run stopped to leave at least 1 GiB for the rest of the computer. What was verified stays. Free some space and run it again.',
    );

    // Begun with 300 MiB free: it may use 150 of them.
    free = 300 * MiB;
    const small = new DiskReserve('/m', { probe: async () => ({ free }), everyMs: 5 });
    small.start();
    await settle(20);
    free = 151 * MiB;
    await settle(20);
    expect(small.stopped).toBeNull();
    free = 149 * MiB;
    await settle(20);
    expect(small.stopped?.message).toMatch(/^The disk holding \/m has only 149 MiB free, so the run stopped to leave at least 150 MiB/);
  });

  it('says whether a package of known length fits above the reserve, without stopping the run', async () => {
    let free = 3 * GiB;
    const reserve = new DiskReserve('/m', { probe: async () => ({ free }), everyMs: 5 });
    reserve.start();
    expect(await reserve.lacks(2 * GiB, 'Downloading the package http://s/p.zip')).toBeNull();
    free = 2.5 * GiB;
    const why = await reserve.lacks(2 * GiB, 'Downloading the package http://s/p.zip');
    expect(why).toBe('Downloading the package http://s/p.zip needs 2 GiB, but the disk holding /m has 2.5 GiB free, of which 1 GiB is kept for the rest of the computer.');
    expect(await reserve.lacks(2 * GiB, 'Extracting the package http://s/p.zip', '(by the sizes the package gives)')).toBe(
      'Extracting the package http://s/p.zip needs 2 GiB (by the sizes the package gives), but the disk holding /m has 2.5 GiB free, of which 1 GiB is kept for the rest of the computer.',
    );
    // Only a package is refused: what happens then is the caller's (the others go on).
    expect(reserve.stopped).toBeNull();
    // A disk that cannot say refuses nothing.
    const blind = new DiskReserve('/m', { probe: async () => Promise.reject(new Error('ENOSYS')) });
    expect(await blind.lacks(10 * GiB, 'x')).toBeNull();
  });

  it('never stops a run when the free space cannot be read, nor once stopped looking', async () => {
    const unreadable = new DiskReserve('/m', { probe: () => Promise.reject(new Error('ENOSYS')), everyMs: 5 });
    unreadable.start();
    await settle(30);
    unreadable.stop();
    expect(unreadable.stopped).toBeNull();

    let free = 10 * GiB;
    const ended = new DiskReserve('/m', { probe: async () => ({ free }), everyMs: 5 });
    ended.start();
    await settle(20);
    ended.stop();
    free = 0;
    await settle(20);
    expect(ended.stopped).toBeNull();
  });
});

describe('a sync on a disk that fills up', () => {
  let fixture: FixtureSource;
  let dest: string;
  beforeEach(async () => {
    fixture = await startFixtureSource({ resources: 40, changeListSize: 20, resourceDelayMs: 40 });
    dest = mkdtempSync(join(tmpdir(), 'mirror-reserve-'));
  });
  afterEach(async () => {
    await fixture.close();
  });
  const resourceGets = () => fixture.requests.filter((r) => /\/res\/\d+/.test(r.path)).map((r) => r.path);

  it('stops before the reserve, says why, keeps what it verified, and the next run fetches only the rest', async () => {
    let free = 50 * GiB;
    const probe: DiskSpaceProbe = async () => ({ free });
    const error = await sync({
      url: fixture.url + fixture.paths.dataset1.capabilityList,
      dest,
      concurrency: 2,
      batchSize: 3,
      diskSpace: { probe, everyMs: 10 },
      onProgress: (p) => {
        // Some other program fills the disk once five resources are in.
        if (p.settled >= 5) free = 700 * MiB;
      },
    }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(SyncError);
    const message = 'The disk holding ' + dest + ' has only 700 MiB free, so the run stopped to leave at least 1 GiB for the rest of the computer. What was verified stays. Free some space and run it again.';
    expect((error as Error).message).toBe(message);

    const state = new MirrorState(stateDirOf(dest));
    const [run] = state.runs();
    const rows = [...state.rows()];
    state.close();
    expect(run).toMatchObject({ status: 'failed', message });
    expect(run!.created).toBeGreaterThanOrEqual(5);
    expect(run!.created).toBeLessThan(40);
    expect(rows).toHaveLength(run!.created);
    for (const row of rows) {
      expect(row.status).toBe('verified');
      expect(existsSync(join(dest, row.path))).toBe(true);
    }

    free = 50 * GiB;
    const fetched = new Set(resourceGets());
    const next = await sync({ dest, concurrency: 4, diskSpace: { probe, everyMs: 10 } });
    expect(next).toMatchObject({ mode: 'baseline', failed: 0, created: 40 - run!.created, unchanged: run!.created });
    expect(resourceGets().slice(fetched.size).filter((path) => fetched.has(path) && rows.some((r) => r.uri.endsWith(path)))).toEqual([]);
  });

  it('stops a Resource Dump run in the middle of a package download at once, not when the stalled transfer times out', async () => {
    let free = 50 * GiB;
    // The second package's transfer stops after its first bytes and hangs; meanwhile the disk fills.
    fixture.setBroken(fixture.paths.dataset1.resourceDumpPackage(2), { stallAfter: 1000 });
    const started = Date.now();
    const error = await sync({
      url: fixture.url + fixture.paths.dataset1.capabilityList,
      dest,
      useDumps: true,
      timeoutMs: 20_000,
      dumpReadAheadFrom: Number.MAX_SAFE_INTEGER,
      diskSpace: { probe: async () => ({ free }), everyMs: 10 },
      onProgress: () => {
        if (fixture.requests.some((r) => r.path === fixture.paths.dataset1.resourceDumpPackage(2))) free = 10 * MiB;
      },
    }).catch((err: unknown) => err);
    expect((error as Error).message).toMatch(/^The disk holding .* has only 10 MiB free, so the run stopped/);
    expect(Date.now() - started).toBeLessThan(10_000);
    const state = new MirrorState(stateDirOf(dest));
    const [run] = state.runs();
    state.close();
    expect(run).toMatchObject({ status: 'failed' });
  });
});
