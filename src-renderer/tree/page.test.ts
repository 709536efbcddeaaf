import { describe, expect, it } from 'vitest';
import { pageTarget } from './page.ts';

describe('pageTarget', () => {
  it('moves as far as one viewport reaches by the rows measured, both ways', () => {
    // 80 px rows (a larger font) in a 400 px viewport: five rows fit, so the focus moves four rows.
    const tall = () => 80;
    expect(pageTarget(10, 1, 400, 100, tall)).toBe(14);
    expect(pageTarget(14, -1, 400, 100, tall)).toBe(10);
    // Rows of different heights: 40, 40, 120, 40…
    const mixed = (i: number) => (i === 2 ? 120 : 40);
    expect(pageTarget(0, 1, 200, 100, mixed)).toBe(2);
    expect(pageTarget(0, 1, 240, 100, mixed)).toBe(3);
  });

  it('counts a row not measured yet as tall as the one it starts from', () => {
    const some = (i: number) => (i <= 3 ? 60 : undefined);
    expect(pageTarget(0, 1, 300, 100, some)).toBe(4);
  });

  it('stops at either end, and moves at least one row when a row is taller than the viewport', () => {
    expect(pageTarget(97, 1, 400, 100, () => 40)).toBe(99);
    expect(pageTarget(2, -1, 400, 100, () => 40)).toBe(0);
    expect(pageTarget(5, 1, 100, 100, () => 300)).toBe(6);
    expect(pageTarget(0, -1, 100, 100, () => 300)).toBe(0);
  });
});
