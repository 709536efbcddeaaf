import { describe, expect, it } from 'vitest';
import { ListedResources } from './audit-listed.ts';

const entry = (i: number, hash = `md5:${i}`) => ({ loc: `http://s/r${i}`, lastmod: '2024-01-01T00:00:00Z', md: { hash } });

describe('ListedResources', () => {
  it('keeps entries in the order first listed, the last description of a URI listed twice, across pages and batches', () => {
    const listed = new ListedResources();
    try {
      for (let i = 0; i < 25_000; i++) listed.set(entry(i) as never);
      listed.set(entry(7, 'md5:again') as never);
      listed.delete('http://s/r3');
      listed.set(entry(3) as never);
      const all = [...listed.entries()];
      expect(all).toHaveLength(25_000);
      expect(all[6]).toEqual(entry(7, 'md5:again'));
      // Deleted then listed again: last, as a Map would have it.
      expect(all.at(-1)!.loc).toBe('http://s/r3');
      expect(all.slice(0, 3).map((e) => e.loc)).toEqual(['http://s/r0', 'http://s/r1', 'http://s/r2']);
      expect(listed.has('http://s/r24999')).toBe(true);
      expect(listed.has('http://s/r25000')).toBe(false);
      listed.addPath('s/r1');
      listed.addPath('s/r1');
      expect(listed.hasPath('s/r1')).toBe(true);
      expect(listed.hasPath('s/r2')).toBe(false);
    } finally {
      listed.close();
    }
  });

  it("keeps the first description of a URI a Resource List lists twice, as a sync does; a change replaces it", () => {
    const listed = new ListedResources();
    try {
      listed.add(entry(1) as never);
      listed.add(entry(2) as never);
      listed.add(entry(1, 'md5:again') as never);
      expect([...listed.entries()]).toEqual([entry(1), entry(2)]);
      listed.set(entry(1, 'md5:changed') as never);
      expect([...listed.entries()]).toEqual([entry(1, 'md5:changed'), entry(2)]);
    } finally {
      listed.close();
    }
  });
});
