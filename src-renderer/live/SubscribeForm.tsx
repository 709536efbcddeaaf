import { useEffect, useId, useState } from 'react';
import { errorMessage } from '../bridge/index.ts';
import { useLiveStatus, useSubscribe, useSubscriptions } from './queries.ts';
import { useLive } from './state.ts';

function hostOf(url: string): string {
  try {
    return new URL(url).host.replace(/[:]/g, '_');
  } catch {
    return 'mirror';
  }
}

/** Subscribe to a channel: the hub pushes its notifications, and the mirror in the chosen folder is kept up to date. */
export function SubscribeForm({ topic, hub }: { topic: string; hub: string }) {
  const status = useLiveStatus().data;
  const subs = useSubscriptions().data ?? [];
  const subscribe = useSubscribe();
  const [folder, setFolder] = useState('');
  const id = useId();
  const sep = status?.suggestedFolder.includes('\\') ? '\\' : '/';
  useEffect(() => {
    if (status && folder === '') setFolder(`${status.suggestedFolder}${sep}${hostOf(topic)}`);
  }, [status, folder, topic, sep]);
  const existing = subs.filter((s) => s.topic === topic && s.status !== 'unsubscribed');

  return (
    <section className="subscribe" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`} className="live-h">Subscribe</h3>
      {existing.length > 0 && (
        <p>
          Subscribed: feeds {existing.map((s) => s.dest).join(', ')} ({existing.map((s) => s.status).join(', ')}).{' '}
          <button type="button" className="btn-link" onClick={() => useLive.getState().show()}>Open Live</button>
        </p>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          subscribe.mutate({ topic, hub, folder });
        }}
      >
        <label htmlFor={`${id}-folder`}>Mirror folder the notifications are applied to</label>
        <div className="subscribe-row">
          <input id={`${id}-folder`} className="mono" value={folder} onChange={(e) => setFolder(e.target.value)} spellCheck={false} required />
          <button type="submit" className="btn-primary" disabled={subscribe.isPending || folder.trim() === ''}>
            {subscribe.isPending ? 'Subscribing…' : 'Subscribe'}
          </button>
        </div>
        <p className="muted note">
          A new folder becomes a mirror of this Source: changes the hub announces are fetched into it as they arrive.
        </p>
      </form>
      {subscribe.isError && <p className="error-text" role="alert">{errorMessage(subscribe.error)}</p>}
      {subscribe.isSuccess && (
        <p role="status">
          Asked the hub to subscribe {subscribe.data.dest}; it confirms in a moment.{' '}
          <button type="button" className="btn-link" onClick={() => useLive.getState().show()}>Open Live</button>
        </p>
      )}
    </section>
  );
}
