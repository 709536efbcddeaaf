// The Python reference client resync (github.com/resync/resync; not part of this repository) mirroring the same
// loopback Source: `resync-sync --baseline URL DIR`. Optional: RESYNC_SRC names a checkout of resync; RESYNC_PYTHON
// a Python 3 with python-dateutil, defusedxml and requests (default /usr/bin/python3, Debian's, which has them
// as python3-dateutil python3-defusedxml python3-requests). resync's scripts start with `#!/usr/bin/env python`, so
// a folder with a `python` link to that interpreter goes first on PATH.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { settleDisk } from './settle.ts';
import { BENCH_DIR } from './data.ts';
import { setAside } from './removal.ts';

export interface ResyncRun {
  seconds: number;
  /** Python start-up and resync's imports, measured alone and not counted in `seconds`. */
  startupSeconds: number;
  /** user + system CPU of the whole process (start-up included), when /usr/bin/time is there. */
  cpuSeconds: number;
  files: number;
  peakRssMb: number;
}

export function resyncUnavailable(): string | null {
  const src = process.env.RESYNC_SRC;
  if (!src) return 'RESYNC_SRC is not set (a checkout of github.com/resync/resync)';
  if (!existsSync(join(src, 'resync-sync')) || !existsSync(join(src, 'resync', 'client.py'))) return `RESYNC_SRC holds no resync-sync script`;
  const python = pythonPath();
  if (!existsSync(python)) return `${python} not found (set RESYNC_PYTHON)`;
  const probe = spawnSync(python, ['-c', 'import dateutil, defusedxml, requests'], { encoding: 'utf8' });
  if (probe.status !== 0) return `${python} lacks python-dateutil, defusedxml or requests`;
  return null;
}

function pythonPath(): string {
  return process.env.RESYNC_PYTHON ?? '/usr/bin/python3';
}

function countFiles(dir: string): number {
  let n = 0;
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    if (d.isDirectory()) n += countFiles(join(dir, d.name));
    else if (d.isFile()) n++;
  }
  return n;
}

/** Mirrors `baseUrl` (ending in `/`, where resourcelist.xml is) into a fresh folder, timed; the folder is removed. */
export function runResyncBaseline(baseUrl: string): ResyncRun {
  const src = process.env.RESYNC_SRC!;
  // Beside our mirrors (same file system, same treatment of removed folders: removal.ts).
  mkdirSync(join(BENCH_DIR, 'run'), { recursive: true });
  const work = mkdtempSync(join(BENCH_DIR, 'run', 'resync-'));
  try {
    const bin = join(work, 'bin');
    mkdirSync(bin);
    symlinkSync(pythonPath(), join(bin, 'python'));
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, PYTHONPATH: src };
    const startup = spawnSync('python', ['-c', 'import resync.client'], { env, cwd: work });
    const s0 = performance.now();
    spawnSync('python', ['-c', 'import resync.client'], { env, cwd: work });
    const startupSeconds = startup.status === 0 ? (performance.now() - s0) / 1000 : 0;
    const dest = join(work, 'mirror');
    settleDisk();
    const t0 = performance.now();
    // Through /usr/bin/time for the peak RSS when it is there; resync writes .resync-client-status.cfg into its cwd.
    const useTime = existsSync('/usr/bin/time');
    const argv = [join(src, 'resync-sync'), '--baseline', baseUrl, dest];
    const child = useTime
      ? spawnSync('/usr/bin/time', ['-f', 'maxrss=%M cpu=%U+%S', 'python', ...argv], { env, cwd: work, encoding: 'utf8', timeout: 900_000 })
      : spawnSync('python', argv, { env, cwd: work, encoding: 'utf8', timeout: 900_000 });
    const seconds = (performance.now() - t0) / 1000 - startupSeconds;
    if (child.status !== 0) throw new Error(`resync-sync failed (exit ${child.status}): ${child.stderr.split('\n').slice(-5).join(' ')}`);
    const rss = /maxrss=(\d+)/.exec(child.stderr ?? '');
    const cpu = /cpu=([\d.]+)\+([\d.]+)/.exec(child.stderr ?? '');
    return { seconds, startupSeconds, cpuSeconds: cpu ? Number(cpu[1]) + Number(cpu[2]) : NaN, files: existsSync(dest) && statSync(dest).isDirectory() ? countFiles(dest) : 0, peakRssMb: rss ? Number(rss[1]) / 1024 : NaN };
  } finally {
    setAside(work);
  }
}
