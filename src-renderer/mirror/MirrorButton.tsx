import { useSources } from '../data/queries.ts';
import { useUi } from '../state/ui.ts';
import { useMirrorUi } from '../state/mirror.ts';

/** What can be mirrored: a Capability List (its lists), or a single Resource List or Change List (or their indexes). */
export const MIRRORABLE = new Set(['capabilitylist', 'resourcelist', 'changelist']);

/** "Mirror this…" on a document's header: opens the form to make a local mirror of it. */
export function MirrorButton({ url, capability }: { url: string; capability: string | undefined }) {
  const sources = useSources().data;
  const sourceId = useUi((s) => s.sourceId);
  const openCreate = useMirrorUi((s) => s.openCreate);
  if (!capability || !MIRRORABLE.has(capability)) return null;
  const source = sources?.find((s) => s.id === sourceId) ?? null;
  return (
    <button
      type="button"
      className="btn-small"
      data-mirror-url={url}
      onClick={() => openCreate(url, capability, source?.name ?? null)}
      title="Keep a local folder in step with this document's resources"
    >
      Mirror this…
    </button>
  );
}
