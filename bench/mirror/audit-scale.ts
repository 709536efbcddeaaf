// Scale of `rsdesk audit`: a mirror whose inventory holds N rows (through MirrorState.put, as a finished baseline
// would have left it) and a Source serving a Resource List Index of N/50,000 lists of 50,000 entries each (generated
// as they are sent, from node:http on 127.0.0.1). `--present F` writes the files of that fraction of the rows (the
// rest are recorded but gone: missing). The audit runs as a child process under /usr/bin/time, which gives its peak
// RSS. Not part of `npm run bench` (it takes minutes at 1,000,000 rows):
//   node bench/mirror/audit-scale.ts 250000 [--present 0.01] [--keep DIR]
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { LocalPaths } from '../../src-main/engine/mirror/local-path.ts';
import { MirrorState, stateDirOf } from '../../src-main/engine/mirror/state.ts';

const rows = Number(process.argv[2] ?? 250_000);
const flag = (name: string) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
};
const present = Number(flag('--present') ?? 0);
const PER_LIST = 50_000;
const SIZE = 17; // the length of body(i)
const AT = '2024-01-03T00:00:00Z';
const body = (i: number) => Buffer.from(`resource ${String(i).padStart(7, '0')}\n`);
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

const server = createServer((req, res) => {
  const url = req.url ?? '';
  res.setHeader('content-type', 'application/xml');
  const head = '<?xml version="1.0" encoding="UTF-8"?>\n';
  const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
  if (url === '/index.xml') {
    const parts = Math.ceil(rows / PER_LIST);
    let xml = `${head}<sitemapindex ${ns}>\n<rs:md capability="resourcelist" at="${AT}"/>\n`;
    for (let p = 0; p < parts; p++) xml += `<sitemap><loc>${base}/list${p}.xml</loc></sitemap>\n`;
    res.end(`${xml}</sitemapindex>\n`);
    return;
  }
  const m = /^\/list(\d+)\.xml$/.exec(url);
  if (m === null) {
    res.statusCode = 404;
    res.end();
    return;
  }
  const p = Number(m[1]);
  res.write(`${head}<urlset ${ns}>\n<rs:md capability="resourcelist" at="${AT}"/>\n`);
  const end = Math.min(rows, (p + 1) * PER_LIST);
  let chunk = '';
  for (let i = p * PER_LIST; i < end; i++) {
    chunk += `<url><loc>${uriOf(i)}</loc><lastmod>2024-01-02T03:04:05Z</lastmod><rs:md hash="md5:${md5(body(i))}" length="${SIZE}"/></url>\n`;
    if (chunk.length > 1 << 16) {
      res.write(chunk);
      chunk = '';
    }
  }
  res.end(`${chunk}</urlset>\n`);
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
const uriOf = (i: number) => `${base}/r/${String(Math.floor(i / 1000)).padStart(4, '0')}/res${String(i).padStart(7, '0')}.bin`;

const dest = flag('--keep') ?? mkdtempSync(join(tmpdir(), 'audit-scale-'));
const t0 = performance.now();
const paths = new LocalPaths({ sourceUrl: `${base}/index.xml` });
const state = new MirrorState(stateDirOf(dest));
const every = present > 0 ? Math.round(1 / present) : 0;
try {
  state.setBinding({ url: `${base}/index.xml`, capabilityListUrl: null, resourceListUrl: `${base}/index.xml`, changeListUrl: null, resourceDumpUrl: null, changeDumpUrl: null, maps: [], allowHosts: [], createdAt: AT });
  const run = state.startRun('baseline', 'auto', `${base}/index.xml`);
  for (let start = 0; start < rows; start += 20_000) {
    state.transaction(() => {
      for (let i = start; i < Math.min(rows, start + 20_000); i++) {
        const uri = uriOf(i);
        const mapped = paths.map(uri);
        if (!mapped.ok) throw new Error(mapped.reason);
        if (every > 0 && i % every === 0) {
          const file = join(dest, ...mapped.path.split('/'));
          mkdirSync(join(file, '..'), { recursive: true });
          writeFileSync(file, body(i));
        }
        state.put({ uri, path: mapped.path, length: SIZE, digests: { md5: md5(body(i)) }, lastmod: '2024-01-02T03:04:05Z', etag: null, lastModified: null, type: null, status: 'verified', verifiedAt: AT, runId: run.id });
      }
    });
  }
  state.endRun(run.id, 'completed', { fetch: 0 });
  state.setCheckpoint({ at: AT, from: `${base}/index.xml` });
} finally {
  state.close();
}
console.log(`built ${rows} rows (${every > 0 ? `1 in ${every} files present` : 'no files'}) in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${dest}`);

const rsdesk = process.env.RSDESK ?? resolve(import.meta.dirname, '..', '..', 'bin', 'rsdesk.mjs');
for (const args of [['--json'], []]) {
  const t1 = performance.now();
  // Asynchronous: the server answering the audit runs in this process.
  const child = await new Promise<{ status: number | null; stderr: string }>((done) => {
    const c = spawn('/usr/bin/time', ['-f', '%M KB peak RSS, %U s user + %S s system CPU', process.execPath, rsdesk, 'audit', '--dest', dest, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let bytes = 0;
    c.stdout.on('data', (d: Buffer) => (bytes += d.length));
    c.stderr.on('data', (d: Buffer) => (stderr += d));
    c.on('close', (status) => done({ status, stderr: `${stderr}stdout ${bytes} bytes` }));
  });
  console.log(`audit ${args.join(' ') || '(text)'}: exit ${child.status}, ${((performance.now() - t1) / 1000).toFixed(1)} s; ${child.stderr.trim().split('\n').slice(-2).join('; ')}`);
}
server.close();
