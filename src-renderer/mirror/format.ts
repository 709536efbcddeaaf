// Plain words for mirror states, runs and numbers.
import type { MirrorRun, MirrorStatus, MirrorSummary } from '../../src-main/contract/types.ts';
import { clip } from '../../src-main/engine/clip.ts';
import { normalizeStartUrl } from '../../src-main/engine/discovery/start-url.ts';
import { formatBytes, formatCount } from '../lib/format.ts';
import { HTTP_REASONS } from '../../src-main/contract/http-reasons.ts';
import { scheduleText as scheduleWords } from '../../src-main/contract/schedule.ts';

export const STATUS_LABEL: Record<MirrorStatus, string> = {
  ready: 'Ready',
  running: 'Running',
  pausing: 'Pausing…',
  cancelling: 'Cancelling…',
  auditing: 'Auditing',
  paused: 'Paused',
  interrupted: 'Interrupted',
  missing: 'Folder missing',
  busy: 'In use elsewhere',
};

export const RUN_STATUS_LABEL: Record<MirrorRun['status'], string> = {
  running: 'running',
  completed: 'completed',
  failed: 'completed with failures',
  cancelled: 'cancelled',
  interrupted: 'interrupted',
};

export function runStatus(run: MirrorRun): string {
  // "Paused: the Source refused…" (the run paused itself) is paused too, its message shown beside.
  if (run.status === 'interrupted' && (run.message === 'Paused' || run.message?.startsWith('Paused: '))) return 'paused';
  if (run.kind === 'audit' && run.status === 'completed') return run.message ?? 'completed';
  // An audit that failed could not run at all: the differences it finds are no failures.
  if (run.kind === 'audit' && run.status === 'failed') return 'could not run';
  return RUN_STATUS_LABEL[run.status];
}

export function runKind(run: MirrorRun): string {
  return run.kind === 'audit' ? 'Audit' : run.mode === 'retry' ? 'Retry' : run.kind === 'baseline' ? 'Baseline' : 'Incremental';
}

/** "3 min 20 s", "45 s", "2 h 5 min". */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** A local, readable date and time for a run's start. */
export function formatWhen(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString('en-GB', { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

/**
 * A Source's own timestamp (a checkpoint): as the app's other dates, in local time, but to the second, since that
 * is the precision changes are ordered by; the exact value stays in the title.
 */
export function formatInstant(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString('en-GB', { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** Whether the mirror syncs by itself, how often, and when next (or why not now). */
export function scheduleText(m: Pick<MirrorSummary, 'options' | 'nextSync' | 'status'> & Partial<Pick<MirrorSummary, 'putOff' | 'sourceWait'>>): string {
  const every = m.options.syncEveryHours;
  if (every <= 0) return 'no: only when you click Sync now (Options sets a schedule)';
  const schedule = `${scheduleWords(every, m.options.syncAtMinute)}${m.putOff ? `; the sync of ${formatInstant(m.putOff.at)} was put off: ${m.putOff.because}` : ''}`;
  const asked = m.sourceWait ? ` (the Source asked not to be asked again before ${formatInstant(m.sourceWait)})` : '';
  if (m.nextSync !== null) return Date.parse(m.nextSync) <= Date.now() ? `${schedule}; due now, it starts within a minute` : `${schedule}; next at ${formatInstant(m.nextSync)}${asked}`;
  const why = m.status === 'paused' || m.status === 'interrupted' ? 'waits until the stopped run is resumed' : m.status === 'missing' ? 'waits: the folder is missing' : m.status === 'busy' ? 'waits: another program is using the folder' : m.status === 'ready' ? 'waits: this mirror cannot run now (said above)' : 'after the run going on';
  return `${schedule}; ${why}`;
}

/** The time a run ran: from its start to its end, less the time it stood paused between (recorded by the engine). */
export function runSeconds(run: MirrorRun): number | null {
  if (!run.endedAt) return null;
  return Math.max(0, (Date.parse(run.endedAt) - Date.parse(run.startedAt)) / 1000 - (run.pausedSeconds ?? 0));
}

/**
 * How long a run took, in words: "2 min 10 s", or "ran 2 min 10 s (stopped 5 min 0 s)" when it stood between: paused, or
 * killed and resumed later (the engine takes a killed run to have stopped when it last recorded work).
 * `ranSeconds` for a run going on (its end is not recorded yet).
 */
export function tookText(run: Pick<MirrorRun, 'pausedSeconds'>, ranSeconds: number | null): string | null {
  if (ranSeconds === null) return null;
  const paused = run.pausedSeconds ?? 0;
  return paused >= 1 ? `ran ${formatDuration(ranSeconds)} (stopped ${formatDuration(paused)})` : formatDuration(ranSeconds);
}

export function lastRunLine(run: MirrorRun | null): string {
  if (!run) return 'never synced';
  return `${runKind(run)} ${runStatus(run)} · ${formatWhen(run.endedAt ?? run.startedAt)}`;
}

export function countsLine(r: { created: number; updated: number; deleted: number; unchanged: number; failed: number; bytes: number }): string {
  return `${formatCount(r.created)} created, ${formatCount(r.updated)} updated, ${formatCount(r.deleted)} deleted, ${formatCount(r.unchanged)} unchanged, ${formatCount(r.failed)} failed · ${formatBytes(r.bytes)}`;
}

/**
 * What a mirror follows. One made from a single Resource List or Change List is bound to that list (its URL, as
 * given, is the list's; the engine then reads that list alone, not what its Capability List names), so that list is
 * what it mirrors; otherwise it follows its Capability List.
 */
export function mirroredList(m: Pick<MirrorSummary, 'url' | 'capabilityListUrl' | 'resourceListUrl' | 'changeListUrl'>): {
  url: string | null;
  kind: 'Resource List' | 'Change List' | null;
} {
  let given: string | null = null;
  try {
    given = m.url === null ? null : normalizeStartUrl(m.url);
  } catch {
    given = null;
  }
  if (given !== null && given === m.changeListUrl) return { url: m.changeListUrl, kind: 'Change List' };
  if (given !== null && given === m.resourceListUrl) return { url: m.resourceListUrl, kind: 'Resource List' };
  return { url: m.capabilityListUrl ?? m.resourceListUrl ?? m.changeListUrl ?? m.url, kind: null };
}

/**
 * Why a resource failed, shown beside its URI: the engine's "HTTP 404 for URI" names the URI the row already shows
 * (it names it so that the reason stands alone in `rsdesk runs`), and "its copy at X: HTTP 404 for X" names the copy
 * twice; the repeats are left out, any other URL (a redirect's target) stays. A status gets its standard words
 * ("HTTP 404 Not Found").
 */
export function failureReason(uri: string, reason: string): string {
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  let text = reason.replace(/(its copy at (\S+): HTTP \d{3}) for (\S+?)(?=;|$)/g, (whole, kept: string, copy: string, named: string) => (named === copy ? kept : whole));
  if (uri !== '') {
    for (const named of new Set([uri, clip(uri)])) text = text.replace(new RegExp(`( HTTP \\d{3}|^HTTP \\d{3}) for ${escape(named)}(?=;|$)`, 'g'), '$1');
  }
  return text.replace(/\bHTTP (\d{3})(?=$|;| for )/g, (whole, code: string) => (HTTP_REASONS[code] ? `${whole} ${HTTP_REASONS[code]}` : whole));
}
