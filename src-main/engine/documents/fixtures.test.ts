// The project's own test documents (fixtures/documents/): one per document type, one per refusal, one per finding
// code, each read through the real reader and compared with what fixtures/documents/expected.json says of it. The
// limits too large for a file (50 MB, 50,000 entries, 1,000 links, 64 Ki characters) are streams generated here.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DOCUMENT_ERROR_CODES, DocumentError } from './errors.ts';
import { FINDING_CODES } from './findings.ts';
import type { Capability, DocumentSummary } from './model.ts';
import { DEFAULT_MAX_BYTES, readDocument, readDocumentFile } from './reader.ts';
import { NS } from './test-support.ts';

const DOCUMENTS = join(import.meta.dirname, '../../../fixtures/documents');
const FOLDERS = ['types', 'refusals', 'findings'];

type Expected =
  | { root: string; capability: Capability; isIndex: boolean; entries: number; findings: string[] }
  | { refusal: string; line?: number };
const EXPECTED = JSON.parse(readFileSync(join(DOCUMENTS, 'expected.json'), 'utf8')) as Record<string, Expected>;

type Outcome = { summary: DocumentSummary } | { error: DocumentError };

async function outcome(read: () => Promise<DocumentSummary>): Promise<Outcome> {
  try {
    return { summary: await read() };
  } catch (err) {
    if (err instanceof DocumentError) return { error: err };
    throw err;
  }
}

/** What a read came to, in expected.json's terms. */
function describeOutcome(o: Outcome): Expected {
  if ('error' in o) return o.error.line === undefined ? { refusal: o.error.code } : { refusal: o.error.code, line: o.error.line };
  const s = o.summary;
  return { root: s.root, capability: s.capability, isIndex: s.isIndex, entries: s.entries, findings: s.findings.map((f) => `${f.code}:${f.line}`) };
}

const HEAD = `<?xml version="1.0" encoding="UTF-8"?>\n<urlset ${NS}>\n<rs:ln rel="up" href="http://example.com/capabilitylist.xml"/>\n`;
const MD = '<rs:md capability="resourcelist" at="2013-01-03T09:00:00Z"/>\n';

async function* generated(head: string, count: number, item: (i: number) => string, tail = '</urlset>\n'): AsyncGenerator<string> {
  yield head;
  let batch = '';
  for (let i = 0; i < count; i++) {
    batch += item(i);
    if (batch.length > 64 * 1024) {
      yield batch;
      batch = '';
    }
  }
  yield batch + tail;
}

/** The cases too large (or not files at all) to keep as fixtures: generated streams, each with its outcome. */
const GENERATED: Record<string, () => Promise<DocumentSummary>> = {
  'too-many-entries (50,001 entries)': () =>
    readDocument(generated(HEAD + MD, 50_001, (i) => `<url><loc>http://example.com/r${i}</loc></url>\n`), { url: 'http://127.0.0.1/many.xml' }),
  'too-many-links (the up link and 1,000 more)': () =>
    readDocument(generated(HEAD, 1_000, (i) => `<rs:ln rel="http://example.com/rel/${i}" href="http://example.com/${i}"/>\n`, `${MD}<url><loc>http://example.com/a</loc></url>\n</urlset>\n`), {
      url: 'http://127.0.0.1/links.xml',
    }),
  'too-large (over 50 MB of valid entries)': () =>
    readDocument(
      generated(HEAD + MD, Math.ceil(DEFAULT_MAX_BYTES / 60) + 1000, (i) => `<url><loc>http://example.com/resource/${String(i).padStart(12, '0')}</loc></url>\n`),
      { url: 'http://127.0.0.1/huge.xml' },
    ),
  'token-too-large (a 70,000-character loc)': () =>
    readDocument(generated(HEAD + MD, 1, () => `<url><loc>http://example.com/${'a'.repeat(70_000)}</loc></url>\n`), { url: 'http://127.0.0.1/long.xml' }),
  'aborted (signal aborted before the read)': () =>
    readDocument(generated(HEAD + MD, 1, () => '<url><loc>http://example.com/a</loc></url>\n'), { url: 'http://127.0.0.1/a.xml', signal: AbortSignal.abort() }),
  'io (a file that does not exist)': () => readDocumentFile(join(DOCUMENTS, 'no-such-file.xml'), { url: 'no-such-file.xml' }),
};

describe('fixtures/documents', async () => {
  const files = FOLDERS.flatMap((folder) => readdirSync(join(DOCUMENTS, folder)).map((name) => `${folder}/${name}`)).sort();
  const outcomes = new Map<string, Outcome>();
  for (const file of files) outcomes.set(file, await outcome(() => readDocumentFile(join(DOCUMENTS, file), { url: `http://example.com/${file}` })));
  const generatedOutcomes = new Map<string, Outcome>();
  for (const [name, read] of Object.entries(GENERATED)) generatedOutcomes.set(name, await outcome(read));

  it('expected.json names exactly the files there are', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual(files);
  });

  it.each(files)('%s reads as expected.json says', (file) => {
    expect(describeOutcome(outcomes.get(file)!)).toEqual(EXPECTED[file]);
  });

  it('types/: every document type reads cleanly, as a <urlset> and (where the spec allows one) as an index', () => {
    const seen = new Set<string>();
    for (const file of files.filter((f) => f.startsWith('types/'))) {
      const o = outcomes.get(file)!;
      if ('summary' in o) seen.add(`${o.summary.capability}${o.summary.isIndex ? ' index' : ''}`);
    }
    const required = [
      'description', 'description index', 'capabilitylist', 'resourcelist', 'resourcelist index', 'resourcedump', 'resourcedump index',
      'resourcedump-manifest', 'changelist', 'changelist index', 'changedump', 'changedump index', 'changedump-manifest', 'change-notification',
    ];
    expect([...seen].sort()).toEqual(expect.arrayContaining(required));
    for (const file of files.filter((f) => f.startsWith('types/') && f !== 'types/latin1-encoding.xml')) {
      expect((EXPECTED[file] as { findings: string[] }).findings, file).toEqual([]);
    }
  });

  it('generated streams come to their refusal or finding', () => {
    const get = (name: string) => describeOutcome(generatedOutcomes.get(name)!);
    const many = get('too-many-entries (50,001 entries)') as { entries: number; findings: string[] };
    expect(many.entries).toBe(50_001);
    // HEAD and MD take lines 1–4: the 50,001st entry is on line 50,005.
    expect(many.findings).toEqual(['too-many-entries:50005']);
    const links = generatedOutcomes.get('too-many-links (the up link and 1,000 more)')!;
    expect('summary' in links && links.summary.links.length).toBe(1000);
    expect((get('too-many-links (the up link and 1,000 more)') as { findings: string[] }).findings).toEqual(['too-many-links:1003']);
    expect(get('too-large (over 50 MB of valid entries)')).toEqual({ refusal: 'too-large' });
    expect(get('token-too-large (a 70,000-character loc)')).toMatchObject({ refusal: 'token-too-large' });
    expect(get('aborted (signal aborted before the read)')).toEqual({ refusal: 'aborted' });
    expect(get('io (a file that does not exist)')).toEqual({ refusal: 'io' });
  });

  it('every refusal code has a fixture (a file under refusals/ or a generated stream)', () => {
    const refusals = new Set<string>();
    for (const o of [...outcomes.values(), ...generatedOutcomes.values()]) if ('error' in o) refusals.add(o.error.code);
    const missing = DOCUMENT_ERROR_CODES.filter((code) => !refusals.has(code));
    expect(missing, 'refusal codes without a fixture').toEqual([]);
  });

  it('every code of FINDING_CODES is produced by at least one fixture (a new rule comes with its fixture)', () => {
    const produced = new Set<string>();
    for (const o of [...outcomes.values(), ...generatedOutcomes.values()]) if ('summary' in o) for (const f of o.summary.findings) produced.add(f.code);
    const missing = FINDING_CODES.filter((code) => !produced.has(code));
    expect(missing, 'finding codes without a fixture').toEqual([]);
    // ... and nothing is produced that the list does not name.
    expect([...produced].filter((code) => !(FINDING_CODES as readonly string[]).includes(code))).toEqual([]);
  });

  it('findings/<code>.xml produces <code>', () => {
    for (const file of files.filter((f) => f.startsWith('findings/'))) {
      const code = file.slice('findings/'.length).replace(/\.xml$/, '');
      const o = outcomes.get(file)!;
      expect('summary' in o && o.summary.findings.map((f) => f.code), file).toContain(code);
    }
  });
});
