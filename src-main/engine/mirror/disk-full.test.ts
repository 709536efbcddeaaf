// A full disk while the lock is written, and the wording of a full disk wherever it reaches a person. The disk is made
// "full" by a node:fs whose writeSync fails with ENOSPC on demand (a tmpfs of a few KiB would need root).
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

const full = vi.hoisted(() => ({ on: false }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const writeSync = ((...args: Parameters<typeof fs.writeSync>) => {
    if (full.on) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' });
    return (fs.writeSync as (...a: unknown[]) => number)(...args);
  }) as typeof fs.writeSync;
  return { ...fs, default: { ...fs, writeSync }, writeSync };
});
// The bodies of large downloads are written through writeAll: on a full disk it fails as the disk does.
vi.mock('./write-all.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('./write-all.ts')>();
  return {
    writeAll: (...args: Parameters<typeof real.writeAll>) =>
      full.on ? Promise.reject(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' })) : real.writeAll(...args),
  };
});

const { acquireLock } = await import('./lock.ts');
const { DiskFullError, isDiskFull } = await import('./disk-full.ts');
const { main } = await import('../../cli/rsdesk.ts');
const { sync: runSync, SyncError } = await import('./sync.ts');
const { MirrorState, stateDirOf } = await import('./state.ts');

afterEach(() => {
  full.on = false;
  vi.restoreAllMocks();
});

describe('a full disk', () => {
  it('when the lock cannot be written: no lock file is left behind, the error says so plainly, the next run locks', () => {
    const d = mkdtempSync(join(tmpdir(), 'mirror-lock-full-'));
    full.on = true;
    let error: unknown;
    try {
      acquireLock(d, 'rsdesk sync', '/my/mirror');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(DiskFullError);
    expect((error as Error).message).toBe('The disk holding /my/mirror is full; nothing was changed. Free some space and try again.');
    expect(existsSync(join(d, 'lock'))).toBe(false);
    full.on = false;
    acquireLock(d, 'rsdesk sync', '/my/mirror').release();
  });

  it("recognises SQLite's and Node's wording", () => {
    expect(isDiskFull(Object.assign(new Error('database or disk is full'), { code: 'ERR_SQLITE_ERROR', errcode: 13, errstr: 'database or disk is full' }))).toBe(true);
    expect(isDiskFull(new Error('ENOSPC: no space left on device, write'))).toBe(true);
    expect(isDiskFull(new Error('Connection refused by 127.0.0.1:80'))).toBe(false);
    expect(isDiskFull(new Error('HTTP 404 for http://127.0.0.1:80/enospc/edquot.txt'))).toBe(false);
  });

  it("rsdesk words SQLite's \"database or disk is full\" as the folder whose disk is full", async () => {
    const sync = await import('../mirror/sync.ts');
    vi.spyOn(sync, 'sync').mockRejectedValue(new sync.SyncError('database or disk is full'));
    const err: string[] = [];
    const code = await main(['sync', 'http://127.0.0.1:9/cap.xml', '--dest', '/my/mirror'], { out: () => undefined, err: (t: string) => err.push(t) } as never);
    expect(code).toBe(1);
    expect(err.join('')).toBe('rsdesk: The disk holding /my/mirror is full, so the run stopped before it finished. Free some space and run it again.\n');
  });

  it('mid-download stops the sync at once, in plain words, instead of failing every resource after it on the disk', async () => {
    // Ten resources of 2 MiB (written through writeAll as they arrive), one at a time.
    const requested: string[] = [];
    const body = Buffer.alloc(2 * 1024 * 1024, 97);
    const server = createServer((req, res) => {
      requested.push(req.url!);
      if (req.url === '/rl.xml') {
        const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        const urls = Array.from({ length: 10 }, (_, i) => `<url><loc>${base}/r${i}</loc><rs:md length="${body.length}"/></url>`).join('');
        res.end(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"><rs:md capability="resourcelist" at="2020-01-01T00:00:00Z"/>${urls}</urlset>`);
      } else res.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const dest = mkdtempSync(join(tmpdir(), 'mirror-fetch-full-'));
    try {
      const error = await runSync({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/rl.xml`,
        dest,
        concurrency: 1,
        // The free space looked at a few times a second says there is plenty: the disk fills between two looks.
        diskSpace: { probe: async () => ({ free: 1024 ** 4 }), everyMs: 60_000 },
        onProgress: (p) => {
          if (p.settled >= 2) full.on = true;
        },
      }).catch((err: unknown) => err);
      full.on = false;
      expect(error).toBeInstanceOf(SyncError);
      const message = `The disk holding ${dest} is full, so the run stopped before it finished. What was verified stays. Free some space and run it again.`;
      expect((error as Error).message).toBe(message);
      // Not the ten: those in flight and queued only, each fetched again by the next run.
      expect(requested.filter((r) => r !== '/rl.xml').length).toBeLessThanOrEqual(6);
      const state = new MirrorState(stateDirOf(dest));
      const [run] = state.runs();
      const failures = state.failures(run!.id);
      state.close();
      expect(run).toMatchObject({ status: 'failed', message });
      // The one whose last bytes were being written when the disk filled, at most, said plainly.
      expect(failures.length).toBeLessThanOrEqual(1);
      for (const f of failures) expect(f.reason).toBe('could not be written: the disk is full');
      // No part of a download is left taking room.
      const temp = join(stateDirOf(dest), 'tmp');
      expect(existsSync(temp) ? readdirSync(temp) : []).toEqual([]);
    } finally {
      full.on = false;
      server.close();
    }
  });

  it('is never what a Source says: a failure whose reason holds "no space left on device" fails that resource alone', async () => {
    const server = createServer((req, res) => {
      if (req.url === '/rl.xml') {
        const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        const urls = ['r0', 'r1'].map((r) => `<url><loc>${base}/${r}</loc><rs:md hash="md5:5d41402abc4b2a76b9719d911017c592"/></url>`).join('');
        res.end(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"><rs:md capability="resourcelist" at="2020-01-01T00:00:00Z"/>${urls}</urlset>`);
      } else if (req.url === '/r0') {
        // Named in the reason of its fixity mismatch.
        res.writeHead(200, { 'content-encoding': 'ENOSPC: no space left on device, write' }).end('not hello');
      } else res.end('hello');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const dest = mkdtempSync(join(tmpdir(), 'mirror-not-full-'));
    try {
      const result = await runSync({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/rl.xml`, dest, concurrency: 1 });
      expect(result).toMatchObject({ created: 1, failed: 1 });
      expect(result.failures[0]!.reason).toMatch(/^fixity mismatch: .*Content-Encoding: enospc: no space left on device, write/);
    } finally {
      server.close();
    }
  });
});
