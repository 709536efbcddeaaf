// After an add: select the Source, unfold its Source Description and Capability Lists, and open the pasted URL
// when it is one of the Source's documents.
import type { QueryClient } from '@tanstack/react-query';
import type { AddSourceResult, DocumentView, SavedSource } from '../../src-main/contract/types.ts';
import { getBridge } from '../bridge/index.ts';
import { keys } from '../data/queries.ts';
import { useCheck } from '../state/check.ts';
import { useUi } from '../state/ui.ts';
import { sourceRoots } from '../tree/nodes.ts';
import { planReveal } from '../tree/reveal.ts';

export async function revealAdded(client: QueryClient, source: SavedSource, pasted: AddSourceResult['pasted']): Promise<void> {
  // The roots unfold at once (the tree starts fetching them); the rest once the path is known.
  useUi.getState().reveal(source.id, sourceRoots(source).map((n) => n.id));
  const shownBefore = useUi.getState().node;
  const target = pasted.capability ? { url: pasted.url, capability: pasted.capability } : null;
  const plan = await planReveal(source, target, (url) =>
    client
      .fetchQuery({
        queryKey: keys.summary(url),
        queryFn: (): Promise<DocumentView> => getBridge().invoke('documents.summary', { url }),
        staleTime: Infinity,
      })
      .catch(() => null),
  );
  // The person may have moved on meanwhile: to another Source (nothing to do), or to a document or the Check
  // report of this one (unfold, but leave what they opened on screen).
  const ui = useUi.getState();
  if (ui.sourceId !== source.id) return;
  const movedOn = ui.node !== shownBefore || useCheck.getState().visible;
  ui.reveal(source.id, plan.expand, movedOn ? null : plan.node);
}
