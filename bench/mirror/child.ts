// One measure in a fresh process (so its peak RSS is its own), called by bench/mirror.ts:
//   child.ts sync '<json SyncOptions>'        the real sync engine (engine/mirror/sync.ts), as `rsdesk sync` runs it
//   child.ts disk <folder> <MiB>            the disk's floor: MiB written and fsynced
//   child.ts fetch-loop <urls file> <connections> <in flight>
//                                             the reference: a bare undici loop that fetches and discards each body
// Prints one JSON line: the measure.
import { execFile, execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, open, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent } from 'undici';
import { MirrorState, stateDirOf } from '../../src-main/engine/mirror/state.ts';
import { sync, type SyncOptions } from '../../src-main/engine/mirror/sync.ts';
import { tuneTiering } from '../../src-main/engine/tiering.ts';

// As rsdesk's launcher and the Electron main process do at their start.
tuneTiering();

export interface ChildMeasure {
  seconds: number;
  cpuSeconds: number;
  /** of which in the kernel */
  systemSeconds: number;
  peakRssMb: number;
  resources: number;
  bytes: number;
  failed: number;
  /**
   * CPU seconds of the main thread alone (Linux): the engine's own cost per resource, which the machine's load and
   * the file thread's kernel time do not blur as they blur wall time. sync only.
   */
  mainThreadCpuSeconds?: number;
  /** sync only */
  verified?: number;
  phases?: Record<string, number>;
  counts?: Record<string, number>;
  firstFailure?: string;
  /** CPU seconds the loopback Source (nginx) used during the measure; set by bench/mirror.ts, not by the child. */
  serverCpuSeconds?: number;
  /** CPU seconds by thread (BENCH_VERBOSE, Linux). */
  threads?: Record<string, number>;
}

/** The main thread's CPU seconds so far (user + system), from /proc; undefined where there is no /proc. */
function mainThreadCpu(): number | undefined {
  try {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th, in clock ticks.
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    return (Number(fields[11]) + Number(fields[12])) / ticks;
  } catch {
    return undefined;
  }
}

async function measureSync(options: SyncOptions): Promise<ChildMeasure> {
  const main0 = mainThreadCpu();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await sync(options);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const main1 = mainThreadCpu();
  const peakRssMb = process.resourceUsage().maxRSS / 1024;
  // Outside the timing: what the run recorded.
  const state = new MirrorState(stateDirOf(options.dest));
  let verified: number;
  let phases: Record<string, number>;
  try {
    verified = Number((state.db.prepare("SELECT COUNT(*) AS n FROM inventory WHERE status = 'verified' AND run_id = ?").get(result.runId) as { n: number }).n);
    phases = state.run(result.runId!)?.phases ?? {};
  } finally {
    state.close();
  }
  return {
    seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    systemSeconds: cpu.system / 1e6,
    mainThreadCpuSeconds: main0 === undefined || main1 === undefined ? undefined : main1 - main0,
    peakRssMb,
    resources: result.created + result.updated + result.deleted + result.unchanged,
    bytes: result.bytes,
    failed: result.failed,
    verified,
    phases,
    counts: { created: result.created, updated: result.updated, deleted: result.deleted, unchanged: result.unchanged, skipped: result.skipped },
    firstFailure: result.failures[0] ? `${result.failures[0].uri}: ${result.failures[0].reason}` : undefined,
  };
}

async function measureFetchLoop(urlsFile: string, connections: number, inFlight: number): Promise<ChildMeasure> {
  const urls = readFileSync(urlsFile, 'utf8').split('\n').filter(Boolean);
  const agent = new Agent({ connections, keepAliveTimeout: 30_000 });
  let next = 0;
  let bytes = 0;
  let failed = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const worker = async () => {
    while (next < urls.length) {
      const url = new URL(urls[next++]!);
      const { statusCode, body } = await agent.request({ origin: url.origin, path: url.pathname, method: 'GET' });
      for await (const chunk of body) bytes += (chunk as Buffer).length;
      if (statusCode !== 200) failed++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await agent.close();
  return {
    seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    systemSeconds: cpu.system / 1e6,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    resources: urls.length,
    bytes,
    failed,
  };
}

/**
 * The floor of any durable mirror of small files: the bare loop, plus what no mirror can skip — each body hashed
 * (md5), written to a temporary file, made durable (one syncfs per 500 files, as the engine does), renamed into
 * place, the renames made durable. No inventory, no paths from URIs, no checks, no retries: a lower bound.
 */
async function measureFetchFloor(urlsFile: string, dest: string, connections: number, inFlight: number): Promise<ChildMeasure> {
  const urls = readFileSync(urlsFile, 'utf8').split('\n').filter(Boolean);
  const agent = new Agent({ connections, keepAliveTimeout: 30_000 });
  const temp = join(dest, '.tmp');
  const tree = join(dest, 'tree');
  await mkdir(temp, { recursive: true });
  await mkdir(tree, { recursive: true });
  let next = 0;
  let bytes = 0;
  let failed = 0;
  let pending: Array<[string, string]> = [];
  let flushing: Promise<void> = Promise.resolve();
  const syncfs = () => new Promise<void>((done, fail) => execFile('sync', ['-f', dest], (e) => (e ? fail(e) : done())));
  const flush = (batch: Array<[string, string]>) => {
    flushing = flushing.then(async () => {
      await syncfs();
      await Promise.all(batch.map(([from, to]) => rename(from, to)));
      await syncfs();
    });
  };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const worker = async () => {
    while (next < urls.length) {
      const i = next++;
      const url = new URL(urls[i]!);
      const { statusCode, body } = await agent.request({ origin: url.origin, path: url.pathname, method: 'GET' });
      const hash = createHash('md5');
      const chunks: Buffer[] = [];
      for await (const chunk of body) {
        hash.update(chunk as Buffer);
        chunks.push(chunk as Buffer);
        bytes += (chunk as Buffer).length;
      }
      hash.digest('hex');
      if (statusCode !== 200) failed++;
      const from = join(temp, String(i));
      await writeFile(from, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
      pending.push([from, join(tree, String(i))]);
      if (pending.length >= 500) {
        flush(pending);
        pending = [];
      }
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  flush(pending);
  await flushing;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await agent.close();
  return { seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, systemSeconds: cpu.system / 1e6, peakRssMb: process.resourceUsage().maxRSS / 1024, resources: urls.length, bytes, failed };
}

/** The disk's floor for a durable mirror: `mib` MiB written in 1 MiB slices into a new file, then fsynced. */
async function measureDisk(dir: string, mib: number): Promise<ChildMeasure> {
  const path = join(dir, `disk-${process.pid}.bin`);
  const slice = randomBytes(1 << 20);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const handle = await open(path, 'w');
  try {
    for (let i = 0; i < mib; i++) await handle.write(slice);
    await handle.sync();
  } finally {
    await handle.close();
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await rm(path, { force: true });
  return { seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, systemSeconds: cpu.system / 1e6, peakRssMb: process.resourceUsage().maxRSS / 1024, resources: 1, bytes: mib << 20, failed: 0 };
}

/** CPU seconds of this process's threads by name (Linux only): where the time went (main, libuv pool, GC helpers…). */
function threadTimes(): Record<string, number> | undefined {
  try {
    const out: Record<string, number> = {};
    const tick = 100; // USER_HZ
    for (const tid of readdirSync('/proc/self/task')) {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const seconds = (Number(fields[11]) + Number(fields[12])) / tick;
      const key = tid === String(process.pid) ? "main" : `${name}#${tid}`;
      out[key] = Math.round(((out[key] ?? 0) + seconds) * 100) / 100;
    }
    return out;
  } catch {
    return undefined;
  }
}

const [command, ...args] = process.argv.slice(2);
let measure: ChildMeasure;
if (command === 'sync') measure = await measureSync(JSON.parse(args[0]!) as SyncOptions);
else if (command === 'disk') measure = await measureDisk(args[0]!, Number(args[1]));
else if (command === 'fetch-floor') measure = await measureFetchFloor(args[0]!, args[1]!, Number(args[2]), Number(args[3]));
else if (command === 'fetch-loop') measure = await measureFetchLoop(args[0]!, Number(args[1]), Number(args[2]));
else throw new Error(`unknown measure ${command}`);
if (process.env.BENCH_VERBOSE) measure.threads = threadTimes();
console.log(JSON.stringify(measure));
