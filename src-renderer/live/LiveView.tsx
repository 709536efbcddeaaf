import { errorMessage } from '../bridge/index.ts';
import { LIVE_TITLE_ID } from './live-title.ts';
import { LiveFeed } from './LiveFeed.tsx';
import { useLiveStatus } from './queries.ts';
import { Subscriptions } from './Subscriptions.tsx';

/** Live: the subscriptions and the feed of what arrives (notifications, pings, and what went wrong). */
export function LiveView() {
  const status = useLiveStatus();
  const s = status.data;
  return (
    <div className="live">
      <header className="live-header">
        <h2 id={LIVE_TITLE_ID} className="live-title" tabIndex={-1}>Live</h2>
        <p className="muted">
          {status.isError
            ? errorMessage(status.error)
            : !s
              ? 'Starting the callback server…'
              : s.address
                ? `The callback server listens on ${s.address}; hubs are given ${s.callbackBase}. Its address and reachability are in Settings.`
                : (s.error ?? 'The callback server is not running.')}
        </p>
      </header>
      <Subscriptions />
      <LiveFeed />
    </div>
  );
}
