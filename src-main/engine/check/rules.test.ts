// Cross-document findings name URLs that come from the Source's own documents: a hostile 60,000-character loc
// is quoted in a bounded slice.
import { describe, expect, it } from 'vitest';
import type { DocumentSummary } from '../documents/model.ts';
import { indexEntryUntil, listedAgain, upElsewhere } from './rules.ts';

const LONG = `http://127.0.0.1/${'a'.repeat(60_000)}`;

function summary(up: string): DocumentSummary {
  return { url: LONG, root: 'urlset', capability: 'resourcelist', isIndex: false, md: { capability: 'resourcelist' }, links: [{ rel: 'up', href: up }], entries: 0, findings: [] };
}

describe('check rules', () => {
  it('quote bounded slices of long URLs', () => {
    const up = upElsewhere(summary(LONG), 'http://127.0.0.1/list.xml', [`${LONG}/other`], 'Capability List');
    expect(up?.code).toBe('up-link-elsewhere');
    expect(up!.message.length).toBeLessThan(600);
    const again = listedAgain(LONG, LONG, true, 3);
    expect(again.message.length).toBeLessThan(600);
    expect(again.message).toMatch(/characters left out/);
  });

  it('index-entry-until: only for a Change List part, only when the entry and the part disagree on until', () => {
    const part = (md: DocumentSummary['md'], isIndex = false): DocumentSummary => ({ ...summary('http://127.0.0.1/cl.xml'), capability: 'changelist', isIndex, md });
    const closed = part({ capability: 'changelist', from: '2013-01-01T00:00:00Z', until: '2013-01-02T00:00:00Z' });
    const open = part({ capability: 'changelist', from: '2013-01-01T00:00:00Z' });
    expect(indexEntryUntil(closed, { until: '2013-01-02T00:00:00Z', line: 3 }, 'http://127.0.0.1/i.xml')).toBeNull();
    expect(indexEntryUntil(open, { until: undefined, line: 3 }, 'http://127.0.0.1/i.xml')).toBeNull();
    expect(indexEntryUntil(closed, { until: undefined, line: 3 }, 'http://127.0.0.1/i.xml')).toMatchObject({ severity: 'error', code: 'index-entry-until' });
    expect(indexEntryUntil(open, { until: '2013-01-02T00:00:00Z', line: 3 }, 'http://127.0.0.1/i.xml')?.message).toMatch(/line 3\) gives until="2013-01-02T00:00:00Z".*must not \(§12\.2\)$/);
    // A nested index is another finding (nested-index); a Change Dump is not asked this.
    expect(indexEntryUntil(part(closed.md, true), { until: undefined, line: 3 }, 'http://127.0.0.1/i.xml')).toBeNull();
    expect(indexEntryUntil({ ...closed, capability: 'changedump' }, { until: undefined, line: 3 }, 'http://127.0.0.1/i.xml')).toBeNull();
  });
});
