// The engine's side of mirrors: the list (kept current by `mirrors.changed`), one mirror's detail and history, the
// live progress of its run (from `mirror.progress` events, kept in the query cache), failures, audits, and actions.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import type { AuditView, MirrorProgress, MirrorRunEnd, MirrorSummary } from '../../src-main/contract/types.ts';
import type { CommandArgs } from '../../src-main/contract/commands.ts';
import { getBridge } from '../bridge/index.ts';
import { useBridgeEvent } from '../data/queries.ts';
import { putFromEvent, readAgain } from '../data/fresh.ts';
import { readRefusedAgain } from '../signin/queries.ts';

export const mirrorKeys = {
  list: ['mirrors'] as const,
  detail: (path: string) => ['mirror', path] as const,
  progress: (path: string) => ['mirror-progress', path] as const,
  ended: (path: string) => ['mirror-ended', path] as const,
  failures: (path: string, runId: number) => ['mirror-failures', path, runId] as const,
  audit: (path: string) => ['mirror-audit', path] as const,
};

export function useMirrors() {
  return useQuery({ queryKey: mirrorKeys.list, queryFn: () => getBridge().invoke('mirrors.list', {}) });
}

/** Once, at the top of the app: every mirror event lands in the cache, whichever view is open. */
export function useMirrorEvents(): void {
  const client = useQueryClient();
  useBridgeEvent('mirrors.changed', ({ mirrors }) => {
    putFromEvent(client, mirrorKeys.list, mirrors);
    readAgain(client, ['mirror']);
  });
  useBridgeEvent('mirror.progress', (progress) => client.setQueryData(mirrorKeys.progress(progress.path), progress));
  useBridgeEvent('mirror.ended', (end) => {
    client.setQueryData(mirrorKeys.ended(end.path), end);
    client.setQueryData(mirrorKeys.progress(end.path), null);
    readAgain(client, ['mirror-failures', end.path]);
  });
  useBridgeEvent('audit.ended', (end) => {
    client.setQueryData(mirrorKeys.progress(end.path), null);
    if (end.audit) client.setQueryData(mirrorKeys.audit(end.path), end.audit);
    client.setQueryData(mirrorKeys.ended(end.path), end);
  });
}

/**
 * How often a mirror's view reads its status and run history again: `rsdesk` may sync or audit the same folder while
 * the app is open, and no event says so. The answer is small (the last 200 runs, counts); the audit report itself is
 * read again only when this shows a newer audit (useAuditReport).
 */
export const MIRROR_POLL_MS = 5_000;

export function useMirror(path: string) {
  return useQuery({
    queryKey: mirrorKeys.detail(path),
    queryFn: () => getBridge().invoke('mirrors.get', { path }),
    staleTime: 0,
    // Not while the window is hidden; at once when it is shown or focused again.
    refetchInterval: MIRROR_POLL_MS,
    refetchOnWindowFocus: true,
  });
}

/** The latest progress of the mirror's run; null when none runs. */
export function useMirrorProgress(path: string, running: boolean): MirrorProgress | null {
  const data = useQuery({ queryKey: mirrorKeys.progress(path), queryFn: () => null as MirrorProgress | null, enabled: false }).data;
  return running ? (data ?? null) : null;
}

/** How the last run of this mirror ended, while the app runs. */
export function useMirrorEnded(path: string): MirrorRunEnd | null {
  return useQuery({ queryKey: mirrorKeys.ended(path), queryFn: () => null as MirrorRunEnd | null, enabled: false }).data ?? null;
}

/** A run's failures; read again every 2 s while that run is going on, so they show as they happen. */
export function useFailures(path: string, runId: number | null, running = false) {
  return useQuery({
    queryKey: mirrorKeys.failures(path, runId ?? 0),
    queryFn: () => getBridge().invoke('runs.failures', { path, runId: runId! }),
    enabled: runId !== null,
    staleTime: 0,
    refetchInterval: running ? 2_000 : false,
  });
}

/**
 * The last audit's report. Read again when the mirror's status names a newer completed audit than the one shown (an
 * audit by `rsdesk` on the same folder, which sends the app no event); the app's own audits send theirs (audit.ended).
 */
export function useAuditReport(path: string) {
  const client = useQueryClient();
  const report = useQuery({
    queryKey: mirrorKeys.audit(path),
    queryFn: (): Promise<AuditView | null> => getBridge().invoke('audit.report', { path }),
    staleTime: Infinity,
  });
  const lastAudit = useMirror(path).data?.lastAudit ?? null;
  const newer = lastAudit !== null && lastAudit.status === 'completed' && report.isSuccess && !report.isFetching && lastAudit.id > (report.data?.report.runId ?? 0) ? lastAudit.id : null;
  // Once for each newer audit: one whose report could not be kept is not asked for again and again.
  const asked = useRef<number | null>(null);
  useEffect(() => {
    if (newer === null || asked.current === newer) return;
    asked.current = newer;
    void client.invalidateQueries({ queryKey: mirrorKeys.audit(path) });
  }, [newer, client, path]);
  return report;
}

/**
 * After a command on a mirror: the list and the mirror are read again rather than taken from the command's answer,
 * which was made when the command ran. Its run may have ended since (a quick one often does before the answer
 * arrives, its events coming on another connection), and that older answer would then stay in view.
 */
function useListUpdate() {
  const client = useQueryClient();
  return (mirror: Pick<MirrorSummary, 'path'>) => {
    readAgain(client, mirrorKeys.list);
    readAgain(client, mirrorKeys.detail(mirror.path));
  };
}

export function useCreateMirror() {
  const update = useListUpdate();
  return useMutation({
    mutationFn: (args: CommandArgs<'mirrors.create'>) => getBridge().invoke('mirrors.create', args),
    onSuccess: update,
  });
}

export type RunAction = 'start' | 'resume' | 'retry' | 'retryStanding' | 'pause' | 'cancel';

export function useRunAction(path: string) {
  const client = useQueryClient();
  const update = useListUpdate();
  return useMutation({
    mutationFn: async ({
      action,
      mode,
      dryRun,
      allowMassDelete,
      retry,
    }: {
      action: RunAction;
      mode?: CommandArgs<'runs.start'>['mode'];
      dryRun?: boolean;
      /** A baseline allowed to remove at most this many unlisted resources (after one that held them back). */
      allowMassDelete?: number;
      /** Which failures to retry: a run's, all of them or the chosen URIs. */
      retry?: { runId: number; uris?: string[] };
    }) => {
      const bridge = getBridge();
      if (action === 'pause') return bridge.invoke('runs.pause', { path });
      if (action === 'cancel') return bridge.invoke('runs.cancel', { path });
      client.setQueryData(mirrorKeys.ended(path), null);
      if (action === 'resume') return bridge.invoke('runs.resume', { path });
      if (action === 'retryStanding') return bridge.invoke('runs.retryStanding', { path });
      if (action === 'retry') return bridge.invoke('runs.retry', { path, runId: retry!.runId, ...(retry!.uris ? { uris: retry!.uris } : {}) });
      return bridge.invoke('runs.start', { path, ...(mode ? { mode } : {}), ...(dryRun ? { dryRun } : {}), ...(allowMassDelete !== undefined ? { allowMassDelete } : {}) });
    },
    onSuccess: () => update({ path }),
  });
}

export function useStartAudit(path: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (rehash: boolean) => {
      client.setQueryData(mirrorKeys.ended(path), null);
      return getBridge().invoke('audit.start', { path, rehash });
    },
    onSuccess: (view) => client.setQueryData(mirrorKeys.audit(path), view),
    onSettled: () => readAgain(client, mirrorKeys.detail(path)),
  });
}

export function useForgetMirror() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (path: string) => getBridge().invoke('mirrors.forget', { path }),
    onSuccess: () => readAgain(client, mirrorKeys.list),
  });
}

export function useOpenFolder() {
  return useMutation({ mutationFn: (path: string) => getBridge().invoke('mirrors.openFolder', { path }) });
}

export function useUpdateMirror() {
  const update = useListUpdate();
  return useMutation({
    mutationFn: (args: CommandArgs<'mirrors.update'>) => getBridge().invoke('mirrors.update', args),
    onSuccess: update,
  });
}

/** The mirror's own user name and password (null: none any more); the answer is the mirror as it is then. */
export function useSetCredentials(path: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (basic: { user: string; password: string } | null) =>
      getBridge().invoke('mirrors.setCredentials', basic ? { path, ...basic } : { path, user: null, password: null }),
    onSuccess: (detail) => {
      readAgain(client, mirrorKeys.detail(path));
      // The browser signs in with a mirror's credentials too: what its Source refused is read again.
      if (detail.access.origin) void readRefusedAgain(client, detail.access.origin);
    },
  });
}

/** The mirror's own bearer token (null: no credentials of its own any more). */
export function useSetToken(path: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (token: string | null) => getBridge().invoke('mirrors.setToken', { path, token }),
    onSuccess: (detail) => {
      readAgain(client, mirrorKeys.detail(path));
      if (detail.access.origin) void readRefusedAgain(client, detail.access.origin);
    },
  });
}

/** The mirror's extra request headers, all of them. */
export function useSetHeaders(path: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (headers: { name: string; value: string }[]) => getBridge().invoke('mirrors.setHeaders', { path, headers }),
    onSuccess: () => readAgain(client, mirrorKeys.detail(path)),
  });
}
