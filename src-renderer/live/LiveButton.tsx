import { useCheck } from '../state/check.ts';
import { useLive } from './state.ts';

/** Opens the Live view (subscriptions and the feed) in the main pane; pressed while it shows. */
export function LiveButton() {
  const visible = useLive((s) => s.visible);
  const count = useLive((s) => s.rows.length);
  return (
    <button
      type="button"
      className="btn-small btn-live"
      aria-pressed={visible}
      title="Subscriptions and the live feed of change notifications and pings"
      onClick={() => {
        if (visible) return useLive.getState().hide();
        useCheck.getState().hide();
        useLive.getState().show();
      }}
    >
      Live{count > 0 ? ` · ${count > 999 ? '999+' : count}` : ''}
    </button>
  );
}
