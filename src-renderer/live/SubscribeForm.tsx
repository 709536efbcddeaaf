import { useEffect, useId, useMemo, useState } from 'react';
import { errorMessage } from '../bridge/index.ts';
import { useSources } from '../data/queries.ts';
import { useMirrors } from '../mirror/queries.ts';
import { useMirrorUi } from '../state/mirror.ts';
import { useUi } from '../state/ui.ts';
import { useLiveStatus, useSubscribe, useSubscriptions } from './queries.ts';
import { openLive } from './open.ts';
import { closenessText, rankMirrors } from './mirror-choice.ts';

function hostOf(url: string): string {
  try {
    return new URL(url).host.replace(/[:]/g, '_');
  } catch {
    return 'mirror';
  }
}

const OTHER = '';

/**
 * Subscribe to a channel: the hub pushes its notifications, and they are applied to a mirror. The mirrors the app
 * knows are offered (those of this Capability List first, then those of the same Source); another folder is the
 * fallback (a new folder becomes a mirror of this Source), and a mirror can be made first, with all its options.
 */
export function SubscribeForm({ topic, hub, capabilityListUrl }: { topic: string; hub: string; capabilityListUrl: string | null }) {
  const status = useLiveStatus().data;
  const subs = useSubscriptions().data ?? [];
  const mirrors = useMirrors().data;
  const sources = useSources().data;
  const sourceId = useUi((s) => s.sourceId);
  const subscribe = useSubscribe();
  const openCreate = useMirrorUi((s) => s.openCreate);
  const id = useId();
  const source = sources?.find((s) => s.id === sourceId) ?? null;

  const offered = useMemo(() => rankMirrors(mirrors ?? [], capabilityListUrl, source, topic), [mirrors, capabilityListUrl, source, topic]);

  // The chosen mirror's path, or OTHER for the folder field. Until the person chooses: the closest mirror of this
  // Capability List when there is one, else the folder field.
  const [choice, setChoice] = useState<string | null>(null);
  const [folder, setFolder] = useState('');
  const sep = status?.suggestedFolder.includes('\\') ? '\\' : '/';
  useEffect(() => {
    if (status && folder === '') setFolder(`${status.suggestedFolder}${sep}${hostOf(topic)}`);
  }, [status, folder, topic, sep]);
  const chosen = choice ?? (offered[0]?.c === 0 ? offered[0].m.path : OTHER);
  const target = chosen === OTHER ? folder.trim() : chosen;
  const existing = subs.filter((s) => s.topic === topic && s.status !== 'unsubscribed');

  return (
    <section className="subscribe" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`} className="live-h">Subscribe</h3>
      {existing.length > 0 && (
        <p>
          Subscribed: feeds {existing.map((s) => s.dest).join(', ')} ({existing.map((s) => s.status).join(', ')}).{' '}
          <button type="button" className="btn-link" onClick={(e) => openLive(e.currentTarget)}>Open Live</button>
        </p>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (target !== '' && !subscribe.isPending) subscribe.mutate({ topic, hub, folder: target });
        }}
      >
        <fieldset className="subscribe-choice">
          <legend>Apply the notifications to</legend>
          {offered.map(({ m, c }) => (
            <label key={m.path} className="radio subscribe-option">
              <input type="radio" name={`${id}-target`} value={m.path} checked={chosen === m.path} onChange={() => setChoice(m.path)} />
              <span>
                <span className="subscribe-name">{m.name}</span> <span className="muted">— {closenessText(m, c)}</span>
                <span className="mono subscribe-path">{m.path}</span>
              </span>
            </label>
          ))}
          <label className="radio subscribe-option">
            <input type="radio" name={`${id}-target`} value={OTHER} checked={chosen === OTHER} onChange={() => setChoice(OTHER)} />
            <span>{offered.length > 0 ? 'Another folder' : 'A folder'}</span>
          </label>
          {chosen === OTHER && (
            <div className="subscribe-folder">
              <label htmlFor={`${id}-folder`}>Mirror folder the notifications are applied to</label>
              <input
                id={`${id}-folder`}
                className="mono"
                value={folder}
                onChange={(e) => setFolder(e.target.value)}
                aria-describedby={`${id}-folder-hint`}
                spellCheck={false}
                required
              />
              <p id={`${id}-folder-hint`} className="muted note">
                Its full path. A new folder becomes a mirror of this Source: the changes the hub announces are fetched into it as
                they arrive.
              </p>
            </div>
          )}
        </fieldset>
        <div className="subscribe-actions">
          {/* aria-disabled while the hub is asked: a disabled button drops the focus of whoever pressed it to <body>. */}
          <button type="submit" className="btn-primary" disabled={target === ''} aria-disabled={subscribe.isPending || undefined}>
            {subscribe.isPending ? 'Subscribing…' : 'Subscribe'}
          </button>
          {capabilityListUrl !== null && (
            <button type="button" className="btn-secondary" onClick={() => openCreate(capabilityListUrl, 'capabilitylist', source?.name ?? null)}>
              Create a mirror of this Capability List…
            </button>
          )}
        </div>
      </form>
      {subscribe.isError && <p className="error-text" role="alert">{errorMessage(subscribe.error)}</p>}
      {subscribe.isSuccess && (
        <p role="status">
          Asked the hub to subscribe {subscribe.data.dest}; it confirms in a moment.{' '}
          <button type="button" className="btn-link" onClick={(e) => openLive(e.currentTarget)}>Open Live</button>
        </p>
      )}
    </section>
  );
}
