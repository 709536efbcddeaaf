import { describe, expect, it } from 'vitest';
import { listKey, uniqueLists } from './entries.ts';

describe('the lists an index names', () => {
  it('are one list whatever the case of the host, a default port or a fragment', () => {
    expect(listKey('HTTP://Example.ORG:80/a/list.xml#part')).toBe('http://example.org/a/list.xml');
    expect(listKey(' https://example.org:443/list.xml ')).toBe('https://example.org/list.xml');
    // The path and query are the Source's: their case makes another document.
    expect(listKey('http://example.org/List.xml?A=1')).toBe('http://example.org/List.xml?A=1');
    expect(listKey('not a url')).toBe('not a url');
  });

  it('are read each once, in the index’s order (the audit, a retry)', () => {
    const locs = ['http://h/1.xml', 'http://H/2.xml', 'http://h:80/1.xml#x', 'http://h/2.xml', 'http://h/3.xml'];
    expect(uniqueLists(locs)).toEqual(['http://h/1.xml', 'http://H/2.xml', 'http://h/3.xml']);
  });
});
