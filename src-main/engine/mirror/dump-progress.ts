// Which packages of a dump a run has applied completely, kept in the mirror's state (the `meta` table) so a killed
// run, when resumed, does not download them again. Written only after every outcome of the package is committed.
//
// One row per package done (`dump-progress:done:<url>`) beside one row naming the run and the dump: a single row
// holding the whole list, rewritten for each package, cost a Dump of 10,000 packages 33 s of bookkeeping, growing
// with the square of their number.
import type { MirrorState } from './state.ts';

const KEY = 'dump-progress';
const DONE = 'dump-progress:done:';
/** Just past every key that starts with DONE (':' + 1), for a range over the primary key. */
const DONE_END = 'dump-progress:done;';

interface Progress {
  runId: number;
  dumpUrl: string;
  /** Packages done, as earlier versions kept them (in this row); read still, so that their runs resume. */
  done?: string[];
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
    return typeof p.runId === 'number' && typeof p.dumpUrl === 'string' ? p : null;
  } catch {
    return null;
  }
}

const ofRun = (p: Progress | null, runId: number, dumpUrl: string): p is Progress => p !== null && p.runId === runId && p.dumpUrl === dumpUrl;

/** Package URLs of `dumpUrl` that run `runId` has applied completely. */
export function donePackages(state: MirrorState, runId: number, dumpUrl: string): Set<string> {
  const p = read(state);
  if (!ofRun(p, runId, dumpUrl)) return new Set();
  const done = new Set(Array.isArray(p.done) ? p.done : []);
  const rows = state.db.prepare('SELECT key FROM meta WHERE key >= ? AND key < ?').all(DONE, DONE_END) as { key: string }[];
  for (const { key } of rows) done.add(key.slice(DONE.length));
  return done;
}

/** Where the checkpoint of a resumed Change Dump run is held by failures in packages it finished; null if nowhere. */
export function heldAt(state: MirrorState, runId: number, dumpUrl: string): number | null {
  const p = read(state);
  return ofRun(p, runId, dumpUrl) && typeof p.heldAtMs === 'number' ? p.heldAtMs : null;
}

/**
 * Writes the row naming the run and the dump (with `partial`, a package under way), and `donePackage` as done: a
 * run's first write clears what another run or dump left. One savepoint, so a package is never half recorded.
 */
function write(state: MirrorState, runId: number, dumpUrl: string, heldAtMs: number | undefined, partial: Progress['partial'], donePackage?: string): void {
  const p = read(state);
  const same = ofRun(p, runId, dumpUrl);
  const held = [same ? p.heldAtMs : undefined, heldAtMs].filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  const value = JSON.stringify({
    runId,
    dumpUrl,
    ...(same && Array.isArray(p.done) ? { done: p.done } : {}),
    ...(held.length > 0 ? { heldAtMs: Math.min(...held) } : {}),
    ...(partial !== undefined ? { partial } : {}),
  } satisfies Progress);
  state.db.exec('SAVEPOINT dump_progress');
  try {
    // Another run's or another dump's packages are not this one's.
    if (!same) state.db.prepare('DELETE FROM meta WHERE key >= ? AND key < ?').run(DONE, DONE_END);
    const upsert = state.db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
    upsert.run(KEY, value);
    if (donePackage !== undefined) upsert.run(DONE + donePackage, '');
    state.db.exec('RELEASE dump_progress');
  } catch (err) {
    state.db.exec('ROLLBACK TO dump_progress');
    state.db.exec('RELEASE dump_progress');
    throw err;
  }
}

/** Records one more package applied by `runId` (its outcomes committed), and where its failures hold the checkpoint. */
export function markPackageDone(state: MirrorState, runId: number, dumpUrl: string, packageUrl: string, heldAtMs?: number): void {
  write(state, runId, dumpUrl, heldAtMs, undefined, packageUrl);
}

/** The manifest positions of `packageUrl`'s changes that run `runId` applied and committed before it was interrupted. */
export function appliedInPackage(state: MirrorState, runId: number, dumpUrl: string, packageUrl: string): (index: number) => boolean {
  const p = read(state);
  const ranges = ofRun(p, runId, dumpUrl) && p.partial?.packageUrl === packageUrl && Array.isArray(p.partial.ranges) ? p.partial.ranges : [];
  return (index) => ranges.some(([first, last]) => index >= first && index <= last);
}

/**
 * Records more changes of `packageUrl` applied (their outcomes committed): `indexes` in the order they were applied;
 * `heldAtMs`, where a failure among them holds the checkpoint.
 */
export function markAppliedInPackage(state: MirrorState, runId: number, dumpUrl: string, packageUrl: string, indexes: number[], heldAtMs?: number): void {
  const p = read(state);
  const ranges: [number, number][] = ofRun(p, runId, dumpUrl) && p.partial?.packageUrl === packageUrl ? p.partial.ranges : [];
  for (const i of indexes) {
    const last = ranges.at(-1);
    if (last !== undefined && i === last[1] + 1) last[1] = i;
    else ranges.push([i, i]);
  }
  write(state, runId, dumpUrl, heldAtMs, { packageUrl, ranges });
}

export function clearDumpProgress(state: MirrorState): void {
  state.db.prepare('DELETE FROM meta WHERE key = ? OR (key >= ? AND key < ?)').run(KEY, DONE, DONE_END);
}
