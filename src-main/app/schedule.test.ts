// Scheduled syncs through the service's dispatch, against the fixture Source and real mirror folders: a mirror
// syncs by itself once its interval has passed since its last sync, not before, not while its run is paused, and not
// without a schedule; the schedule is kept across restarts and checked by the contract.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../e2e/fixture-source/index.ts';
import type { CommandName } from '../contract/names.ts';
import type { Events, MirrorDetail, MirrorSummary } from '../contract/types.ts';
import { openStore } from '../store/store.ts';
import { everyText, nextSyncAt, REFUSED_WAIT_MS } from './schedule.ts';
import { createService, type Service } from './service.ts';

const HOUR = 3_600_000;
let fixture: FixtureSource;
let dir: string;
let service: Service;
let ends: Events['mirror.ended'][] = [];
/** The schedules' clock: real time plus what a test moves it on by. */
let ahead = 0;
/** Set the clock back to real time as soon as a run starts (so the run that starts is the only one). */
let backOnStart = false;
let progressed = 0;

function open(): Service {
  const s = createService({ store: openStore(join(dir, 'app.sqlite')), adapter: 'http', version: '0.0.0', log: () => undefined, scheduleCheckMs: 25, now: () => Date.now() + ahead });
  s.events.subscribe((name, payload) => {
    if (name === 'mirror.ended') ends.push(payload as Events['mirror.ended']);
    if (name === 'mirror.progress') progressed = (payload as Events['mirror.progress']).done;
    if (name === 'mirrors.changed' && backOnStart && (payload as Events['mirrors.changed']).mirrors.some((m) => m.status === 'running')) {
      ahead = 0;
      backOnStart = false;
    }
  });
  return s;
}

async function call<T>(command: CommandName, args: unknown): Promise<T> {
  const envelope = await service.dispatch(command, args);
  if (!envelope.ok) throw new Error(envelope.error.message);
  return envelope.result as T;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await sleep(20);
  expect(check()).toBe(true);
}

/** A mirror of dataset1 with a first sync done. */
async function mirrored(name: string, syncEveryHours: number): Promise<string> {
  const path = join(dir, name);
  await call('mirrors.create', { url: fixture.url + fixture.paths.dataset1.capabilityList, path, syncEveryHours });
  await call('runs.start', { path });
  await until(() => ends.length === 1);
  expect(ends[0]).toMatchObject({ status: 'completed', created: 20 });
  return path;
}

beforeAll(async () => {
  fixture = await startFixtureSource({ resources: 20, changeListSize: 5 });
});
afterAll(async () => {
  await fixture.close();
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rsdesk-schedule-'));
  ends = [];
  ahead = 0;
  backOnStart = false;
  progressed = 0;
  service = open();
});
afterEach(async () => {
  await service.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('nextSyncAt', () => {
  it('counts from the end of the last sync, else its start, else from when the mirror was added', () => {
    const end = '2026-01-01T10:00:00.000Z';
    expect(nextSyncAt(6, { startedAt: '2026-01-01T09:00:00.000Z', endedAt: end }, '2025-01-01T00:00:00Z')).toBe(Date.parse(end) + 6 * HOUR);
    expect(nextSyncAt(6, { startedAt: end, endedAt: null }, '2025-01-01T00:00:00Z')).toBe(Date.parse(end) + 6 * HOUR);
    expect(nextSyncAt(1, null, end)).toBe(Date.parse(end) + HOUR);
    expect(nextSyncAt(0, null, end)).toBeNull();
  });

  it('puts off a sync that could not start by an hour, or by the interval when that is shorter', () => {
    const end = Date.parse('2026-01-01T10:00:00.000Z');
    const last = { startedAt: '2026-01-01T09:00:00.000Z', endedAt: '2026-01-01T10:00:00.000Z' };
    expect(nextSyncAt(24, last, '2025-01-01T00:00:00Z', end + 30 * HOUR)).toBe(end + 30 * HOUR + REFUSED_WAIT_MS);
    expect(nextSyncAt(24, last, '2025-01-01T00:00:00Z', end + HOUR)).toBe(end + 24 * HOUR);
  });

  it('says the interval in words', () => {
    expect([1, 6, 24, 48, 168, 336].map(everyText)).toEqual(['every hour', 'every 6 hours', 'every day', 'every 2 days', 'every week', 'every 2 weeks']);
  });
});

describe('a mirror synced on a schedule', () => {
  it('syncs by itself once its interval has passed since its last sync, and says so in the run', async () => {
    const path = await mirrored('scheduled', 6);
    const first = await call<MirrorDetail>('mirrors.get', { path });
    expect(first.options.syncEveryHours).toBe(6);
    expect(first.nextSync).toBe(new Date(Date.parse(first.runs[0]!.endedAt!) + 6 * HOUR).toISOString());
    // Not before: several looks at the schedule go by.
    await sleep(200);
    expect(ends).toHaveLength(1);

    backOnStart = true;
    ahead = 6 * HOUR + 1000;
    await until(() => ends.length === 2);
    expect(ends[1]).toMatchObject({ status: 'completed', mode: 'incremental', failed: 0 });
    expect(ends[1]!.notes).toContain("Started by the mirror's schedule (every 6 hours).");
    // The next one counts from the end of this one, not from the first.
    const after = await call<MirrorDetail>('mirrors.get', { path });
    expect(after.runs).toHaveLength(2);
    expect(after.nextSync).toBe(new Date(Date.parse(after.runs[0]!.endedAt!) + 6 * HOUR).toISOString());
    await sleep(200);
    expect(ends).toHaveLength(2);
  });

  it('does not sync a mirror without a schedule, nor one whose run is paused, nor one that is running', async () => {
    const path = await mirrored('unscheduled', 0);
    expect((await call<MirrorSummary>('mirrors.get', { path })).nextSync).toBeNull();
    ahead = 1000 * HOUR;
    await sleep(200);
    expect(ends).toHaveLength(1);

    // Scheduled, but its run was paused: it waits for Resume.
    const other = join(dir, 'paused');
    await call('mirrors.create', { url: fixture.url + fixture.paths.dataset1.capabilityList, path: other, syncEveryHours: 1, concurrency: 1 });
    ahead = 0;
    fixture.setResourceDelay(50);
    try {
      await call('runs.start', { path: other });
      expect((await call<MirrorSummary>('mirrors.get', { path: other })).nextSync).toBeNull();
      await until(() => progressed >= 2);
      expect(await call('runs.pause', { path: other })).toEqual({ paused: true });
      await until(() => ends.length === 2);
    } finally {
      fixture.setResourceDelay(0);
    }
    expect(ends[1]).toMatchObject({ path: other, status: 'paused' });
    expect(await call<MirrorSummary>('mirrors.get', { path: other })).toMatchObject({ status: 'paused', nextSync: null });
    ahead = 1000 * HOUR;
    await sleep(200);
    expect(ends).toHaveLength(2);
  });

  it('keeps the schedule across a restart of the app, and starts one overdue at once', async () => {
    const path = await mirrored('restarted', 24);
    await service.close();
    ahead = 25 * HOUR;
    service = open();
    await until(() => ends.length === 2);
    expect(ends[1]).toMatchObject({ path, status: 'completed', mode: 'incremental' });
    expect((await call<MirrorSummary>('mirrors.get', { path })).options.syncEveryHours).toBe(24);
  });

  it('refuses a schedule that is not a whole number of hours up to a year, in plain words', async () => {
    const path = join(dir, 'refused');
    await call('mirrors.create', { url: fixture.url + fixture.paths.dataset1.capabilityList, path });
    for (const syncEveryHours of [1.5, -1, 9000]) {
      const envelope = await service.dispatch('mirrors.update', { path, syncEveryHours });
      expect(envelope.ok).toBe(false);
      expect((envelope as { error: { message: string } }).error.message).toMatch(/^A scheduled sync must be every whole number of hours up to 8,760 \(a year\), or 0 for none/);
    }
    expect((await call<MirrorSummary>('mirrors.get', { path })).options.syncEveryHours).toBe(0);
  });
});
