// The engine's side of a check: the run (one react-query query per runId) and its progress events.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { CheckProgress } from '../../src-main/contract/types.ts';
import { getBridge } from '../bridge/index.ts';
import { useBridgeEvent } from '../data/queries.ts';
import { useCheck } from '../state/check.ts';

export const checkKeys = {
  run: (runId: string) => ['check', runId] as const,
  progress: (runId: string) => ['check-progress', runId] as const,
};

/** Starts the check when first asked for; the report stays cached while the app runs (never re-run by itself). */
export function useCheckRun(runId: string, url: string) {
  return useQuery({
    queryKey: checkKeys.run(runId),
    queryFn: () => getBridge().invoke('check.run', { url, runId }),
    staleTime: Infinity,
    gcTime: Infinity,
    retry: false,
    refetchOnWindowFocus: false,
    refetchOnReconnect: false,
  });
}

/** The latest progress event of a run, kept in the query cache. */
export function useCheckProgress(runId: string): CheckProgress | undefined {
  const client = useQueryClient();
  useBridgeEvent('check.progress', ({ runId: id, ...progress }) => {
    if (id === runId) client.setQueryData(checkKeys.progress(runId), progress);
  });
  return useQuery({ queryKey: checkKeys.progress(runId), queryFn: () => null as unknown as CheckProgress, enabled: false }).data;
}

/** Starts a new check; one still running for the previous report is cancelled (only one report is shown). */
export function useStartCheck(): (url: string, name: string) => void {
  const client = useQueryClient();
  return (url, name) => {
    const { run, start } = useCheck.getState();
    if (run !== null && client.getQueryState(checkKeys.run(run.runId))?.status === 'pending') void cancelCheck(run.runId);
    start(url, name);
  };
}

export function cancelCheck(runId: string): Promise<unknown> {
  return getBridge().invoke('check.cancel', { runId });
}
