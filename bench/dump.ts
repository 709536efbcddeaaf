// Benchmark of Resource Dump extraction: a 1 GiB package read with readPackage, every bitstream streamed through
// its fixity check (md5 from the manifest, the ZIP's CRC-32) into a temporary file, as the mirror does.
//   npm run bench:dump        (or npm run bench -- --dump)
// Half the bytes are text, deflated (documents); half are incompressible and stored (images, PDFs). The package is
// generated once into .bench-data/dump/ (git-ignored). Each measure runs in a fresh child process, so its peak RSS
// is the extraction's alone. Targets: >= 300 MB/s, peak RSS <= 250 MB.
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yazl from 'yazl';
import { readPackage } from '../src-main/engine/mirror/package/extract.ts';
import { BENCH_DIR } from './mirror/data.ts';
import { removeSetAside, setAside } from './mirror/removal.ts';
import { settleDisk } from './mirror/settle.ts';

const DATA_DIR = resolve(import.meta.dirname, '..', '.bench-data', 'dump');
const DATA_VERSION = 'dump-bench-1';
const TOTAL = 1024 * 1024 * 1024;
const MB = 1024 * 1024;
export const DUMP_TARGETS = { mbPerSecond: 300, peakRssMb: 250 } as const;

const WORDS = (
  'resource sync source destination capability list change dump manifest index description baseline incremental ' +
  'audit archive bitstream package notification channel hub topic lastmod length hash fixity mirror folder ' +
  'the of and to in is that for it as with was on be by this are from at or an have which not but'
).split(' ');

/** A deterministic pseudo-random generator (xorshift), so the package is the same on every machine. */
function rng(seed: number): () => number {
  let x = seed | 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

function textPool(): Buffer {
  const next = rng(42);
  const parts: string[] = [];
  let size = 0;
  while (size < 8 * MB) {
    const w = WORDS[Math.floor(next() * WORDS.length)];
    const s = next() < 0.08 ? `${w}.\n` : `${w} `;
    parts.push(s);
    size += s.length;
  }
  return Buffer.from(parts.join(''));
}

interface Item {
  name: string;
  size: number;
  text: boolean;
}

function plan(): Item[] {
  const next = rng(7);
  const items: Item[] = [];
  let total = 0;
  for (let i = 0; total < TOTAL; i++) {
    const size = Math.min(TOTAL - total, Math.floor(256 * 1024 + next() * 3.75 * MB));
    const text = i % 2 === 0;
    items.push({ name: `resources/${text ? 'text' : 'binary'}/r${String(i).padStart(5, '0')}${text ? '.txt' : '.bin'}`, size, text });
    total += size;
  }
  return items;
}

function bodyOf(item: Item, index: number, pool: Buffer): Buffer {
  if (!item.text) return randomBytes(item.size);
  const start = Math.floor(rng(index + 1)() * (pool.length - item.size));
  const body = Buffer.from(pool.subarray(start, start + item.size));
  body.write(`${item.name}\n`, 0);
  return body;
}

async function generate(zipPath: string): Promise<{ entries: number }> {
  const pool = textPool();
  const items = plan();
  const md5s: string[] = [];
  const zip = new yazl.ZipFile();
  const mtime = new Date(Date.UTC(2024, 0, 2));
  items.forEach((item, i) => {
    // Lazy: each body is made only when yazl reaches it, so at most one is in memory.
    zip.addReadStreamLazy(item.name, { compress: item.text, mtime }, (cb) => {
      const body = bodyOf(item, i, pool);
      md5s[i] = createHash('md5').update(body).digest('hex');
      cb(null, Readable.from([body]));
    });
  });
  // Last, so every hash is known by the time yazl asks for it.
  zip.addReadStreamLazy('manifest.xml', { mtime }, (cb) => {
    const urls = items
      .map((item, i) => `  <url><loc>http://example.com/${item.name}</loc><rs:md hash="md5:${md5s[i]}" length="${item.size}" path="/${item.name}"/></url>\n`)
      .join('');
    const xml =
      '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">\n' +
      '  <rs:ln rel="up" href="http://example.com/capabilitylist.xml"/>\n  <rs:md capability="resourcedump-manifest" at="2024-01-02T00:00:00Z"/>\n' +
      `${urls}</urlset>\n`;
    cb(null, Readable.from([Buffer.from(xml)]));
  });
  zip.end();
  await pipeline(zip.outputStream, createWriteStream(zipPath));
  return { entries: items.length };
}

export async function ensureDump(): Promise<{ path: string; bytes: number; entries: number }> {
  await mkdir(DATA_DIR, { recursive: true });
  const zipPath = join(DATA_DIR, 'resourcedump-1g.zip');
  const stamp = join(DATA_DIR, 'version.json');
  let entries: number;
  const current = existsSync(stamp) ? (JSON.parse(readFileSync(stamp, 'utf8')) as { version: string; entries: number }) : null;
  if (current?.version === DATA_VERSION && existsSync(zipPath)) {
    entries = current.entries;
  } else {
    process.stdout.write(`generating a 1 GiB Resource Dump package in ${relative(resolve(import.meta.dirname, '..'), DATA_DIR)} (once)…\n`);
    ({ entries } = await generate(zipPath));
    writeFileSync(stamp, JSON.stringify({ version: DATA_VERSION, entries }));
  }
  return { path: zipPath, bytes: (await stat(zipPath)).size, entries };
}

export interface DumpMeasure {
  seconds: number;
  cpuSeconds: number;
  bytes: number;
  verified: number;
  failed: number;
  peakRssMb: number;
  mbPerSecond: number;
}

/**
 * In the child: extract everything once into files of `out`, kept: the parent sets the folder aside, since files
 * deleted here would slow the creation of files by the measure after this one (bench/mirror/removal.ts).
 */
async function measure(zipPath: string, out: string): Promise<DumpMeasure> {
  await mkdir(out, { recursive: true });
  let n = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const report = await readPackage(zipPath, {
    kind: 'resourcedump',
    url: 'http://example.com/resourcedump-1g.zip',
    sink: async (_entry, stream) => {
      await pipeline(stream, createWriteStream(join(out, `${++n}.tmp`), { highWaterMark: MB }));
    },
  });
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const bytes = report.counts.bytes;
  return {
    seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    bytes,
    verified: report.counts.verified,
    failed: report.counts.failed,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    mbPerSecond: bytes / MB / seconds,
  };
}

export function measureInChild(zipPath: string): DumpMeasure {
  settleDisk();
  mkdirSync(join(BENCH_DIR, 'run'), { recursive: true });
  const out = mkdtempSync(join(BENCH_DIR, 'run', 'extract-'));
  try {
    const child = spawnSync(
      process.execPath,
      ['--experimental-strip-types', '--disable-warning=ExperimentalWarning', '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', import.meta.filename, '--measure', zipPath, out],
      { encoding: 'utf8', maxBuffer: 16 * MB },
    );
    if (child.status !== 0) throw new Error(`the measuring process failed: ${child.stderr}`);
    return JSON.parse(child.stdout.trim().split('\n').pop()!) as DumpMeasure;
  } finally {
    setAside(out);
  }
}

export async function runDumpBench(runs = 3): Promise<void> {
  const dump = await ensureDump();
  console.log(
    `Resource Dump package: ${dump.entries.toLocaleString('en')} bitstreams, 1,024 MiB uncompressed, ${(dump.bytes / MB).toFixed(0)} MiB on disk (${relative(resolve(import.meta.dirname, '..'), dump.path)})`,
  );
  console.log(`${'measure'.padEnd(34)} ${'wall'.padStart(10)} ${'cpu'.padStart(10)} ${'rate'.padStart(12)} ${'peak RSS'.padStart(11)}   target`);
  const results: DumpMeasure[] = [];
  for (let i = 0; i < runs; i++) {
    const m = measureInChild(dump.path);
    if (m.failed > 0 || m.verified !== dump.entries) throw new Error(`extraction failed: ${m.failed} failed, ${m.verified} verified`);
    results.push(m);
    const met = `>= ${DUMP_TARGETS.mbPerSecond} MB/s: ${m.mbPerSecond >= DUMP_TARGETS.mbPerSecond ? 'met' : 'NOT met'}, <= ${DUMP_TARGETS.peakRssMb} MB RSS: ${m.peakRssMb <= DUMP_TARGETS.peakRssMb ? 'met' : 'NOT met'}`;
    console.log(
      `${`extract + verify, run ${i + 1}`.padEnd(34)} ${`${m.seconds.toFixed(2)} s`.padStart(10)} ${`${m.cpuSeconds.toFixed(2)} s`.padStart(10)} ${`${m.mbPerSecond.toFixed(0)} MB/s`.padStart(12)} ${`${m.peakRssMb.toFixed(1)} MB`.padStart(11)}   ${met}`,
    );
  }
  const best = results.reduce((a, b) => (b.mbPerSecond > a.mbPerSecond ? b : a));
  console.log(`best: ${best.mbPerSecond.toFixed(0)} MB/s (MB = 2^20 bytes of bitstreams written), peak RSS ${best.peakRssMb.toFixed(1)} MB`);
  removeSetAside();
}

if (process.argv[2] === '--measure') {
  console.log(JSON.stringify(await measure(process.argv[3]!, process.argv[4]!)));
} else if (import.meta.filename === resolve(process.argv[1] ?? '')) {
  await runDumpBench();
}
