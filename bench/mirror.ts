// The mirroring benchmarks of `npm run bench` (issue 6), each printed beside its reference measured in the same run:
//   1. baseline of 10,000 × 2 KiB resources with md5 from nginx on 127.0.0.1: ours (the real sync engine: fixity,
//      batched fsync, inventory) against resync-sync --baseline and against a bare undici fetch-only loop;
//   2. baseline of 20 × 50 MiB resources with sha-256;
//   3. a 1 GiB Resource Dump downloaded, extracted and verified;
//   4. incremental sync of 1,000 changes against a mirror whose inventory holds 1,000,000 rows.
// Every measure runs in a fresh child process (bench/mirror/child.ts), so its peak RSS is its own. Data lives under
// .bench-data/mirror/ (git-ignored; resources generated once); each mirror is written to a temporary folder there
// and removed. `--only=1,2` picks benchmarks; `--runs=N` repeats each measure (best is judged, every run shown).
import { spawnSync } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ChildMeasure } from './mirror/child.ts';
import { settleDisk } from './mirror/settle.ts';
import { removeSetAside, setAside, waitOutRemovals } from './mirror/removal.ts';
import { BENCH_DIR, WWW, largeSet, smallSet, writeResourceList, type DataSet } from './mirror/data.ts';
import { nginxMissing, startNginx, type LoopbackSource } from './mirror/nginx.ts';
import { measureInChild, type DumpMeasure } from './dump.ts';
import { DUMP_HOST, prepareDump, writeDumpDocuments } from './mirror/dumpset.ts';
import { INCR, buildIncremental, freshIncrementalMirror } from './mirror/incremental.ts';
import { resyncUnavailable, runResyncBaseline, type ResyncRun } from './mirror/resync-sync.ts';

const MiB = 1024 * 1024;
const CHILD = resolve(import.meta.dirname, 'mirror', 'child.ts');
/** The engine's polite default: connections per host. The bare loop gets the same connections and requests in flight. */
const CONNECTIONS = 8;
const IN_FLIGHT = CONNECTIONS * 2;

export const MIRROR_TARGETS = {
  smallPerSecond: 6_000,
  timesResync: 3,
  ofBareLoop: 0.5,
  largeMbPerSecond: 300,
  dumpMbPerSecond: 300,
  dumpPeakRssMb: 250,
  incrementalSeconds: 2,
  incrementalPeakRssMb: 300,
} as const;

function child(args: string[]): ChildMeasure {
  settleDisk();
  // BENCH_CPU_PROF=DIR writes a V8 CPU profile of every measure into DIR (open it in Chrome's DevTools).
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${resolve(process.env.BENCH_CPU_PROF)}`] : [];
  // BENCH_NODE_FLAGS="--trace-gc …" passes flags to every measure's process (experiments).
  const flags = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const run = spawnSync(
    process.execPath,
    [...profile, ...flags, '--experimental-strip-types', '--disable-warning=ExperimentalWarning', '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', CHILD, ...args],
    { encoding: 'utf8', maxBuffer: 64 * MiB, timeout: 1_800_000 },
  );
  if (run.status !== 0) throw new Error(`measure ${args[0]} failed (exit ${run.status}): ${run.stderr.trim().split('\n').slice(-8).join('\n')}`);
  const lines = run.stdout.trim().split('\n');
  // The measure is the last JSON line: flags such as --trace-deopt may print after it.
  const at = lines.findLastIndex((l) => l.startsWith('{"seconds"'));
  const line = lines.splice(at, 1)[0] ?? '';
  // BENCH_LOG=DIR keeps each measure's whole output (e.g. every --trace-gc line) in a file of its own.
  if (process.env.BENCH_LOG) {
    mkdirSync(process.env.BENCH_LOG, { recursive: true });
    writeFileSync(join(process.env.BENCH_LOG, `${args[0]}-${Date.now()}.log`), run.stdout + run.stderr);
  }
  // BENCH_VERBOSE=1 shows each measure whole (phases, counts, kernel time), and what else it printed (e.g. --trace-gc).
  if (process.env.BENCH_VERBOSE) {
    if (lines.length > 0) console.log(`   ${args[0]} printed ${lines.length} lines; the last ones:\n${lines.slice(-5).map((l) => `      ${l}`).join('\n')}`);
    console.log(`   ${args[0]}: ${line}`);
  }
  return JSON.parse(line) as ChildMeasure;
}

function freshDest(): string {
  mkdirSync(join(BENCH_DIR, 'run'), { recursive: true });
  return mkdtempSync(join(BENCH_DIR, 'run', 'mirror-'));
}

/** The real engine's baseline of `listUrl` into a fresh folder (removed after). */
function oursBaseline(listUrl: string): ChildMeasure {
  const dest = freshDest();
  try {
    return child(['sync', JSON.stringify({ url: listUrl, dest, mode: 'baseline', concurrency: CONNECTIONS })]);
  } finally {
    setAside(dest);
  }
}

/** Writing and fsyncing `bytes` where the mirrors go: no durable mirror of that many bytes can be faster. */
function diskFloor(bytes: number): ChildMeasure {
  const dir = freshDest();
  try {
    return child(['disk', dir, String(Math.round(bytes / MiB))]);
  } finally {
    setAside(dir);
  }
}

function bareLoop(set: DataSet, base: string): ChildMeasure {
  const file = join(BENCH_DIR, 'run', `${set.name}-urls.txt`);
  mkdirSync(join(BENCH_DIR, 'run'), { recursive: true });
  writeFileSync(file, set.items.map((i) => `${base}/${i.path}`).join('\n'));
  try {
    return child(['fetch-loop', file, String(CONNECTIONS), String(IN_FLIGHT)]);
  } finally {
    rmSync(file, { force: true });
  }
}

/** `measure()`, with the CPU seconds nginx used meanwhile. */
function withServerCpu(source: LoopbackSource, measure: () => ChildMeasure): ChildMeasure {
  const before = source.cpuSeconds();
  const m = measure();
  return { ...m, serverCpuSeconds: source.cpuSeconds() - before };
}

/** The bare loop plus durable files (md5, temporary file, syncfs, rename): the floor of any durable mirror. */
function floorLoop(set: DataSet, base: string): ChildMeasure {
  const file = join(BENCH_DIR, 'run', `${set.name}-urls.txt`);
  mkdirSync(join(BENCH_DIR, 'run'), { recursive: true });
  writeFileSync(file, set.items.map((i) => `${base}/${i.path}`).join('\n'));
  const dest = freshDest();
  try {
    return child(['fetch-floor', file, dest, String(CONNECTIONS), String(IN_FLIGHT)]);
  } finally {
    rmSync(file, { force: true });
    setAside(dest);
  }
}

// ---- printing ----

const load = () => loadavg().map((l) => l.toFixed(2)).join(', ');
const num = (n: number, digits = 0) => n.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const COLS = [46, 10, 9, 9, 15, 10] as const;

function row(label: string, resources: string, wall: string, cpu: string, rate: string, rss: string, verdict = ''): void {
  console.log(
    `${label.padEnd(COLS[0])} ${resources.padStart(COLS[1])} ${wall.padStart(COLS[2])} ${cpu.padStart(COLS[3])} ${rate.padStart(COLS[4])} ${rss.padStart(COLS[5])}   ${verdict}`.trimEnd(),
  );
}
const secs = (s: number) => `${s.toFixed(2)} s`;

const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
const best = <T>(runs: T[], key: (t: T) => number): T => runs.reduce((a, b) => (key(b) < key(a) ? b : a));
// The engine's own share: the main thread's CPU time, which load and the file thread's kernel time do not blur.
const mainThreadOf = (m: ChildMeasure) => (m.mainThreadCpuSeconds === undefined ? '' : `; main thread ${secs(m.mainThreadCpuSeconds)} cpu`);
const runsOf = (runs: { seconds: number }[]) => (runs.length > 1 ? `  (runs: ${runs.map((r) => secs(r.seconds)).join(', ')})` : '');

function checkComplete(label: string, m: ChildMeasure, expected: number): void {
  if (m.failed > 0 || (m.verified !== undefined && m.verified !== expected)) {
    throw new Error(`${label}: ${m.failed} failed, ${m.verified ?? '?'} of ${expected} verified${m.firstFailure ? ` — first failure: ${m.firstFailure}` : ''}`);
  }
}

// ---- 1. small resources ----

async function benchSmall(source: LoopbackSource, runs: number): Promise<void> {
  const set = smallSet();
  const listUrl = writeResourceList(set, source.url);
  const n = set.items.length;
  console.log(`\n1. Baseline of ${num(n)} × 2 KiB resources with md5 from nginx on 127.0.0.1 (load ${load()})`);
  const resyncSkip = resyncUnavailable();
  const loops: ChildMeasure[] = [];
  const floors: ChildMeasure[] = [];
  const ours: ChildMeasure[] = [];
  const resyncs: ResyncRun[] = [];
  for (let i = 0; i < runs; i++) {
    loops.push(withServerCpu(source, () => bareLoop(set, source.url)));
    floors.push(withServerCpu(source, () => floorLoop(set, source.url)));
    const m = withServerCpu(source, () => oursBaseline(listUrl));
    checkComplete('rsdesk sync', m, n);
    ours.push(m);
    if (!resyncSkip) {
      const r = runResyncBaseline(`${source.url}/small/`);
      if (r.files !== n) throw new Error(`resync-sync mirrored ${r.files} files, not ${n}`);
      resyncs.push(r);
    }
  }
  const loop = best(loops, (m) => m.seconds);
  const our = best(ours, (m) => m.seconds);
  const ourRate = n / our.seconds;
  const loopRate = n / loop.seconds;
  row('measure', 'resources', 'wall', 'cpu', 'rate', 'peak RSS', 'target');
  row(`bare undici loop, ${CONNECTIONS} conns, ${IN_FLIGHT} in flight (ref.)`, num(n), secs(loop.seconds), secs(loop.cpuSeconds), `${num(loopRate)} /s`, `${loop.peakRssMb.toFixed(0)} MB`, `fetch only: no hashing, no files${runsOf(loops)}`);
  const floor = best(floors, (m) => m.seconds);
  row('bare loop + durable files (ref.)', num(n), secs(floor.seconds), secs(floor.cpuSeconds), `${num(n / floor.seconds)} /s`, `${floor.peakRssMb.toFixed(0)} MB`, `md5, temporary file, syncfs per 500, rename: ${Math.round((100 * loop.seconds) / floor.seconds)} % of the bare loop${runsOf(floors)}`);
  let resyncRate: number | null = null;
  if (resyncSkip) row('resync-sync --baseline (reference client)', '', '', '', '', '', `SKIPPED: ${resyncSkip}`);
  else {
    const r = best(resyncs, (m) => m.seconds);
    resyncRate = n / r.seconds;
    row('resync-sync --baseline (reference client)', num(n), secs(r.seconds), Number.isNaN(r.cpuSeconds) ? '' : secs(r.cpuSeconds), `${num(resyncRate)} /s`, `${r.peakRssMb.toFixed(0)} MB`, `no fsync, no fixity${runsOf(resyncs)}`);
  }
  row('rsdesk sync --mode baseline (ours)', num(n), secs(our.seconds), secs(our.cpuSeconds), `${num(ourRate)} /s`, `${our.peakRssMb.toFixed(0)} MB`, `md5 verified, batched fsync, inventory${mainThreadOf(our)}${runsOf(ours)}`);
  const verdicts = [`>= ${num(MIRROR_TARGETS.smallPerSecond)} /s: ${met(ourRate >= MIRROR_TARGETS.smallPerSecond)}`];
  verdicts.push(resyncRate === null ? `>= ${MIRROR_TARGETS.timesResync}× resync: not measured (skipped)` : `${(ourRate / resyncRate).toFixed(1)}× resync (>= ${MIRROR_TARGETS.timesResync}×): ${met(ourRate >= MIRROR_TARGETS.timesResync * resyncRate)}`);
  verdicts.push(`${Math.round((100 * ourRate) / loopRate)} % of the bare loop (>= ${MIRROR_TARGETS.ofBareLoop * 100} %): ${met(ourRate >= MIRROR_TARGETS.ofBareLoop * loopRate)}`);
  console.log(`   ${verdicts.join('; ')}`);
  // Whether the bare-loop target can be reached at all here: the work must fit into the cores it shares with nginx.
  if (our.serverCpuSeconds !== undefined) {
    const cores = availableParallelism();
    const work = our.cpuSeconds + our.serverCpuSeconds;
    console.log(
      `   CPU: ours ${secs(our.cpuSeconds)} + nginx ${secs(our.serverCpuSeconds)} (bare loop ${secs(loop.cpuSeconds)} + nginx ${secs(loop.serverCpuSeconds ?? 0)}); ` +
        `on ${cores} cores that work takes at least ${secs(work / cores)} of wall time; ${MIRROR_TARGETS.ofBareLoop * 100} % of the bare loop is ${secs(loop.seconds / MIRROR_TARGETS.ofBareLoop)}`,
    );
  }
}

// ---- 2. large resources ----

async function benchLarge(source: LoopbackSource, runs: number): Promise<void> {
  const set = largeSet();
  const listUrl = writeResourceList(set, source.url);
  const n = set.items.length;
  console.log(`\n2. Baseline of ${n} × ${set.items[0]!.length / MiB} MiB resources with sha-256 (load ${load()})`);
  const loops: ChildMeasure[] = [];
  const disks: ChildMeasure[] = [];
  const ours: ChildMeasure[] = [];
  for (let i = 0; i < runs; i++) {
    loops.push(bareLoop(set, source.url));
    disks.push(diskFloor(set.bytes));
    const m = oursBaseline(listUrl);
    checkComplete('rsdesk sync', m, n);
    ours.push(m);
  }
  const loop = best(loops, (m) => m.seconds);
  const disk = best(disks, (m) => m.seconds);
  const our = best(ours, (m) => m.seconds);
  const mb = set.bytes / MiB;
  row('measure', 'resources', 'wall', 'cpu', 'rate', 'peak RSS', 'target');
  row('disk: one file written + fsync (ref.)', '1', secs(disk.seconds), secs(disk.cpuSeconds), `${num(mb / disk.seconds)} MB/s`, '', `the floor of any durable copy${runsOf(disks)}`);
  row(`bare undici loop (reference)`, num(n), secs(loop.seconds), secs(loop.cpuSeconds), `${num(mb / loop.seconds)} MB/s`, `${loop.peakRssMb.toFixed(0)} MB`, `fetch only${runsOf(loops)}`);
  row('rsdesk sync --mode baseline (ours)', num(n), secs(our.seconds), secs(our.cpuSeconds), `${num(mb / our.seconds)} MB/s`, `${our.peakRssMb.toFixed(0)} MB`, `>= ${MIRROR_TARGETS.largeMbPerSecond} MB/s: ${met(mb / our.seconds >= MIRROR_TARGETS.largeMbPerSecond)}${runsOf(ours)}`);
}

// ---- 3. a 1 GiB Resource Dump ----

async function benchDump(source: LoopbackSource, runs: number, dump: Awaited<ReturnType<typeof prepareDump>>): Promise<void> {
  const set = writeDumpDocuments(source.url, dump);
  const mb = set.bitstreamBytes / MiB;
  console.log(
    `\n3. Baseline from a 1 GiB Resource Dump: one package of ${num(set.entries)} bitstreams (${num(mb)} MiB; ${num(set.packageBytes / MiB)} MiB zipped), md5 each (load ${load()})`,
  );
  const packageSet: DataSet = { name: 'dump', items: [{ path: new URL(set.packageUrl).pathname.slice(1), length: set.packageBytes, hash: '' }], bytes: set.packageBytes };
  const loops: ChildMeasure[] = [];
  const extracts: DumpMeasure[] = [];
  const disks: ChildMeasure[] = [];
  const ours: ChildMeasure[] = [];
  const afters: ChildMeasure[] = [];
  const syncDump = (readAheadFrom?: number): ChildMeasure => {
    const dest = freshDest();
    try {
      const options = { url: set.capabilityListUrl, dest, mode: 'baseline', useDumps: true, allowHosts: [DUMP_HOST], concurrency: CONNECTIONS, dumpReadAheadFrom: readAheadFrom };
      const m = child(['sync', JSON.stringify(options)]);
      checkComplete('rsdesk sync --use-dumps', m, set.entries);
      return m;
    } finally {
      setAside(dest);
    }
  };
  for (let i = 0; i < runs; i++) {
    loops.push(bareLoop(packageSet, source.url));
    disks.push(diskFloor(set.bitstreamBytes));
    extracts.push(measureInChild(dump.path));
    ours.push(syncDump());
    // The same sync reading the package only once it is downloaded (as before packages were read while downloading).
    afters.push(syncDump(Number.MAX_SAFE_INTEGER));
  }
  const loop = best(loops, (m) => m.seconds);
  const extract = best(extracts, (m) => m.seconds);
  const disk = best(disks, (m) => m.seconds);
  const our = best(ours, (m) => m.seconds);
  const after = best(afters, (m) => m.seconds);
  const rate = mb / our.seconds;
  row('measure', 'resources', 'wall', 'cpu', 'rate', 'peak RSS', 'target');
  row('disk: one file written + fsync (ref.)', '1', secs(disk.seconds), secs(disk.cpuSeconds), `${num(mb / disk.seconds)} MB/s`, '', `the floor of any durable copy${runsOf(disks)}`);
  row('bare undici download of the package (ref.)', '1', secs(loop.seconds), secs(loop.cpuSeconds), `${num(set.packageBytes / MiB / loop.seconds)} MB/s`, `${loop.peakRssMb.toFixed(0)} MB`, `zipped MB/s, fetch only${runsOf(loops)}`);
  row('readPackage of the local file (ref.)', num(extract.verified), secs(extract.seconds), secs(extract.cpuSeconds), `${num(extract.mbPerSecond)} MB/s`, `${extract.peakRssMb.toFixed(0)} MB`, `extract + verify only: no download, no fsync, no inventory${runsOf(extracts)}`);
  row('sync, package read once downloaded (ref.)', num(after.verified ?? 0), secs(after.seconds), secs(after.cpuSeconds), `${num(mb / after.seconds)} MB/s`, `${after.peakRssMb.toFixed(0)} MB`, `download, then extract${runsOf(afters)}`);
  row('rsdesk sync --use-dumps (ours)', num(our.verified ?? 0), secs(our.seconds), secs(our.cpuSeconds), `${num(rate)} MB/s`, `${our.peakRssMb.toFixed(0)} MB`, `extraction thread + verify + batched fsync + inventory; read while downloading only if the download is slow${runsOf(ours)}`);
  console.log(
    `   ${num(rate)} MB/s (>= ${MIRROR_TARGETS.dumpMbPerSecond} MB/s): ${met(rate >= MIRROR_TARGETS.dumpMbPerSecond)}; peak RSS ${our.peakRssMb.toFixed(0)} MB (<= ${MIRROR_TARGETS.dumpPeakRssMb} MB): ${met(our.peakRssMb <= MIRROR_TARGETS.dumpPeakRssMb)}; phases ${Object.entries(our.phases ?? {}).map(([k, v]) => `${k} ${v.toFixed(2)} s`).join(', ')}`,
  );
}

// ---- 4. incremental against a large inventory ----

async function benchIncremental(source: LoopbackSource, runs: number): Promise<void> {
  console.log(`\n4. Incremental sync of ${num(INCR.updated + INCR.created + INCR.deleted)} changes against a mirror of ${num(INCR.rows)} inventory rows (load ${load()})`);
  mkdirSync(join(BENCH_DIR, 'run'), { recursive: true });
  const setup = buildIncremental(source.url, join(BENCH_DIR, 'run'));
  console.log(`   (its state.sqlite built through MirrorState in ${setup.buildSeconds.toFixed(1)} s; ${INCR.updated} updated, ${INCR.created} created, ${INCR.deleted} deleted with --delete delete)`);
  const fetchSet: DataSet = { name: 'incr', items: setup.fetched.map((u) => ({ path: new URL(u).pathname.slice(1), length: 2048, hash: '' })), bytes: 0 };
  const loops: ChildMeasure[] = [];
  const ours: ChildMeasure[] = [];
  for (let i = 0; i < runs; i++) {
    loops.push(bareLoop(fetchSet, source.url));
    const dest = freshDest();
    try {
      freshIncrementalMirror(setup, dest);
      const m = child(['sync', JSON.stringify({ dest, mode: 'incremental', deletePolicy: 'delete', concurrency: CONNECTIONS })]);
      if (m.failed > 0 || m.counts?.updated !== INCR.updated || m.counts?.created !== INCR.created || m.counts?.deleted !== INCR.deleted) {
        throw new Error(`incremental run: ${JSON.stringify(m.counts)}, ${m.failed} failed${m.firstFailure ? ` — first failure: ${m.firstFailure}` : ''}`);
      }
      ours.push(m);
    } finally {
      setAside(dest);
    }
  }
  const loop = best(loops, (m) => m.seconds);
  const our = best(ours, (m) => m.seconds);
  const without = Math.max(0, our.seconds - loop.seconds);
  const n = setup.fetched.length;
  row('measure', 'resources', 'wall', 'cpu', 'rate', 'peak RSS', 'target');
  row(`bare undici loop over the ${n} fetched (ref.)`, num(n), secs(loop.seconds), secs(loop.cpuSeconds), `${num(n / loop.seconds)} /s`, `${loop.peakRssMb.toFixed(0)} MB`, `fetch time${runsOf(loops)}`);
  row('rsdesk sync --mode incremental (ours)', num(INCR.updated + INCR.created + INCR.deleted), secs(our.seconds), secs(our.cpuSeconds), '', `${our.peakRssMb.toFixed(0)} MB`, `phases ${Object.entries(our.phases ?? {}).map(([k, v]) => `${k} ${v.toFixed(2)} s`).join(', ')}${runsOf(ours)}`);
  console.log(
    `   ${secs(without)} without the fetch time (${secs(our.seconds)} − ${secs(loop.seconds)}) (<= ${MIRROR_TARGETS.incrementalSeconds} s): ${met(without <= MIRROR_TARGETS.incrementalSeconds)}; peak RSS ${our.peakRssMb.toFixed(0)} MB (<= ${MIRROR_TARGETS.incrementalPeakRssMb} MB): ${met(our.peakRssMb <= MIRROR_TARGETS.incrementalPeakRssMb)}`,
  );
}

// ---- main ----

export async function runMirrorBench(argv: string[]): Promise<void> {
  const only = argv.find((a) => a.startsWith('--only='))?.slice(7).split(',') ?? ['1', '2', '3', '4'];
  const runs = Number(argv.find((a) => a.startsWith('--runs='))?.slice(7) ?? 3);
  console.log('Mirroring benchmarks (MB = 2^20 bytes; best of the runs is judged)');
  const missing = nginxMissing();
  if (missing) {
    console.log(`SKIPPED: every mirroring benchmark needs nginx — ${missing}`);
    return;
  }
  mkdirSync(WWW, { recursive: true });
  // Generated before nginx starts, so generation time never overlaps a measure.
  if (only.includes('1')) smallSet();
  if (only.includes('2')) largeSet();
  const dump = only.includes('3') ? await prepareDump() : null;
  await waitOutRemovals();
  const source = await startNginx(WWW);
  try {
    if (only.includes('1')) await benchSmall(source, runs);
    if (only.includes('2')) await benchLarge(source, runs);
    if (only.includes('3')) await benchDump(source, runs, dump!);
    if (only.includes('4')) await benchIncremental(source, runs);
  } finally {
    source.stop();
    setAside(join(BENCH_DIR, 'run'));
    removeSetAside();
  }
}

if (import.meta.filename === resolve(process.argv[1] ?? '')) await runMirrorBench(process.argv.slice(2));
