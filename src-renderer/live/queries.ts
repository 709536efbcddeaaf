// Live data over the Bridge: the callback server's status, the subscriptions, and the feed's event stream.
import { useEffect } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { LiveSettings } from '../../src-main/contract/types.ts';
import { getBridge } from '../bridge/index.ts';
import { readAgain } from '../data/fresh.ts';
import { useLive } from './state.ts';

export const liveKeys = {
  status: ['live.status'] as const,
  subscriptions: ['live.subscriptions'] as const,
};

export function useLiveStatus() {
  // While the server is not listening (its port held by another program), the app tries again by itself: read again
  // so the view says when it does.
  return useQuery({ queryKey: liveKeys.status, queryFn: () => getBridge().invoke('live.status', {}), refetchInterval: (q) => (q.state.data?.error ? 5_000 : false) });
}

export function useSubscriptions() {
  const client = useQueryClient();
  const seq = useLive((s) => s.subscriptionsSeq);
  // A subscription changed (its event came): a read still on its way may predate that change, so it is dropped.
  useEffect(() => {
    if (seq > 0) readAgain(client, liveKeys.subscriptions);
  }, [seq, client]);
  return useQuery({ queryKey: liveKeys.subscriptions, queryFn: () => getBridge().invoke('live.subscriptions', {}) });
}

export function useSubscribe() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { topic: string; hub: string; folder: string }) => getBridge().invoke('live.subscribe', input),
    onSettled: () => readAgain(client, liveKeys.subscriptions),
  });
}

export function useUnsubscribe() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { folder: string; id: number }) => getBridge().invoke('live.unsubscribe', input),
    onSettled: () => readAgain(client, liveKeys.subscriptions),
  });
}

export function useSetLiveSettings() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (settings: LiveSettings) => getBridge().invoke('live.settings.set', settings),
    onSuccess: (status) => client.setQueryData(liveKeys.status, status),
  });
}

export function useSelfTest() {
  return useMutation({ mutationFn: () => getBridge().invoke('live.selftest', {}) });
}

/** Mounted once (App): every live batch goes into the feed's store, from the start, whether the feed shows or not. */
export function useLiveFeedSync(): void {
  useEffect(() => {
    let cancelled = false;
    // Events streamed before the engine's recent list arrives are also in that list: kept out of it once.
    let streamed: Set<string> | null = new Set();
    const off = getBridge().on('live.events', (batch) => {
      if (streamed) for (const e of batch.events) streamed.add(JSON.stringify(e));
      useLive.getState().receive(batch);
    });
    const offMissed = getBridge().on('events.missed', ({ message }) => useLive.getState().missed(message));
    // What happened before the page opened (a reload): the engine keeps the last events.
    void getBridge()
      .invoke('live.recent', {})
      .then((events) => {
        const seen = streamed ?? new Set<string>();
        streamed = null;
        const earlier = events.filter((e) => !seen.has(JSON.stringify(e)));
        if (!cancelled && earlier.length > 0) useLive.getState().receiveEarlier(earlier);
      })
      .catch(() => {
        streamed = null;
      });
    return () => {
      cancelled = true;
      off();
      offMissed();
    };
  }, []);
}
