import { describe, expect, it } from 'vitest';
import type { Entry, RsMd, RsLn } from './model.ts';
import { EMPTY_SHAPE, shapeOf } from './shape.ts';

function entry(loc: string, md: RsMd = {}, extra: Partial<Entry> = {}, links: RsLn[] = []): Entry {
  return { index: 0, loc, md, links, line: 1, ...extra };
}

describe('shapeOf', () => {
  it('finds the common prefix, cut after a slash', () => {
    const shape = shapeOf([entry('http://x.org/data/res/1'), entry('http://x.org/data/res/10'), entry('http://x.org/data/res/2')]);
    expect(shape.prefix).toBe('http://x.org/data/res/');
  });

  it('never swallows a whole loc', () => {
    expect(shapeOf([entry('http://x.org/dir/'), entry('http://x.org/dir/a')]).prefix).toBe('http://x.org/');
    expect(shapeOf([entry('http://x.org/a/b.xml')]).prefix).toBe('http://x.org/a/');
    expect(shapeOf([entry('http://x.org/')]).prefix).toBe('');
  });

  it('keeps at least the origin, or nothing', () => {
    expect(shapeOf([entry('http://a.org/1'), entry('http://b.org/1')]).prefix).toBe('');
    expect(shapeOf([entry('http://a.org/x/1'), entry('http://a.org/y/1')]).prefix).toBe('http://a.org/');
    expect(shapeOf([entry('urn:x:1'), entry('urn:x:2')]).prefix).toBe('');
  });

  it('lists the fields present at all, in a fixed order', () => {
    const shape = shapeOf([
      entry('http://x.org/1', { length: '3', change: 'created' }, { lastmod: '2020-01-01' }),
      entry('http://x.org/2', { path: '/a', hash: 'md5:0' }, {}, [{ rel: 'contents', href: 'http://x.org/m' }]),
    ]);
    expect(shape.fields).toEqual(['lastmod', 'change', 'length', 'hash', 'path', 'links']);
  });

  it('is empty without entries', () => {
    expect(shapeOf([])).toEqual(EMPTY_SHAPE);
  });
});
