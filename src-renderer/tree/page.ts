// Where PageDown and PageUp take the focus in the tree: as far as one viewport reaches, by the rows' real heights.
// Rows are not all alike (a document's time span wraps in a narrow sidebar, an error shows whole) and grow with the
// font: a fixed row height moved the focus by two screens at a larger font, past rows never shown.

/**
 * The row `step` rows away (1: PageDown, -1: PageUp) that still fits in `height` together with `at` and every row
 * between; at least the next row. `sizeOf` gives a row's measured height, or undefined for one never rendered,
 * which counts as tall as `at`.
 */
export function pageTarget(at: number, step: 1 | -1, height: number, count: number, sizeOf: (index: number) => number | undefined): number {
  const own = sizeOf(at);
  const fallback = own ?? 40;
  let used = own ?? fallback;
  let i = at;
  while (i + step >= 0 && i + step < count) {
    const next = sizeOf(i + step) ?? fallback;
    if (used + next > height) break;
    used += next;
    i += step;
  }
  return i === at ? Math.max(0, Math.min(count - 1, at + step)) : i;
}
