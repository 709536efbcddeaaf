// A mirror's state that another program keeps locked, or on a disk that is full: said in plain words naming the
// file, nothing in it lost. (Damaged and newer states: folder.test.ts.)
import { existsSync, mkdirSync, mkdtempSync, openSync, closeSync, writeSync, unlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { startFixtureSource } from '../../../e2e/fixture-source/index.ts';
import { audit } from './audit.ts';
import { readFolder } from './folder.ts';
import { LOCK_NAME } from './lock.ts';
import { explainStateError, MirrorState, RUN_MESSAGE_CHARS, STATE_FILE, stateDirOf } from './state.ts';
import { sync } from './sync.ts';
import { smallDisk } from './small-disk.ts';

describe('a mirror state another program keeps locked', () => {
  it('a sync that cannot write it says so, naming the file, and changes nothing', async () => {
    const fixture = await startFixtureSource({ resources: 5, changeListSize: 10 });
    const dest = mkdtempSync(join(tmpdir(), 'state-locked-'));
    try {
      const run = () => sync({ url: fixture.url + fixture.paths.dataset1.capabilityList, dest, timeoutMs: 5_000, proxyEnv: {} });
      await run();
      const path = join(stateDirOf(dest), STATE_FILE);
      const other = new DatabaseSync(path, { timeout: 100 });
      other.exec('BEGIN EXCLUSIVE');
      let error: unknown;
      try {
        await run();
      } catch (err) {
        error = err;
      } finally {
        other.exec('ROLLBACK');
        other.close();
      }
      expect((error as Error).message).toContain(`The mirror's state ${path} is being written by another program, which kept it locked for more than 5 seconds`);
      expect((error as Error).message).not.toContain('database is locked');
      const state = MirrorState.forReading(stateDirOf(dest));
      expect(state.runs().map((r) => r.status)).toEqual(['completed']);
      expect(state.inventoryCount()).toBe(5);
      state.close();
    } finally {
      await fixture.close();
    }
  }, 30_000);

  it('an audit that cannot record its run says so and lets the mirror go (it kept it locked for the rest of the process)', async () => {
    const fixture = await startFixtureSource({ resources: 3, changeListSize: 10 });
    const dest = mkdtempSync(join(tmpdir(), 'state-locked-'));
    try {
      await sync({ url: fixture.url + fixture.paths.dataset1.capabilityList, dest, timeoutMs: 5_000, proxyEnv: {} });
      const path = join(stateDirOf(dest), STATE_FILE);
      const other = new DatabaseSync(path, { timeout: 100 });
      other.exec('BEGIN EXCLUSIVE');
      let error: unknown;
      try {
        await audit({ dest, timeoutMs: 5_000, proxyEnv: {} });
      } catch (err) {
        error = err;
      } finally {
        other.exec('ROLLBACK');
        other.close();
      }
      expect((error as Error).message).toContain(`The mirror's state ${path} is being written by another program`);
      expect(existsSync(join(stateDirOf(dest), LOCK_NAME))).toBe(false);
      expect((await sync({ dest, timeoutMs: 5_000, proxyEnv: {} })).failed).toBe(0);
    } finally {
      await fixture.close();
    }
  }, 30_000);

  it('opening one that needs its schema brought up to date says so too', () => {
    const stateDir = stateDirOf(mkdtempSync(join(tmpdir(), 'state-locked-')));
    mkdirSync(stateDir, { recursive: true });
    const path = join(stateDir, STATE_FILE);
    const other = new DatabaseSync(path);
    other.exec('PRAGMA journal_mode = WAL');
    other.exec('CREATE TABLE t (x)');
    other.exec('BEGIN EXCLUSIVE');
    other.exec('INSERT INTO t VALUES (1)');
    try {
      expect(() => new MirrorState(stateDir)).toThrow(`The mirror's state ${path} is being written by another program`);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
  }, 30_000);
});

describe('a mirror state found damaged', () => {
  it('says so whichever of SQLite\'s codes for it came, and within a run says the run stopped rather than that nothing changed', () => {
    const path = '/m/.resourcesync/state.sqlite';
    // SQLITE_CORRUPT_INDEX: an extended code, which was passed on as SQLite's bare words.
    const index = Object.assign(new Error('database disk image is malformed'), { errcode: 779 });
    expect((explainStateError(path, index) as Error).message).toBe(
      `The mirror's state ${path} is damaged and cannot be read (database disk image is malformed); nothing in it was changed. Put back a copy of it from a backup, or mirror the Source into another folder.`,
    );
    const inRun = Object.assign(new Error('database disk image is malformed'), { errcode: 11 });
    expect((explainStateError(path, inRun, true) as Error).message).toBe(
      `The mirror's state ${path} is damaged (database disk image is malformed), so the run stopped; what it had recorded stays as it was. Put back a copy of it from a backup, or mirror the Source into another folder.`,
    );
    const other = new Error('something else');
    expect(explainStateError(path, other, true)).toBe(other);
  });
});

// A small tmpfs stands for a full disk: only root may mount one, so elsewhere these are skipped.
const small = smallDisk('state-full-', '4m');

function fill(dir: string): () => void {
  const file = join(dir, 'filler');
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch {
    // Full.
  }
  closeSync(fd);
  return () => unlinkSync(file);
}

describe.runIf(small !== null)('a mirror state on a full disk', () => {
  it('is still read (its status, its runs), and a write says the disk is full, losing nothing', () => {
    const dest = mkdtempSync(join(small!, 'm-'));
    const state = new MirrorState(stateDirOf(dest));
    state.setBinding({ url: 'http://127.0.0.1:1/', capabilityListUrl: null, resourceListUrl: null, changeListUrl: null, resourceDumpUrl: null, changeDumpUrl: null, maps: [], allowHosts: [], createdAt: '2026-01-01T00:00:00Z' });
    state.endRun(state.startRun('baseline', 'baseline', null).id, 'completed', {});
    state.close();
    const free = fill(small!);
    try {
      // It was "disk I/O error": the file SQLite shares between connections could not be made.
      expect(readFolder(dest)?.binding?.url).toBe('http://127.0.0.1:1/');
      expect(() => new MirrorState(stateDirOf(dest))).toThrow(`The disk holding ${dest} is full; nothing was changed. Free some space and try again.`);
    } finally {
      free();
    }
    const again = new MirrorState(stateDirOf(dest));
    expect(again.runs().map((r) => r.status)).toEqual(['completed']);
    again.close();
  });
});

describe('a mirror state emptied or stripped of its tables', () => {
  it('is said to be empty or damaged, not a new mirror; a sync given the URL rebuilds it keeping the matching files', async () => {
    const fixture = await startFixtureSource({ resources: 5, changeListSize: 10 });
    try {
      for (const how of ['zero bytes', 'no tables'] as const) {
        const dest = mkdtempSync(join(tmpdir(), 'state-emptied-'));
        const url = fixture.url + fixture.paths.dataset1.capabilityList;
        await sync({ url, dest, timeoutMs: 5_000, proxyEnv: {} });
        const path = join(stateDirOf(dest), STATE_FILE);
        if (how === 'zero bytes') {
          for (const name of [STATE_FILE, `${STATE_FILE}-wal`, `${STATE_FILE}-shm`]) rmSync(join(stateDirOf(dest), name), { force: true });
          closeSync(openSync(path, 'w'));
        } else {
          const db = new DatabaseSync(path);
          const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as { name: string }[];
          db.exec('PRAGMA foreign_keys = OFF');
          for (const { name } of tables) db.exec(`DROP TABLE "${name}"`);
          db.exec('PRAGMA user_version = 0');
          db.close();
        }
        const damaged = `The mirror's state in ${dest} (.resourcesync/state.sqlite) is empty or damaged`;
        await expect(audit({ dest, timeoutMs: 5_000, proxyEnv: {} }), how).rejects.toThrow(damaged);
        await expect(sync({ dest, timeoutMs: 5_000, proxyEnv: {} }), how).rejects.toThrow(damaged);
        // The audit recorded no run in it: the state a sync rebuilds holds that sync alone.
        expect(readFolder(dest)?.runs, how).toEqual([]);
        const requests = fixture.requests.length;
        expect(await sync({ url, dest, timeoutMs: 5_000, proxyEnv: {} }), how).toMatchObject({ created: 0, unchanged: 5, bytes: 0, failed: 0 });
        expect(fixture.requests.slice(requests).filter((r) => r.path.includes('/res/')), how).toEqual([]);
        expect(readFolder(dest)?.binding?.url, how).toBe(url);
      }
    } finally {
      await fixture.close();
    }
  }, 30_000);
});

describe('a checkpoint that is not a date and time (the state edited)', () => {
  it('gives a baseline that sets it right, saying why; --mode incremental is refused in plain words', async () => {
    const fixture = await startFixtureSource({ resources: 5, changeListSize: 10 });
    const dest = mkdtempSync(join(tmpdir(), 'state-checkpoint-'));
    try {
      const run = (mode?: 'incremental') => {
        const notes: string[] = [];
        const result = sync({ url: fixture.url + fixture.paths.dataset1.capabilityList, dest, timeoutMs: 5_000, proxyEnv: {}, mode, onNote: (n) => void notes.push(n) });
        return result.then((r) => ({ ...r, notes }));
      };
      await run();
      const good = new MirrorState(stateDirOf(dest));
      const at = good.checkpoint()!.at;
      good.close();
      // Year 99999, `at` a number, not JSON at all.
      for (const value of [JSON.stringify({ at: '99999-01-01T00:00:00Z', from: 'x' }), '{"at":5}', 'garbage']) {
        const db = new DatabaseSync(join(stateDirOf(dest), STATE_FILE));
        db.prepare("UPDATE meta SET value = ? WHERE key = 'checkpoint'").run(value);
        db.close();
        await expect(run('incremental')).rejects.toThrow(/^The mirror's checkpoint ".*" is not a date and time: run a baseline \(--mode baseline, or auto\), which sets it right$/);
        const result = await run();
        expect(result).toMatchObject({ mode: 'baseline', failed: 0, unchanged: 5, checkpoint: at });
        expect(result.notes.join('\n')).toMatch(/The mirror's checkpoint ".*" is not a date and time: this run is a baseline compared with the inventory, which sets it right\./);
      }
    } finally {
      await fixture.close();
    }
  });
});

describe('a run message of megabytes (the state edited)', () => {
  it('is read back cut, saying so: reading the folder does not load it whole', () => {
    const dest = mkdtempSync(join(tmpdir(), 'state-message-'));
    const state = new MirrorState(stateDirOf(dest));
    const run = state.startRun('baseline', 'test', null);
    state.endRun(run.id, 'failed', {}, 'short and whole');
    const huge = state.startRun('baseline', 'test', null);
    state.endRun(huge.id, 'failed', {}, 'x'.repeat(5_000_000));
    state.close();
    const folder = readFolder(dest)!;
    expect(folder.runs.map((r) => r.message!.length)).toEqual(['short and whole'.length, RUN_MESSAGE_CHARS + ' [cut: the message recorded is longer]'.length]);
    expect(folder.runs[1]!.message).toMatch(/^x+ \[cut: the message recorded is longer\]$/);
    const again = MirrorState.forReading(stateDirOf(dest));
    expect(again.run(huge.id)!.message!.length).toBeLessThan(RUN_MESSAGE_CHARS + 100);
    again.close();
  });
});
