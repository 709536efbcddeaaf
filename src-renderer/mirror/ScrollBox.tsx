import { useEffect, useRef, useState, type ReactNode } from 'react';

/**
 * The box a mirror table scrolls in. When its table does not fit (a narrower window: the run history's last columns
 * out of view) it is a named region in the tab order, so the keyboard scrolls it with the arrow keys even when no
 * link or button in the table can take focus.
 */
export function ScrollBox({ label, className, children }: { label: string; className?: string; children: ReactNode }) {
  const ref = useRef<HTMLDivElement>(null);
  const [overflows, setOverflows] = useState(false);
  useEffect(() => {
    const box = ref.current;
    if (!box) return;
    const measure = () => setOverflows(box.scrollWidth > box.clientWidth + 1 || box.scrollHeight > box.clientHeight + 1);
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(box);
    if (box.firstElementChild) observer.observe(box.firstElementChild);
    return () => observer.disconnect();
  }, []);
  return (
    <div
      ref={ref}
      className={className ? `mirror-table-box ${className}` : 'mirror-table-box'}
      {...(overflows ? { tabIndex: 0, role: 'region', 'aria-label': label } : {})}
    >
      {children}
    </div>
  );
}
