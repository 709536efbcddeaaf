import { describe, expect, it } from 'vitest';
import { formatDuration } from './errors.ts';

describe('formatDuration', () => {
  it('says a wait in units a person reads, however long a Retry-After asks for', () => {
    expect(formatDuration(45_000)).toBe('45 s');
    expect(formatDuration(90_000)).toBe('1 min 30 s');
    expect(formatDuration(5 * 60_000)).toBe('5 min');
    expect(formatDuration(3 * 3_600_000 + 20 * 60_000 + 59_000)).toBe('3 h 20 min');
    expect(formatDuration(2 * 3_600_000)).toBe('2 h');
    expect(formatDuration(999_999_999_999_000)).toBe('11,574,074 days');
  });
});
