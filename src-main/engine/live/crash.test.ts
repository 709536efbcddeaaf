// A live batch killed with SIGKILL while its downloads are in flight (a real process: crash-child.ts), then started
// again. At the kill: every delivery the hub was answered 2xx for is in the inbox; no temporary or partial file in the
// mirror's visible tree (each file is as its inventory row says, or a whole copy of the resource put in place just
// before its row); the journal agrees with the inbox (the batch's rows `applying`, naming the one run left
// `running`). After the restart: the interrupted run is resumed and completed, nothing its killed process had
// committed is fetched again, every notification is applied exactly once, and the mirror equals the Source.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { MirrorState, STATE_FILE, stateDirOf, type InventoryRow, type RunRecord } from '../mirror/state.ts';
import { sync } from '../mirror/sync.ts';
import { LiveEngine } from './engine.ts';
import type { LiveEvent } from './model.ts';
import { mirrored, sourceBytes, waitFor, type Rig } from './test-support.ts';

const CHILD = fileURLToPath(new URL('./crash-child.ts', import.meta.url));
let fixture: FixtureSource;
let dest: string;
let child: ChildProcess | null = null;

beforeEach(async () => {
  // Slow resources: a batch's downloads are still under way when the process is killed.
  fixture = await startFixtureSource({ resources: 40, changeListSize: 200, resourceDelayMs: 150 });
  dest = mkdtempSync(join(tmpdir(), 'live-crash-'));
});
afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = null;
  await fixture.close();
});

const topic = () => fixture.url + fixture.paths.dataset1.notifications;
/** Resource fetches from the `from`-th request to the fixture Source on, as URIs of the resource. */
const resourceFetches = (from = 0) =>
  fixture.requests
    .slice(from)
    .filter((r) => /\/dataset1\/res\/\d+/.test(r.path))
    .map((r) => fixture.url + r.path.replace(/^\/mirror\//, '/'));

interface Snapshot {
  rows: InventoryRow[];
  runs: RunRecord[];
  inbox: { id: number; status: string; run_id: number | null }[];
}

function snapshot(): Snapshot {
  const state = new MirrorState(stateDirOf(dest));
  try {
    const inbox = state.db.prepare('SELECT id, status, run_id FROM live_inbox ORDER BY id').all() as Snapshot['inbox'];
    return { rows: [...state.rows()], runs: state.runs(), inbox: inbox.map((r) => ({ ...r, id: Number(r.id), run_id: r.run_id === null ? null : Number(r.run_id) })) };
  } finally {
    state.close();
  }
}

function visibleFiles(rel = ''): string[] {
  return readdirSync(join(dest, rel), { withFileTypes: true }).flatMap((d) => {
    if (rel === '' && d.name === '.resourcesync') return [];
    const path = rel ? `${rel}/${d.name}` : d.name;
    return d.isDirectory() ? visibleFiles(path) : [path];
  });
}

const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');
const idOf = (path: string) => Number(/\/res\/(\d+)\./.exec(path)?.[1]);
const current = (id: number) => fixture.state.representation(id, fixture.state.resources.get(id)!.version).body;

/** No temporary or partial file in sight: each file is as its row records, or a whole copy of the resource now. */
function expectNoPartialFile(rows: InventoryRow[]): void {
  const files = visibleFiles();
  expect(files.filter((f) => f.endsWith('.part') || f.includes('/tmp/'))).toEqual([]);
  const recorded = new Map(rows.filter((r) => r.status !== 'deleted' && r.status !== 'quarantined').map((r) => [r.path, r]));
  for (const path of files) {
    const bytes = readFileSync(join(dest, ...path.split('/')));
    const row = recorded.get(path);
    const asRecorded = row !== undefined && bytes.length === row.length && md5(bytes) === row.digests.md5;
    // Put in place but not recorded yet (killed between the rename and the commit): whole, the next run adopts it.
    expect(asRecorded || bytes.equals(current(idOf(path))), path).toBe(true);
  }
  for (const row of recorded.values()) expect(statSync(join(dest, ...row.path.split('/'))).isFile(), row.uri).toBe(true);
}

/** Starts the child; its JSON lines are collected. */
function start(args: string[]) {
  const events: LiveEvent[] = [];
  let stderr = '';
  child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', CHILD, dest, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, HTTP_PROXY: '', http_proxy: '', HTTPS_PROXY: '', https_proxy: '' },
  });
  child.stderr!.on('data', (d) => (stderr += d));
  createInterface({ input: child.stdout! }).on('line', (line) => events.push(JSON.parse(line) as LiveEvent));
  const proc = child;
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return {
    events,
    proc,
    exited,
    async until(test: (events: LiveEvent[]) => boolean, what: string, ms = 20_000): Promise<void> {
      const end = Date.now() + ms;
      while (!test(events)) {
        if (proc.exitCode !== null) throw new Error(`the child exited (${proc.exitCode}) before ${what}: ${stderr}`);
        if (Date.now() > end) throw new Error(`no ${what} within ${ms} ms; events: ${events.map((e) => e.type).join(', ')}; stderr: ${stderr}`);
        await new Promise((r) => setTimeout(r, 3));
      }
    },
  };
}

describe('kill -9 while a live batch downloads', () => {
  it('loses nothing, applies nothing twice, leaves no partial file, and keeps the journal consistent', async () => {
    const baseline = await sync({ url: fixture.url + fixture.paths.dataset1.capabilityList, dest, concurrency: 4, proxyEnv: {} });
    expect(baseline.failed).toBe(0);
    const first = start([topic(), fixture.url + fixture.paths.hub]);
    await first.until((es) => es.some((e) => e.type === 'subscribed'), 'subscribed');
    await fixture.hub.settled();

    // One notification per change, each to a resource of its own (so that no change makes another fail when a
    // batch is applied late): each delivery is stored before it is answered, so the hub is done long before the apply.
    const from = fixture.requests.length;
    for (let id = 1; id <= 16; id++) fixture.change('update', 1, id);
    for (let i = 0; i < 6; i++) fixture.change('create');
    for (let id = 30; id <= 32; id++) fixture.change('delete', 1, id);
    await fixture.hub.settled();
    const delivered = fixture.hub.deliveries.filter((d) => d.topic === topic());
    expect(delivered.map((d) => d.status)).toEqual(Array(25).fill(202));
    const toFetch = 22;
    // Killed in the middle of a batch: some of its resources committed, at least three still to come (two downloads
    // at a time, each taking 150 ms: some are in flight).
    const watcher = new DatabaseSync(join(stateDirOf(dest), STATE_FILE), { readOnly: true });
    const midBatch = () =>
      watcher
        .prepare(
          `SELECT (SELECT COUNT(*) FROM inventory i WHERE i.run_id = r.id) AS done, (SELECT COUNT(*) FROM live_inbox b WHERE b.run_id = r.id AND b.status = 'applying') AS todo
           FROM runs r WHERE r.status = 'running' AND r.mode = 'live'`,
        )
        .all()
        .some((r) => Number(r.done) >= 1 && Number(r.todo) - Number(r.done) >= 3);
    try {
      const deadline = Date.now() + 30_000;
      while (!midBatch()) {
        if (first.proc.exitCode !== null || Date.now() > deadline) throw new Error('the child exited, or was never caught in the middle of a batch');
        await new Promise((r) => setTimeout(r, 1));
      }
    } finally {
      watcher.close();
    }
    first.proc.kill('SIGKILL');
    await first.exited;
    expect(resourceFetches(from).length).toBeLessThan(toFetch);

    // At the kill: nothing lost, nothing partial, the journal and the inbox agree.
    const killed = snapshot();
    expect(killed.inbox).toHaveLength(25);
    expectNoPartialFile(killed.rows);
    const applying = killed.inbox.filter((r) => r.status === 'applying');
    expect(applying.length).toBeGreaterThan(0);
    expect(killed.inbox.every((r) => ['received', 'applying', 'applied'].includes(r.status))).toBe(true);
    const running = killed.runs.filter((r) => r.status === 'running');
    expect(running).toHaveLength(1);
    const run = running[0];
    expect(new Set(applying.map((r) => r.run_id))).toEqual(new Set([run.id]));
    for (const r of killed.inbox.filter((r) => r.status === 'applied')) expect(killed.runs.find((x) => x.id === r.run_id)?.status).toBe('completed');
    // What the killed process had applied before: reported by it, and recorded so.
    const appliedBefore = first.events.flatMap((e) => (e.type === 'applied' ? e.inboxIds : []));
    expect([...appliedBefore].sort((a, b) => a - b)).toEqual(killed.inbox.filter((r) => r.status === 'applied').map((r) => r.id));
    // Committed by the interrupted run, as the Source has them now: must not be fetched again.
    const committed = killed.rows.filter((r) => r.runId === run.id && r.status !== 'deleted' && r.digests.md5 === md5(current(idOf(r.path))));
    expect(committed.length).toBeGreaterThan(0);

    // Started again: the interrupted run is taken up first, then whatever was still waiting.
    const restartFrom = fixture.requests.length;
    let resumedChanges: { change: string }[] = [];
    const engine = new LiveEngine({ port: 0, retryBaseMs: 50, lockRetryMs: 100, reorderWaitMs: 2_000 });
    const events: LiveEvent[] = [];
    engine.events.on((e) => events.push(e));
    await engine.start();
    try {
      engine.openMirror(dest);
      const open = killed.inbox.filter((r) => r.status !== 'applied').map((r) => r.id);
      await waitFor({ engine, events }, 'applied', (e) => e.inboxIds.includes(open.at(-1)!), 20_000);
      await engine.idle();
      const resumed = events.filter((e) => e.type === 'applied');
      expect(resumed[0]).toMatchObject({ runId: run.id, inboxIds: applying.map((r) => r.id) });
      resumedChanges = resumed[0].changes;
      // Every notification applied exactly once, over both processes.
      const once = [...appliedBefore, ...resumed.flatMap((e) => e.inboxIds)].sort((a, b) => a - b);
      expect(once).toEqual(killed.inbox.map((r) => r.id));
      expect(resumed.flatMap((e) => e.changes.filter((c) => c.outcome === "failed"))).toEqual([]);
      const refetched = new Set(resourceFetches(restartFrom));
      expect(committed.filter((r) => refetched.has(r.uri)).map((r) => r.uri)).toEqual([]);
    } finally {
      await engine.stop();
    }

    const end = snapshot();
    expect(end.inbox.every((r) => r.status === 'applied')).toBe(true);
    expect(end.runs.filter((r) => r.status !== 'completed')).toEqual([]);
    // The journal counts each change of the interrupted batch once, over both processes: nothing applied twice.
    const finished = end.runs.find((r) => r.id === run.id)!;
    expect(finished.status).toBe('completed');
    const batch = resumedChanges.filter((c) => c.change !== 'deleted');
    expect({ created: finished.created, updated: finished.updated, unchanged: finished.unchanged, failed: finished.failed }).toEqual({
      created: batch.filter((c) => c.change === 'created').length,
      updated: batch.filter((c) => c.change === 'updated').length,
      unchanged: 0,
      failed: 0,
    });
    expectNoPartialFile(end.rows);
    const rig = { fixture, dest } as Rig;
    for (const r of fixture.state.live()) expect(mirrored(rig, r.id)?.equals(sourceBytes(rig, r.id)), `resource ${r.id}`).toBe(true);
  }, 90_000);
});
