// Every example of the core spec and of the Change Notification spec, extracted from the markdown at test time.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sharedDir } from './shared-dir.ts';
import { DocumentError } from './errors.ts';
import type { DocumentSummary } from './model.ts';
import { readDocument } from './reader.ts';
import { extractExamples, type SpecExample } from './spec-examples.ts';

const SPECS = sharedDir('specs');

type Outcome = { summary: DocumentSummary } | { error: DocumentError };

async function readExample(example: SpecExample): Promise<Outcome> {
  try {
    const summary = await readDocument(
      (async function* () {
        yield example.text;
      })(),
      { url: `spec-example-${example.example}` },
    );
    return { summary };
  } catch (err) {
    // Anything but a DocumentError fails the test here.
    if (err instanceof DocumentError) return { error: err };
    throw err;
  }
}

async function readAll(file: string): Promise<{ example: SpecExample; outcome: Outcome }[]> {
  const examples = extractExamples(readFileSync(`${SPECS}/${file}`, 'utf8'));
  const out = [];
  for (const example of examples) out.push({ example, outcome: await readExample(example) });
  return out;
}

function summaries(results: { example: SpecExample; outcome: Outcome }[]): Map<number, DocumentSummary[]> {
  const byNumber = new Map<number, DocumentSummary[]>();
  for (const { example, outcome } of results) {
    if ('summary' in outcome && example.example !== null) {
      byNumber.set(example.example, [...(byNumber.get(example.example) ?? []), outcome.summary]);
    }
  }
  return byNumber;
}

describe('core spec (ANSI/NISO Z39.99-2017) examples', async () => {
  const results = await readAll('resourcesync-core-z39.99-2017.ja.md');
  const read = summaries(results);

  it('finds all 33 examples and the two <pre> skeletons of table 2', () => {
    const numbers = results.map((r) => r.example.example);
    expect(numbers.filter((n) => n !== null)).toEqual(Array.from({ length: 33 }, (_, i) => i + 1));
    expect(results.filter((r) => r.example.example === null)).toHaveLength(2);
  });

  it('reads every complete document and refuses the rest cleanly', () => {
    const complete = results.filter((r) => 'summary' in r.outcome).map((r) => r.example.example);
    expect(complete).toEqual([1, 2, 3, 4, 5, 6, 7, 8, ...Array.from({ length: 16 }, (_, i) => i + 12), 29, 30, 31, 32, 33]);
    for (const { example, outcome } of results) {
      if (!example.looksLikeDocument) expect('error' in outcome, `example ${example.example} is not a document`).toBe(true);
    }
  });

  const expected: [number, DocumentSummary['capability'], DocumentSummary['root'], number][] = [
    [1, 'resourcelist', 'urlset', 2],
    [2, 'resourcelist', 'urlset', 2],
    [3, 'changelist', 'urlset', 3],
    [4, 'resourcedump', 'urlset', 1],
    [5, 'resourcedump-manifest', 'urlset', 2],
    [6, 'capabilitylist', 'urlset', 3],
    [7, 'description', 'urlset', 1],
    [8, 'resourcelist', 'sitemapindex', 2],
    [12, 'description', 'urlset', 3],
    [13, 'capabilitylist', 'urlset', 4],
    [14, 'resourcelist', 'urlset', 2],
    [15, 'resourcelist', 'sitemapindex', 3],
    [16, 'resourcelist', 'urlset', 2],
    [17, 'resourcedump', 'urlset', 3],
    [18, 'resourcedump-manifest', 'urlset', 2],
    [19, 'changelist', 'urlset', 4],
    [20, 'changelist', 'sitemapindex', 3],
    [21, 'changelist', 'urlset', 4],
    [22, 'changedump', 'urlset', 3],
    [23, 'changedump-manifest', 'urlset', 4],
    [24, 'changelist', 'urlset', 1],
    [25, 'changelist', 'urlset', 1],
    [26, 'changelist', 'urlset', 1],
    [27, 'changelist', 'urlset', 2],
    [29, 'changelist', 'urlset', 1],
    [30, 'changelist', 'urlset', 1],
    [31, 'changelist', 'urlset', 1],
    [32, 'changelist', 'urlset', 1],
    [33, 'changelist', 'urlset', 1],
  ];
  for (const [number, capability, root, entries] of expected) {
    it(`example ${number}: ${capability}${root === 'sitemapindex' ? ' index' : ''}, ${entries} entries`, () => {
      const [summary] = read.get(number) ?? [];
      expect(summary).toMatchObject({ capability, root, isIndex: root === 'sitemapindex', entries });
    });
  }

  it('the examples of sections 8–14 are conformant, except for their known faults', () => {
    const faults = new Map<number, string[]>([
      [14, ['invalid-hash']], // "sha-" and "256:…" split across lines in this copy
      [18, ['invalid-hash']],
      [27, ['invalid-hash', 'invalid-hash', 'invalid-hash', 'invalid-hash']], // base64 "hashes"
    ]);
    for (const number of [...Array.from({ length: 16 }, (_, i) => i + 12), 29, 30, 31, 32, 33]) {
      const [summary] = read.get(number) ?? [];
      expect(summary.findings.map((f) => f.code), `example ${number}`).toEqual(faults.get(number) ?? []);
    }
    expect(read.get(14)?.[0].findings[0].message).toMatch(/split by whitespace/);
  });

  it('the walkthrough examples (§1.3) leave out the mandatory up link: an error, the examples are abridged', () => {
    for (const number of [1, 2, 3, 5, 8]) {
      expect(read.get(number)?.[0].findings.map((f) => `${f.severity} ${f.code}`), `example ${number}`).toEqual(['error missing-up']);
    }
    // Example 4's package also leaves out its recommended type and length (§11.1).
    expect(read.get(4)?.[0].findings.map((f) => `${f.severity} ${f.code}`)).toEqual(['error missing-up', 'warning package-md']);
  });

  it('no example of sections 8–14 has an error (their faults are malformed hashes, warnings)', () => {
    for (const number of [...Array.from({ length: 16 }, (_, i) => i + 12), 29, 30, 31, 32, 33]) {
      const [summary] = read.get(number) ?? [];
      expect(summary.findings.filter((f) => f.severity === 'error'), `example ${number}`).toEqual([]);
    }
  });

  it('refuses example 28 (an unclosed <rs:ln>), the HTML, HTTP and robots.txt examples and the table skeletons', () => {
    const errors = new Map(
      results.filter((r) => 'error' in r.outcome).map((r, i) => [r.example.example ?? `pre ${i}`, (r.outcome as { error: DocumentError }).error]),
    );
    expect(errors.get(28)?.code).toBe('malformed');
    expect(errors.get(28)?.line).toBe(31);
    expect(errors.get(9)?.code).toBe('html');
    expect(errors.get(10)?.code).toBe('not-xml');
    expect(errors.get(11)?.code).toBe('not-xml');
    const skeletons = [...errors.entries()].filter(([key]) => typeof key === 'string').map(([, e]) => e.code);
    expect(skeletons.sort()).toEqual(['malformed', 'wrong-namespace']);
  });
});

describe('Change Notification spec examples', async () => {
  const english = await readAll('change-notification-1.0.1.en.md');
  const japanese = await readAll('change-notification-1.0.1.ja.md');

  it('reads the payload of example 1 (two blocks in the English copy: a document and a fragment)', () => {
    const blocks = english.filter((r) => r.example.example === 1);
    expect(blocks).toHaveLength(2);
    expect('summary' in blocks[0].outcome && blocks[0].outcome.summary).toMatchObject({
      capability: 'change-notification',
      root: 'urlset',
      entries: 1,
      md: { from: '2013-01-03T00:00:00Z', until: '2013-01-03T00:10:00Z' },
      findings: [],
    });
    expect(blocks[1].example.looksLikeDocument).toBe(false);
    expect('error' in blocks[1].outcome && blocks[1].outcome.error.code).toBe('wrong-root');
    const [whole] = summaries(japanese).get(1) ?? [];
    expect(whole).toMatchObject({ capability: 'change-notification', entries: 2 });
    // The Japanese copy splits "sha-256" across lines in the second hash.
    expect(whole.findings).toEqual([expect.objectContaining({ code: 'invalid-hash', severity: 'warning', line: 20 })]);
  });

  it('refuses the HTTP examples 2–6 as not XML', () => {
    for (const results of [english, japanese]) {
      for (const { example, outcome } of results.filter((r) => r.example.example !== null && r.example.example >= 2 && r.example.example <= 6)) {
        expect('error' in outcome && outcome.error.code, `example ${example.example}`).toBe('not-xml');
      }
    }
  });

  it('example 7: a Capability List with a change-notification channel (its start tag is broken in the English copy)', () => {
    const [en] = english.filter((r) => r.example.example === 7);
    expect('error' in en.outcome && en.outcome.error.code).toBe('malformed');
    const [ja] = summaries(japanese).get(7) ?? [];
    expect(ja).toMatchObject({ capability: 'capabilitylist', entries: 5, findings: [] });
  });
});
