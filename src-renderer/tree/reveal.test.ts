import { describe, expect, it } from 'vitest';
import type { ChildRef, DocumentView, SavedSource } from '../../src-main/contract/types.ts';
import { planReveal } from './reveal.ts';

const base = 'http://127.0.0.1:1';
const child = (path: string, capability?: string): ChildRef => ({ url: base + path, md: capability ? { capability } : {}, links: [], ...(capability ? { capability } : {}) });

function view(url: string, capability: string, children: ChildRef[], isIndex = false): DocumentView {
  return { url, capability, isIndex, children, open: null, fetchedAt: '', bytes: 0, entries: children.length, md: { capability }, links: [], findings: [] } as unknown as DocumentView;
}

const views = new Map<string, DocumentView>([
  [base + '/sd.xml', view(base + '/sd.xml', 'description', [child('/cl1.xml', 'capabilitylist'), child('/cl2.xml', 'capabilitylist')])],
  [base + '/cl1.xml', view(base + '/cl1.xml', 'capabilitylist', [child('/rl.xml', 'resourcelist'), child('/cl-index.xml', 'changelist'), child('/rd.xml', 'resourcedump')])],
  [base + '/cl2.xml', view(base + '/cl2.xml', 'capabilitylist', [child('/rl-index.xml', 'resourcelist')])],
  [base + '/rl-index.xml', view(base + '/rl-index.xml', 'resourcelist', [child('/rl-1.xml'), child('/rl-2.xml')], true)],
  [base + '/cl-index.xml', view(base + '/cl-index.xml', 'changelist', [child('/c-1.xml')], true)],
]);

const source: SavedSource = { id: 7, name: 'x', startUrl: base + '/', sourceDescriptionUrl: base + '/sd.xml', capabilityListUrls: [], addedAt: '' };

function fetcher() {
  const fetched: string[] = [];
  const viewOf = async (url: string) => {
    fetched.push(url);
    return views.get(url) ?? null;
  };
  return { fetched, viewOf };
}

describe('planReveal', () => {
  it('unfolds the Source Description and every Capability List, fetching nothing else when no document was pasted', async () => {
    const { fetched, viewOf } = fetcher();
    expect(await planReveal(source, null, viewOf)).toEqual({ expand: ['7/0', '7/0/0', '7/0/1'], node: null });
    expect(fetched).toEqual([base + '/sd.xml', base + '/cl1.xml', base + '/cl2.xml']);
  });

  it('finds a pasted index part through its index, opening only indexes of its capability', async () => {
    const { fetched, viewOf } = fetcher();
    const plan = await planReveal(source, { url: base + '/rl-2.xml', capability: 'resourcelist' }, viewOf);
    expect(plan.node).toMatchObject({ id: '7/0/1/0/1', url: base + '/rl-2.xml' });
    expect(plan.expand).toEqual(expect.arrayContaining(['7/0', '7/0/0', '7/0/1', '7/0/1/0']));
    expect(fetched).not.toContain(base + '/cl-index.xml');
  });

  it('selects a pasted Capability List or list where the tree shows it', async () => {
    const { viewOf } = fetcher();
    expect((await planReveal(source, { url: base + '/cl2.xml', capability: 'capabilitylist' }, viewOf)).node?.id).toBe('7/0/1');
    expect((await planReveal(source, { url: base + '/rl.xml', capability: 'resourcelist' }, viewOf)).node?.id).toBe('7/0/0/0');
    expect((await planReveal(source, { url: base + '/elsewhere.xml', capability: 'resourcelist' }, viewOf)).node).toBeNull();
  });

  it('stops fetching at its budget', async () => {
    const { fetched, viewOf } = fetcher();
    await planReveal(source, { url: base + '/nowhere.xml', capability: 'resourcelist' }, viewOf, 2);
    expect(fetched).toHaveLength(2);
  });
});
