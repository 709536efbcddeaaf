// Where keyboard focus goes when the Check report closes: its Close button goes away with it, and focus was left on
// <body>, from where a screen reader starts again at the top of the page. It goes back to the sidebar button that
// opened the report (Check Source, or Show last check, which comes back once the report is hidden).
import { focusWhenReady } from '../mirror/focus.ts';

export const CHECK_SOURCE_ID = 'check-source';
export const SHOW_LAST_CHECK_ID = 'show-last-check';

/** The sidebar button the report was last opened from. */
let opener: typeof CHECK_SOURCE_ID | typeof SHOW_LAST_CHECK_ID = CHECK_SOURCE_ID;

export function openedFrom(id: typeof opener): void {
  opener = id;
}

/** After the report was hidden: its opener, else Check Source, else the main pane (the sidebar may show no Source). */
export function focusOpener(from: Element | null): void {
  focusWhenReady(
    () => document.getElementById(opener) ?? document.getElementById(CHECK_SOURCE_ID) ?? document.getElementById('main'),
    from,
  );
}
