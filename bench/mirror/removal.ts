// Folders the measures wrote are moved aside, not deleted, until the bench ends.
//
// Why: this machine's ext4 runs without a journal, and there the kernel does not reuse an inode for 60 s after it
// was freed (300 s while its inode-table block is still dirty): every file created meanwhile in that block group
// first skips past each recently freed inode (`recently_deleted()` in ext4's inode allocator). Deleting a mirror of
// 10,000 files right before a measure made creating the next 10,000 files cost 2.5–5.7 s of kernel time instead of
// 0.2 s (seen with perf), charged to whichever program ran next — ours or resync — so runs of the same code differed
// threefold. Moving a folder (a rename) frees no inode. The next bench waits out the window of the last removal.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { BENCH_DIR } from './data.ts';

const TRASH = join(BENCH_DIR, 'trash');
const STAMP = join(BENCH_DIR, 'last-removal');
/** ext4's window (60 s) and a margin. */
const WINDOW_MS = 65_000;
let n = 0;

/** Moves `dir` out of the way, to be deleted by `removeSetAside` once the measures are done. */
export function setAside(dir: string): void {
  if (!existsSync(dir)) return;
  mkdirSync(TRASH, { recursive: true });
  renameSync(dir, join(TRASH, `${process.pid}-${++n}-${basename(dir)}`));
}

/** Deletes what was set aside (now and by an earlier bench that did not finish), remembering when. */
export function removeSetAside(): void {
  if (!existsSync(TRASH)) return;
  rmSync(TRASH, { recursive: true, force: true });
  spawnSync('sync', { stdio: 'ignore' });
  writeFileSync(STAMP, String(Date.now()));
}

/** Before the first measure: waits until the last bench's removals can no longer slow file creation. */
export async function waitOutRemovals(): Promise<void> {
  removeSetAside();
  let last = 0;
  try {
    last = Number(readFileSync(STAMP, 'utf8'));
  } catch {
    return;
  }
  const wait = last + WINDOW_MS - Date.now();
  if (!(wait > 0)) return;
  console.log(`(waiting ${Math.ceil(wait / 1000)} s: files deleted by the last bench slow file creation on this file system for 60 s after)`);
  await new Promise((resolve) => setTimeout(resolve, wait));
}
