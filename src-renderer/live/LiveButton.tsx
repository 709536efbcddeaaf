import { openLive } from './open.ts';
import { useLive } from './state.ts';

/**
 * Opens the Live view (subscriptions and the feed) in the main pane; pressed while it shows. Opening it takes focus to
 * the view's heading (left on the button, the view was ten sidebar stops away); closing it leaves focus on the button,
 * whose pressed state then says the view is gone.
 */
export function LiveButton() {
  const visible = useLive((s) => s.visible);
  const count = useLive((s) => s.rows.length);
  return (
    <button
      type="button"
      className="btn-small btn-live"
      aria-pressed={visible}
      title="Subscriptions and the live feed of change notifications and pings"
      onClick={(event) => {
        if (visible) return useLive.getState().hide();
        openLive(event.currentTarget);
      }}
    >
      Live{count > 0 ? ` · ${count > 999 ? '999+' : count}` : ''}
    </button>
  );
}
