import { useCallback } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { DocumentView } from '../../src-main/contract/types.ts';
import { getBridge } from '../bridge/index.ts';
import { keys, useSources } from '../data/queries.ts';
import { useUi } from '../state/ui.ts';
import { findInTree, sourceRoots } from './nodes.ts';

/** Opens a ResourceSync document inside the app: its tree node when the tree knows it, else on its own. */
export function useFollowDocument(): (url: string, capability?: string) => void {
  const client = useQueryClient();
  const sources = useSources().data;
  return useCallback(
    (url: string, capability?: string) => {
      const { sourceId, follow } = useUi.getState();
      const source = sources?.find((s) => s.id === sourceId);
      const found = source
        ? findInTree(url, sourceRoots(source), (u) => client.getQueryData<DocumentView>(keys.summary(u)))
        : null;
      if (found) follow(found.node, found.ancestors);
      else follow({ id: `link:${url}`, url, ...(capability ? { capability } : {}) });
    },
    [client, sources],
  );
}

/** Opens a URL in the system browser; the HTTP adapter cannot, so the browser opens it itself. */
export async function openExternal(url: string): Promise<void> {
  let opened = false;
  try {
    opened = (await getBridge().invoke('shell.openExternal', { url })).opened;
  } catch {
    opened = false;
  }
  if (!opened) window.open(url, '_blank', 'noopener,noreferrer');
}
