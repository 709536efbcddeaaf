// Keyboard focus across the mirror views. A button that disappears (or turns disabled) once pressed leaves focus on
// <body>, and a screen reader then starts again from the top of the page: these put it somewhere that follows on.

/** Focus is nowhere in particular: on <body>, or on an element no longer in the page. */
export function focusLost(): boolean {
  const active = document.activeElement;
  return active === null || active === document.body || !active.isConnected;
}

/**
 * Focuses what `find` returns once it is in the page (the view it belongs to may render a few frames later), as long
 * as focus is still lost or still on `from`; once the person has put it elsewhere it is left there.
 */
export function focusWhenReady(find: () => HTMLElement | null, from: Element | null = document.activeElement, timeoutMs = 5_000): void {
  const until = performance.now() + timeoutMs;
  const step = () => {
    const active = document.activeElement;
    if (!focusLost() && active !== from) return;
    const target = find();
    if (target) {
      target.focus();
      return;
    }
    if (performance.now() < until) requestAnimationFrame(step);
  };
  requestAnimationFrame(step);
}
