// Text widths for laying out table columns: measured with the page's own fonts (canvas), so a column sized for a
// datetime really holds it, whatever font the system substitutes.

let context: CanvasRenderingContext2D | null | undefined;
const cache = new Map<string, number>();

/** Width in px of text drawn in the CSS font `font`, or an estimate where no canvas is available. */
export function textWidth(text: string, font: string): number {
  const key = `${font}\u0000${text}`;
  const known = cache.get(key);
  if (known !== undefined) return known;
  if (context === undefined) context = typeof document === 'undefined' ? null : document.createElement('canvas').getContext('2d');
  let width: number;
  if (context) {
    context.font = font;
    width = context.measureText(text).width;
  } else {
    width = text.length * 7.5;
  }
  if (cache.size > 5000) cache.clear();
  cache.set(key, width);
  return width;
}

/** The CSS font of the table's monospace cells (see `.c-mono` in styles.css). */
export function monoFont(): string {
  const family = typeof document === 'undefined' ? '' : getComputedStyle(document.documentElement).getPropertyValue('--mono').trim();
  return `12px ${family || 'monospace'}`;
}

/**
 * Shortens text to fit `width` px in `font` by cutting its middle: the start and, longer, the end survive (the end
 * of a URI is what tells entries apart). Returns the text itself when it fits.
 */
export function middleEllipsis(text: string, width: number, font: string): string {
  if (textWidth(text, font) <= width) return text;
  // Monospace cells: one character width gives the count at once; a check afterwards covers other fonts.
  const char = textWidth('0', font) || 7;
  let keep = Math.max(2, Math.floor(width / char) - 1);
  for (;;) {
    const head = Math.max(1, Math.floor(keep * 0.4));
    const tail = Math.max(1, keep - head);
    const short = `${text.slice(0, head)}…${text.slice(text.length - tail)}`;
    if (keep <= 2 || textWidth(short, font) <= width) return short;
    keep--;
  }
}
