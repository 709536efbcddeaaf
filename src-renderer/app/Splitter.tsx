import type { KeyboardEvent, PointerEvent } from 'react';

interface Props {
  orientation: 'vertical' | 'horizontal';
  /** Current size of the pane the splitter resizes, in px. */
  value: number;
  onChange(px: number): void;
  /** +1 when dragging right/down grows the pane, -1 when it shrinks it. */
  direction: 1 | -1;
  label: string;
}

/** A draggable (and keyboard-operable) separator between two panes. */
export function Splitter({ orientation, value, onChange, direction, label }: Props) {
  function onPointerDown(event: PointerEvent<HTMLDivElement>) {
    event.preventDefault();
    const start = orientation === 'vertical' ? event.clientX : event.clientY;
    const startValue = value;
    const target = event.currentTarget;
    target.setPointerCapture(event.pointerId);
    const move = (e: globalThis.PointerEvent) => {
      const now = orientation === 'vertical' ? e.clientX : e.clientY;
      onChange(startValue + direction * (now - start));
    };
    const up = () => {
      target.removeEventListener('pointermove', move);
      target.removeEventListener('pointerup', up);
      target.removeEventListener('pointercancel', up);
    };
    target.addEventListener('pointermove', move);
    target.addEventListener('pointerup', up);
    target.addEventListener('pointercancel', up);
  }

  function onKeyDown(event: KeyboardEvent<HTMLDivElement>) {
    const grow: Record<string, number> =
      orientation === 'vertical' ? { ArrowRight: 1, ArrowLeft: -1 } : { ArrowDown: 1, ArrowUp: -1 };
    const step = grow[event.key];
    if (step === undefined) return;
    event.preventDefault();
    onChange(value + direction * step * 24);
  }

  return (
    <div
      role="separator"
      aria-orientation={orientation}
      aria-label={label}
      aria-valuenow={value}
      tabIndex={0}
      className={`splitter splitter-${orientation}`}
      onPointerDown={onPointerDown}
      onKeyDown={onKeyDown}
    />
  );
}
