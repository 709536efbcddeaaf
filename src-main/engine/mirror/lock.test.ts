import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MirrorLockedError, acquireLock, processAlive } from './lock.ts';

const dir = () => mkdtempSync(join(tmpdir(), 'mirror-lock-'));

describe('mirror lock', () => {
  it('names its holder and is released', () => {
    const d = dir();
    const lock = acquireLock(d, 'rsdesk sync');
    const written = JSON.parse(readFileSync(join(d, 'lock'), 'utf8'));
    expect(written).toMatchObject({ pid: process.pid, host: hostname(), command: 'rsdesk sync' });
    lock.release();
    expect(existsSync(join(d, 'lock'))).toBe(false);
    acquireLock(d, 'again').release();
  });

  it('refuses a second writer while a live process holds it, naming the holder', () => {
    const d = dir();
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    try {
      writeFileSync(join(d, 'lock'), JSON.stringify({ pid: child.pid, host: hostname(), command: 'rsdesk sync', since: '2026-01-01T00:00:00Z' }));
      let error: unknown;
      try {
        acquireLock(d, 'rsdesk audit', '/my/mirror');
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(MirrorLockedError);
      expect((error as Error).message).toMatch(new RegExp(`/my/mirror is in use by rsdesk sync \\(process ${child.pid} on ${hostname()}, since 2026-01-01`));
    } finally {
      child.kill();
    }
  });

  it('takes over the stale lock of a dead local process', () => {
    const d = dir();
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const pid = Number(dead.stdout);
    expect(processAlive(pid)).toBe(false);
    writeFileSync(join(d, 'lock'), JSON.stringify({ pid, host: hostname(), command: 'rsdesk sync', since: 'then' }));
    const lock = acquireLock(d, 'rsdesk sync');
    expect(lock.tookOver?.pid).toBe(pid);
    lock.release();
  });

  it('does not take over a lock from another host', () => {
    const d = dir();
    writeFileSync(join(d, 'lock'), JSON.stringify({ pid: 999999, host: 'other-machine', command: 'rsdesk sync', since: 'x' }));
    expect(() => acquireLock(d, 'rsdesk sync')).toThrow(/other-machine.*delete the lock file/);
  });

  it('says what to do with an unreadable lock file', () => {
    const d = dir();
    writeFileSync(join(d, 'lock'), 'garbage');
    expect(() => acquireLock(d, 'rsdesk sync')).toThrow(/cannot be read/);
  });
});
