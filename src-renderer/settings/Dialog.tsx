import { useEffect, useId, useRef } from 'react';
import type { ReactNode } from 'react';
import { createPortal } from 'react-dom';

const FOCUSABLE =
  'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

function focusables(container: HTMLElement): HTMLElement[] {
  return [...container.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((el) => el.getClientRects().length > 0);
}

interface Props {
  title: string;
  onClose(): void;
  children: ReactNode;
}

/**
 * A modal dialog: the app behind it is inert (no clicks, no tab stops, hidden from assistive technology), Tab
 * cycles inside, Escape closes, and focus goes back to whatever opened it. Keys are handled on the document, so
 * they work even when focus fell to the body (a focused button that became disabled, say).
 */
export function Dialog({ title, onClose, children }: Props) {
  const titleId = useId();
  const panel = useRef<HTMLDivElement>(null);
  const close = useRef(onClose);
  close.current = onClose;

  useEffect(() => {
    const element = panel.current;
    if (!element) return;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    const app = document.getElementById('root');
    app?.setAttribute('inert', '');
    // A field that focused itself on mount (autoFocus) keeps the focus.
    if (!element.contains(document.activeElement)) (focusables(element)[0] ?? element).focus();

    const onKeyDown = (event: KeyboardEvent) => {
      if (event.key === 'Escape') {
        event.preventDefault();
        event.stopPropagation();
        close.current();
        return;
      }
      if (event.key !== 'Tab') return;
      const items = focusables(element);
      const active = document.activeElement;
      const inside = element.contains(active) && active !== element;
      event.preventDefault();
      if (items.length === 0) return element.focus();
      const at = inside ? items.indexOf(active as HTMLElement) : -1;
      const next = at === -1 ? (event.shiftKey ? items.length - 1 : 0) : (at + (event.shiftKey ? -1 : 1) + items.length) % items.length;
      items[next].focus();
    };
    document.addEventListener('keydown', onKeyDown, true);
    return () => {
      document.removeEventListener('keydown', onKeyDown, true);
      app?.removeAttribute('inert');
      if (opener?.isConnected) opener.focus();
    };
  }, []);

  return createPortal(
    // A click beside the dialog must not take focus out of it.
    <div className="dialog-backdrop" onMouseDown={(e) => e.target === e.currentTarget && e.preventDefault()}>
      <div ref={panel} role="dialog" aria-modal="true" aria-labelledby={titleId} tabIndex={-1} className="dialog">
        <h2 id={titleId} className="dialog-title">
          {title}
        </h2>
        {children}
      </div>
    </div>,
    document.body,
  );
}
