// The mirror commands through the service's dispatch, as adapters call them, against the fixture Source and a real
// mirror folder: create from a Capability List, a baseline with batched progress, pause and resume, cancel, history
// and failures, audit, forget, and a mirror that survives a restart of the app (reopened by its path alone).
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SLOPPY, startFixtureSource, type FixtureSource } from '../../e2e/fixture-source/index.ts';
import type { CommandName, EventName } from '../contract/names.ts';
import type { AuditView, Events, MirrorDetail, MirrorSummary, RunFailures } from '../contract/types.ts';
import { MirrorState, stateDirOf } from '../engine/mirror/state.ts';
import { openStore } from '../store/store.ts';
import type { Envelope } from './dispatch.ts';
import { createService, type Service } from './service.ts';

let fixture: FixtureSource;
let dir: string;
let service: Service;
let events: { at: number; name: EventName; payload: unknown }[] = [];

const dbPath = () => join(dir, 'app.sqlite');
function open(): Service {
  const s = createService({ store: openStore(dbPath()), adapter: 'http', version: '0.0.0', log: () => undefined, progressIntervalMs: 100 });
  s.events.subscribe((name, payload) => events.push({ at: Date.now(), name, payload }));
  return s;
}

async function call<T>(command: CommandName, args: unknown): Promise<T> {
  const envelope: Envelope = await service.dispatch(command, args);
  if (!envelope.ok) throw Object.assign(new Error(envelope.error.message), { code: envelope.error.code });
  return envelope.result as T;
}

async function fails(command: CommandName, args: unknown): Promise<{ code: string; message: string }> {
  const envelope = await service.dispatch(command, args);
  expect(envelope.ok, `${command} should fail`).toBe(false);
  return (envelope as { error: { code: string; message: string } }).error;
}

function ended(path: string, since = 0): Promise<Events['mirror.ended']> {
  return new Promise((resolve) => {
    const poll = () => {
      const e = events.find((x, i) => i >= since && x.name === 'mirror.ended' && (x.payload as Events['mirror.ended']).path === path);
      if (e) resolve(e.payload as Events['mirror.ended']);
      else setTimeout(poll, 20);
    };
    poll();
  });
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
  expect(check()).toBe(true);
};

const capabilityList = () => fixture.url + fixture.paths.dataset1.capabilityList;

beforeAll(async () => {
  fixture = await startFixtureSource({ resources: 40, changeListSize: 20 });
});
afterAll(async () => {
  await fixture.close();
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rsdesk-mirrors-'));
  events = [];
  service = open();
});
afterEach(async () => {
  await service.close();
  fixture.setResourceDelay(0);
  rmSync(dir, { recursive: true, force: true });
});

describe('mirrors', () => {
  it('creates a mirror from a Capability List, runs a baseline with batched progress, audits it in sync', async () => {
    const path = join(dir, 'mirror');
    const created = await call<MirrorSummary>('mirrors.create', { url: capabilityList(), path, deletePolicy: 'quarantine', concurrency: 4 });
    expect(created).toMatchObject({
      path,
      name: 'mirror',
      status: 'ready',
      capabilityListUrl: capabilityList(),
      resourceListUrl: fixture.url + fixture.paths.dataset1.resourceList,
      options: { deletePolicy: 'quarantine', concurrency: 4, delaySeconds: 0 },
      lastRun: null,
      resources: 0,
    });
    expect(existsSync(join(path, '.resourcesync', 'state.sqlite'))).toBe(true);
    expect(await call<MirrorSummary[]>('mirrors.list', {})).toHaveLength(1);

    fixture.setResourceDelay(20);
    const began = Date.now();
    const started = await call<MirrorSummary>('runs.start', { path });
    expect(started.status).toBe('running');
    const end = await ended(path);
    expect(end).toMatchObject({ status: 'completed', mode: 'baseline', created: 40, failed: 0 });
    expect(end.message).toBe('Baseline completed: 40 created, 0 updated, 0 deleted, 0 unchanged.');
    // Beside the message, its parts: the run view's sentence is made from them, not read out of the message.
    expect(end.summary).toEqual({ headline: 'Baseline completed', changes: true, rest: '' });
    const progress = events.filter((e) => e.name === 'mirror.progress').map((e) => e.payload as Events['mirror.progress']);
    // Batches: never one per resource, at most one per interval (plus the first and the last).
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.length).toBeLessThan(40);
    expect(progress.length).toBeLessThanOrEqual(3 + Math.ceil((Date.now() - began) / 100));
    expect(progress.at(-1)).toMatchObject({ done: 40, total: 40, totalKnown: true, created: 40, kind: 'sync', mode: 'baseline' });
    expect(progress.at(-1)!.bytesDone).toBe(progress.at(-1)!.bytesTotal);
    expect(progress.some((p) => p.done > 0 && p.done < 40)).toBe(true);
    // The mirror's size grows with the run, not only once it ends.
    expect(progress.at(-1)!.resources).toBe(40);
    expect(progress.some((p) => p.resources! > 0 && p.resources! < 40)).toBe(true);

    const detail = await call<MirrorDetail>('mirrors.get', { path });
    expect(detail).toMatchObject({ status: 'ready', resources: 40, resumable: false, progress: null, lastRun: { status: 'completed', created: 40 } });
    expect(detail.checkpoint).not.toBeNull();
    expect(detail.runs).toHaveLength(1);

    const audit = await call<AuditView>('audit.start', { path });
    expect(audit.report).toMatchObject({ inSync: true, inSyncCount: 40, missing: [], extra: [] });
    expect(events.find((e) => e.name === 'audit.ended')?.payload).toMatchObject({
      status: 'completed',
      message: 'In sync: 40 resources match the Source.',
      summary: { headline: 'In sync: 40 resources match the Source', changes: false, rest: '' },
    });
    expect(await call<AuditView | null>('audit.report', { path })).toEqual(audit);
    // An extra file in the mirror's host folder shows in the next audit; one beside it is none of the mirror's.
    const host = new URL(fixture.url).host.replace(':', '_');
    writeFileSync(join(path, host, 'stray.txt'), 'not from the Source');
    writeFileSync(join(path, 'notes.txt'), 'kept beside the mirror');
    const again = await call<AuditView>('audit.start', { path });
    expect(again.report).toMatchObject({ inSync: false, extra: [`${host}/stray.txt`] });
    expect((await call<MirrorDetail>('mirrors.get', { path })).runs.map((r) => r.kind)).toEqual(['audit', 'audit', 'baseline']);

    // The report is kept in the mirror: after a restart of the app the last one is still there, whole.
    await service.close();
    service = open();
    expect(await call<AuditView | null>('audit.report', { path })).toEqual(again);
  });

  it('says at the end of a run what it skipped, and why, as rsdesk does', async () => {
    const other = await startFixtureSource({ resources: 1 });
    const foreign = other.url + SLOPPY.odd + 'elsewhere.txt';
    fixture.sloppy.extraResources.push({ loc: foreign });
    try {
      const path = join(dir, 'sloppy');
      await call<MirrorSummary>('mirrors.create', { url: fixture.url + SLOPPY.capabilityList, path });
      await call<MirrorSummary>('runs.start', { path });
      const end = await ended(path);
      expect(end).toMatchObject({ status: 'completed', skipped: 1, failed: 0 });
      expect(end.message).toMatch(/^Baseline completed: \d+ created, 0 updated, 0 deleted, 0 unchanged, 1 skipped\.$/);
      const detail = await call<MirrorDetail>('mirrors.get', { path });
      const failures = await call<RunFailures>('runs.failures', { path, runId: detail.runs[0]!.id });
      expect(failures.failures.map((f) => [f.uri, f.reason])).toEqual([[foreign, expect.stringMatching(/^not mirrored: on another host/)]]);
      expect(other.requests).toHaveLength(0);
    } finally {
      fixture.sloppy.extraResources.pop();
      await other.close();
    }
  });

  it('pauses a running sync, survives an app restart as paused, and resumes without fetching twice', async () => {
    const path = join(dir, 'paused');
    const first = fixture.requests.length;
    await call('mirrors.create', { url: capabilityList(), path, concurrency: 2 });
    fixture.setResourceDelay(60);
    await call('runs.start', { path });
    await until(() => events.some((e) => e.name === 'mirror.progress' && (e.payload as Events['mirror.progress']).done >= 4));
    expect(await call('runs.pause', { path })).toEqual({ paused: true });
    const end = await ended(path);
    expect(end.status).toBe('paused');
    expect(end.created).toBeLessThan(40);

    // The app restarts: the mirror is remembered by its path, and its paused run offers Resume.
    await service.close();
    service = open();
    const [summary] = await call<MirrorSummary[]>('mirrors.list', {});
    expect(summary).toMatchObject({ path, status: 'paused', resumable: true, lastRun: { status: 'interrupted', message: 'Paused' } });

    const mark = fixture.requests.length;
    const before = fixture.requests.slice(first).filter((r) => /\/res\/\d+/.test(r.path)).map((r) => r.path);
    fixture.setResourceDelay(0);
    const from = events.length;
    expect((await call<MirrorSummary>('runs.resume', { path })).status).toBe('running');
    const resumed = await ended(path, from);
    expect(resumed).toMatchObject({ status: 'completed', failed: 0 });
    const after = fixture.requests.slice(mark).filter((r) => /\/res\/\d+/.test(r.path)).map((r) => r.path);
    expect(after.length).toBeGreaterThan(0);
    expect(after.filter((p) => before.includes(p))).toEqual([]);
    const detail = await call<MirrorDetail>('mirrors.get', { path });
    expect(detail.runs).toHaveLength(1);
    expect(detail.runs[0]).toMatchObject({ status: 'completed', created: 40 });
  });

  it('cancels a running sync; a run the app was killed in shows as interrupted and resumable', async () => {
    const path = join(dir, 'cancelled');
    await call('mirrors.create', { url: capabilityList(), path, concurrency: 2 });
    fixture.setResourceDelay(60);
    await call('runs.start', { path });
    expect((await fails('runs.start', { path })).message).toBe('A run of this mirror is going on already.');
    await until(() => events.some((e) => e.name === 'mirror.progress' && (e.payload as Events['mirror.progress']).done >= 2));
    expect(await call('runs.cancel', { path })).toEqual({ cancelled: true });
    const end = await ended(path);
    expect(end.status).toBe('cancelled');
    expect((await call<MirrorSummary>('mirrors.get', { path })).lastRun).toMatchObject({ status: 'cancelled', failed: 0 });
    expect(await call('runs.cancel', { path })).toEqual({ cancelled: false });

    // A run left "running" by a process that is gone (the app was killed): interrupted, resumable.
    const state = new MirrorState(stateDirOf(path));
    state.db.prepare("UPDATE runs SET status = 'running', pid = 999999999 WHERE id = 1").run();
    state.close();
    expect(await call<MirrorSummary>('mirrors.get', { path })).toMatchObject({ status: 'interrupted', resumable: true, lastRun: { status: 'interrupted' } });
  });

  it('records failures per run and retries them', async () => {
    const path = join(dir, 'failing');
    await call('mirrors.create', { url: capabilityList(), path });
    const broken = fixture.state.pathOf(3);
    fixture.setBroken(broken, { status: 404 });
    fixture.setBroken(`/mirror${broken}`, { status: 404 });
    try {
      await call('runs.start', { path });
      const end = await ended(path);
      expect(end).toMatchObject({ status: 'failed', failed: 1 });
      expect(end.message).toMatch(/ended with 1 failure: .*Retry fetches what failed again\.$/);
      expect(end.summary).toEqual({ headline: expect.stringMatching(/ ended with 1 failure$/), changes: false, rest: 'Retry fetches what failed again.' });
      const detail = await call<MirrorDetail>('mirrors.get', { path });
      const failures = await call<RunFailures>('runs.failures', { path, runId: detail.runs[0]!.id });
      expect(failures).toMatchObject({ total: 1, failures: [{ uri: fixture.url + broken }] });
      expect(failures.failures[0]!.reason).toMatch(/HTTP 404/);
    } finally {
      fixture.setBroken(broken, null);
      fixture.setBroken(`/mirror${broken}`, null);
    }
    // Retry fetches just the failed resource, as a run of its own; nothing else is asked for.
    const failedRunId = (await call<MirrorDetail>('mirrors.get', { path })).runs[0]!.id;
    const from = events.length;
    const requests = fixture.requests.length;
    await call('runs.retry', { path, runId: failedRunId, uris: [fixture.url + broken] });
    expect(await ended(path, from)).toMatchObject({
      status: 'completed',
      created: 1,
      unchanged: 0,
      failed: 0,
      message: `Retry of 1 resource of run ${failedRunId} completed: 1 created, 0 updated, 0 deleted, 0 unchanged.`,
      summary: { headline: `Retry of 1 resource of run ${failedRunId} completed`, changes: true, rest: '' },
    });
    // The list is read for what the resource must be; of the resources only the failed one is fetched.
    expect(fixture.requests.slice(requests).map((r) => r.path.replace(/^\/mirror\//, '/')).filter((p) => p.includes('/res/'))).toEqual([broken]);
    const runs = (await call<MirrorDetail>('mirrors.get', { path })).runs;
    expect(runs[0]).toMatchObject({ mode: 'retry', status: 'completed', created: 1 });
    // A retry the app was killed in is offered to resume, and Resume takes it up as the retry it is (a sync would
    // not): what it verified is not fetched again.
    const state = new MirrorState(stateDirOf(path));
    state.db.prepare("UPDATE runs SET status = 'running', pid = 999999999 WHERE id = ?").run(runs[0]!.id);
    state.close();
    expect(await call<MirrorSummary>('mirrors.get', { path })).toMatchObject({ status: 'interrupted', resumable: true, lastRun: { mode: 'retry', status: 'interrupted' } });
    const resumedFrom = events.length;
    const resumedRequests = fixture.requests.length;
    await call('runs.resume', { path });
    expect(await ended(path, resumedFrom)).toMatchObject({ status: 'completed', created: 1, message: `Retry of 1 resource of run ${failedRunId} completed: 1 created, 0 updated, 0 deleted, 0 unchanged.` });
    expect(fixture.requests.slice(resumedRequests).filter((r) => r.path.includes('/res/'))).toEqual([]);
    expect((await call<MirrorDetail>('mirrors.get', { path })).runs.map((r) => [r.mode, r.status])).toEqual([['retry', 'completed'], ['auto', 'failed']]);
    // Arguments are checked before anything runs, in plain words.
    expect(await fails('runs.retry', { path, runId: failedRunId, uris: [] })).toMatchObject({ code: 'invalid-arguments', message: 'Choose at least one resource to retry.' });
    expect((await fails('runs.retry', { path, runId: failedRunId, uris: [fixture.url + '/other'] })).message).toMatch(/did not fail in run \d+; only its failures can be retried/);
  });

  it('retries every failure still standing, of several runs, as one retry run', async () => {
    const path = join(dir, 'standing');
    await call('mirrors.create', { url: capabilityList(), path });
    let from = events.length;
    await call('runs.start', { path });
    expect(await ended(path, from)).toMatchObject({ status: 'completed' });
    // Two runs that each left a failure standing, as the live side leaves them: one run per batch of notifications.
    const uris = [fixture.url + fixture.state.pathOf(3), fixture.url + fixture.state.pathOf(5)];
    const state = new MirrorState(stateDirOf(path));
    const runIds: number[] = [];
    for (const uri of uris) {
      const run = state.startRun('incremental', 'live', null);
      state.transaction(() => state.addToRun(run.id, { failed: 1 }, [{ uri, reason: 'HTTP 503' }]));
      state.endRun(run.id, 'failed', {});
      runIds.push(run.id);
    }
    state.close();
    from = events.length;
    expect((await call<MirrorSummary>('runs.retryStanding', { path })).status).toBe('running');
    const end = await ended(path, from);
    expect(end).toMatchObject({ status: 'completed', failed: 0 });
    expect(end.message).toBe(`Retry of 2 resources of runs ${runIds[0]} and ${runIds[1]} completed: 0 created, 0 updated, 0 deleted, 2 unchanged.`);
    // Both are in the mirror already, as listed: settled without a download.
    expect(end).toMatchObject({ unchanged: 2, created: 0, updated: 0 });
    const runs = (await call<MirrorDetail>('mirrors.get', { path })).runs;
    expect(runs[0]).toMatchObject({ mode: 'retry', status: 'completed' });
    expect(runs).toHaveLength(4);
    for (const runId of runIds) expect(await call<RunFailures>('runs.failures', { path, runId })).toMatchObject({ total: 1, open: 0 });
  });

  it('pauses a retry as a sync, closing the app pauses it too, and Resume fetches only what it has not verified', async () => {
    const path = join(dir, 'retry-pause');
    await call('mirrors.create', { url: capabilityList(), path, concurrency: 1 });
    const broken = [5, 6, 7, 8, 9, 10].map((id) => fixture.state.pathOf(id));
    for (const p of broken) {
      fixture.setBroken(p, { status: 404 });
      fixture.setBroken(`/mirror${p}`, { status: 404 });
    }
    try {
      await call('runs.start', { path });
      expect(await ended(path)).toMatchObject({ status: 'failed', failed: 6 });
    } finally {
      for (const p of broken) {
        fixture.setBroken(p, null);
        fixture.setBroken(`/mirror${p}`, null);
      }
    }
    const failedRunId = (await call<MirrorDetail>('mirrors.get', { path })).runs[0]!.id;
    const asked = fixture.requests.length;
    const fetched = () => fixture.requests.slice(asked).map((r) => r.path.replace(/^\/mirror\//, '/')).filter((p) => p.includes('/res/'));
    // Each resource answers after 300 ms, one at a time: the retry is under way when it is paused.
    fixture.setResourceDelay(300);
    let from = events.length;
    const started = await call<MirrorSummary>('runs.retry', { path, runId: failedRunId });
    expect(started.progress).toMatchObject({ retry: true });
    await until(() => fetched().length >= 1);
    expect(await call('runs.pause', { path })).toEqual({ paused: true });
    const paused = await ended(path, from);
    expect(paused).toMatchObject({ status: 'paused', message: expect.stringMatching(new RegExp(`^Retry of 6 resources of run ${failedRunId} paused after \\d resources?; Resume fetches the rest, not what was verified\\.$`)) });
    expect(paused.summary).toEqual({
      headline: expect.stringMatching(new RegExp(`^Retry of 6 resources of run ${failedRunId} paused after \\d resources?$`)),
      changes: false,
      rest: 'Resume fetches the rest, not what was verified.',
    });
    expect(paused.created).toBeLessThan(6);
    let summary = await call<MirrorDetail>('mirrors.get', { path });
    expect(summary).toMatchObject({ status: 'paused', resumable: true, lastRun: { mode: 'retry', status: 'interrupted', message: 'Paused' } });
    const retryId = summary.runs[0]!.id;

    // Resumed, then the app closed: the retry is paused again (at once), not cancelled.
    from = events.length;
    await call('runs.resume', { path });
    const before = fetched().length;
    await until(() => fetched().length > before);
    const closing = Date.now();
    await service.close();
    expect(Date.now() - closing).toBeLessThan(3_000);
    expect(await ended(path, from)).toMatchObject({ status: 'paused' });
    service = open();
    summary = await call<MirrorDetail>('mirrors.get', { path });
    expect(summary).toMatchObject({ status: 'paused', resumable: true, lastRun: { id: retryId, mode: 'retry', status: 'interrupted' } });

    // Resumed after the restart: the rest, and nothing fetched twice; still one run, the retry, ended completed.
    fixture.setResourceDelay(0);
    from = events.length;
    await call('runs.resume', { path });
    expect(await ended(path, from)).toMatchObject({ status: 'completed', created: 6, failed: 0, message: `Retry of 6 resources of run ${failedRunId} completed: 6 created, 0 updated, 0 deleted, 0 unchanged.` });
    expect(fetched().sort()).toEqual([...broken].sort());
    summary = await call<MirrorDetail>('mirrors.get', { path });
    expect(summary).toMatchObject({ status: 'ready', resumable: false });
    expect(summary.runs.map((r) => [r.id, r.mode, r.status])).toEqual([[retryId, 'retry', 'completed'], [failedRunId, 'auto', 'failed']]);
  });

  it('pauses or cancels at once a run whose Source stalls its Capability List, recording nothing', async () => {
    const path = join(dir, 'stalled');
    await call('mirrors.create', { url: capabilityList(), path });
    const list = fixture.paths.dataset1.capabilityList;
    fixture.setBroken(list, 'hang');
    try {
      for (const stop of ['runs.pause', 'runs.cancel'] as const) {
        const from = events.length;
        const asked = fixture.requests.filter((r) => r.path === list).length;
        await call('runs.start', { path });
        await until(() => fixture.requests.filter((r) => r.path === list).length > asked);
        const t = Date.now();
        await call(stop, { path });
        const end = await ended(path, from);
        expect(Date.now() - t).toBeLessThan(3_000);
        expect(end).toMatchObject(
          stop === 'runs.pause'
            ? {
                status: 'paused',
                message: "Paused before the run began, while the Source's lists were being read: nothing was fetched, and no run was recorded.",
                summary: { headline: "Paused before the run began, while the Source's lists were being read: nothing was fetched, and no run was recorded", changes: false, rest: '' },
              }
            : { status: 'cancelled', summary: { headline: 'Cancelled', changes: false, rest: 'What was verified stays; the next run does not fetch it again.' } },
        );
        expect(await call<MirrorDetail>('mirrors.get', { path })).toMatchObject({ status: 'ready', resumable: false, runs: [], checkpoint: null });
      }
    } finally {
      fixture.setBroken(list, null);
    }
  });

  it('refuses what cannot be a mirror, in plain sentences, and leaves nothing behind', async () => {
    expect((await fails('mirrors.create', { url: capabilityList(), path: 'relative/folder' })).message).toMatch(/full path/);
    // "~/…" is the home folder, as in a shell; "~user/…" is not expanded.
    const home = process.env.HOME;
    process.env.HOME = join(dir, 'home');
    try {
      const made = await call<MirrorSummary>('mirrors.create', { url: capabilityList(), path: '~/mirrors/tilde' });
      expect(made.path).toBe(join(dir, 'home', 'mirrors', 'tilde'));
      expect(existsSync(join(dir, 'home', 'mirrors', 'tilde', '.resourcesync'))).toBe(true);
      expect((await fails('mirrors.create', { url: capabilityList(), path: '~other/folder' })).message).toMatch(/full path/);
    } finally {
      process.env.HOME = home;
    }
    const full = join(dir, 'full');
    mkdirSync(full);
    writeFileSync(join(full, 'mine.txt'), 'x');
    expect(await fails('mirrors.create', { url: capabilityList(), path: full })).toMatchObject({ code: 'mirror', message: expect.stringMatching(/is not empty/) });
    expect((await fails('mirrors.create', { url: capabilityList(), path: join(full, 'mine.txt') })).message).toBe(
      `${join(full, 'mine.txt')} is a file, not a folder. Choose a new or empty folder: the mirror puts its own files there.`,
    );
    const nowhere = join(dir, 'nowhere');
    const withPassword = capabilityList().replace('http://', 'http://me:s3cret@');
    const refused = await fails('mirrors.create', { url: withPassword, path: nowhere });
    expect(refused).toMatchObject({ code: 'invalid-arguments', message: expect.stringContaining(`give ${capabilityList()} without them`) });
    expect(refused.message).not.toContain('s3cret');
    expect(existsSync(nowhere)).toBe(false);
    const missing = await fails('mirrors.create', { url: `${fixture.url}/broken/not-there.xml`, path: nowhere });
    expect(missing.code).not.toBe('internal');
    expect(existsSync(nowhere)).toBe(false);
    expect((await fails('mirrors.create', { url: capabilityList(), path: join(dir, 'x'), concurrency: 0 })).message).toBe(
      'Connections must be a whole number from 1 to 256.',
    );
    const mapped = join(dir, 'mapped');
    const intoState = await fails('mirrors.create', { url: capabilityList(), path: mapped, maps: [`${fixture.url}/=.resourcesync/tmp`] });
    expect(intoState.message).toMatch(/^Folder mapping: its folder cannot be inside \.resourcesync, the mirror's own folder/);
    expect(existsSync(mapped)).toBe(false);
    expect((await fails('runs.start', { path: join(dir, 'unknown') })).code).toBe('not-found');
    expect(await call('mirrors.chooseFolder', {})).toEqual({ supported: false, path: null });
  });

  it('reopens an existing mirror folder by its path alone, and forgets a mirror without touching its files', async () => {
    const path = join(dir, 'kept');
    await call('mirrors.create', { url: capabilityList(), path });
    await call('runs.start', { path });
    await ended(path);
    expect(await call<MirrorSummary[]>('mirrors.forget', { path })).toEqual([]);
    expect(existsSync(join(path, '.resourcesync', 'state.sqlite'))).toBe(true);
    const again = await call<MirrorSummary>('mirrors.create', { path });
    expect(again).toMatchObject({ path, status: 'ready', resources: 40, url: capabilityList(), lastRun: { status: 'completed' } });
    expect((await fails('mirrors.create', { url: fixture.url + fixture.paths.dataset2.capabilityList, path })).message).toMatch(/is a mirror of .* already/);
    rmSync(path, { recursive: true });
    expect(await call<MirrorSummary>('mirrors.get', { path })).toMatchObject({ status: 'missing', problem: expect.stringMatching(/is gone/) });
  });

  it('says a mirror whose state was emptied is damaged, not new, and a sync given its URL rebuilds it without fetching', async () => {
    const path = join(dir, 'emptied');
    await call('mirrors.create', { url: capabilityList(), path });
    await call('runs.start', { path });
    await ended(path);
    for (const name of ['state.sqlite', 'state.sqlite-wal', 'state.sqlite-shm']) rmSync(join(stateDirOf(path), name), { force: true });
    writeFileSync(join(stateDirOf(path), 'state.sqlite'), '');
    const damaged = `The mirror's state in ${path} (.resourcesync/state.sqlite) is empty or damaged`;
    expect(await call<MirrorSummary>('mirrors.get', { path })).toMatchObject({ url: null, problem: expect.stringContaining(damaged) });
    expect((await fails('audit.start', { path })).message).toContain(damaged);
    const requests = fixture.requests.length;
    await call('mirrors.forget', { path });
    await call('mirrors.create', { url: capabilityList(), path });
    const events0 = events.length;
    await call('runs.start', { path });
    expect(await ended(path, events0)).toMatchObject({ status: 'completed' });
    const state = MirrorState.forReading(stateDirOf(path));
    expect(state.runs().at(-1)).toMatchObject({ created: 0, unchanged: 40, bytes: 0 });
    state.close();
    expect(fixture.requests.slice(requests).filter((r) => r.path.startsWith('/dataset1/res/')).length).toBe(0);
  });
});

describe('a dry run paused', () => {
  it('says that nothing is left to resume, and leaves the mirror as it was, not paused', async () => {
    const path = join(dir, 'dry');
    await call('mirrors.create', { url: capabilityList(), path });
    await call('runs.start', { path });
    expect(await ended(path)).toMatchObject({ status: 'completed', failed: 0 });
    const before = await call<MirrorSummary>('mirrors.get', { path });
    // Long enough to pause it while the Change List is read (the read finishes; nothing after it starts).
    fixture.setPathDelay(fixture.paths.dataset1.changeListIndex, 1_500);
    try {
      const from = events.length;
      const n = fixture.requests.length;
      await call('runs.start', { path, dryRun: true });
      await until(() => fixture.requests.slice(n).some((r) => r.path === fixture.paths.dataset1.changeListIndex));
      expect(await call('runs.pause', { path })).toEqual({ paused: true });
      const end = await ended(path, from);
      expect(end.status).toBe('paused');
      // Before: "Paused after 0 resources; Resume takes it up where it stopped.", of a run that was never recorded.
      expect(end.message).toBe('Paused after 0 resources; A dry run writes nothing, so there is nothing to resume: start it again to see the whole of it.');
      expect(await call<MirrorSummary>('mirrors.get', { path })).toMatchObject({ status: before.status, resumable: false, lastRun: before.lastRun });
    } finally {
      fixture.setPathDelay(fixture.paths.dataset1.changeListIndex, 0);
    }
  });
});

describe('a baseline that would delete most of the mirror', () => {
  it('says so at its end, with the run’s notes, and a sync allowing it removes them', async () => {
    const own = await startFixtureSource({ resources: 12 });
    try {
      const path = join(dir, 'held');
      await call('mirrors.create', { url: own.url + own.paths.dataset1.capabilityList, path, deletePolicy: 'delete' });
      await call('runs.start', { path });
      await ended(path);
      own.change('delete', 10);
      let since = events.length;
      await call('runs.start', { path, mode: 'baseline' });
      const held = await ended(path, since);
      expect(held).toMatchObject({ status: 'completed', deleted: 0, kept: 10, heldBack: true });
      expect(held.message).toContain('10 resources the Source no longer lists were not deleted: more than the Source lists now.');
      expect(held.notes).toContainEqual(expect.stringMatching(/^The Source no longer lists 10 resources this mirror holds, more than the 2 it lists now/));
      since = events.length;
      await call('runs.start', { path, mode: 'baseline', allowMassDelete: 10 });
      expect(await ended(path, since)).toMatchObject({ status: 'completed', deleted: 10, kept: 0, heldBack: false });
    } finally {
      await own.close();
    }
  });

  it('says in plain words why a mirror that keeps what the Source deletes kept it', async () => {
    const own = await startFixtureSource({ resources: 12 });
    try {
      const path = join(dir, 'keeps');
      await call('mirrors.create', { url: own.url + own.paths.dataset1.capabilityList, path });
      await call('runs.start', { path });
      await ended(path);
      own.change('delete', 1);
      const since = events.length;
      await call('runs.start', { path, mode: 'baseline' });
      const end = await ended(path, since);
      expect(end).toMatchObject({ status: 'completed', deleted: 0, kept: 1, heldBack: false });
      expect(end.message).toContain('1 resource the Source no longer lists was kept, as this mirror keeps what the Source deletes (the Options tab changes that).');
      expect(end.summary).toEqual({
        headline: 'Baseline completed',
        changes: true,
        rest: '1 resource the Source no longer lists was kept, as this mirror keeps what the Source deletes (the Options tab changes that).',
      });
    } finally {
      await own.close();
    }
  });
});

describe("Pause and Cancel at a run's end: the answer and the run's recorded end agree", () => {
  /**
   * Calls `act` (dispatching at once, as an adapter would) at the first progress of `path` in its finishing phase:
   * the run's last moments, while it records what it did. Resolves with the answers.
   */
  const atFinishing = (path: string, act: () => Promise<unknown>[]): Promise<unknown[]> =>
    new Promise((resolve) => {
      const stop = service.events.subscribe((name, payload) => {
        const p = payload as Events['mirror.progress'];
        if (name !== 'mirror.progress' || p.path !== path || p.phase !== 'finishing') return;
        stop();
        void Promise.all(act()).then(resolve);
      });
    });

  it('a Cancel while the last resource is in flight is answered true, and the run ends cancelled in its end, its journal and its checkpoint', async () => {
    const path = join(dir, 'last-held');
    await call('mirrors.create', { url: capabilityList(), path, concurrency: 4 });
    // One without a `duplicate` link, which the fetcher would take instead.
    const held = fixture.state.pathOf(39);
    fixture.setBroken(held, 'hang');
    try {
      await call('runs.start', { path });
      await until(() => fixture.requests.some((r) => r.path === held) && events.some((e) => e.name === 'mirror.progress' && (e.payload as Events['mirror.progress']).done >= 39));
      expect(await call('runs.cancel', { path })).toEqual({ cancelled: true });
      // Before, the run went on to "Baseline completed", its checkpoint moved, one resource never fetched.
      expect(await ended(path)).toMatchObject({ status: 'cancelled', created: 39 });
      const detail = await call<MirrorDetail>('mirrors.get', { path });
      expect(detail).toMatchObject({ status: 'ready', resumable: false, checkpoint: null, resources: 39, lastRun: { status: 'cancelled', failed: 0 } });
    } finally {
      fixture.setBroken(held, null);
    }
  });

  it('a Cancel while Resume still reads the Source\'s lists cancels the paused run: it is no longer offered to Resume', async () => {
    const path = join(dir, 'resume-cancelled');
    await call('mirrors.create', { url: capabilityList(), path, concurrency: 2 });
    fixture.setResourceDelay(40);
    await call('runs.start', { path });
    await until(() => events.some((e) => e.name === 'mirror.progress' && (e.payload as Events['mirror.progress']).done >= 3));
    expect(await call('runs.pause', { path })).toEqual({ paused: true });
    expect(await ended(path)).toMatchObject({ status: 'paused' });
    const list = fixture.paths.dataset1.capabilityList;
    fixture.setBroken(list, 'hang');
    try {
      const from = events.length;
      const asked = fixture.requests.filter((r) => r.path === list).length;
      await call('runs.resume', { path });
      await until(() => fixture.requests.filter((r) => r.path === list).length > asked);
      expect(await call('runs.cancel', { path })).toEqual({ cancelled: true });
      expect(await ended(path, from)).toMatchObject({ status: 'cancelled' });
      // Before, the run stayed "Paused", and the mirror offered to resume the run just cancelled.
      const detail = await call<MirrorDetail>('mirrors.get', { path });
      expect(detail).toMatchObject({ status: 'ready', resumable: false, lastRun: { id: 1, status: 'cancelled' } });
      expect(detail.runs).toHaveLength(1);
    } finally {
      fixture.setBroken(list, null);
    }
  });

  it('a Pause or Cancel once the sync is finishing is answered false, and the run ends completed', async () => {
    const path = join(dir, 'late');
    await call('mirrors.create', { url: capabilityList(), path, concurrency: 4 });
    const answers = atFinishing(path, () => [service.dispatch('runs.pause', { path }), service.dispatch('runs.cancel', { path })]);
    await call('runs.start', { path });
    // Before, both were answered true at the run's last progress, and the run still ended completed.
    expect(await answers).toEqual([
      { ok: true, result: { paused: false } },
      { ok: true, result: { cancelled: false } },
    ]);
    expect(await ended(path)).toMatchObject({ status: 'completed', created: 40 });
    const detail = await call<MirrorDetail>('mirrors.get', { path });
    expect(detail).toMatchObject({ status: 'ready', resumable: false, lastRun: { status: 'completed' } });
    expect(detail.checkpoint).not.toBeNull();
  });

  it('a Cancel once a retry is finishing is answered false, and the retry ends completed, as its journal says', async () => {
    const path = join(dir, 'late-retry');
    await call('mirrors.create', { url: capabilityList(), path });
    const broken = fixture.state.pathOf(3);
    fixture.setBroken(broken, { status: 404 });
    fixture.setBroken(`/mirror${broken}`, { status: 404 });
    try {
      await call('runs.start', { path });
      expect(await ended(path)).toMatchObject({ status: 'failed', failed: 1 });
    } finally {
      fixture.setBroken(broken, null);
      fixture.setBroken(`/mirror${broken}`, null);
    }
    const runId = (await call<MirrorDetail>('mirrors.get', { path })).runs[0]!.id;
    const from = events.length;
    const answers = atFinishing(path, () => [service.dispatch('runs.cancel', { path })]);
    await call('runs.retry', { path, runId });
    expect(await answers).toEqual([{ ok: true, result: { cancelled: false } }]);
    // Before, the answer was true and the end said "cancelled", while the journal recorded the retry completed.
    expect(await ended(path, from)).toMatchObject({ status: 'completed', created: 1 });
    expect((await call<MirrorDetail>('mirrors.get', { path })).runs[0]).toMatchObject({ mode: 'retry', status: 'completed', created: 1 });
  });
});
