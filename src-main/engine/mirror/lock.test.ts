import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockHolder } from './folder.ts';
import { MirrorLockedError, acquireLock, processAlive } from './lock.ts';
import { canMakeReadOnly, makeReadOnly } from './read-only-folder.ts';

const MODULE = new URL('./lock.ts', import.meta.url).href;
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

  it('held by this very process, says it is busy here, not that another process holds it or that a lock file may go', () => {
    const d = dir();
    const lock = acquireLock(d, 'live notifications', '/my/mirror');
    try {
      const since = JSON.parse(readFileSync(join(d, 'lock'), 'utf8')).since;
      expect(() => acquireLock(d, 'sync', '/my/mirror')).toThrow(
        `The mirror /my/mirror is busy with live notifications here, since ${since}. One thing at a time may write a mirror; try again once it is done.`,
      );
    } finally {
      lock.release();
    }
  });

  it('refuses a second writer while a live process holds it, naming the holder', () => {
    const d = dir();
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    try {
      const since = new Date().toISOString();
      writeFileSync(join(d, 'lock'), JSON.stringify({ pid: child.pid, host: hostname(), command: 'rsdesk sync', since }));
      let error: unknown;
      try {
        acquireLock(d, 'rsdesk audit', '/my/mirror');
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(MirrorLockedError);
      expect((error as Error).message).toContain(`/my/mirror is in use by rsdesk sync (process ${child.pid} on ${hostname()}, since ${since})`);
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

  it.runIf(process.platform === 'linux')('takes over a lock taken in an earlier boot of the computer, though its pid now runs another process', () => {
    const d = dir();
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    try {
      mkdirSync(join(d, '.resourcesync'));
      const lock = { pid: child.pid, host: hostname(), command: 'rsdesk sync', since: new Date().toISOString(), boot: 'an-earlier-boot' };
      writeFileSync(join(d, '.resourcesync', 'lock'), JSON.stringify(lock));
      // What `rsdesk runs` and the app go by: no one holds the mirror, its run left running reads as interrupted.
      expect(lockHolder(d)).toBeNull();
      const taken = acquireLock(join(d, '.resourcesync'), 'rsdesk sync');
      expect(taken.tookOver).toMatchObject({ pid: child.pid, boot: 'an-earlier-boot' });
      // The new lock says which boot, and when its process started.
      expect(JSON.parse(readFileSync(join(d, '.resourcesync', 'lock'), 'utf8'))).toMatchObject({ boot: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(), startTicks: expect.any(Number) });
      taken.release();
    } finally {
      child.kill();
    }
  });

  it.runIf(process.platform === 'linux')('takes over a lock whose pid now runs another process than the one that took it; not the lock of the one that did', async () => {
    const d = dir();
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    try {
      await new Promise((resolve) => child.on('spawn', resolve));
      const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
      const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
      const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
      // Its own lock, taken (by the clock) long ago: the clock is not what tells, it holds.
      writeFileSync(join(d, 'lock'), JSON.stringify({ pid: child.pid, host: hostname(), command: 'rsdesk sync', since: '2000-01-01T00:00:00Z', boot, startTicks: ticks }));
      expect(() => acquireLock(d, 'rsdesk audit')).toThrow(MirrorLockedError);
      writeFileSync(join(d, 'lock'), JSON.stringify({ pid: child.pid, host: hostname(), command: 'rsdesk sync', since: new Date().toISOString(), boot, startTicks: ticks - 1 }));
      const lock = acquireLock(d, 'rsdesk sync');
      expect(lock.tookOver).toMatchObject({ pid: child.pid, startTicks: ticks - 1 });
      lock.release();
    } finally {
      child.kill();
    }
  });

  it("takes over a lock naming this process's pid that this process does not hold (an earlier process had the pid), not one it holds", () => {
    const mirror = dir();
    const d = join(mirror, '.resourcesync');
    mkdirSync(d);
    writeFileSync(join(d, 'lock'), JSON.stringify({ pid: process.pid, host: hostname(), command: 'rsdesk sync', since: new Date().toISOString() }));
    const lock = acquireLock(d, 'rsdesk sync');
    expect(lock.tookOver?.pid).toBe(process.pid);
    // Held by this process now (the app: one run at a time per mirror), it is refused, named through a link too.
    expect(() => acquireLock(d, 'rsdesk audit')).toThrow(MirrorLockedError);
    const link = join(dir(), 'link');
    // (The mirror's folder may be a link; its state folder may not: within-folder.ts.)
    symlinkSync(mirror, link);
    expect(() => acquireLock(join(link, '.resourcesync'), 'rsdesk audit')).toThrow(MirrorLockedError);
    lock.release();
    acquireLock(d, 'rsdesk audit').release();
  });

  it('a takeover waits for one under way: of two processes that found the same stale lock, the second does not remove the lock the first took', async () => {
    const d = dir();
    const dead = Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
    writeFileSync(join(d, 'lock'), JSON.stringify({ pid: dead, host: hostname(), command: 'rsdesk sync', since: new Date().toISOString() }));
    // This process is the first: it is taking the stale lock over (its takeover file is there) when the second comes.
    writeFileSync(join(d, 'lock.takeover'), '');
    const script =
      `const { acquireLock } = await import(${JSON.stringify(MODULE)}); process.stdout.write('trying\\n');` +
      `try { acquireLock(${JSON.stringify(d)}, 'second'); process.stdout.write('locked\\n'); } catch (err) { process.stdout.write(err.name + '\\n'); }`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    await new Promise<void>((resolve) => child.stdout.on('data', () => out.includes('trying') && resolve()));
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The first removes the stale lock, takes its own, and ends its takeover.
    rmSync(join(d, 'lock'));
    const first = acquireLock(d, 'first');
    rmSync(join(d, 'lock.takeover'));
    await new Promise((resolve) => child.on('close', resolve));
    try {
      expect(out).toBe('trying\nMirrorLockedError\n');
      expect(JSON.parse(readFileSync(join(d, 'lock'), 'utf8'))).toMatchObject({ pid: process.pid, command: 'first' });
    } finally {
      first.release();
    }
    expect(readdirSync(d)).toEqual([]);
  });

  it('a takeover file left by a process killed in the middle of one is removed after a few seconds', () => {
    const d = dir();
    const dead = Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
    writeFileSync(join(d, 'lock'), JSON.stringify({ pid: dead, host: hostname(), command: 'rsdesk sync', since: new Date().toISOString() }));
    writeFileSync(join(d, 'lock.takeover'), '');
    const then = (Date.now() - 10_000) / 1000;
    utimesSync(join(d, 'lock.takeover'), then, then);
    const lock = acquireLock(d, 'rsdesk sync');
    expect(lock.tookOver?.pid).toBe(dead);
    lock.release();
    expect(readdirSync(d)).toEqual([]);
  });

  // Root writes through permissions: for root the folder is made read-only by a mount instead (read-only-folder.ts).
  it.skipIf(!canMakeReadOnly)('refuses a folder that cannot be written in plain words, a mirror yet or not', () => {
    const d = dir();
    const readOnly = makeReadOnly(d);
    try {
      expect(() => acquireLock(join(d, '.resourcesync'), 'rsdesk sync', d)).toThrow(`The mirror ${d} cannot be written (${readOnly.why}), and a sync or an audit records what it does in it.`);
    } finally {
      readOnly.restore();
    }
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
