// Which packages of a dump a run has applied completely, kept in the mirror's state (the `meta` table) so a killed
// run, when resumed, does not download them again. Written only after every outcome of the package is committed.
import type { MirrorState } from './state.ts';

const KEY = 'dump-progress';

interface Progress {
  runId: number;
  dumpUrl: string;
  done: string[];
  /** A Change Dump's: the time of the earliest change that failed in a package done, which the checkpoint may not pass. */
  heldAtMs?: number;
  /**
   * A Change Dump's package under way: the manifest positions (`Entry.index`, as ranges [first, last]) of its changes
   * whose outcomes are committed, which a resumed run does not apply again (an older version over a newer one, a
   * deletion's resource made again then deleted again, everything counted twice).
   */
  partial?: { packageUrl: string; ranges: [number, number][] };
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

/** Where the checkpoint of a resumed Change Dump run is held by failures in packages it finished; null if nowhere. */
export function heldAt(state: MirrorState, runId: number, dumpUrl: string): number | null {
  const p = read(state);
  return p !== null && p.runId === runId && p.dumpUrl === dumpUrl && typeof p.heldAtMs === 'number' ? p.heldAtMs : null;
}

/** Records one more package applied by `runId` (its outcomes committed), and where its failures hold the checkpoint. */
export function markPackageDone(state: MirrorState, runId: number, dumpUrl: string, packageUrl: string, heldAtMs?: number): void {
  const p = read(state);
  const same = p !== null && p.runId === runId && p.dumpUrl === dumpUrl;
  const done = same ? p.done : [];
  if (!done.includes(packageUrl)) done.push(packageUrl);
  const held = [same ? p.heldAtMs : undefined, heldAtMs].filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  const value = JSON.stringify({ runId, dumpUrl, done, ...(held.length > 0 ? { heldAtMs: Math.min(...held) } : {}) } satisfies Progress);
  state.db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(KEY, value);
}

/** The manifest positions of `packageUrl`'s changes that run `runId` applied and committed before it was interrupted. */
export function appliedInPackage(state: MirrorState, runId: number, dumpUrl: string, packageUrl: string): (index: number) => boolean {
  const p = read(state);
  const ranges = p !== null && p.runId === runId && p.dumpUrl === dumpUrl && p.partial?.packageUrl === packageUrl && Array.isArray(p.partial.ranges) ? p.partial.ranges : [];
  return (index) => ranges.some(([first, last]) => index >= first && index <= last);
}

/**
 * Records more changes of `packageUrl` applied (their outcomes committed): `indexes` in the order they were applied;
 * `heldAtMs`, where a failure among them holds the checkpoint.
 */
export function markAppliedInPackage(state: MirrorState, runId: number, dumpUrl: string, packageUrl: string, indexes: number[], heldAtMs?: number): void {
  const p = read(state);
  const same = p !== null && p.runId === runId && p.dumpUrl === dumpUrl;
  const ranges: [number, number][] = same && p.partial?.packageUrl === packageUrl ? p.partial.ranges : [];
  for (const i of indexes) {
    const last = ranges.at(-1);
    if (last !== undefined && i === last[1] + 1) last[1] = i;
    else ranges.push([i, i]);
  }
  const held = [same ? p.heldAtMs : undefined, heldAtMs].filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  const value = JSON.stringify({
    runId,
    dumpUrl,
    done: same ? p.done : [],
    ...(held.length > 0 ? { heldAtMs: Math.min(...held) } : {}),
    partial: { packageUrl, ranges },
  } satisfies Progress);
  state.db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(KEY, value);
}

export function clearDumpProgress(state: MirrorState): void {
  state.db.prepare('DELETE FROM meta WHERE key = ?').run(KEY);
}
