// Benchmark of the last change per URI an incremental sync keeps (last-changes.ts), past its bound in memory, where
// the changes go to a temporary SQLite database.
//   node --experimental-strip-types --disable-warning=ExperimentalWarning bench/last-changes.ts [CHANGES] [MODULE]
// CHANGES (default 2,000,000) changes of three quarters as many URIs, in datetime order, a quarter of them later
// changes of URIs met before; MODULE another copy of last-changes.ts to compare with (an older version, say). Prints
// the wall and processor seconds of keeping them, of reading them back (`ordered`) and of `times`, and the peak
// resident memory. Processor time is the figure to compare on a machine other work shares.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Timed } from '../src-main/engine/mirror/change-timeline.ts';

const n = Number(process.argv[2] ?? 2_000_000);
const module = process.argv[3] === undefined ? '../src-main/engine/mirror/last-changes.ts' : pathToFileURL(resolve(process.argv[3])).href;
const { LastChanges } = (await import(module)) as typeof import('../src-main/engine/mirror/last-changes.ts');

const distinct = Math.floor(n * 0.75);
const kept = new LastChanges();
const cpu = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1e6;
};
const phases: Record<string, { wallS: number; cpuS: number }> = {};
let wall = performance.now();
let processor = cpu();
const lap = (name: string) => {
  const w = performance.now();
  const c = cpu();
  phases[name] = { wallS: +((w - wall) / 1000).toFixed(2), cpuS: +(c - processor).toFixed(2) };
  wall = w;
  processor = c;
};

for (let i = 0; i < n; i++) {
  const u = i < distinct ? i : (i * 7919) % distinct;
  const loc = `http://example.org/collection/items/${u.toString(36).padStart(8, '0')}/record.xml`;
  const ms = 1_600_000_000_000 + Math.floor(i / 3) * 1000;
  const at = new Date(ms).toISOString();
  const change: Timed = {
    entry: {
      index: i % 50_000,
      loc,
      line: 2 + (i % 50_000),
      md: { change: i % 17 === 0 ? 'deleted' : 'updated', datetime: at, hash: `md5:${((i * 2654435761) >>> 0).toString(16).padStart(32, '0')}`, length: String(i % 100_000), type: 'application/xml' },
      links: [],
      lastmod: at,
    },
    ms,
    seq: i,
  };
  kept.offer(change);
}
lap('keep');
let read = 0;
for (const c of kept.ordered()) if (c.entry.loc !== '') read++;
lap('ordered');
for (const c of kept.times()) if (c.ms !== null) read++;
lap('times');
const uris = kept.size;
kept.close();
console.log(JSON.stringify({ changes: n, uris, read, ...phases, peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024) }));
