// Which packages of a dump a run has applied completely, kept in the mirror's state (the `meta` table) so a killed
// run, when resumed, does not download them again. Written only after every outcome of the package is committed.
import type { MirrorState } from './state.ts';

const KEY = 'dump-progress';

interface Progress {
  runId: number;
  dumpUrl: string;
  done: string[];
}

function read(state: MirrorState): Progress | null {
  const row = state.db.prepare('SELECT value FROM meta WHERE key = ?').get(KEY) as { value: string } | undefined;
  if (row === undefined) return null;
  try {
    const p = JSON.parse(row.value) as Progress;
    return Array.isArray(p.done) ? p : null;
  } catch {
    return null;
  }
}

/** Package URLs of `dumpUrl` that run `runId` has applied completely. */
export function donePackages(state: MirrorState, runId: number, dumpUrl: string): Set<string> {
  const p = read(state);
  return p !== null && p.runId === runId && p.dumpUrl === dumpUrl ? new Set(p.done) : new Set();
}

/** Records one more package applied completely by `runId`. */
export function markPackageDone(state: MirrorState, runId: number, dumpUrl: string, packageUrl: string): void {
  const p = read(state);
  const done = p !== null && p.runId === runId && p.dumpUrl === dumpUrl ? p.done : [];
  if (!done.includes(packageUrl)) done.push(packageUrl);
  const value = JSON.stringify({ runId, dumpUrl, done } satisfies Progress);
  state.db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(KEY, value);
}

export function clearDumpProgress(state: MirrorState): void {
  state.db.prepare('DELETE FROM meta WHERE key = ?').run(KEY);
}
