import { describe, expect, it } from 'vitest';
import type { ChildRef, DocumentView, Entry, EntryPage } from '../../src-main/contract/types.ts';
import { PAGE_SIZE } from '../data/queries.ts';
import type { NodeRef } from '../state/ui.ts';
import { ChildNodes, isPending } from './children.ts';
import { findByName, flattenTree, nextItem, nodeLabel } from './rows.ts';
import type { TreeRow } from './rows.ts';

const base = 'http://127.0.0.1:1';
const part = (i: number) => `${base}/rl-${i}.xml`;
const child = (url: string, capability?: string): ChildRef => ({ url, md: capability ? { capability } : {}, links: [], ...(capability ? { capability } : {}) });

function view(url: string, capability: string, children: ChildRef[], extra: Partial<DocumentView> = {}): DocumentView {
  return { url, capability, isIndex: false, children, open: null, fetchedAt: '', bytes: 0, entries: children.length, md: { capability }, links: [], findings: [], ...extra } as unknown as DocumentView;
}

/** A Source Description, two Capability Lists, and an index of `parts` parts whose view carries the first `carried`. */
function source(parts: number, carried = parts) {
  const index = view(base + '/rl-index.xml', 'resourcelist', Array.from({ length: carried }, (_, i) => child(part(i + 1))), {
    isIndex: true,
    entries: parts,
    ...(parts > carried ? { childrenLeftOut: parts - carried } : {}),
  });
  const views = new Map<string, DocumentView>([
    [base + '/sd.xml', view(base + '/sd.xml', 'description', [child(base + '/cl1.xml', 'capabilitylist'), child(base + '/cl2.xml', 'capabilitylist')])],
    [base + '/cl1.xml', view(base + '/cl1.xml', 'capabilitylist', [child(base + '/cl.xml', 'changelist')])],
    [base + '/cl2.xml', view(base + '/cl2.xml', 'capabilitylist', [child(base + '/rl-index.xml', 'resourcelist')])],
    [index.url, index],
  ]);
  const roots: NodeRef[] = [{ id: '7/0', url: base + '/sd.xml', capability: 'description' }];
  const stateOf = (url: string) => ({ view: views.get(url), failed: false });
  return { roots, stateOf, index };
}

const describeRow = (row: TreeRow) =>
  row.kind === 'note' ? `note ${row.text}` : `${row.level} ${row.posinset}/${row.setsize} ${row.node.url.replace(base, '')}`;

describe('flattenTree', () => {
  it('lists the expanded items depth first, with level, position and set size', () => {
    const { roots, stateOf } = source(3);
    const rows = flattenTree(roots, { '7/0': true, '7/0/1': true, '7/0/1/0': true }, stateOf);
    expect(Array.from({ length: rows.count }, (_, i) => describeRow(rows.at(i)))).toEqual([
      '1 1/1 /sd.xml',
      '2 1/2 /cl1.xml',
      '2 2/2 /cl2.xml',
      '3 1/1 /rl-index.xml',
      '4 1/3 /rl-1.xml',
      '4 2/3 /rl-2.xml',
      '4 3/3 /rl-3.xml',
    ]);
    expect(rows.indexOf('7/0/1/0/2')).toBe(6);
    expect(rows.at(6).parent).toBe(3);
    expect(rows.keyAt(6)).toBe('7/0/1/0/2');
    expect(rows.expandedUrls).toEqual([base + '/sd.xml', base + '/cl2.xml', base + '/rl-index.xml']);
  });

  it('keeps a run of 50,000 siblings as one piece, split where one of them is expanded', () => {
    const { roots, stateOf: own } = source(50_000);
    // Part 30,001 is itself an index of two parts.
    const nested = view(part(30_001), 'resourcelist', [child(base + '/a.xml'), child(base + '/b.xml')], { isIndex: true });
    const stateOf = (url: string) => (url === nested.url ? { view: nested, failed: false } : own(url));
    const expanded = { '7/0': true, '7/0/1': true, '7/0/1/0': true, '7/0/1/0/30000': true };
    const rows = flattenTree(roots, expanded, stateOf);
    expect(rows.count).toBe(4 + 50_000 + 2);
    expect(describeRow(rows.at(4 + 30_000))).toBe('4 30001/50000 /rl-30001.xml');
    expect(describeRow(rows.at(4 + 30_001))).toBe('5 1/2 /a.xml');
    expect(describeRow(rows.at(4 + 30_003))).toBe('4 30002/50000 /rl-30002.xml');
    expect(rows.at(4 + 30_003).parent).toBe(3);
    expect(rows.indexOf('7/0/1/0/30001')).toBe(4 + 30_003);
    expect(rows.indexOf('7/0/1/0/30000/1')).toBe(4 + 30_002);
    expect(describeRow(rows.at(rows.count - 1))).toBe('4 50000/50000 /rl-50000.xml');
    expect(nextItem(rows, 4 + 30_002, 1)).toBe(4 + 30_003);
    expect(nextItem(rows, rows.count, -1)).toBe(rows.count - 1);
    expect(nextItem(rows, 0, -1)).toBe(0);
    const nameOf = (row: { node: NodeRef }) => nodeLabel(row.node, stateOf(row.node.url).view);
    expect(findByName(rows, rows.count - 1, 's', nameOf)).toBe(0);
    expect(findByName(rows, 4, 'c', nameOf)).toBe(1);
    expect(findByName(rows, 4, 'x', nameOf)).toBe(-1);
    // The same letter again and again goes on through the parts of one name, one part a letter.
    // (Parts not read yet are named "Document".)
    expect(findByName(rows, 4, 'd', nameOf)).toBe(5);
    expect(findByName(rows, 5, 'dd', nameOf)).toBe(6);
    expect(findByName(rows, 6, 'ddd', nameOf)).toBe(7);
    // A name typed out keeps to the item it found.
    expect(findByName(rows, 5, 'document', nameOf)).toBe(5);
  });

  it("makes rows for an index's children past those its view carries, filled in as their pages are read", () => {
    const { roots, stateOf, index } = source(12_000, 10_000);
    const pages = new Map<number, EntryPage>();
    const children = new ChildNodes((url, page) => (url === index.url ? pages.get(page) : undefined));
    const build = () => flattenTree(roots, { '7/0': true, '7/0/1': true, '7/0/1/0': true }, stateOf, (node, v) => children.of(node, v));
    let rows = build();
    expect(rows.count).toBe(4 + 12_000);
    const last = rows.at(rows.count - 1);
    expect(last.kind === 'item' && isPending(last.node) && last.node.pending).toEqual({ url: index.url, page: Math.floor(11_999 / PAGE_SIZE) });
    expect(last.kind === 'item' && [last.node.id, last.node.capability, last.posinset, last.setsize]).toEqual(['7/0/1/0/11999', 'resourcelist', 12_000, 12_000]);
    // No note: every child has its row.
    expect(Array.from({ length: 10 }, (_, i) => rows.at(rows.count - 1 - i).kind)).not.toContain('note');

    const page = Math.floor(11_999 / PAGE_SIZE);
    const entries: Entry[] = Array.from({ length: PAGE_SIZE }, (_, j) => ({ index: page * PAGE_SIZE + j, loc: part(page * PAGE_SIZE + j + 1), md: {}, links: [] }) as unknown as Entry);
    pages.set(page, { total: 12_000, matched: 12_000, offset: page * PAGE_SIZE, rows: entries.filter((e) => e.index < 12_000) });
    rows = build();
    expect(describeRow(rows.at(rows.count - 1))).toBe('4 12000/12000 /rl-12000.xml');
    // The same node object from one build to the next (a memoized row does not render again).
    const nodeAt = (r: ReturnType<typeof build>, i: number) => (r.at(i) as { node: NodeRef }).node;
    expect(nodeAt(build(), rows.count - 1)).toBe(nodeAt(rows, rows.count - 1));
  });

  it('says how many Manifests of a dump it leaves out, which are not its entries', () => {
    const dump = view(base + '/rd.xml', 'resourcedump', [child(base + '/m1.xml', 'resourcedump-manifest')], { entries: 30_000, childrenLeftOut: 12 });
    const rows = flattenTree([{ id: '1/0', url: dump.url, capability: 'resourcedump' }], { '1/0': true }, () => ({ view: dump, failed: false }));
    expect(Array.from({ length: rows.count }, (_, i) => describeRow(rows.at(i)))).toEqual([
      '1 1/1 /rd.xml',
      '2 1/1 /m1.xml',
      'note 12 more not shown in the tree; the entries table lists them all',
    ]);
  });

  it('watches an expanded item whose view is not there yet, though it cannot tell yet whether it has children', () => {
    // An index part looks like a list until read: after a reload its view arrives after the rows were built.
    const rows = flattenTree([{ id: '1/0', url: base + '/rl-index.xml', capability: 'resourcelist' }], { '1/0': true }, () => ({ view: undefined, failed: false }));
    expect(rows.count).toBe(1);
    expect(rows.expandedUrls).toEqual([base + '/rl-index.xml']);
  });

  it('says when an expanded document could not be read, and skips that note with the keys', () => {
    const roots: NodeRef[] = [
      { id: '1/0', url: base + '/cl1.xml', capability: 'capabilitylist' },
      { id: '1/1', url: base + '/cl2.xml', capability: 'capabilitylist' },
    ];
    const rows = flattenTree(roots, { '1/0': true }, () => ({ view: undefined, failed: true }));
    expect(describeRow(rows.at(1))).toBe('note Could not load this document');
    expect(nextItem(rows, 0, 1)).toBe(2);
    expect(nextItem(rows, 2, -1)).toBe(0);
  });
});
