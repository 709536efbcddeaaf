import { useEffect, useState } from 'react';
import type { SubscriptionView } from '../../src-main/contract/types.ts';
import { errorMessage } from '../bridge/index.ts';
import { useSubscriptions, useUnsubscribe } from './queries.ts';
import { focusWhenReady } from '../mirror/focus.ts';
import { LIVE_TITLE_ID } from './live-title.ts';

const STATUS: Record<string, string> = {
  pending: 'waiting for the hub to confirm',
  active: 'active',
  retrying: 'retrying (the hub failed)',
  unsubscribing: 'unsubscribing',
  unsubscribed: 'unsubscribed',
  denied: 'denied by the hub',
  expired: 'lease ended',
};

/** Seconds as "1 h 02 min", "4 min 05 s", "12 s". */
export function countdown(ms: number): string {
  if (ms <= 0) return 'ending now';
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  if (h > 0) return `${h} h ${String(m).padStart(2, '0')} min`;
  if (m > 0) return `${m} min ${String(r).padStart(2, '0')} s`;
  return `${r} s`;
}

function useNow(ms = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

function time(iso: string | null): string {
  return iso ? new Date(iso).toLocaleString() : 'none yet';
}

function Lease({ sub, now }: { sub: SubscriptionView; now: number }) {
  // A lease past its end is not live, whatever the last status read said: the hub has stopped sending.
  if ((sub.status === 'active' || sub.status === 'expired') && sub.expiresAt && Date.parse(sub.expiresAt) <= now) {
    return <>ended {time(sub.expiresAt)}; asking the hub again</>;
  }
  if (sub.status !== 'active' || !sub.expiresAt) return <>{sub.leaseSeconds ? `${sub.leaseSeconds} s granted` : '—'}</>;
  // The last renewal is said here: a renewal that changes nothing has no row in the feed (one every 10 s for a hub
  // that grants leases of seconds).
  return (
    <>
      renews before it ends in {countdown(Date.parse(sub.expiresAt) - now)}
      {sub.verifiedAt && <div className="muted">last confirmed by the hub {time(sub.verifiedAt)}</div>}
    </>
  );
}

export function Subscriptions() {
  const subs = useSubscriptions();
  const unsubscribe = useUnsubscribe();
  const now = useNow();
  const shown = (subs.data ?? []).filter((s) => s.status !== 'unsubscribed');
  return (
    <section className="live-section" aria-labelledby="live-subs-title">
      <h3 id="live-subs-title" className="live-h">Subscriptions</h3>
      {subs.isError && <p className="error-text" role="alert">{errorMessage(subs.error)}</p>}
      {unsubscribe.isError && <p className="error-text" role="alert">{errorMessage(unsubscribe.error)}</p>}
      {shown.length === 0 ? (
        <p className="muted">No subscriptions yet. Open a Change Notification channel in a Source's tree and choose Subscribe.</p>
      ) : (
        <div className="live-table-box">
          <table className="live-table">
            <thead>
              <tr>
                <th scope="col">Topic</th>
                <th scope="col">Hub</th>
                <th scope="col">Mirror folder</th>
                <th scope="col">Status</th>
                <th scope="col">Lease</th>
                <th scope="col">Last notification</th>
                <th scope="col"><span className="sr-only">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {shown.map((s) => (
                <tr key={`${s.dest}#${s.id}`}>
                  <td className="mono wrap">{s.topic}</td>
                  <td className="mono wrap">{s.hub}</td>
                  <td className="mono wrap">{s.dest}</td>
                  <td>
                    {STATUS[s.status === 'active' && s.expiresAt && Date.parse(s.expiresAt) <= now ? 'expired' : s.status] ?? s.status}
                    {s.lastError && <div className="error-text">{s.lastError}</div>}
                  </td>
                  <td><Lease sub={s} now={now} /></td>
                  <td>{time(s.lastNotificationAt)}</td>
                  <td>
                    {s.status !== 'unsubscribing' && (
                      <button
                        type="button"
                        className="btn-small"
                        aria-label={`Unsubscribe from ${s.topic}`}
                        aria-disabled={unsubscribe.isPending || undefined}
                        onClick={(event) => {
                          if (unsubscribe.isPending) return;
                          // The button goes away with its row, which left focus on <body>: the view's heading takes it.
                          const from = event.currentTarget;
                          unsubscribe.mutate({ folder: s.dest, id: s.id }, { onSuccess: () => focusWhenReady(() => document.getElementById(LIVE_TITLE_ID), from) });
                        }}
                      >
                        Unsubscribe
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
