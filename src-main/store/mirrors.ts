// The mirrors the app remembers: only each folder's path and the options the app runs it with. Everything else
// (binding, inventory, runs, checkpoint) lives in the folder's own `.resourcesync/state.sqlite`.
import type { DatabaseSync } from 'node:sqlite';
import { MINUTES_PER_DAY } from '../contract/schedule.ts';
import type { MirrorOptions } from '../contract/types.ts';

export const DEFAULT_MIRROR_OPTIONS: MirrorOptions = { deletePolicy: 'keep', concurrency: 8, delaySeconds: 0, syncEveryHours: 0, syncAtMinute: null };

export interface RememberedMirror {
  path: string;
  options: MirrorOptions;
  addedAt: string;
}

interface Row {
  path: string;
  options: string;
  added_at: string;
}

/** Kept options over the defaults, value by value: a damaged or older row still opens. */
function toOptions(text: string): MirrorOptions {
  let kept: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null) kept = parsed as Record<string, unknown>;
  } catch {
    // defaults
  }
  const o = { ...DEFAULT_MIRROR_OPTIONS };
  if (kept.deletePolicy === 'keep' || kept.deletePolicy === 'delete' || kept.deletePolicy === 'quarantine') o.deletePolicy = kept.deletePolicy;
  if (typeof kept.concurrency === 'number' && Number.isInteger(kept.concurrency) && kept.concurrency >= 1) o.concurrency = kept.concurrency;
  if (typeof kept.delaySeconds === 'number' && kept.delaySeconds >= 0) o.delaySeconds = kept.delaySeconds;
  if (typeof kept.syncEveryHours === 'number' && Number.isInteger(kept.syncEveryHours) && kept.syncEveryHours >= 0) o.syncEveryHours = kept.syncEveryHours;
  if (typeof kept.syncAtMinute === 'number' && Number.isInteger(kept.syncAtMinute) && kept.syncAtMinute >= 0 && kept.syncAtMinute < MINUTES_PER_DAY) o.syncAtMinute = kept.syncAtMinute;
  return o;
}

export class MirrorsTable {
  #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /** Oldest first. */
  list(): RememberedMirror[] {
    const rows = this.#db.prepare('SELECT * FROM mirrors ORDER BY added_at, path').all() as unknown as Row[];
    return rows.map((r) => ({ path: r.path, options: toOptions(r.options), addedAt: r.added_at }));
  }

  get(path: string): RememberedMirror | null {
    const r = this.#db.prepare('SELECT * FROM mirrors WHERE path = ?').get(path) as unknown as Row | undefined;
    return r ? { path: r.path, options: toOptions(r.options), addedAt: r.added_at } : null;
  }

  /** Remembers a mirror, or updates its options when it is remembered already. */
  put(path: string, options: MirrorOptions): RememberedMirror {
    this.#db
      .prepare('INSERT INTO mirrors (path, options, added_at) VALUES (?, ?, ?) ON CONFLICT (path) DO UPDATE SET options = excluded.options')
      .run(path, JSON.stringify(options), new Date().toISOString());
    return this.get(path)!;
  }

  /** Forgets it (its folder is left alone). */
  remove(path: string): boolean {
    return Number(this.#db.prepare('DELETE FROM mirrors WHERE path = ?').run(path).changes) > 0;
  }
}
