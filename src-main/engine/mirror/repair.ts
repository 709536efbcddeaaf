// Fetching again the local copies an audit found damaged, in an incremental sync (a baseline fetches them anyway).
import { clip } from '../clip.ts';
import type { Entry } from '../documents/model.ts';
import type { Applier } from './apply.ts';
import type { MirrorState } from './state.ts';
import { WorkSlots } from './work-slots.ts';

/** Damaged rows read from the state at a time: an audit may mark millions (a disk that lost its contents). */
export const DAMAGED_PAGE = 1000;

/**
 * Fetches again the resources whose local copies an audit found damaged (state.markDamaged), expecting what was
 * verified when they were mirrored: a Source that changed one since without saying so is a fixity failure, reported,
 * and the damaged copy stays marked. `pageSize` (tests set a few) bounds the rows held at once.
 */
export async function repairDamaged(state: MirrorState, applier: Applier, concurrency: number, onNote?: (note: string) => void, pageSize = DAMAGED_PAGE): Promise<void> {
  const count = state.damagedCount();
  if (count === 0) return;
  onNote?.(`${count} local file${count === 1 ? '' : 's'} that an audit found damaged ${count === 1 ? 'is' : 'are'} fetched again.`);
  const slots = new WorkSlots(Math.max(1, concurrency));
  const page = Math.max(1, Math.min(pageSize, DAMAGED_PAGE));
  let i = 0;
  // By URI, past the last one read: a repair in flight changes its row's status, which moves no page's start.
  for (let after: string | null = null; ; ) {
    const rows = state.damagedAfter(after, page);
    if (rows.length === 0) break;
    after = rows.at(-1)!.uri;
    for (const row of rows) {
      const hash = Object.entries(row.digests).map(([algorithm, digest]) => `${algorithm}:${digest}`).join(' ');
      const md = { ...(hash ? { hash } : {}), ...(row.length !== null ? { length: String(row.length) } : {}), ...(row.type ? { type: row.type } : {}) };
      const entry: Entry = { index: i++, loc: row.uri, lastmod: row.lastmod ?? undefined, md, links: [], line: 0 };
      const full = slots.add(applier.repair(entry, (reason) => onNote?.(`${clip(row.uri)}: its local copy is damaged, and the Source no longer has it (${clip(reason, 200)}); it stays as it is, marked damaged.`)));
      if (full) await full;
    }
  }
  await slots.all();
}
