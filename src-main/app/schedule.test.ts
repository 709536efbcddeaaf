// Scheduled syncs through the service's dispatch, against the fixture Source and real mirror folders: a mirror
// syncs by itself once its interval has passed since its last sync, not before, not while a person has paused its
// run (a run the Source or the app's closing paused it resumes), and not without a schedule; the schedule is kept
// across restarts and checked by the contract.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../e2e/fixture-source/index.ts';
import type { CommandName } from '../contract/names.ts';
import type { Events, MirrorDetail, MirrorSummary } from '../contract/types.ts';
import { openStore } from '../store/store.ts';
import { everyText, nextSyncAt, REFUSED_WAIT_MS, scheduleText, SOURCE_WAIT_MAX_MS } from './schedule.ts';
import { createService, type Service } from './service.ts';
import { RSDESK_BIN } from '../cli/run-rsdesk.ts';

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
/** Done once, the next time the schedules read the clock: after they looked at the folders, before a start. */
let onClock: (() => void) | null = null;

function open(): Service {
  const now = () => {
    const once = onClock;
    onClock = null;
    once?.();
    return Date.now() + ahead;
  };
  const s = createService({ store: openStore(join(dir, 'app.sqlite')), adapter: 'http', version: '0.0.0', log: () => undefined, scheduleCheckMs: 25, now });
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
  onClock = null;
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

  it("waits for the end of a Source's Retry-After when it is later than the interval, a week after the pause at most", () => {
    const end = Date.parse('2026-01-01T10:00:00.000Z');
    const last = { startedAt: '2026-01-01T09:00:00.000Z', endedAt: '2026-01-01T10:00:00.000Z' };
    expect(nextSyncAt(1, last, '2025-01-01T00:00:00Z', undefined, null, end + 5 * HOUR)).toBe(end + 5 * HOUR);
    // Shorter than the interval: the interval.
    expect(nextSyncAt(6, last, '2025-01-01T00:00:00Z', undefined, null, end + 5 * HOUR)).toBe(end + 6 * HOUR);
    // A year asked: a week after the pause, then the schedule asks once more.
    expect(nextSyncAt(1, last, '2025-01-01T00:00:00Z', undefined, null, end + 365 * 24 * HOUR)).toBe(end + SOURCE_WAIT_MAX_MS);
    expect(SOURCE_WAIT_MAX_MS).toBe(7 * 24 * HOUR);
    // At a time of day too.
    expect(nextSyncAt(24, last, '2025-01-01T00:00:00Z', undefined, 120, end + 30 * HOUR)).toBe(end + 30 * HOUR);
  });

  it('says the interval in words', () => {
    expect([1, 6, 24, 48, 168, 336].map(everyText)).toEqual(['every hour', 'every 6 hours', 'every day', 'every 2 days', 'every week', 'every 2 weeks']);
    expect(scheduleText(24, 120)).toBe('every day at 02:00');
    expect(scheduleText(168, 14 * 60 + 5)).toBe('every week at 14:05');
    // A time of day is kept but not used by an interval that is not whole days.
    expect(scheduleText(6, 120)).toBe('every 6 hours');
    expect(scheduleText(24, null)).toBe('every day');
  });
});

describe('nextSyncAt at a time of day (the local clock)', () => {
  /** Local clock time, as the schedule reads it: month from 1. */
  const local = (y: number, mo: number, d: number, h: number, mi = 0) => new Date(y, mo - 1, d, h, mi).getTime();
  const run = (start: number, minutes = 10) => ({ startedAt: new Date(start).toISOString(), endedAt: new Date(start + minutes * 60_000).toISOString() });
  const added = '2025-01-01T00:00:00Z';

  it('syncs every night at its time, whenever the last sync ran that day', () => {
    // The scheduled sync of 02:00 on the 10th: the next at 02:00 on the 11th, not 24 h after it ended.
    expect(nextSyncAt(24, run(local(2026, 3, 10, 2), 50), added, undefined, 120)).toBe(local(2026, 3, 11, 2));
    // A sync by hand at 20:00 does not put off that night's.
    expect(nextSyncAt(24, run(local(2026, 3, 10, 20)), added, undefined, 120)).toBe(local(2026, 3, 11, 2));
    // One by hand at 01:00: the same night's 02:00 still comes.
    expect(nextSyncAt(24, run(local(2026, 3, 11, 1)), added, undefined, 120)).toBe(local(2026, 3, 11, 2));
    // Without a time: 24 h after the end, as before.
    expect(nextSyncAt(24, run(local(2026, 3, 10, 20)), added, undefined, null)).toBe(local(2026, 3, 10, 20, 10) + 24 * HOUR);
  });

  it('counts whole days for a longer interval, and starts a new mirror at the first time after it was added', () => {
    // Weekly at 03:30, last run on Monday the 2nd of March 2026 at 03:30: the next Monday at 03:30.
    expect(nextSyncAt(168, run(local(2026, 3, 2, 3, 30)), added, undefined, 210)).toBe(local(2026, 3, 9, 3, 30));
    // A sync by hand on Wednesday afternoon: six days on is Tuesday afternoon, so Wednesday at 03:30.
    expect(nextSyncAt(168, run(local(2026, 3, 4, 15)), added, undefined, 210)).toBe(local(2026, 3, 11, 3, 30));
    expect(nextSyncAt(24, null, new Date(local(2026, 3, 10, 1, 59)).toISOString(), undefined, 120)).toBe(local(2026, 3, 10, 2));
    expect(nextSyncAt(24, null, new Date(local(2026, 3, 10, 2, 1)).toISOString(), undefined, 120)).toBe(local(2026, 3, 11, 2));
  });

  it('makes up a night the app was closed through once, at once, and keeps a refusal\'s wait', () => {
    const last = run(local(2026, 3, 1, 2));
    // Closed a week: due since the 2nd, so the app starts it as soon as it looks.
    expect(nextSyncAt(24, last, added, undefined, 120)).toBe(local(2026, 3, 2, 2));
    const refused = local(2026, 3, 8, 9);
    expect(nextSyncAt(24, last, added, refused, 120)).toBe(refused + REFUSED_WAIT_MS);
  });

  it('keeps the clock time across a change to or from daylight saving time, in zones that have one', () => {
    // Each day of a year, in a process whose clock is in each zone: the due time reads 02:00 on the next day's clock,
    // or, on a day whose clock jumps over 02:00, is the moment of the jump. (Lord Howe Island moves by half an hour.)
    const check = `
      const { nextSyncAt } = await import(${JSON.stringify(pathToFileURL(join(import.meta.dirname, 'schedule.ts')).href)});
      const clock = (at) => new Date(at).getHours() * 60 + new Date(at).getMinutes();
      const wrong = [];
      for (let day = 0; day < 366; day++) {
        const start = new Date(2026, 0, 1 + day, 2).getTime();
        const due = nextSyncAt(24, { startedAt: new Date(start).toISOString(), endedAt: new Date(start + 600000).toISOString() }, '2025-01-01T00:00:00Z', undefined, 120);
        const nextDay = new Date(2026, 0, 2 + day, 12).getDate();
        const atJump = clock(due - 1) < 120 && clock(due) > 120;
        if (new Date(due).getDate() !== nextDay || (clock(due) !== 120 && !atJump) || new Date(due).getSeconds() !== 0) wrong.push(new Date(due).toString());
      }
      const jumps = new Set();
      for (let h = 0; h < 366 * 24; h++) jumps.add(new Date(2026, 0, 1, h).getTimezoneOffset());
      console.log(JSON.stringify({ wrong, offsets: jumps.size }));`;
    for (const zone of ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe']) {
      const out = execFileSync(process.execPath, ['--experimental-strip-types', '--disable-warning=ExperimentalWarning', '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', '--input-type=module', '-e', check], { env: { ...process.env, TZ: zone }, encoding: 'utf8' });
      // offsets: the zone did change its clock in 2026 in that process, so the check saw a change.
      expect({ zone, ...JSON.parse(out) }).toEqual({ zone, wrong: [], offsets: 2 });
    }
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

  it('puts off a scheduled sync that loses the folder to rsdesk in the same instant, says so in the list, and does not fail it', async () => {
    const path = await mirrored('raced', 6);
    const lists: MirrorSummary[][] = [];
    service.events.subscribe((name, payload) => {
      if (name === 'mirrors.changed') lists.push((payload as Events['mirrors.changed']).mirrors);
    });
    // rsdesk from cron, started as the schedule looked at the folder (free) and before its run took the lock: a real
    // rsdesk process, waited for until it holds the lock. It holds it a while (its Source is slow to answer).
    fixture.setPathDelay(fixture.paths.dataset1.capabilityList, 1500);
    let rsdesk: ReturnType<typeof spawn> | null = null;
    const rsdeskEnded = new Promise<number | null>((resolve) => {
      onClock = () => {
        rsdesk = spawn(process.execPath, [RSDESK_BIN, 'sync', '--dest', path], { stdio: 'ignore' });
        rsdesk.on('close', resolve);
        const lock = join(path, '.resourcesync', 'lock');
        const wait = new Int32Array(new SharedArrayBuffer(4));
        for (let i = 0; i < 1000 && !existsSync(lock); i++) Atomics.wait(wait, 0, 0, 20);
      };
    });
    try {
      backOnStart = true;
      ahead = 6 * HOUR + 1000;
      await until(() => lists.some((l) => l.find((m) => m.path === path)?.putOff != null));
      const pid = (rsdesk as ReturnType<typeof spawn> | null)?.pid;
      const shown = (await call<MirrorSummary[]>('mirrors.list', {})).find((m) => m.path === path)!;
      expect(shown).toMatchObject({ status: 'busy', nextSync: null, putOff: { because: `the folder was in use by rsdesk sync (process ${pid})` } });
      expect(Date.parse(shown.putOff!.at)).toBeGreaterThan(Date.now() - 60_000);
      expect(await rsdeskEnded).toBe(0);
    } finally {
      fixture.setPathDelay(fixture.paths.dataset1.capabilityList, 0);
    }
    // Nothing of the app's ran, so nothing ended: no failed run, no error.
    expect(ends).toHaveLength(1);
    // rsdesk's sync ended since: the schedule counts from it, and the put-off is past.
    const after = await call<MirrorDetail>('mirrors.get', { path });
    expect(after.runs).toHaveLength(2);
    expect(after).toMatchObject({ status: 'ready', putOff: null, nextSync: new Date(Date.parse(after.runs[0]!.endedAt!) + 6 * HOUR).toISOString() });
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

  it('resumes by itself a run the Source paused by asking to wait, once the schedule comes round again', async () => {
    const path = await mirrored('asked-to-wait', 1);
    fixture.setRefusing({ prefix: '/dataset1/changelist', status: 503, headers: { 'retry-after': '3600' } });
    try {
      backOnStart = true;
      ahead = HOUR + 1000;
      await until(() => ends.length === 2);
    } finally {
      fixture.setRefusing(null);
    }
    // The end says why: the Source's answer, not only "Paused after 0 resources".
    expect(ends[1]).toMatchObject({ path, status: 'paused', message: expect.stringMatching(/^Paused after 0 resources\. The Source answered HTTP 503 \(Service Unavailable\) to .*asking to wait 1 h \(Retry-After\)/) });
    const paused = await call<MirrorDetail>('mirrors.get', { path });
    // Not left for Resume: due again an interval after the pause.
    expect(paused).toMatchObject({ status: 'paused', resumable: true });
    expect(paused.nextSync).toBe(new Date(Date.parse(paused.runs[0]!.endedAt!) + HOUR).toISOString());
    await sleep(200);
    expect(ends).toHaveLength(2);

    backOnStart = true;
    ahead = HOUR + 1000;
    await until(() => ends.length === 3);
    expect(ends[2]).toMatchObject({ path, status: 'completed', mode: 'incremental', failed: 0 });
    expect(ends[2]!.notes).toContain("Started by the mirror's schedule (every hour).");
    expect(ends[2]!.notes?.some((n) => /^Resuming run \d+ \(paused /.test(n))).toBe(true);
    expect(await call<MirrorSummary>('mirrors.get', { path })).toMatchObject({ status: 'ready', resumable: false });
  });

  it("waits out a Retry-After longer than its interval before it takes the run up, across a restart, and the list says until when", async () => {
    const path = await mirrored('asked-to-wait-long', 1);
    fixture.setRefusing({ prefix: '/dataset1/changelist', status: 503, headers: { 'retry-after': String(3 * 3600) } });
    const asked = fixture.requests.length;
    let refusedAt = 0;
    try {
      backOnStart = true;
      ahead = HOUR + 1000;
      await until(() => ends.length === 2);
      refusedAt = Date.now();
    } finally {
      fixture.setRefusing(null);
    }
    expect(ends[1]).toMatchObject({ path, status: 'paused', message: expect.stringMatching(/asking to wait 3 h \(Retry-After\)/) });
    const paused = await call<MirrorDetail>('mirrors.get', { path });
    // Due when the Source's wait ends, not an interval after the pause: before, it was endedAt + 1 h.
    expect(paused).toMatchObject({ status: 'paused', resumable: true, sourceWait: expect.any(String) });
    expect(paused.nextSync).toBe(paused.sourceWait);
    expect(Date.parse(paused.nextSync!)).toBeGreaterThan(refusedAt + 3 * HOUR - 60_000);
    expect(Date.parse(paused.nextSync!)).toBeLessThanOrEqual(refusedAt + 3 * HOUR);

    // The interval comes round, twice: nothing asked of the Source.
    const hitsAfterPause = fixture.requests.length;
    expect(hitsAfterPause).toBeGreaterThan(asked);
    ahead = 2 * HOUR;
    await sleep(300);
    expect(ends).toHaveLength(2);
    expect(fixture.requests.length).toBe(hitsAfterPause);

    // Kept in the mirror's state: a restart of the app does not forget it.
    await service.close();
    service = open();
    const reopened = (await call<MirrorSummary[]>('mirrors.list', {})).find((m) => m.path === path)!;
    expect(reopened).toMatchObject({ status: 'paused', nextSync: paused.nextSync, sourceWait: paused.sourceWait });
    await sleep(300);
    expect(ends).toHaveLength(2);

    backOnStart = true;
    ahead = 3 * HOUR + 1000;
    await until(() => ends.length === 3);
    expect(ends[2]).toMatchObject({ path, status: 'completed', mode: 'incremental', failed: 0 });
    expect(ends[2]!.notes?.some((n) => /^Resuming run \d+ \(paused /.test(n))).toBe(true);
    expect(await call<MirrorSummary>('mirrors.get', { path })).toMatchObject({ status: 'ready', sourceWait: null });
  });

  it('resumes by itself, after a restart, a run the app paused when it was closed', async () => {
    const path = join(dir, 'closed-mid-run');
    await call('mirrors.create', { url: fixture.url + fixture.paths.dataset1.capabilityList, path, syncEveryHours: 2, concurrency: 1 });
    fixture.setResourceDelay(50);
    try {
      await call('runs.start', { path });
      await until(() => progressed >= 2);
      await service.close();
    } finally {
      fixture.setResourceDelay(0);
    }
    expect(ends[0]).toMatchObject({ path, status: 'paused' });
    service = open();
    const reopened = await call<MirrorDetail>('mirrors.get', { path });
    expect(reopened).toMatchObject({ status: 'paused', resumable: true });
    expect(reopened.runs[0]!.message).toBe('Paused: the app was closed while the run went on; Resume takes it up where it stopped.');
    expect(reopened.nextSync).toBe(new Date(Date.parse(reopened.runs[0]!.endedAt!) + 2 * HOUR).toISOString());
    backOnStart = true;
    ahead = 2 * HOUR + 1000;
    await until(() => ends.length === 2);
    expect(ends[1]).toMatchObject({ path, status: 'completed', mode: 'baseline', failed: 0 });
    expect(await call<MirrorSummary>('mirrors.get', { path })).toMatchObject({ status: 'ready', resources: 20 });
    expect(ends[1]!.notes?.some((n) => /^Resuming run \d+ \(paused baseline\)/.test(n))).toBe(true);
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
    for (const syncAtMinute of [1440, -1, 2.5, '02:00']) {
      const envelope = await service.dispatch('mirrors.update', { path, syncEveryHours: 24, syncAtMinute });
      expect(envelope.ok).toBe(false);
      expect((envelope as { error: { message: string } }).error.message).toMatch(/^A time of day for scheduled syncs must be a whole number of minutes after midnight/);
    }
  });

  it('syncs at its time of day, keeps the time across a restart, and says it in the run', async () => {
    const path = await mirrored('nightly', 24);
    const first = await call<MirrorDetail>('mirrors.get', { path });
    const started = Date.parse(first.runs[0]!.startedAt);
    // The next whole minute after the baseline started, on this computer's clock, so that it is due within a day.
    const at = new Date(started + 60_000);
    const atMinute = at.getHours() * 60 + at.getMinutes();
    const set = await call<MirrorSummary>('mirrors.update', { path, syncAtMinute: atMinute });
    expect(set.options).toMatchObject({ syncEveryHours: 24, syncAtMinute: atMinute });
    at.setSeconds(0, 0);
    expect(set.nextSync).toBe(at.toISOString());
    await service.close();
    service = open();
    expect((await call<MirrorSummary>('mirrors.get', { path })).options.syncAtMinute).toBe(atMinute);
    backOnStart = true;
    ahead = at.getTime() - Date.now() + 1000;
    await until(() => ends.length === 2);
    const hhmm = `${String(Math.floor(atMinute / 60)).padStart(2, '0')}:${String(atMinute % 60).padStart(2, '0')}`;
    expect(ends[1]!.notes).toContain(`Started by the mirror's schedule (every day at ${hhmm}).`);
    // None: a time of day again, counted from the schedule's own interval.
    expect((await call<MirrorSummary>('mirrors.update', { path, syncAtMinute: null })).options.syncAtMinute).toBeNull();
  });
});
