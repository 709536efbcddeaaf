import { describe, expect, it } from 'vitest';
import { clip, clipMessage, MESSAGE_CHARS, QUOTE_CHARS } from './clip.ts';

describe('clip', () => {
  it('leaves short text alone', () => {
    expect(clip('http://127.0.0.1/a')).toBe('http://127.0.0.1/a');
    expect(clip('x'.repeat(QUOTE_CHARS))).toBe('x'.repeat(QUOTE_CHARS));
  });

  it('keeps the start and the end of a long value and says how much was left out', () => {
    const value = `2013-${'9'.repeat(1 << 20)}-end`;
    const shown = clip(value);
    expect(shown.length).toBeLessThanOrEqual(QUOTE_CHARS + 20);
    expect(shown.startsWith('2013-999')).toBe(true);
    expect(shown.endsWith('99-end')).toBe(true);
    expect(shown).toMatch(/…\[1,048,\d{3} characters left out\]…/);
  });

  it('never splits a character made of two UTF-16 units', () => {
    const value = '😀'.repeat(500);
    const shown = clip(value, 101);
    expect(shown).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });

  it('bounds a whole message', () => {
    expect(clipMessage('a'.repeat(MESSAGE_CHARS * 10)).length).toBeLessThan(MESSAGE_CHARS + 50);
  });
});
