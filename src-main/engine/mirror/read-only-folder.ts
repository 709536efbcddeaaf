// For tests: a folder that cannot be written. Permissions stop everyone but root, who writes through them; for root
// the folder is bound onto itself read-only instead (Linux), so the tests of a folder that cannot be written run in
// CI, which runs as root, too. Where neither can be done (Windows; root without the right to mount) there is none.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ReadOnlyFolder {
  /** How the engine says why the folder cannot be written ("permission denied", "it is on a read-only file system"). */
  why: string;
  /** Makes the folder writable again. */
  restore(): void;
}

const root = process.getuid?.() === 0;

/** Whether this process can make a folder read-only at all (answered once, by trying on a folder of its own). */
export const canMakeReadOnly: boolean = (() => {
  if (process.platform === 'win32') return false;
  if (!root) return true;
  if (process.platform !== 'linux') return false;
  const probe = mkdtempSync(join(tmpdir(), 'rsdesk-ro-probe-'));
  try {
    const folder = bindReadOnly(probe);
    folder.restore();
    return true;
  } catch {
    return false;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
})();

/** Makes `dir` (and the `files` in it) read-only until `restore()`. */
export function makeReadOnly(dir: string, files: string[] = []): ReadOnlyFolder {
  if (root) return bindReadOnly(dir);
  for (const file of files) chmodSync(file, 0o444);
  chmodSync(dir, 0o555);
  return {
    why: 'permission denied',
    restore() {
      chmodSync(dir, 0o755);
      for (const file of files) chmodSync(file, 0o644);
    },
  };
}

function bindReadOnly(dir: string): ReadOnlyFolder {
  execFileSync('mount', ['--bind', dir, dir], { stdio: 'ignore' });
  try {
    execFileSync('mount', ['-o', 'remount,bind,ro', dir], { stdio: 'ignore' });
  } catch (err) {
    execFileSync('umount', [dir], { stdio: 'ignore' });
    throw err;
  }
  return {
    why: 'it is on a read-only file system',
    restore() {
      execFileSync('umount', [dir], { stdio: 'ignore' });
    },
  };
}
