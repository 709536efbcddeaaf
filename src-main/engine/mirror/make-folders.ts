// A folder made with its parents, one level at a time. Node's `mkdirSync(path, { recursive: true })` spins for ever
// (Node 22, libuv) under a pseudo-file system that answers ENOENT for a new folder whose parent is there, as /proc does:
// `rsdesk sync URL --dest /proc/x` hung at full CPU, saying nothing. Made level by level, the first refusal is the
// error, with the path it was for.
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/** Makes `path` and the folders above it that are missing; throws mkdir's own error for the first it cannot make. */
export function makeFolders(path: string): void {
  const missing: string[] = [];
  for (let dir = path; !existsSync(dir); dir = dirname(dir)) {
    missing.push(dir);
    if (dirname(dir) === dir) break;
  }
  for (const dir of missing.reverse()) {
    try {
      mkdirSync(dir);
    } catch (err) {
      // Made meanwhile (another run, the person): what was wanted is there.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}
