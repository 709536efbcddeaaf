import { describe, expect, it } from 'vitest';
import type { SavedSource } from '../../src-main/contract/types.ts';
import { closenessText, rankMirrors } from './mirror-choice.ts';

const list = 'http://a.test/dataset1/capabilitylist.xml';
const other = 'http://a.test/dataset2/capabilitylist.xml';
const topic = 'http://a.test/dataset1/notifications';
const source: SavedSource = { id: 1, name: 'a.test', startUrl: 'http://a.test/', sourceDescriptionUrl: 'http://a.test/.well-known/resourcesync', capabilityListUrls: [list, other], addedAt: '' };
const mirror = (name: string, capabilityListUrl: string | null, url: string | null = capabilityListUrl) => ({ name, path: `/m/${name}`, capabilityListUrl, url });

describe('the mirrors a channel may feed', () => {
  it("puts the channel's own Capability List first, then its Source's other lists, then other Sources", () => {
    const ranked = rankMirrors(
      [mirror('b-elsewhere', 'http://b.test/cl.xml'), mirror('z-own', list), mirror('other-list', other), mirror('a-own', list), mirror('broken', null)],
      list,
      source,
      topic,
    );
    expect(ranked.map((r) => [r.m.name, r.c])).toEqual([
      ['a-own', 0],
      ['z-own', 0],
      ['other-list', 1],
      ['b-elsewhere', 2],
      ['broken', 2],
    ]);
  });

  it('without the Capability List or the saved Source, goes by the host', () => {
    const ranked = rankMirrors([mirror('far', 'http://b.test/cl.xml'), mirror('near', null, 'http://a.test/resourcelist.xml')], null, null, topic);
    expect(ranked.map((r) => [r.m.name, r.c])).toEqual([
      ['near', 1],
      ['far', 2],
    ]);
  });

  it("says a mirror of one list of the channel's Capability List mirrors that list alone, not the Capability List", () => {
    const lists = { resourceListUrl: 'http://a.test/dataset1/resourcelist.xml', changeListUrl: 'http://a.test/dataset1/changelist.xml' };
    const whole = { ...mirror('whole', list), ...lists };
    const resources = { ...mirror('resources', list, lists.resourceListUrl), ...lists };
    const changes = { ...mirror('changes', list, lists.changeListUrl), ...lists };
    const ranked = rankMirrors([whole, resources, changes], list, source, topic);
    expect(ranked.map(({ m, c }) => [m.name, closenessText(m, c)])).toEqual([
      ['changes', "mirrors this Capability List's Change List alone"],
      ['resources', "mirrors this Capability List's Resource List alone"],
      ['whole', 'mirrors this Capability List'],
    ]);
  });
});
