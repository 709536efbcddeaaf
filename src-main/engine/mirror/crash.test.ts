// Crash safety with real processes: `rsdesk sync` killed with SIGKILL at random points, several times in a row, during
// a baseline and during an incremental run. After every kill: no temporary or partial file in the visible tree, every
// inventory row's file on disk with the recorded length and md5, every file in view known as the mirror's (a row, or
// listed as being put in place, and then a complete copy of its resource), the checkpoint untouched. After every restart: nothing the killed run had verified is fetched again
// (requests counted at the fixture Source). At the end: the mirror equals the Source and the checkpoint is right.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { PLACING_FILE } from './apply.ts';
import { MirrorState, stateDirOf, type Checkpoint, type InventoryRow, type RunRecord } from './state.ts';
import { sync } from './sync.ts';

const BIN = fileURLToPath(new URL('../../../bin/rsdesk.mjs', import.meta.url));
const RESOURCES = 400;
let fixture: FixtureSource;
let dest: string;

beforeEach(async () => {
  fixture = await startFixtureSource({ resources: RESOURCES, changeListSize: 5000 });
  dest = mkdtempSync(join(tmpdir(), 'crash-'));
});
afterEach(async () => {
  await fixture.close();
});

const capabilityList = () => fixture.url + fixture.paths.dataset1.capabilityList;
const host = () => new URL(fixture.url).host.replace(':', '_');
/** Resource fetches, as URIs of the resource (a mirror location counts for its resource). */
const resourceFetches = (from = 0) =>
  fixture.requests
    .slice(from)
    .filter((r) => /\/dataset1\/res\/\d+/.test(r.path))
    .map((r) => fixture.url + r.path.replace(/^\/mirror\//, '/'));

function snapshot(): { rows: InventoryRow[]; runs: RunRecord[]; checkpoint: string | null } {
  const state = new MirrorState(stateDirOf(dest));
  try {
    return { rows: [...state.rows()], runs: state.runs(), checkpoint: state.checkpoint()?.at ?? null };
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

const md5 = (path: string) => createHash('md5').update(readFileSync(path)).digest('hex');

/** The invariants that must hold whenever the process dies. */
function expectConsistent(): InventoryRow[] {
  const { rows } = snapshot();
  const files = visibleFiles();
  expect(files.filter((f) => f.endsWith('.part') || f.includes('/tmp/'))).toEqual([]);
  const held = rows.filter((r) => r.status !== 'deleted' && r.status !== 'quarantined');
  for (const row of held.filter((r) => r.status !== 'damaged')) {
    const file = join(dest, ...row.path.split('/'));
    expect(statSync(file).size, row.uri).toBe(row.length);
    expect(md5(file), row.uri).toBe(row.digests.md5);
  }
  // Killed while a batch was put in place: the rows of the copies it replaces say damaged, and its new files are
  // listed as being put in place (durable.ts, intentFile). Each of these files is whole, the new version or the one
  // it replaces, or not there yet; the next run checks them.
  const intent = join(stateDirOf(dest), PLACING_FILE);
  const placing = (existsSync(intent) ? readFileSync(intent, 'utf8') : '').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as string[])[1]!);
  for (const path of [...held.filter((r) => r.status === 'damaged').map((r) => r.path), ...placing]) {
    const file = join(dest, ...path.split('/'));
    if (!existsSync(file)) continue;
    const id = Number(/\/res\/(\d+)\./.exec(path)?.[1]);
    const current = fixture.state.resources.get(id)!.version;
    const body = readFileSync(file);
    expect(Array.from({ length: current }, (_, v) => fixture.state.representation(id, v + 1).body).some((b) => b.equals(body)), path).toBe(true);
  }
  // Every file in view is known as the mirror's: none is taken for someone else's (which the mirror never replaces).
  const known = new Set([...held.map((r) => r.path), ...placing]);
  expect(files.filter((f) => !known.has(f))).toEqual([]);
  return rows;
}

function fileOf(id: number): string {
  return join(dest, host(), ...fixture.state.pathOf(id).split('/').filter(Boolean));
}

/** Starts `rsdesk sync` and kills it with SIGKILL once `fetches` more resources were asked for; false if it ended first. */
async function killAfter(args: string[], fetches: number): Promise<boolean> {
  const start = resourceFetches().length;
  const child = spawn(process.execPath, [BIN, 'sync', ...args, '--dest', dest, '--concurrency', '2', '--delay', '0.002', '--json'], {
    stdio: 'ignore',
    env: { ...process.env, HTTP_PROXY: '', http_proxy: '', HTTPS_PROXY: '', https_proxy: '' },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let ended = false;
  void exited.then(() => (ended = true));
  while (!ended && resourceFetches().length - start < fetches) await new Promise((r) => setTimeout(r, 3));
  const killed = !ended;
  child.kill('SIGKILL');
  await exited;
  return killed;
}

const random = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo));

/** Starts `rsdesk sync` and kills it with SIGKILL as soon as the fixture is asked for `path`; false if it ended first. */
async function killAtRequest(args: string[], path: string): Promise<boolean> {
  const child = spawn(process.execPath, [BIN, 'sync', ...args, '--dest', dest, '--concurrency', '2', '--json'], {
    stdio: 'ignore',
    env: { ...process.env, HTTP_PROXY: '', http_proxy: '', HTTPS_PROXY: '', https_proxy: '' },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let ended = false;
  void exited.then(() => (ended = true));
  const from = fixture.requests.length;
  while (!ended && !fixture.requests.slice(from).some((r) => r.path.endsWith(path))) await new Promise((r) => setTimeout(r, 1));
  const killed = !ended;
  child.kill('SIGKILL');
  await exited;
  return killed;
}

describe('kill -9 just after a deletion', () => {
  for (const policy of ['delete', 'quarantine'] as const) {
    it(`--delete ${policy}: the deleted copy's row never says verified once its file is gone`, async () => {
      const baseline = await sync({ url: capabilityList(), dest, concurrency: 4, proxyEnv: {} });
      expect(baseline.failed).toBe(0);
      const [gone] = fixture.change('delete', 1, 7);
      // The change after the deletion hangs: the run is killed while the deletion's row waits for its batch.
      const [later] = fixture.change('update', 1, 12);
      const path = fixture.state.pathOf(later!.id);
      fixture.setBroken(path, 'hang');
      fixture.setBroken('/mirror' + path, 'hang');
      expect(await killAtRequest(['--delete', policy], path)).toBe(true);
      const row = snapshot().rows.find((r) => r.uri === gone!.loc);
      // Either the deletion was recorded, or its row no longer vouches for a file that may be gone.
      if (row !== undefined && row.status !== 'deleted' && row.status !== 'quarantined' && row.status !== 'damaged') expect(existsSync(fileOf(gone!.id)), row.status).toBe(true);
      expectConsistent();
      fixture.setBroken(path, null);
      fixture.setBroken('/mirror' + path, null);
      const done = await sync({ dest, concurrency: 4, deletePolicy: policy, proxyEnv: {} });
      expect(done).toMatchObject({ mode: 'incremental', failed: 0, deleted: 1, resumed: true });
      expect(existsSync(fileOf(gone!.id))).toBe(false);
      expect(snapshot().rows.find((r) => r.uri === gone!.loc && r.status !== 'deleted' && r.status !== 'quarantined')).toBeUndefined();
      expectConsistent();
    }, 60_000);
  }
});

describe('a run resumed after a kill between the renames of a batch and its commit', () => {
  /** What such a kill leaves: the files in place, their rows (and counts) not recorded, their paths in `placing`, or their old rows marked damaged. */
  function killedBeforeCommit(uris: string[], kind: 'created' | 'updated', checkpoint?: Checkpoint): void {
    const state = new MirrorState(stateDirOf(dest));
    try {
      const run = state.runs().at(-1)!;
      const rows = [...state.rows()].filter((r) => uris.includes(r.uri));
      state.db.prepare(`UPDATE runs SET status = 'interrupted', ended_at = NULL, ${kind} = ${kind} - ? WHERE id = ?`).run(rows.length, run.id);
      if (kind === 'created') {
        for (const r of rows) state.remove(r.uri);
        writeFileSync(join(stateDirOf(dest), PLACING_FILE), rows.map((r) => JSON.stringify([r.uri, r.path]) + '\n').join(''));
        state.setCheckpoint(null);
      } else {
        // The old version's row, marked damaged before the renames (its digests those of the old version), and the
        // checkpoint where the run found it.
        for (const r of rows) state.put({ ...r, digests: { md5: '0'.repeat(32) }, status: 'damaged', runId: run.id - 1 });
        state.setCheckpoint(checkpoint!);
      }
    } finally {
      state.close();
    }
  }

  it('counts the new files its killed part put in place as created, not unchanged', async () => {
    const first = await sync({ url: capabilityList(), dest, concurrency: 4, proxyEnv: {} });
    expect(first).toMatchObject({ mode: 'baseline', created: RESOURCES, failed: 0 });
    const uris = fixture.state.live().slice(0, 5).map((r) => fixture.state.locOf(r.id));
    killedBeforeCommit(uris, 'created');
    const from = resourceFetches().length;
    const done = await sync({ dest, concurrency: 4, proxyEnv: {} });
    expect(resourceFetches().slice(from)).toEqual([]);
    expect(done).toMatchObject({ mode: 'baseline', resumed: true, created: RESOURCES, unchanged: 0, failed: 0 });
    expect(snapshot().runs.map((r) => [r.kind, r.status, r.created, r.unchanged])).toEqual([['baseline', 'completed', RESOURCES, 0]]);
  }, 60_000);

  it('counts the new versions its killed part put in place as updated, not unchanged', async () => {
    const baseline = await sync({ url: capabilityList(), dest, concurrency: 4, proxyEnv: {} });
    expect(baseline.failed).toBe(0);
    const held = new MirrorState(stateDirOf(dest));
    const checkpoint = held.checkpoint()!;
    held.close();
    const changed = fixture.change('update', 6);
    await sync({ dest, concurrency: 4, proxyEnv: {} });
    killedBeforeCommit(changed.slice(0, 4).map((c) => c.loc), 'updated', checkpoint);
    const from = resourceFetches().length;
    const done = await sync({ dest, concurrency: 4, proxyEnv: {} });
    expect(resourceFetches().slice(from)).toEqual([]);
    expect(done).toMatchObject({ mode: 'incremental', resumed: true, updated: 6, unchanged: 0, failed: 0 });
  }, 60_000);
});

describe('kill -9 in the middle of a Change Dump package', () => {
  const filesUnder = (dir: string): string[] =>
    existsSync(dir) ? readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? filesUnder(join(dir, d.name)) : [join(dir, d.name)])) : [];

  it('the resumed run applies only the changes the killed part had not: counted once, nothing deleted twice', async () => {
    await fixture.close();
    fixture = await startFixtureSource({ resources: 60, changeListSize: 3000 });
    expect((await sync({ url: capabilityList(), dest, concurrency: 4, proxyEnv: {} })).failed).toBe(0);
    // The same mirror, copied: the run that is never killed.
    const reference = mkdtempSync(join(tmpdir(), 'crash-ref-'));
    cpSync(dest, reference, { recursive: true });
    // Many distinct URIs (a package applies only the last change of each), some changed more than once.
    fixture.change('update', 300);
    fixture.change('create', 1400);
    fixture.change('delete', 300);
    fixture.change('update', 300);
    fixture.change('create', 100);
    const options = { useDumps: true, deletePolicy: 'quarantine' as const, concurrency: 4, proxyEnv: {} };
    const unkilled = await sync({ ...options, dest: reference });
    expect(unkilled).toMatchObject({ mode: 'incremental', failed: 0 });

    // Killed once the package's changes are being committed, well before its end.
    const child = spawn(process.execPath, [BIN, 'sync', '--dest', dest, '--use-dumps', '--delete', 'quarantine', '--json'], {
      stdio: 'ignore',
      env: { ...process.env, HTTP_PROXY: '', http_proxy: '', HTTPS_PROXY: '', https_proxy: '' },
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let ended = false;
    void exited.then(() => (ended = true));
    const applied = (): number => {
      // Waits out the child's commits (a read then would fail as locked).
      const db = new DatabaseSync(join(stateDirOf(dest), 'state.sqlite'), { readOnly: true, timeout: 5_000 });
      try {
        const run = db.prepare("SELECT created + updated + deleted AS n FROM runs WHERE kind = 'incremental' ORDER BY id DESC LIMIT 1").get() as { n: number } | undefined;
        return run?.n ?? 0;
      } finally {
        db.close();
      }
    };
    while (!ended && applied() < 700) await new Promise((r) => setTimeout(r, 2));
    expect(ended).toBe(false);
    child.kill('SIGKILL');
    await exited;
    expect(applied()).toBeLessThan(unkilled.created + unkilled.updated + unkilled.deleted);
    expectConsistent();

    const resumed = await sync({ ...options, dest });
    expect(resumed).toMatchObject({ mode: 'incremental', failed: 0, resumed: true });
    const counts = (r: typeof resumed) => [r.created, r.updated, r.deleted, r.unchanged];
    expect(counts(resumed)).toEqual(counts(unkilled));
    expectConsistent();
    // Each deleted resource quarantined once, as in the mirror never killed.
    const quarantined = (root: string) => filesUnder(join(stateDirOf(root), 'quarantine')).map((f) => f.slice(root.length)).sort();
    expect(quarantined(dest)).toEqual(quarantined(reference));
    for (const r of fixture.state.live()) expect(readFileSync(fileOf(r.id)).equals(fixture.state.representation(r.id, r.version).body), `resource ${r.id}`).toBe(true);
  }, 120_000);
});

describe('kill -9 while a Change Dump run reads the Change List after it', () => {
  it('the resumed run neither downloads nor applies again the packages its killed part applied', async () => {
    await fixture.close();
    fixture = await startFixtureSource({ resources: 60, changeListSize: 200 });
    expect((await sync({ url: capabilityList(), dest, concurrency: 4, proxyEnv: {} })).failed).toBe(0);
    const reference = mkdtempSync(join(tmpdir(), 'crash-ref-'));
    cpSync(dest, reference, { recursive: true });
    // Two closed Change Lists (the Change Dump's packages), then an open one read after the dump.
    fixture.change('update', 400);
    fixture.change('create', 30);
    const [last] = fixture.change('update', 1, 5);
    const options = { useDumps: true, concurrency: 2, proxyEnv: {} };
    const unkilled = await sync({ ...options, dest: reference });
    expect(unkilled).toMatchObject({ mode: 'incremental', failed: 0 });

    // The last change hangs: the changes before it are committed (a batch waits at most 2 s), then the run is killed.
    const path = fixture.state.pathOf(last!.id);
    fixture.setBroken(path, 'hang');
    fixture.setBroken('/mirror' + path, 'hang');
    const child = spawn(process.execPath, [BIN, 'sync', '--dest', dest, '--use-dumps', '--concurrency', '2', '--json'], {
      stdio: 'ignore',
      env: { ...process.env, HTTP_PROXY: '', http_proxy: '', HTTPS_PROXY: '', https_proxy: '' },
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const from = fixture.requests.length;
    while (!fixture.requests.slice(from).some((r) => r.path.endsWith(path))) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 3000));
    child.kill('SIGKILL');
    await exited;
    expectConsistent();
    fixture.setBroken(path, null);
    fixture.setBroken('/mirror' + path, null);

    const before = fixture.requests.length;
    const resumed = await sync({ ...options, dest });
    expect(resumed).toMatchObject({ mode: 'incremental', failed: 0, resumed: true });
    expect(fixture.requests.slice(before).filter((r) => r.path.endsWith('.zip'))).toEqual([]);
    const counts = (r: typeof resumed) => [r.created, r.updated, r.deleted];
    expect(counts(resumed)).toEqual(counts(unkilled));
    // Nor counts again, as unchanged, what its killed part applied from the Change List.
    expect(resumed.unchanged).toBe(unkilled.unchanged);
    expectConsistent();
  }, 120_000);
});

describe('kill -9 at random points, several times', () => {
  it('a baseline: consistent after each kill, nothing verified fetched again, checkpoint only at the end', async () => {
    let kills = 0;
    for (let round = 0; round < 3; round++) {
      const before = resourceFetches().length;
      const killed = await killAfter([capabilityList()], random(20, 110));
      const rows = expectConsistent();
      const snap = snapshot();
      expect(snap.checkpoint).toBeNull();
      if (!killed) break;
      kills++;
      // The next process resumes: what this one verified is never asked for again.
      const verified = new Set(rows.filter((r) => r.status !== 'damaged').map((r) => r.uri));
      const next = resourceFetches().length;
      expect(next).toBeGreaterThan(before);
      const following = await killAfter([], random(20, 110));
      expect(resourceFetches().slice(next).filter((u) => verified.has(u))).toEqual([]);
      expectConsistent();
      if (!following) break;
      kills++;
    }
    expect(kills).toBeGreaterThanOrEqual(1);
    const last = new Set(snapshot().rows.filter((r) => r.status !== 'damaged').map((r) => r.uri));
    const from = resourceFetches().length;
    const done = await sync({ dest, concurrency: 4, delayMs: 0, proxyEnv: {} });
    expect(done).toMatchObject({ mode: 'baseline', failed: 0, resumed: true });
    expect(resourceFetches().slice(from).filter((u) => last.has(u))).toEqual([]);
    expectConsistent();
    const { rows, runs, checkpoint } = snapshot();
    expect(rows).toHaveLength(RESOURCES);
    expect(rows.every((r) => r.status === 'verified')).toBe(true);
    expect(checkpoint).toBe(fixture.state.now());
    // One baseline run, resumed each time, completed.
    expect(runs.map((r) => [r.kind, r.status])).toEqual([['baseline', 'completed']]);
    for (const r of fixture.state.live()) expect(readFileSync(fileOf(r.id)).equals(fixture.state.representation(r.id, r.version).body)).toBe(true);
  }, 120_000);

  it('an incremental run: consistent after each kill, the checkpoint held until it completes, nothing applied fetched again', async () => {
    const baseline = await sync({ url: capabilityList(), dest, concurrency: 4, proxyEnv: {} });
    expect(baseline.failed).toBe(0);
    fixture.change('update', 150);
    fixture.change('create', 60);
    fixture.change('delete', 20);
    const changed = new Set(fixture.state.changes.slice(-230).filter((c) => c.change !== 'deleted').map((c) => c.loc));
    let kills = 0;
    for (let round = 0; round < 4; round++) {
      const killed = await killAfter([], random(15, 60));
      expectConsistent();
      const snap = snapshot();
      // Incremental progress is never a checkpoint until the run completes.
      expect(snap.checkpoint).toBe(baseline.checkpoint);
      if (!killed) break;
      kills++;
      const run = snap.runs.at(-1)!;
      expect(run.kind).toBe('incremental');
      // What the killed run applied (its rows) is not fetched by the next one.
      const applied = new Set(snap.rows.filter((r) => r.runId === run.id).map((r) => r.uri));
      const from = resourceFetches().length;
      const next = await killAfter([], random(15, 60));
      expect(resourceFetches().slice(from).filter((u) => applied.has(u))).toEqual([]);
      expectConsistent();
      if (!next) break;
      kills++;
    }
    expect(kills).toBeGreaterThanOrEqual(1);
    const snap = snapshot();
    const applied = new Set(snap.rows.filter((r) => r.runId === snap.runs.at(-1)!.id).map((r) => r.uri));
    const from = resourceFetches().length;
    const done = await sync({ dest, concurrency: 4, delayMs: 0, deletePolicy: 'delete', proxyEnv: {} });
    expect(done).toMatchObject({ mode: 'incremental', failed: 0 });
    const fetched = resourceFetches().slice(from);
    expect(fetched.filter((u) => applied.has(u))).toEqual([]);
    // Only changed resources were fetched.
    expect(fetched.every((u) => changed.has(u))).toBe(true);
    expectConsistent();
    const end = snapshot();
    expect(end.checkpoint).toBe(new Date(Date.parse(fixture.state.changes.at(-1)!.datetime)).toISOString());
    expect(end.runs.map((r) => [r.kind, r.status])).toEqual([
      ['baseline', 'completed'],
      ['incremental', 'completed'],
    ]);
    for (const r of fixture.state.live()) expect(readFileSync(fileOf(r.id)).equals(fixture.state.representation(r.id, r.version).body), `resource ${r.id}`).toBe(true);
  }, 120_000);
});
