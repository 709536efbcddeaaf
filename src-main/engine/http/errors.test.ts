import { describe, expect, it } from 'vitest';
import { formatDuration, messageWithoutUrl } from './errors.ts';

describe('messageWithoutUrl', () => {
  const url = 'http://127.0.0.1:5399/x.xml';
  it('drops the URL a step already shows beside its message', () => {
    expect(messageWithoutUrl(`Connection refused by 127.0.0.1:5399 (${url})`, url)).toBe('Connection refused by 127.0.0.1:5399');
    expect(messageWithoutUrl(`Timed out after 30 s waiting for ${url}`, url)).toBe('Timed out after 30 s waiting for an answer');
    expect(messageWithoutUrl(`Timed out after 30 s waiting for more data from ${url}`, url)).toBe('Timed out after 30 s waiting for more data');
    expect(messageWithoutUrl(`${url} did not finish within 5 min (3 bytes had arrived)`, url)).toBe('It did not finish within 5 min (3 bytes had arrived)');
    expect(messageWithoutUrl(`Network error for ${url}: socket hang up`, url)).toBe('Network error: socket hang up');
  });
  it('leaves a message alone when it names the URL otherwise, or not at all', () => {
    expect(messageWithoutUrl(`${url} redirects to ${url}`, url)).toBe(`${url} redirects to ${url}`);
    expect(messageWithoutUrl('404 Not Found', url)).toBe('404 Not Found');
  });
});

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
