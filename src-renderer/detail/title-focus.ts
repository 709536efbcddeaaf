import { focusWhenReady } from '../mirror/focus.ts';

/**
 * After a move to another document (a link followed inside the app, Back): the link or the Back button pressed is
 * gone with the view it was in, and focus fell to <body>, where a screen reader starts again from the top of the page.
 * It goes to the new view's title instead. `from`: the element pressed, when focus on it should move too.
 */
export function focusDetailTitle(from: Element | null = null): void {
  focusWhenReady(() => document.querySelector<HTMLElement>('main .detail-title'), from);
}
