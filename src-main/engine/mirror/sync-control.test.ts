// Controlling a running sync: pause (no new work, in-flight finishes, the run stays resumable and the next auto sync
// resumes it without fetching again what was verified), cancel (an AbortSignal: the run ends cancelled, nothing cut
// off counts as failed), and the live progress with its totals.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { MirrorState, stateDirOf } from './state.ts';
import { sync, type SyncProgress } from './sync.ts';

let fixture: FixtureSource;
let dest: string;

beforeEach(async () => {
  fixture = await startFixtureSource({ resources: 40, changeListSize: 20, resourceDelayMs: 40 });
  dest = mkdtempSync(join(tmpdir(), 'mirror-control-'));
});
afterEach(async () => {
  await fixture.close();
});

const capabilityList = () => fixture.url + fixture.paths.dataset1.capabilityList;
const resourceGets = () => fixture.requests.filter((r) => /\/res\/\d+/.test(r.path)).map((r) => r.path);

function runs() {
  const state = new MirrorState(stateDirOf(dest));
  try {
    return state.runs();
  } finally {
    state.close();
  }
}

/** Resolves once `done` resources were settled, then fires `then`. */
function after(done: number, then: () => void): (p: SyncProgress) => void {
  let fired = false;
  return (p) => {
    if (!fired && p.settled >= done) {
      fired = true;
      then();
    }
  };
}

describe('sync control', () => {
  it('pauses: in-flight resources finish, the run ends interrupted, and auto resumes it without fetching twice', async () => {
    const pause = new AbortController();
    const progress: SyncProgress[] = [];
    const onPause = after(5, () => pause.abort());
    const first = await sync({
      url: capabilityList(),
      dest,
      concurrency: 2,
      batchSize: 3,
      pauseSignal: pause.signal,
      onProgress: (p) => {
        progress.push(p);
        onPause(p);
      },
    });
    expect(first.paused).toBe(true);
    expect(first.created).toBeGreaterThanOrEqual(5);
    expect(first.created).toBeLessThan(40);
    expect(first.failed).toBe(0);
    expect(first.checkpoint).toBeNull();
    expect(runs()).toMatchObject([{ id: 1, status: 'interrupted', message: 'Paused', created: first.created }]);
    // Its journal says how long it fetched before the pause (5 resources of 40 ms each, two at a time).
    const before = runs()[0]!.phases;
    expect(before.fetch).toBeGreaterThanOrEqual(0.08);
    // Progress: phases in order, totals never below what is done.
    expect(progress[0]).toMatchObject({ phase: 'discovery', settled: 0 });
    expect(progress.some((p) => p.phase === 'lists' && p.listed > 0)).toBe(true);
    for (const p of progress) expect(p.settled).toBeLessThanOrEqual(p.listed);
    expect(progress.at(-1)!.phase).toBe('finishing');

    const fetched = new Set(resourceGets());
    const notes: string[] = [];
    const second = await sync({ dest, concurrency: 4, onNote: (n) => void notes.push(n) });
    expect(second).toMatchObject({ mode: 'baseline', resumed: true, paused: false, failed: 0, runId: 1 });
    // It was paused, not cut off: the note says so.
    expect(notes).toContain('Resuming run 1 (paused baseline); what it verified is not fetched again.');
    // The resumed run's result counts the whole run, as its journal does.
    expect(second.created + second.unchanged).toBe(40);
    expect(second.created).toBeGreaterThanOrEqual(first.created);
    // Nothing verified before the pause was fetched again.
    const again = resourceGets().slice(fetched.size);
    expect(again.filter((path) => fetched.has(path))).toEqual([]);
    expect(second.checkpoint).not.toBeNull();
    expect(runs()).toMatchObject([{ id: 1, status: 'completed', created: 40 }]);
    // The time of both parts, phase by phase.
    const inAll = runs()[0]!.phases;
    expect(inAll.discovery).toBeGreaterThan(before.discovery!);
    expect(inAll.fetch).toBeGreaterThan(before.fetch! + 0.1);
  });

  it('records the time a run stood paused, so its end less its start less that is the time it ran', async () => {
    const pause = new AbortController();
    const onPause = after(3, () => pause.abort());
    expect((await sync({ url: capabilityList(), dest, concurrency: 2, pauseSignal: pause.signal, onProgress: onPause })).paused).toBe(true);
    expect(runs()).toMatchObject([{ id: 1, status: 'interrupted', message: 'Paused', pausedSeconds: 0 }]);
    // Paused five minutes ago (its recorded end moved back, and its start with it: it ran as long as it did).
    const state = new MirrorState(stateDirOf(dest));
    try {
      state.db.prepare("UPDATE runs SET started_at = strftime('%Y-%m-%dT%H:%M:%fZ', started_at, '-300 seconds'), ended_at = strftime('%Y-%m-%dT%H:%M:%fZ', ended_at, '-300 seconds') WHERE id = 1").run();
    } finally {
      state.close();
    }
    const resumed = await sync({ dest, concurrency: 4 });
    expect(resumed).toMatchObject({ resumed: true, runId: 1, failed: 0 });
    const [run] = runs();
    expect(run).toMatchObject({ status: 'completed' });
    expect(run!.pausedSeconds).toBeGreaterThanOrEqual(299);
    expect(run!.pausedSeconds).toBeLessThan(330);
    const ran = (Date.parse(run!.endedAt!) - Date.parse(run!.startedAt)) / 1000 - run!.pausedSeconds;
    expect(ran).toBeGreaterThan(0);
    expect(ran).toBeLessThan(30);

  });

  it('a run taken up after its process was killed counts the time since its last recorded work as stopped, not run', () => {
    const state = new MirrorState(stateDirOf(dest));
    try {
      const ago = (s: number) => new Date(Date.now() - s * 1000).toISOString();
      // Killed ten minutes ago: started 15 min ago, its last batch recorded 10 min ago.
      const worked = state.startRun('incremental', 'incremental', null);
      state.addToRun(worked.id, { created: 3 });
      state.db.prepare('UPDATE runs SET pid = 2147483646, started_at = ?, active_at = ? WHERE id = ?').run(ago(900), ago(600), worked.id);
      // Killed before it recorded anything: from its start, 20 min ago.
      const idle = state.startRun('incremental', 'incremental', null);
      state.db.prepare('UPDATE runs SET pid = 2147483646, started_at = ? WHERE id = ?').run(ago(1200), idle.id);
      const interrupted = state.markInterrupted();
      expect(interrupted.map((r) => r.id)).toEqual([worked.id, idle.id]);
      // Its end is known now: the history shows how long it ran before it died.
      expect(Date.parse(state.run(worked.id)!.endedAt!)).toBeCloseTo(Date.now() - 600_000, -4);
      const resumed = state.resumeRun(worked.id);
      expect(resumed.pausedSeconds).toBeGreaterThanOrEqual(599);
      expect(resumed.pausedSeconds).toBeLessThan(630);
      expect(state.resumeRun(idle.id).pausedSeconds).toBeGreaterThanOrEqual(1199);
      // Ended now, it ran the five minutes before it died (and the moments since it was taken up).
      const ended = state.endRun(worked.id, 'completed', {});
      const ran = (Date.parse(ended.endedAt!) - Date.parse(ended.startedAt)) / 1000 - ended.pausedSeconds;
      expect(ran).toBeGreaterThan(299);
      expect(ran).toBeLessThan(330);
    } finally {
      state.close();
    }
  });

  it('a paused run taken up again and then killed is interrupted, no longer paused', async () => {
    const pause = new AbortController();
    const onPause = after(3, () => pause.abort());
    expect((await sync({ url: capabilityList(), dest, concurrency: 2, pauseSignal: pause.signal, onProgress: onPause })).paused).toBe(true);
    expect(runs()).toMatchObject([{ id: 1, status: 'interrupted', message: 'Paused' }]);
    // Resumed, then the process dies (its journal says running with a pid that is gone).
    const state = new MirrorState(stateDirOf(dest));
    try {
      state.resumeRun(1);
      state.db.prepare('UPDATE runs SET pid = 2147483646 WHERE id = 1').run();
      state.markInterrupted();
    } finally {
      state.close();
    }
    expect(runs()).toMatchObject([{ id: 1, status: 'interrupted', message: null }]);
  });

  it('with a delay between requests, a pause ends the waits for a turn at once and leaves those resources for the resume', async () => {
    const pause = new AbortController();
    const onPause = after(2, () => pause.abort());
    let pausedAt = 0;
    const started = Date.now();
    const first = await sync({
      url: capabilityList(),
      dest,
      concurrency: 4,
      delayMs: 400,
      pauseSignal: pause.signal,
      onProgress: (p) => {
        onPause(p);
        if (pause.signal.aborted && pausedAt === 0) pausedAt = Date.now();
      },
    });
    // Eight resources held turns 400 ms apart; only the one under way is waited for, not the 3 s of turns.
    expect(Date.now() - pausedAt).toBeLessThan(1_500);
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(first).toMatchObject({ paused: true, failed: 0 });
    const second = await sync({ dest, concurrency: 8 });
    expect(second).toMatchObject({ resumed: true, failed: 0 });
    expect(second.created + second.unchanged).toBe(40);
  });

  it('gives the listed total and the bytes the list announces', async () => {
    let last: SyncProgress | null = null;
    const result = await sync({ url: capabilityList(), dest, concurrency: 8, onProgress: (p) => (last = p) });
    expect(result.created).toBe(40);
    const p = last as unknown as SyncProgress;
    expect(p).toMatchObject({ listed: 40, listComplete: true, settled: 40, created: 40 });
    expect(p.listedBytes).toBe(p.bytesFetched);
    expect(p.bytesFetched).toBe(result.bytes);
  });

  it('a pause that comes while the last batch is recorded stops nothing: the run is what it is (completed, checkpoint moved)', async () => {
    fixture.setResourceDelay(0);
    // As rsdesk's Ctrl-C comes: after the last resource settled, while the final durable batch is written.
    const lateTo = (pause: AbortController) => (p: SyncProgress) => void (p.phase === 'finishing' && pause.abort());
    const late = new AbortController();
    const first = await sync({ url: capabilityList(), dest, pauseSignal: late.signal, onProgress: lateTo(late) });
    expect(late.signal.aborted).toBe(true);
    expect(first).toMatchObject({ mode: 'baseline', paused: false, created: 40, failed: 0 });
    expect(first.checkpoint).not.toBeNull();
    expect(runs()).toMatchObject([{ status: 'completed', created: 40 }]);

    fixture.change('update', 3);
    const later = new AbortController();
    const second = await sync({ dest, pauseSignal: later.signal, onProgress: lateTo(later) });
    expect(later.signal.aborted).toBe(true);
    expect(second).toMatchObject({ mode: 'incremental', paused: false, updated: 3, failed: 0 });
    expect(second.checkpoint).not.toBe(first.checkpoint);
    expect(runs().map((r) => r.status)).toEqual(['completed', 'completed']);
    // Nothing is left to resume: the next sync is an incremental one with nothing to do.
    const n = resourceGets().length;
    expect(await sync({ dest })).toMatchObject({ mode: 'incremental', resumed: false, created: 0, updated: 0 });
    expect(resourceGets().length).toBe(n);
  });

  it('cancels: the run ends cancelled, nothing cut off counts as failed, and the next sync completes the mirror', async () => {
    const abort = new AbortController();
    const onCancel = after(4, () => abort.abort());
    await expect(sync({ url: capabilityList(), dest, concurrency: 2, signal: abort.signal, onProgress: onCancel })).rejects.toThrow();
    const [run] = runs();
    expect(run).toMatchObject({ status: 'cancelled', failed: 0, message: 'Cancelled; what was verified stays' });
    expect(run!.phases.fetch).toBeGreaterThanOrEqual(0.08);
    fixture.setResourceDelay(0);
    const next = await sync({ dest });
    expect(next).toMatchObject({ mode: 'baseline', failed: 0 });
    expect(next.created + next.unchanged).toBe(40);
  });
});


describe('a resumed run and the entries it skips', () => {
  let server: Server;
  let base = '';
  const N = 20;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const p = req.url!;
      if (p === '/caps.xml') {
        res.setHeader('content-type', 'application/xml');
        return res.end(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"><rs:md capability="capabilitylist"/><url><loc>${base}/rl.xml</loc><rs:md capability="resourcelist"/></url></urlset>`);
      }
      if (p === '/rl.xml') {
        res.setHeader('content-type', 'application/xml');
        let urls = `<url><loc>http://elsewhere.invalid/x</loc></url>`;
        for (let i = 0; i < N; i++) urls += `<url><loc>${base}/r/${i}</loc><rs:md length="3"/></url>`;
        return res.end(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>${urls}</urlset>`);
      }
      if (p.startsWith('/r/')) return void setTimeout(() => res.end('abc'), 40);
      res.statusCode = 404;
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => server.close());

  it('a paused run resumed counts a skipped entry once', async () => {
    const dest = mkdtempSync(join(tmpdir(), 'rev-'));
    const pause = new AbortController();
    const first = await sync({ url: `${base}/caps.xml`, dest, concurrency: 1, batchSize: 2, pauseSignal: pause.signal, onProgress: (p) => { if (p.settled >= 4) pause.abort(); } });
    expect(first.paused).toBe(true);
    expect(first.skipped).toBe(1);
    const second = await sync({ dest, concurrency: 2 });
    const state = new MirrorState(stateDirOf(dest));
    const runs = state.runs();
    state.close();
    expect(second.resumed).toBe(true);
    expect(second.created).toBe(N);
    expect(second.skipped).toBe(1);
    expect(runs[0].skipped).toBe(1);
  });
});

describe('a signal while the Source stalls its Capability List', () => {
  const capabilityListPath = () => fixture.paths.dataset1.capabilityList;
  /** Fires `then` once the stalled Capability List was asked for, as many times as `times` says it is so far. */
  const whenAsked = (then: () => void, times = 1) => {
    const poll = () => (fixture.requests.filter((r) => r.path === capabilityListPath()).length >= times ? then() : setTimeout(poll, 10));
    poll();
  };

  it('paused during the discovery of a new mirror: ends at once, paused, and records nothing', async () => {
    fixture.setBroken(capabilityListPath(), 'hang');
    const pause = new AbortController();
    whenAsked(() => pause.abort());
    const t0 = Date.now();
    const result = await sync({ url: capabilityList(), dest, timeoutMs: 30_000, pauseSignal: pause.signal });
    expect(Date.now() - t0).toBeLessThan(3_000);
    expect(result).toMatchObject({ paused: true, runId: null, created: 0, checkpoint: null });
    // The folder did not become a mirror: no binding, no run, no checkpoint.
    expect(existsSync(stateDirOf(dest))).toBe(false);
  });

  it('paused or cancelled while the Capability List is read again: ends at once, the journal and checkpoint as they were', async () => {
    const first = await sync({ url: capabilityList(), dest, concurrency: 8 });
    expect(first).toMatchObject({ paused: false, failed: 0 });
    fixture.setBroken(capabilityListPath(), 'hang');
    const asked = fixture.requests.filter((r) => r.path === capabilityListPath()).length;

    const pause = new AbortController();
    whenAsked(() => pause.abort(), asked + 1);
    let t0 = Date.now();
    const paused = await sync({ dest, timeoutMs: 30_000, pauseSignal: pause.signal });
    expect(Date.now() - t0).toBeLessThan(3_000);
    expect(paused).toMatchObject({ paused: true, runId: null, created: 0, checkpoint: first.checkpoint });
    expect(runs()).toMatchObject([{ id: 1, status: 'completed' }]);

    const cancel = new AbortController();
    whenAsked(() => cancel.abort(), asked + 2);
    t0 = Date.now();
    await expect(sync({ dest, timeoutMs: 30_000, signal: cancel.signal, pauseSignal: new AbortController().signal })).rejects.toThrow(
      "Cancelled before the run began, while the Source's lists were being read; nothing was fetched.",
    );
    expect(Date.now() - t0).toBeLessThan(3_000);
    expect(runs()).toMatchObject([{ id: 1, status: 'completed' }]);
    const state = new MirrorState(stateDirOf(dest));
    expect(state.checkpoint()?.at).toBe(first.checkpoint);
    state.close();
  });

  it('paused while the Source stalls its Resource Dump (--use-dumps): ends at once, before any run', async () => {
    const dump = fixture.paths.dataset1.resourceDump;
    fixture.setBroken(dump, 'hang');
    const pause = new AbortController();
    const poll = () => (fixture.requests.some((r) => r.path === dump) ? pause.abort() : setTimeout(poll, 10));
    poll();
    const t0 = Date.now();
    const result = await sync({ url: capabilityList(), dest, useDumps: true, timeoutMs: 30_000, pauseSignal: pause.signal });
    expect(Date.now() - t0).toBeLessThan(3_000);
    expect(result).toMatchObject({ paused: true, runId: null, created: 0, checkpoint: null });
    expect(runs()).toEqual([]);
  });
});

describe("a cancel at the run's end", () => {
  /** Calls `then` once `check` holds (polled: a hung resource sends no more progress). */
  const when = (check: () => boolean, then: () => void) => {
    const poll = () => (check() ? then() : setTimeout(poll, 10));
    poll();
  };
  // Held while every other resource settles (one without a `duplicate` link, which the fetcher would take instead).
  const lastPath = () => fixture.state.pathOf(39);
  const asked = (path: string) => fixture.requests.some((r) => r.path === path);

  for (const [how, failure] of [
    ['the last resource is still in flight', 'hang'],
    ['the Source asked the last resource to wait (Retry-After)', { status: 503, headers: { 'retry-after': '60' } }],
  ] as const) {
    it(`a cancel while ${how} ends the run cancelled, not completed: no checkpoint, and the next sync fetches what was cut off`, async () => {
      fixture.setResourceDelay(0);
      fixture.setBroken(lastPath(), failure);
      const cancel = new AbortController();
      let settled = 0;
      when(() => settled >= 39 && asked(lastPath()), () => cancel.abort());
      const t0 = Date.now();
      // Before, the resource cut off was dropped as no failure and the run recorded completed, its checkpoint moved
      // past a resource the mirror never got.
      await expect(sync({ url: capabilityList(), dest, timeoutMs: 30_000, signal: cancel.signal, onProgress: (p) => void (settled = p.settled) })).rejects.toThrow('Cancelled');
      expect(Date.now() - t0).toBeLessThan(5_000);
      expect(runs()).toMatchObject([{ id: 1, status: 'cancelled', created: 39, failed: 0, message: 'Cancelled; what was verified stays' }]);
      const state = new MirrorState(stateDirOf(dest));
      expect(state.checkpoint()).toBeNull();
      state.close();

      fixture.setBroken(lastPath(), null);
      const next = await sync({ dest });
      expect(next).toMatchObject({ mode: 'baseline', created: 1, unchanged: 39, failed: 0 });
      expect(next.checkpoint).not.toBeNull();
    });
  }

  it('a cancel once the run has decided its end stops nothing: it is recorded completed, its checkpoint moved', async () => {
    fixture.setResourceDelay(0);
    const cancel = new AbortController();
    let decided = 0;
    const result = await sync({ url: capabilityList(), dest, signal: cancel.signal, onFinishing: () => {
      decided++;
      cancel.abort();
    } });
    expect(decided).toBe(1);
    expect(result).toMatchObject({ mode: 'baseline', created: 40, failed: 0, paused: false });
    expect(result.checkpoint).not.toBeNull();
    expect(runs()).toMatchObject([{ status: 'completed', created: 40 }]);
  });

  it('a cancel while the sync that takes up a paused run still reads the lists cancels that run: it is not left paused', async () => {
    const pause = new AbortController();
    const first = await sync({ url: capabilityList(), dest, concurrency: 2, pauseSignal: pause.signal, onProgress: after(5, () => pause.abort()) });
    expect(first.paused).toBe(true);
    fixture.setBroken(fixture.paths.dataset1.capabilityList, 'hang');
    const cancel = new AbortController();
    const before = fixture.requests.length;
    when(() => fixture.requests.slice(before).some((r) => r.path === fixture.paths.dataset1.capabilityList), () => cancel.abort());
    await expect(sync({ dest, timeoutMs: 30_000, signal: cancel.signal })).rejects.toThrow(
      "Cancelled before run 1 was taken up again, while the Source's lists were being read; what it verified stays.",
    );
    // Before, run 1 stayed "Paused": the app offered to resume the run its person had just cancelled.
    expect(runs()).toMatchObject([{ id: 1, status: 'cancelled', created: first.created, message: 'Cancelled before it was taken up again; what was verified stays' }]);

    fixture.setBroken(fixture.paths.dataset1.capabilityList, null);
    fixture.setResourceDelay(0);
    const next = await sync({ dest });
    expect(next).toMatchObject({ mode: 'baseline', resumed: false, runId: 2, failed: 0 });
    expect(next.created).toBe(40 - first.created);
  });
});
