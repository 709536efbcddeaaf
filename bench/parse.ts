// Benchmark of the streaming document reader.
//   npx node --experimental-strip-types --disable-warning=ExperimentalWarning bench/parse.ts
// 1. A 50,000-entry Resource List of about 10 MB: readDocumentFile time and RSS growth (targets 0.3 s, 60 MB),
//    beside a whole-document parse of the same file with xml-js (xml2js), the reference.
// 2. A Resource List Index of 20 x 50,000 entries, walked child after child (targets 15 s, 400 MB peak RSS).
// Data is generated once into .bench-data/ (git-ignored) and reused.
import { createReadStream, createWriteStream, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import xmljs from 'xml-js';
import { checkIndexChild } from '../src-main/engine/documents/conformance.ts';
import { createSaxesParser } from '../src-main/engine/documents/lean-saxes.ts';
import type { DocumentSummary } from '../src-main/engine/documents/model.ts';
import { readDocumentFile } from '../src-main/engine/documents/reader.ts';

const DATA_DIR = resolve(import.meta.dirname, '..', '.bench-data', 'parse');
const DATA_VERSION = 'parse-bench-1';
const ENTRIES = 50_000;
const CHILDREN = 20;
const RUNS = 5;

export const TARGETS = { listSeconds: 0.3, listRssMb: 60, indexSeconds: 15, indexPeakRssMb: 400 } as const;

export interface Measure {
  seconds: number;
  cpuSeconds: number;
  rssGrowthMb: number;
  peakRssMb: number;
}

export interface ParseBenchResult {
  file: { path: string; bytes: number; entries: number };
  /** First (cold) run of readDocumentFile. */
  readerCold: Measure;
  /** Best and median of the following warm runs. */
  readerBest: Measure;
  readerMedian: Measure;
  /** saxes alone on the same file, without any handler: the floor under the reader (best of the warm runs). */
  saxesAlone: Measure;
  xmljs: Measure;
  index: Measure & { documents: number; entries: number; findings: number };
  targetsMet: { listTime: boolean; listRss: boolean; indexTime: boolean; indexRss: boolean };
}

const MB = 1024 * 1024;

/** A gc() even without --expose-gc, so that baselines are measured after a collection. */
function getGc(): () => void {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (existing) return existing;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}
const gc = getGc();

function hex(i: number, digits: number): string {
  let out = '';
  let x = (i + 1) * 2654435761;
  while (out.length < digits) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out += x.toString(16).padStart(8, '0');
  }
  return out.slice(0, digits);
}

async function writeList(path: string, part: number | null, indexUrl: string | null): Promise<void> {
  const out = createWriteStream(path);
  const write = (s: string) => (out.write(s) ? undefined : new Promise<void>((r) => out.once('drain', r)));
  await write(
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
      '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"\n' +
      '        xmlns:rs="http://www.openarchives.org/rs/terms/">\n' +
      '  <rs:ln rel="up" href="http://example.com/dataset1/capabilitylist.xml"/>\n' +
      (indexUrl ? `  <rs:ln rel="index" href="${indexUrl}"/>\n` : '') +
      '  <rs:md capability="resourcelist" at="2013-01-03T09:00:00Z" completed="2013-01-03T09:01:00Z"/>\n',
  );
  const prefix = part === null ? '' : `part${part}/`;
  for (let i = 0; i < ENTRIES; i++) {
    const second = String(i % 60).padStart(2, '0');
    const minute = String(Math.floor(i / 60) % 60).padStart(2, '0');
    await write(
      `  <url>\n    <loc>http://example.com/dataset1/${prefix}res${i}.html</loc>\n` +
        `    <lastmod>2013-01-02T13:${minute}:${second}Z</lastmod>\n` +
        `    <rs:md hash="md5:${hex(i, 32)}" length="${(i * 7919) % 1_000_000}" type="text/html"/>\n  </url>\n`,
    );
  }
  await write('</urlset>\n');
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
}

function indexUrl(): string {
  return 'http://example.com/dataset1/resourcelist-index.xml';
}

function childUrl(i: number): string {
  return `http://example.com/dataset1/resourcelist-${i}.xml`;
}

async function ensureData(): Promise<{ list: string; index: string; children: string[] }> {
  await mkdir(DATA_DIR, { recursive: true });
  const marker = join(DATA_DIR, 'VERSION');
  const list = join(DATA_DIR, 'resourcelist.xml');
  const index = join(DATA_DIR, 'resourcelist-index.xml');
  const children = Array.from({ length: CHILDREN }, (_, i) => join(DATA_DIR, `resourcelist-${i}.xml`));
  if (existsSync(marker) && readFileSync(marker, 'utf8') === DATA_VERSION) return { list, index, children };
  await writeList(list, null, null);
  for (let i = 0; i < CHILDREN; i++) await writeList(children[i], i, indexUrl());
  writeFileSync(
    index,
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
      '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">\n' +
      '  <rs:ln rel="up" href="http://example.com/dataset1/capabilitylist.xml"/>\n' +
      '  <rs:md capability="resourcelist" at="2013-01-03T09:00:00Z"/>\n' +
      children.map((_, i) => `  <sitemap><loc>${childUrl(i)}</loc><rs:md at="2013-01-03T09:00:00Z"/></sitemap>\n`).join('') +
      '</sitemapindex>\n',
  );
  writeFileSync(marker, DATA_VERSION);
  return { list, index, children };
}

/** Runs `work` while sampling RSS (on a timer and whenever `sample` is called). */
async function measure<T>(work: (sample: () => void) => Promise<T>): Promise<{ result: T; measure: Measure }> {
  gc();
  const baseline = process.memoryUsage.rss();
  let peak = baseline;
  const sample = () => {
    const rss = process.memoryUsage.rss();
    if (rss > peak) peak = rss;
  };
  const timer = setInterval(sample, 5);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  try {
    const result = await work(sample);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    sample();
    return {
      result,
      measure: {
        seconds,
        cpuSeconds: (cpu.user + cpu.system) / 1e6,
        rssGrowthMb: (peak - baseline) / MB,
        peakRssMb: peak / MB,
      },
    };
  } finally {
    clearInterval(timer);
  }
}

async function readList(path: string, sample: () => void): Promise<DocumentSummary> {
  let n = 0;
  return readDocumentFile(path, {
    onEntry: () => {
      if (++n % 2000 === 0) sample();
    },
  });
}

/** saxes as the reader creates it (lean-saxes.ts), without any handler. */
async function saxesOnly(path: string): Promise<void> {
  const parser = createSaxesParser();
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) parser.write((chunk as Buffer).toString('utf8'));
  parser.close();
}

function median(values: Measure[], key: keyof Measure): Measure {
  const sorted = [...values].sort((a, b) => a[key] - b[key]);
  return sorted[Math.floor(sorted.length / 2)];
}

export async function runParseBench(): Promise<ParseBenchResult> {
  const { list, index, children } = await ensureData();
  const { size: bytes } = await stat(list);

  const runs: Measure[] = [];
  let entries = 0;
  for (let i = 0; i < RUNS; i++) {
    const { result, measure: m } = await measure((sample) => readList(list, sample));
    if (result.entries !== ENTRIES || result.findings.length !== 0) {
      throw new Error(`unexpected summary: ${result.entries} entries, ${result.findings.length} findings`);
    }
    entries = result.entries;
    runs.push(m);
  }
  const warm = runs.slice(1);
  const readerBest = warm.reduce((a, b) => (b.seconds < a.seconds ? b : a));

  const saxesRuns: Measure[] = [];
  for (let i = 0; i < RUNS; i++) saxesRuns.push((await measure(() => saxesOnly(list))).measure);
  const saxesAlone = saxesRuns.slice(1).reduce((a, b) => (b.seconds < a.seconds ? b : a));

  // The walk: the index, then each child in turn, counting entries and checking each child against the index.
  const { result: walked, measure: walk } = await measure(async (sample) => {
    const indexSummary = await readDocumentFile(index, { url: indexUrl(), onEntry: sample });
    let total = 0;
    let findings = indexSummary.findings.length;
    for (let i = 0; i < children.length; i++) {
      const child = await readList(children[i], sample);
      total += child.entries;
      findings += child.findings.length + checkIndexChild(indexSummary, { ...child, url: childUrl(i) }).length;
    }
    return { documents: 1 + children.length, entries: total, findings };
  });

  // The reference last: its whole-document tree would inflate the RSS of anything measured after it.
  const { measure: reference } = await measure(async (sample) => {
    const text = await readFile(list, 'utf8');
    const tree = xmljs.xml2js(text);
    sample();
    return (tree as { elements?: unknown[] }).elements?.length ?? 0;
  });

  const indexWalk = { ...walk, ...walked };
  return {
    file: { path: list, bytes, entries },
    readerCold: runs[0],
    readerBest,
    readerMedian: median(warm, 'seconds'),
    saxesAlone,
    xmljs: reference,
    index: indexWalk,
    targetsMet: {
      listTime: readerBest.seconds <= TARGETS.listSeconds,
      listRss: runs.every((r) => r.rssGrowthMb <= TARGETS.listRssMb),
      indexTime: indexWalk.seconds <= TARGETS.indexSeconds,
      indexRss: indexWalk.peakRssMb <= TARGETS.indexPeakRssMb,
    },
  };
}

function row(label: string, m: Measure, target = ''): string {
  return [
    label.padEnd(34),
    `${m.seconds.toFixed(3)} s`.padStart(10),
    `${m.cpuSeconds.toFixed(3)} s`.padStart(10),
    `${m.rssGrowthMb.toFixed(1)} MB`.padStart(11),
    `${m.peakRssMb.toFixed(1)} MB`.padStart(11),
    `  ${target}`,
  ].join(' ');
}

export function printResult(r: ParseBenchResult): void {
  const ok = (met: boolean) => (met ? 'met' : 'MISSED');
  console.log(`Resource List: ${r.file.entries.toLocaleString('en')} entries, ${(r.file.bytes / MB).toFixed(1)} MB (${relative(resolve(import.meta.dirname, '..'), r.file.path)})`);
  console.log(`${'measure'.padEnd(34)} ${'wall'.padStart(10)} ${'cpu'.padStart(10)} ${'RSS growth'.padStart(11)} ${'peak RSS'.padStart(11)}   target`);
  console.log(row('readDocumentFile, first run', r.readerCold));
  console.log(row(`readDocumentFile, best of ${RUNS - 1} more`, r.readerBest, `<= ${TARGETS.listSeconds} s: ${ok(r.targetsMet.listTime)}`));
  console.log(row(`readDocumentFile, median of ${RUNS - 1}`, r.readerMedian, `<= ${TARGETS.listRssMb} MB growth: ${ok(r.targetsMet.listRss)}`));
  console.log(row(`saxes alone, no handlers, best of ${RUNS - 1}`, r.saxesAlone, 'floor'));
  console.log(row('xml-js xml2js (whole document)', r.xmljs, 'reference'));
  console.log(
    row(`index walk (1 + ${CHILDREN} documents)`, r.index, `<= ${TARGETS.indexSeconds} s: ${ok(r.targetsMet.indexTime)}, <= ${TARGETS.indexPeakRssMb} MB peak: ${ok(r.targetsMet.indexRss)}`),
  );
  console.log(`index walk: ${r.index.entries.toLocaleString('en')} entries in ${r.index.documents} documents, ${r.index.findings} findings`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  printResult(await runParseBench());
}
