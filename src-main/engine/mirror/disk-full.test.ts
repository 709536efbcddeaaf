// A full disk while the lock is written, and the wording of a full disk wherever it reaches a person. The disk is made
// "full" by a node:fs whose writeSync fails with ENOSPC on demand (a tmpfs of a few KiB would need root).
import { existsSync, mkdtempSync } from 'node:fs';
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

const { acquireLock } = await import('./lock.ts');
const { DiskFullError, isDiskFull } = await import('./disk-full.ts');
const { main } = await import('../../cli/rsdesk.ts');

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
});
