// A run left `running` by a process that was killed reads as interrupted, in the app's summary and after an audit.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { audit } from './audit.ts';
import { inventorySize, readFailures, readFolder, setMirrorHeaders } from './folder.ts';
import { retryResources } from './retry.ts';
import { MirrorState, stateDirOf } from './state.ts';
import { sync } from './sync.ts';
import { canMakeReadOnly, makeReadOnly } from './read-only-folder.ts';

let fixture: FixtureSource;
let dest: string;

beforeEach(async () => {
  fixture = await startFixtureSource({ resources: 6, changeListSize: 3 });
  dest = mkdtempSync(join(tmpdir(), 'folder-'));
});
afterEach(async () => {
  await fixture.close();
});

/** A pid that is not running: one of a process that has ended. */
function deadPid(): number {
  return Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
}

describe('runs left running by a killed process', () => {
  it('read as interrupted while no process holds the mirror, and an audit records them so', async () => {
    await sync({ url: fixture.url + fixture.paths.dataset1.capabilityList, dest, timeoutMs: 2_000 });
    const state = new MirrorState(stateDirOf(dest));
    const killed = state.startRun('incremental', 'auto', null);
    state.db.prepare('UPDATE runs SET pid = ? WHERE id = ?').run(deadPid(), killed.id);
    state.close();
    expect(readFolder(dest)!.runs.find((r) => r.id === killed.id)?.status).toBe('interrupted');
    await audit({ dest, timeoutMs: 2_000 });
    const after = new MirrorState(stateDirOf(dest));
    try {
      expect(after.run(killed.id)?.status).toBe('interrupted');
    } finally {
      after.close();
    }
  });
});

describe("the mirror's size", () => {
  it('counts the resources there, not those deleted or quarantined, without scanning the inventory', () => {
    const state = new MirrorState(stateDirOf(dest));
    try {
      const put = state.db.prepare('INSERT INTO inventory (uri, path, path_key, status) VALUES (?, ?, ?, ?)');
      const statuses = ['verified', 'unverifiable', 'unchecked', 'damaged', 'deleted', 'quarantined'];
      for (let i = 0; i < 60; i++) put.run(`http://s/r${i}`, `s/r${i}`, `s/r${i}`, statuses[i % statuses.length]);
      state.db.prepare("UPDATE inventory SET status = 'deleted' WHERE uri = 'http://s/r0'").run();
      state.db.prepare("UPDATE inventory SET status = 'verified' WHERE uri = 'http://s/r4'").run();
      // Each count reads an index: the partial one of gone rows for the second, never the table's rows.
      const plan = state.db.prepare("EXPLAIN QUERY PLAN SELECT COUNT(*) FROM inventory WHERE status IN ('deleted', 'quarantined')").all() as { detail: string }[];
      expect(plan.map((p) => p.detail).join('; ')).toContain('inventory_gone');
    } finally {
      state.close();
    }
    expect(readFolder(dest)!.resources).toBe(40);
    expect(inventorySize(dest)).toBe(40);
  });
});

describe("a run's failures", () => {
  it('of the latest run are all standing, counted whole and listed in order up to the limit', () => {
    const state = new MirrorState(stateDirOf(dest));
    let first: number;
    let latest: number;
    try {
      first = state.startRun('baseline', 'auto', null).id;
      state.addToRun(first, { failed: 1 }, [{ uri: 'http://s/a', reason: 'gone' }]);
      state.db.prepare("INSERT INTO inventory (uri, path, path_key, status, run_id) VALUES ('http://s/a', 's/a', 's/a', 'verified', ?)").run(first + 1);
      latest = state.startRun('incremental', 'auto', null).id;
      state.addToRun(latest, { failed: 3 }, ['x', 'y', 'z'].map((n) => ({ uri: `http://s/${n}`, reason: `no ${n}` })));
    } finally {
      state.close();
    }
    expect(readFailures(dest, latest, 2)).toEqual({
      total: 3,
      open: 3,
      failures: [
        { uri: 'http://s/x', reason: 'no x', fixedBy: null, gone: false },
        { uri: 'http://s/y', reason: 'no y', fixedBy: null, gone: false },
      ],
    });
    // An earlier run's failure that the latest run mended is said to be.
    expect(readFailures(dest, first)).toEqual({ total: 1, open: 0, failures: [{ uri: 'http://s/a', reason: 'gone', fixedBy: latest, gone: false }] });
  });
});

describe('an audit killed half-way', () => {
  it('is not taken for a sync to resume: the next sync runs as it would have, in a run of its own', async () => {
    const url = fixture.url + fixture.paths.dataset1.capabilityList;
    await sync({ url, dest, timeoutMs: 2_000 });
    const state = new MirrorState(stateDirOf(dest));
    const killed = state.startRun('audit', 'audit', null);
    state.db.prepare('UPDATE runs SET pid = ? WHERE id = ?').run(deadPid(), killed.id);
    state.close();
    const result = await sync({ dest, timeoutMs: 2_000 });
    expect(result.mode).toBe('incremental');
    expect(result.runId).not.toBe(killed.id);
    expect(readFolder(dest)!.runs.find((r) => r.id === killed.id)).toMatchObject({ kind: 'audit', status: 'interrupted' });
  });
});

describe('a retry killed half-way', () => {
  it('is not taken for a sync to resume (a baseline\'s retry would run a whole baseline), nor hides the sync paused before it', async () => {
    const url = fixture.url + fixture.paths.dataset1.capabilityList;
    await sync({ url, dest, timeoutMs: 2_000 });
    const state = new MirrorState(stateDirOf(dest));
    // So is a batch of live notifications killed half-way: the live side takes it up itself.
    const live = state.startRun('incremental', 'live', null);
    const killed = state.startRun('baseline', 'retry', null);
    state.db.prepare('UPDATE runs SET pid = ? WHERE id IN (?, ?)').run(deadPid(), killed.id, live.id);
    state.close();
    const notes: string[] = [];
    const result = await sync({ dest, timeoutMs: 2_000, onNote: (n) => notes.push(n) });
    expect(result).toMatchObject({ mode: 'incremental', resumed: false });
    expect(result.runId).not.toBe(killed.id);
    expect(notes.some((n) => n.startsWith('Resuming run'))).toBe(false);
    expect(readFolder(dest)!.runs.find((r) => r.id === killed.id)).toMatchObject({ mode: 'retry', status: 'interrupted' });
    expect(readFolder(dest)!.runs.find((r) => r.id === live.id)).toMatchObject({ mode: 'live', status: 'interrupted' });

    // A sync paused, then a retry of its failures that completed: the next sync takes the paused one up.
    const again = new MirrorState(stateDirOf(dest));
    const paused = again.startRun('incremental', 'auto', null);
    again.endRun(paused.id, 'interrupted', {}, 'Paused');
    const retried = again.startRun('incremental', 'retry', null);
    again.endRun(retried.id, 'completed', {}, null);
    again.close();
    expect(await sync({ dest, timeoutMs: 2_000 })).toMatchObject({ resumed: true, runId: paused.id });
  });
});

describe('a run stopped by a full disk', () => {
  it('is recorded in plain words, naming the folder', async () => {
    const url = fixture.url + fixture.paths.dataset1.capabilityList;
    const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    let thrown = false;
    await expect(
      sync({
        url,
        dest,
        timeoutMs: 2_000,
        // As a write of the run would fail, once the run is under way.
        onProgress: (p) => {
          if (p.phase !== 'discovery' && p.settled > 0 && !thrown) {
            thrown = true;
            throw full;
          }
        },
      }),
    ).rejects.toThrow(`The disk holding ${dest} is full, so the run stopped before it finished. Free some space and run it again.`);
    expect(readFolder(dest)!.runs.at(-1)!.message).toBe(`The disk holding ${dest} is full, so the run stopped before it finished. Free some space and run it again.`);
  });
});

describe('a run this process could not end', () => {
  it('is taken as interrupted by the next sync (which holds the lock) and resumed, not left running', async () => {
    const url = fixture.url + fixture.paths.dataset1.capabilityList;
    await sync({ url, dest, timeoutMs: 2_000 });
    const state = new MirrorState(stateDirOf(dest));
    // As in the app when the disk was too full to record the run's end: running, with this process's pid.
    const stuck = state.startRun('incremental', 'auto', null);
    state.close();
    const result = await sync({ dest, timeoutMs: 2_000 });
    expect(result).toMatchObject({ resumed: true, runId: stuck.id });
    expect(readFolder(dest)!.runs.find((r) => r.id === stuck.id)?.status).toBe('completed');
  });
});

describe('a mirror whose state cannot be opened', () => {
  it('refuses each run with the same message and leaves no lock behind in a process that carries on (the app)', async () => {
    await sync({ url: fixture.url + fixture.paths.dataset1.capabilityList, dest, timeoutMs: 2_000 });
    const file = join(stateDirOf(dest), 'state.sqlite');
    const db = new DatabaseSync(file);
    db.exec('PRAGMA user_version = 99');
    db.close();
    const before = readFileSync(file);
    for (const attempt of [() => audit({ dest, timeoutMs: 2_000 }), () => sync({ dest, timeoutMs: 2_000 }), () => retryResources({ dest, runId: 1 })]) {
      for (let i = 0; i < 2; i++) await expect(attempt()).rejects.toThrow(/schema version 99/);
      expect(existsSync(join(stateDirOf(dest), 'lock'))).toBe(false);
    }
    expect(() => setMirrorHeaders(dest, {})).toThrow(/schema version 99/);
    expect(existsSync(join(stateDirOf(dest), 'lock'))).toBe(false);
    expect(readFileSync(file).equals(before)).toBe(true);
    // Said for a mirror, not for the app's data folder.
    await expect(audit({ dest, timeoutMs: 2_000 })).rejects.toThrow(/written by a newer version; open this mirror with that version\. Nothing in it was changed\.$/);
  });

  it('a damaged state.sqlite is named, and left as it was', async () => {
    const file = join(stateDirOf(dest), 'state.sqlite');
    mkdirSync(stateDirOf(dest));
    writeFileSync(file, Buffer.alloc(4096, 7));
    const damaged = new RegExp(`^The mirror's state ${file} is damaged and cannot be read \\(file is not a database\\); nothing in it was changed\\.`);
    await expect(audit({ dest, timeoutMs: 2_000 })).rejects.toThrow(damaged);
    expect(() => readFolder(dest)).toThrow(damaged);
    expect(existsSync(join(stateDirOf(dest), 'lock'))).toBe(false);
    expect(readFileSync(file).equals(Buffer.alloc(4096, 7))).toBe(true);
  });
});

describe('a mirror whose folder cannot be written', () => {
  it('is read as it is: its runs, nothing written beside its state', async () => {
    await sync({ url: fixture.url + fixture.paths.dataset1.capabilityList, dest, timeoutMs: 2_000 });
    const stateDir = stateDirOf(dest);
    const before = readdirSync(stateDir).sort();
    const bytes = readFileSync(join(stateDir, 'state.sqlite'));
    const state = new MirrorState(stateDir, { readOnly: true });
    try {
      expect(state.runs()).toMatchObject([{ kind: 'baseline', status: 'completed' }]);
      expect(state.binding()?.resourceListUrl).toMatch(/resourcelist/);
    } finally {
      state.close();
    }
    // No -wal or -shm file: SQLite would need to write them, and cannot there.
    expect(readdirSync(stateDir).sort()).toEqual(before);
    expect(readFileSync(join(stateDir, 'state.sqlite')).equals(bytes)).toBe(true);
    // A state of an older version cannot be brought up to date there: said, not half done.
    const db = new DatabaseSync(join(stateDir, 'state.sqlite'));
    db.exec('PRAGMA user_version = 3');
    db.close();
    expect(() => new MirrorState(stateDir, { readOnly: true })).toThrow(/was written by an older version, and its folder cannot be written to bring it up to date/);
  });

  // Root writes through permissions: for root the folder is made read-only by a mount instead (read-only-folder.ts).
  it.skipIf(!canMakeReadOnly)('rsdesk runs and the app read it; a sync or an audit is refused in plain words', async () => {
    await sync({ url: fixture.url + fixture.paths.dataset1.capabilityList, dest, timeoutMs: 2_000 });
    const stateDir = stateDirOf(dest);
    const readOnly = makeReadOnly(stateDir, [join(stateDir, 'state.sqlite')]);
    try {
      expect(readFolder(dest)!.runs).toMatchObject([{ kind: 'baseline', status: 'completed' }]);
      await expect(audit({ dest, timeoutMs: 2_000 })).rejects.toThrow(`cannot be written (${readOnly.why}), and a sync or an audit records what it does in it`);
    } finally {
      readOnly.restore();
    }
  });
});

describe('prepareMirror under /proc', () => {
  it('refuses the folder at once (the app froze: Node recursive mkdir spins there); in a child process, as a spin would hold this one', () => {
    const script = `import { prepareMirror } from ${JSON.stringify(new URL('./folder.ts', import.meta.url).href)};
try { await prepareMirror({ url: 'http://127.0.0.1:9/capabilitylist.xml', dest: '/proc/rsdesk-prepare-test/m' }); console.log('prepared'); } catch (err) { console.log(err.code, err.path); }`;
    const child = spawnSync(process.execPath, ['--input-type=module', '--disable-warning=ExperimentalWarning', '-e', script], { encoding: 'utf8', timeout: 15_000 });
    expect(child.error, 'the child did not end within 15 s').toBeUndefined();
    if (process.platform === 'linux') expect(child.stdout.trim()).toBe('ENOENT /proc/rsdesk-prepare-test');
    else expect(child.status).toBe(0);
  });
});
