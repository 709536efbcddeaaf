// What the desktop shell shows of mirror runs outside the window: one progress value for the taskbar/dock icon
// (all running syncs together), and the system notification when a long run ends or fails while the window is in
// the background. Pure: main.ts feeds it the service's events and applies the result with Electron's APIs.
import type { MirrorProgress, MirrorRunEnd } from '../contract/types.ts';

export class RunStatus {
  readonly #runs = new Map<string, MirrorProgress>();

  progress(p: MirrorProgress): void {
    this.#runs.set(p.path, p);
  }

  ended(path: string): void {
    this.#runs.delete(path);
  }

  /**
   * For BrowserWindow.setProgressBar: -1 removes the bar, a value above 1 makes it indeterminate (while a list is
   * still being read, or an audit runs), else done / total of every running sync.
   */
  taskbarValue(): number {
    if (this.#runs.size === 0) return -1;
    let done = 0;
    let total = 0;
    for (const p of this.#runs.values()) {
      if (p.kind === 'audit' || !p.totalKnown || p.total === 0) return 2;
      done += p.done;
      total += p.total;
    }
    return Math.min(1, done / total);
  }
}

export interface Notice {
  title: string;
  body: string;
}

/**
 * The notification for a run that ended, or null: only for runs that took at least `minSeconds`, only while the
 * window is not in front (the run view says it already otherwise), and never for a pause or cancel the person asked for.
 */
export function noticeFor(end: MirrorRunEnd, options: { focused: boolean; minSeconds: number; name: string }): Notice | null {
  if (options.focused || end.seconds < options.minSeconds) return null;
  if (end.status === 'paused' || end.status === 'cancelled') return null;
  const what = end.kind === 'audit' ? 'Audit' : end.mode === 'incremental' ? 'Sync' : end.mode === 'baseline' ? 'Baseline' : 'Run';
  const outcome =
    end.status === 'completed' && !(end.kind === 'audit' && end.failed > 0)
      ? 'done'
      : end.status === 'error'
        ? 'could not run'
        : end.kind === 'audit'
          ? 'found differences'
          : 'ended with failures';
  return { title: `Mirror ${options.name}: ${what} ${outcome}`, body: end.message ?? '' };
}
