// Cross-document findings name URLs that come from the Source's own documents: a hostile 60,000-character loc
// is quoted in a bounded slice.
import { describe, expect, it } from 'vitest';
import type { DocumentSummary } from '../documents/model.ts';
import { listedAgain, upElsewhere } from './rules.ts';

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
});
