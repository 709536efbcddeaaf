// Every *.xml of the shared corpus (documents written by others): each yields a summary or a DocumentError.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedDir } from './shared-dir.ts';
import { DocumentError } from './errors.ts';
import type { DocumentSummary, Entry } from './model.ts';
import { readDocument, readDocumentFile } from './reader.ts';
import { byteChunks } from './test-support.ts';

const CORPUS = sharedDir('corpus');

function xmlFiles(dir: string): string[] {
  return readdirSync(dir)
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? xmlFiles(path) : name.endsWith('.xml') ? [path] : [];
    })
    .sort();
}

type Outcome = { summary: DocumentSummary; entries: Entry[] } | { error: DocumentError };

async function readFile(path: string): Promise<Outcome> {
  const entries: Entry[] = [];
  try {
    const summary = await readDocumentFile(path, { url: relative(CORPUS, path), onEntry: (e) => void entries.push(e) });
    return { summary, entries };
  } catch (err) {
    if (err instanceof DocumentError) return { error: err };
    throw err;
  }
}

describe('corpus', async () => {
  const files = xmlFiles(CORPUS);
  const outcomes = new Map<string, Outcome>();
  for (const file of files) outcomes.set(relative(CORPUS, file), await readFile(file));

  function summaryOf(name: string): DocumentSummary {
    const outcome = outcomes.get(name);
    if (outcome === undefined || !('summary' in outcome)) throw new Error(`${name} was not read: ${JSON.stringify(outcome)}`);
    return outcome.summary;
  }
  function errorOf(name: string): DocumentError {
    const outcome = outcomes.get(name);
    if (outcome === undefined || !('error' in outcome)) throw new Error(`${name} was read`);
    return outcome.error;
  }
  const codes = (name: string) => summaryOf(name).findings.map((f) => f.code);

  it('reads every file to a summary or a DocumentError', () => {
    expect(files.length).toBeGreaterThanOrEqual(100);
    const read = [...outcomes.values()].filter((o) => 'summary' in o).length;
    expect(read).toBeGreaterThanOrEqual(90);
  });

  it('reads each file the same from bytes in small chunks as from the file', async () => {
    for (const file of files) {
      const bytes = readFileSync(file);
      const name = relative(CORPUS, file);
      const before = outcomes.get(name) as Outcome;
      const entries: Entry[] = [];
      const after = await readDocument(byteChunks(bytes, 13), { url: name, onEntry: (e) => void entries.push(e) }).then(
        (summary): Outcome => ({ summary, entries }),
        (error: unknown): Outcome => {
          if (error instanceof DocumentError) return { error };
          throw error;
        },
      );
      if ('error' in before) expect('error' in after && after.error.code, name).toBe(before.error.code);
      else expect(after, name).toEqual(before);
    }
  });

  it('the Ruby client fixtures: clean documents of every kind', () => {
    expect(summaryOf('resync-client-fixtures/examples/capability-list.xml')).toMatchObject({ capability: 'capabilitylist', entries: 4, findings: [] });
    expect(summaryOf('resync-client-fixtures/examples/source-description.xml')).toMatchObject({ capability: 'description', entries: 3, findings: [] });
    expect(summaryOf('resync-client-fixtures/examples/change-list-index.xml')).toMatchObject({ capability: 'changelist', isIndex: true, entries: 3, findings: [] });
    expect(summaryOf('resync-client-fixtures/examples/resource-list-index.xml')).toMatchObject({
      capability: 'resourcelist',
      isIndex: true,
      entries: 3,
      md: { at: '2013-01-03T09:00:00Z', completed: '2013-01-03T09:10:00Z' },
      findings: [],
    });
    // A deletion without path is fine in a Change Dump Manifest (§13.2).
    expect(summaryOf('resync-client-fixtures/examples/change-dump-manifest.xml')).toMatchObject({ capability: 'changedump-manifest', entries: 4, findings: [] });
    const manifest = outcomes.get('resync-client-fixtures/resourcedump/manifest.xml') as { summary: DocumentSummary; entries: Entry[] };
    expect(manifest.entries.map((e) => e.md.path)).toEqual(['/resources/res1', '/resources/res2']);
    expect(codes('resync-client-fixtures/resourcedump/manifest.xml')).toEqual(['missing-up']);
  });

  it('reports the faults of non-conformant fixtures without failing', () => {
    // base64 "hashes"
    expect(codes('resync-client-fixtures/examples/change-list.xml')).toEqual(['invalid-hash', 'invalid-hash', 'invalid-hash', 'invalid-hash']);
    // until before from, completed before at, in the document and in the entry
    expect(summaryOf('resync-client-fixtures/resourcedump/changedump.xml').findings.map((f) => [f.code, f.line])).toEqual([
      ['until-before-from', 6],
      ['until-before-from', 11],
    ]);
    expect(codes('resync-client-fixtures/resourcedump/resourcedump.xml')).toEqual(['completed-before-at', 'completed-before-at']);
    // relative locs, an unknown "modified" attribute, no up link
    const caps = summaryOf('resync-testdata/explore1/caps1.xml');
    expect(caps.capability).toBe('capabilitylist');
    expect(caps.findings.map((f) => `${f.severity}:${f.code}`)).toEqual([
      'warning:unknown-attribute',
      'error:missing-up',
      'error:relative-loc',
      'error:relative-loc',
      'error:relative-loc',
      'error:relative-loc',
    ]);
    expect(codes('resync-testdata/find/find1/.well-known/resourcelist.xml')).toEqual(['unknown-attribute', 'missing-at']);
  });

  it('the spec examples of resync (v1.0 and v1.1)', () => {
    const v11 = 'resync-testdata/examples_from_spec_v1_1';
    expect(summaryOf(`${v11}/resourcesync_ex_19.xml`)).toMatchObject({ capability: 'changelist', entries: 4, findings: [] });
    expect(summaryOf(`${v11}/resourcesync_ex_20.xml`)).toMatchObject({ capability: 'changelist', root: 'sitemapindex', entries: 3, findings: [] });
    expect(summaryOf(`${v11}/resourcesync_ex_23.xml`)).toMatchObject({ capability: 'changedump-manifest', entries: 4, findings: [] });
    expect(codes(`${v11}/resourcesync_ex_27.xml`)).toEqual(['invalid-hash', 'invalid-hash', 'invalid-hash', 'invalid-hash']);
    expect(summaryOf('resync-testdata/examples_from_spec_v1_0/resourcesync_ex_19.xml')).toMatchObject({ capability: 'changelist', entries: 4, findings: [] });
    // Capabilities of the Archiving spec are not ResourceSync core capabilities.
    expect(errorOf('resync-testdata/examples_from_spec_v1_0/archives_ex_3_1.xml').code).toBe('unknown-capability');
    // ... but a Capability List may list them.
    expect(summaryOf('resync-testdata/examples_from_spec_v1_0/archives_ex_2_1.xml')).toMatchObject({ capability: 'capabilitylist', entries: 8, findings: [] });
  });

  it('refuses plain sitemaps and unknown capabilities', () => {
    expect(errorOf('resync-testdata/sitemapindex1/sitemap.xml').code).toBe('missing-md');
    expect(errorOf('resync-testdata/sitemapindex2/sitemap00000.xml').code).toBe('missing-md');
    const unknown = errorOf('resync-testdata/unknown/unknown1.xml');
    expect(unknown.code).toBe('unknown-capability');
    expect(unknown.line).toBe(3);
  });
});
