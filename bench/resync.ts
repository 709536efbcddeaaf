// The Python reference client, resync, reading the same Resource List: the side-by-side the project is judged
// against. Optional: set RESYNC_SRC to a folder holding resync's `resync` package (a checkout of
// github.com/resync/resync) and RESYNC_PYTHON to a Python with python-dateutil and defusedxml
// (Debian: python3-dateutil python3-defusedxml). Nothing of resync is part of this repository.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface ResyncMeasure {
  entries: number;
  seconds: number;
  rssGrowthMb: number;
  peakRssMb: number;
}

export function runResyncReference(listPath: string): ResyncMeasure | { unavailable: string } {
  const src = process.env.RESYNC_SRC;
  if (!src) return { unavailable: 'set RESYNC_SRC (a resync checkout) and RESYNC_PYTHON to compare with the Python reference client' };
  if (!existsSync(join(src, 'resync', 'resource_list.py'))) return { unavailable: `${src} holds no resync/resource_list.py` };
  const python = process.env.RESYNC_PYTHON ?? 'python3';
  try {
    const out = execFileSync(python, [resolve(import.meta.dirname, 'resync_read.py'), src, listPath], {
      encoding: 'utf8',
      timeout: 600_000,
    });
    const [entries, seconds, rssGrowthMb, peakRssMb] = out.trim().split(/\s+/).map(Number);
    return { entries: entries!, seconds: seconds!, rssGrowthMb: rssGrowthMb!, peakRssMb: peakRssMb! };
  } catch (error) {
    return { unavailable: `resync failed: ${(error as Error).message.split('\n')[0]}` };
  }
}
