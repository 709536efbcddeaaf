// Every piece of engine data the UI shows, as react-query queries over the Bridge.
import { useEffect, useRef } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { QueryClient } from '@tanstack/react-query';
import type { EventName } from '../../src-main/contract/names.ts';
import type { DocumentView, EntryPage, Events, SavedSource, Settings } from '../../src-main/contract/types.ts';
import type { Entry } from '../../src-main/engine/documents/model.ts';
import { getBridge } from '../bridge/index.ts';
import { putFromEvent, readAgain } from './fresh.ts';
import { readAllWhenEventsMissed } from './missed.ts';
import { useConnection } from '../bridge/connection.ts';
import type { EntryView } from '../state/ui.ts';

export const PAGE_SIZE = 200;
/** The raw view starts with this much of a document; more can be asked for. */
export const RAW_LIMIT = 256 * 1024;
export const RAW_LIMIT_MAX = 5_000_000;

export const keys = {
  info: ['app.info'] as const,
  sources: ['sources'] as const,
  summary: (url: string) => ['summary', url] as const,
  entries: (url: string, view: EntryView, page: number) =>
    ['entries', url, view.uri, view.change, view.sort, view.descending, page] as const,
  entry: (url: string, index: number) => ['entry', url, index] as const,
  raw: (url: string, limit: number) => ['raw', url, limit] as const,
  settings: ['settings'] as const,
};

export function useAppInfo() {
  return useQuery({ queryKey: keys.info, queryFn: () => getBridge().invoke('app.info', {}), staleTime: Infinity });
}

export function useSources() {
  return useQuery({ queryKey: keys.sources, queryFn: () => getBridge().invoke('sources.list', {}) });
}

/**
 * The engine announces every change of the saved Sources; the list is replaced, not refetched. A read of the list
 * still on its way was answered before this change: it is dropped, or its answer would undo the event's.
 */
export function useSourcesSync(): void {
  const client = useQueryClient();
  useBridgeEvent('sources.changed', (payload) => putFromEvent<SavedSource[]>(client, keys.sources, payload.sources));
}

/**
 * Once, at the top of the app: events lost for good make every query read again, and so does the app server reached
 * again after it was out of reach (what ended meanwhile may not all come back as events).
 */
export function useMissedEvents(): void {
  const client = useQueryClient();
  useEffect(() => readAllWhenEventsMissed(getBridge(), client), [client]);
  useEffect(() => useConnection.subscribe((state, previous) => {
    if (state.recoveries !== previous.recoveries) readAgain(client);
  }), [client]);
}

export function useRemoveSource() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => getBridge().invoke('sources.remove', { id }),
    // The answer shows at once; it was made when the command ran, and a change since (its event may come first)
    // would be undone by it, so the list is then read again.
    onSuccess: (sources) => {
      client.setQueryData(keys.sources, sources);
      readAgain(client, keys.sources);
    },
  });
}

/** Undoes a remove: the engine brings the Source back with its id. */
export function useRestoreSource() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => getBridge().invoke('sources.restore', { id }),
    onSuccess: ({ sources }) => {
      client.setQueryData(keys.sources, sources);
      readAgain(client, keys.sources);
    },
  });
}

/** Read afresh each time the Settings panel opens: the engine is the one place they live. */
export function useSettings() {
  return useQuery({ queryKey: keys.settings, queryFn: () => getBridge().invoke('settings.get', {}), staleTime: 0 });
}

/** `bearerToken: null` clears the token; an absent key leaves it as it is. */
export function useSaveSettings() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (patch: Partial<Settings>) => getBridge().invoke('settings.set', patch),
    onSuccess: (settings) => client.setQueryData(keys.settings, settings),
  });
}

export function useSummary(url: string | null, enabled = true) {
  return useQuery({
    queryKey: keys.summary(url ?? ''),
    queryFn: () => getBridge().invoke('documents.summary', { url: url! }),
    enabled: enabled && url !== null,
    staleTime: Infinity,
  });
}

/** Fetches a document again from its Source, and drops every cached view of it. */
export function useRefreshDocument() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (url: string) => getBridge().invoke('documents.summary', { url, refresh: true }),
    onSuccess: (view: DocumentView) => {
      client.setQueryData(keys.summary(view.url), view);
      void client.invalidateQueries({
        predicate: (q) => ['entries', 'entry', 'raw'].includes(q.queryKey[0] as string) && q.queryKey[1] === view.url,
      });
    },
  });
}

export function entryPageQuery(url: string, view: EntryView, page: number) {
  return {
    queryKey: keys.entries(url, view, page),
    queryFn: (): Promise<EntryPage> =>
      getBridge().invoke('documents.entries', {
        url,
        offset: page * PAGE_SIZE,
        limit: PAGE_SIZE,
        ...(view.uri ? { uri: view.uri } : {}),
        ...(view.change ? { change: view.change } : {}),
        sort: view.sort,
        descending: view.descending,
      }),
    staleTime: Infinity,
  };
}

/** An entry already in a fetched page, so the detail pane shows it at once. */
function cachedEntry(client: QueryClient, url: string, index: number): Entry | undefined {
  for (const [key, page] of client.getQueriesData<EntryPage>({ queryKey: ['entries', url] })) {
    if (key[1] !== url || !page) continue;
    const found = page.rows.find((row) => row.index === index);
    if (found) return found;
  }
  return undefined;
}

export function useEntry(url: string, index: number) {
  const client = useQueryClient();
  return useQuery({
    queryKey: keys.entry(url, index),
    queryFn: () => getBridge().invoke('documents.entry', { url, index }),
    initialData: () => cachedEntry(client, url, index),
    staleTime: Infinity,
  });
}

export function useRaw(url: string, limit: number, enabled = true) {
  return useQuery({
    queryKey: keys.raw(url, limit),
    queryFn: () => getBridge().invoke('documents.raw', { url, limit }),
    enabled,
    staleTime: Infinity,
  });
}

/** Subscribes for the component's lifetime; the latest listener is always called (no resubscribe per render). */
export function useBridgeEvent<E extends EventName>(
  event: E,
  listener: (payload: Events[E]) => void,
  enabled = true,
): void {
  const latest = useRef(listener);
  latest.current = listener;
  useEffect(() => {
    if (!enabled) return;
    return getBridge().on(event, (payload) => latest.current(payload));
  }, [event, enabled]);
}
