// What the mirror view says of the live side's hold on a mirror's checkpoint: notifications whose resources failed
// keep it back (engine live/checkpoint.ts) until each failure is mended. Read-only, from the folder's state.
import type { MirrorSummary } from '../contract/types.ts';
import { standingLiveHold } from '../engine/live/checkpoint.ts';
import type { FolderStatus } from '../engine/mirror/folder.ts';
import { isMirror } from '../engine/mirror/folder.ts';
import { MirrorState, stateDirOf } from '../engine/mirror/state.ts';

export function readLiveHold(path: string, folder: FolderStatus): MirrorSummary['liveHold'] {
  const at = folder.checkpoint?.at;
  if (at === undefined || !isMirror(path)) return null;
  let hold;
  const state = MirrorState.forReading(stateDirOf(path));
  try {
    hold = standingLiveHold(state);
  } catch {
    // A state this version cannot read the hold of: the rest of the mirror's summary still shows.
    return null;
  } finally {
    state.close();
  }
  if (hold === null || (hold.failed.length === 0 && !hold.overflow)) return null;
  const runIds = [...new Set(hold.failed.map((f) => f.runId))].sort((a, b) => a - b);
  const first = folder.runs.find((r) => r.id === runIds[0]);
  return { at, since: first?.startedAt ?? null, failures: hold.failed.length, runIds, overflow: hold.overflow };
}
