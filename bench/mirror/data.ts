// The data sets of the mirroring benchmarks, generated once under .bench-data/mirror/www/ (git-ignored) and served by
// nginx from there. Lists name their resources by path only ({{BASE}} is replaced per run: nginx's port changes), so
// every run writes its lists again (small) and keeps the resources (large).
//   small/  10,000 × 2 KiB resources with md5 and length, in 10 folders; resourcelist.xml
//   large/  20 × 50 MiB resources with sha-256 and length; resourcelist.xml
//   incr/   the 1,000 changes of the incremental benchmark (see incremental.ts)
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const BENCH_DIR = resolve(import.meta.dirname, '..', '..', '.bench-data', 'mirror');
export const WWW = join(BENCH_DIR, 'www');
const KiB = 1024;
const MiB = 1024 * KiB;

export interface Item {
  /** Path under the server root, without a leading slash. */
  path: string;
  length: number;
  hash: string;
}

export interface DataSet {
  name: string;
  items: Item[];
  bytes: number;
}

const LASTMOD = '2024-01-02T03:04:05Z';

function stamped(dir: string, version: string, make: () => Item[]): Item[] {
  const stamp = join(dir, 'items.json');
  if (existsSync(stamp)) {
    const saved = JSON.parse(readFileSync(stamp, 'utf8')) as { version: string; items: Item[] };
    if (saved.version === version) return saved.items;
  }
  mkdirSync(dir, { recursive: true });
  const items = make();
  writeFileSync(stamp, JSON.stringify({ version, items }));
  return items;
}

/** 10,000 × 2 KiB, md5. */
export function smallSet(count = 10_000, size = 2 * KiB): DataSet {
  const dir = join(WWW, 'small');
  const items = stamped(dir, `small-1-${count}-${size}`, () => {
    process.stdout.write(`generating ${count.toLocaleString('en')} × ${size / KiB} KiB resources in ${rel(dir)} (once)…\n`);
    const out: Item[] = [];
    for (let i = 0; i < count; i++) {
      const folder = `r/${String(Math.floor(i / 1000)).padStart(2, '0')}`;
      if (i % 1000 === 0) mkdirSync(join(dir, folder), { recursive: true });
      const path = `small/${folder}/res${String(i).padStart(5, '0')}.bin`;
      const body = randomBytes(size);
      writeFileSync(join(WWW, path), body);
      out.push({ path, length: size, hash: `md5:${createHash('md5').update(body).digest('hex')}` });
    }
    return out;
  });
  return { name: 'small', items, bytes: items.reduce((n, i) => n + i.length, 0) };
}

/** 20 × 50 MiB, sha-256. */
export function largeSet(count = 20, size = 50 * MiB): DataSet {
  const dir = join(WWW, 'large');
  const items = stamped(dir, `large-1-${count}-${size}`, () => {
    process.stdout.write(`generating ${count} × ${size / MiB} MiB resources in ${rel(dir)} (once)…\n`);
    mkdirSync(join(dir, 'f'), { recursive: true });
    const out: Item[] = [];
    for (let i = 0; i < count; i++) {
      const path = `large/f/file${String(i).padStart(2, '0')}.bin`;
      const body = randomBytes(size);
      writeFileSync(join(WWW, path), body);
      out.push({ path, length: size, hash: `sha-256:${createHash('sha256').update(body).digest('hex')}` });
    }
    return out;
  });
  return { name: 'large', items, bytes: items.reduce((n, i) => n + i.length, 0) };
}

/** Writes `<set>/resourcelist.xml` naming each item under `base` (`http://127.0.0.1:PORT`). */
export function writeResourceList(set: DataSet, base: string): string {
  const lines = set.items.map(
    (i) => `<url><loc>${base}/${i.path}</loc><lastmod>${LASTMOD}</lastmod><rs:md hash="${i.hash}" length="${i.length}"/></url>\n`,
  );
  const xml =
    '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">\n' +
    `<rs:md capability="resourcelist" at="2024-01-03T00:00:00Z" completed="2024-01-03T00:00:01Z"/>\n${lines.join('')}</urlset>\n`;
  const path = join(WWW, set.name, 'resourcelist.xml');
  writeFileSync(path, xml);
  return `${base}/${set.name}/resourcelist.xml`;
}

/** A path relative to the working folder, for printing (never an absolute path of this machine). */
export function rel(path: string): string {
  const cwd = process.cwd();
  return path.startsWith(`${cwd}/`) ? path.slice(cwd.length + 1) : path;
}
