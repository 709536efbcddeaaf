// The real Resource Dump package of the shared corpus (resync-client's bitstream-package.zip, written by others):
// served over loopback, downloaded against its Dump entry's length, read with its manifest checked against the
// copy beside it, each bitstream verified and equal to the loose copy the corpus keeps.
import { createReadStream } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDocumentFile, type Entry } from '../../documents/index.ts';
import { sharedDir } from '../../documents/shared-dir.ts';
import { Http } from '../../http/index.ts';
import { downloadPackage } from './download.ts';
import { readPackage } from './extract.ts';
import type { EntryOutcome } from './model.ts';
import { fetchPackage } from './source.ts';
import { tempFileSink, type TempFile } from './sinks.ts';

const DUMP_DIR = sharedDir('corpus', 'resync-client-fixtures', 'resourcedump');
const PACKAGE = join(DUMP_DIR, 'bitstream-package.zip');

let server: Server;
let base: string;
let dir: string;
let ranges: string[] = [];
let holdWhole: Promise<void> = Promise.resolve();
let rangeSeen: () => void = () => undefined;
const http = new Http({ timeoutMs: 5000 });

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url !== '/bitstream-package.zip') return void res.writeHead(404).end();
    ranges.push(req.headers.range ?? 'whole');
    if (req.headers.range !== undefined) rangeSeen();
    // Ranges as a static file server answers them (for the package read while it downloads).
    const suffix = /^bytes=-(\d+)$/.exec(req.headers.range ?? '');
    const span = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    if (suffix || span) {
      void readFile(PACKAGE).then((zip) => {
        const start = suffix ? Math.max(0, zip.length - Number(suffix[1])) : Number(span![1]);
        const end = suffix || span![2] === '' ? zip.length - 1 : Math.min(zip.length - 1, Number(span![2]));
        res.writeHead(206, { 'content-type': 'application/zip', 'content-range': `bytes ${start}-${end}/${zip.length}` });
        res.end(zip.subarray(start, end + 1));
      });
      return;
    }
    // Held until the end has been asked for (when a test says so), so the download cannot win the race.
    void holdWhole.then(() => {
      res.writeHead(200, { 'content-type': 'application/zip' });
      createReadStream(PACKAGE).pipe(res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = await mkdtemp(join(tmpdir(), 'rsdesk-corpus-pkg-'));
});
afterAll(async () => {
  await http.close();
  await new Promise((r) => server.close(r));
  await rm(dir, { recursive: true, force: true });
});

describe('the shared corpus\'s real Resource Dump package', () => {
  it('downloads against its Dump entry and extracts both bitstreams, verified', async () => {
    const dumpEntries: Entry[] = [];
    const dump = await readDocumentFile(join(DUMP_DIR, 'resourcedump.xml'), { onEntry: (e) => void dumpEntries.push(e) });
    expect(dump.capability).toBe('resourcedump');
    expect(dumpEntries).toHaveLength(1);
    const md = dumpEntries[0].md;
    expect(md.length).toBe(String((await stat(PACKAGE)).size));

    const downloaded = await downloadPackage({ http, url: `${base}/bitstream-package.zip`, dest: join(dir, 'package.zip'), length: md.length, hash: md.hash });
    expect(downloaded.bytes).toBe(1334);

    const out = join(dir, 'out');
    await mkdir(out);
    const report = await readPackage(downloaded.path, {
      kind: 'resourcedump',
      url: dumpEntries[0].loc,
      sink: tempFileSink(out),
      contentsCopy: { url: 'manifest.xml', body: createReadStream(join(DUMP_DIR, 'manifest.xml')) },
    });
    expect(report.contentsMismatch).toEqual([]);
    expect(report.refusedZipEntries).toEqual([]);
    expect(report.unlisted).toEqual([]);
    expect(report.counts).toEqual({ verified: 2, unverifiable: 0, deleted: 0, failed: 0, bytes: 446 + 447 });
    for (const outcome of report.outcomes) {
      if (outcome.status !== 'verified') throw new Error(`${outcome.entry.loc}: ${outcome.status}`);
      const name = outcome.entry.loc.split('/').pop()!;
      expect(await readFile((outcome.sinkResult as TempFile).path)).toEqual(await readFile(join(DUMP_DIR, 'resources', name)));
      expect(outcome.digests.md5).toBe(outcome.entry.hashes.md5);
    }
    expect(report.outcomes.map((o) => o.entry.loc)).toEqual(['http://example.com/res1', 'http://example.com/res2']);
  });

  it('reads the same package while it downloads (its end by a range first), with the same outcome', async () => {
    const dumpEntries: Entry[] = [];
    await readDocumentFile(join(DUMP_DIR, 'resourcedump.xml'), { onEntry: (e) => void dumpEntries.push(e) });
    const entry = { ...dumpEntries[0], loc: `${base}/bitstream-package.zip`, links: [] };
    const out = join(dir, 'out-growing');
    const work = join(dir, 'work-growing');
    await mkdir(out);
    await mkdir(work);
    ranges = [];
    holdWhole = new Promise((r) => (rangeSeen = r));
    const outcomes: EntryOutcome[] = [];
    const discarded: EntryOutcome[] = [];
    const { report } = await fetchPackage({
      http,
      package: { entry, dumpUrl: `${base}/resourcedump.xml` },
      kind: 'resourcedump',
      workDir: work,
      readAheadFrom: 0,
    quickDownloadSeconds: 0,
      sink: tempFileSink(out),
      onOutcome: (o) => void outcomes.push(o),
      discard: async (o) => void discarded.push(o),
    });
    expect(ranges).toContain('bytes=-131072');
    expect(discarded).toEqual([]);
    expect(report.counts).toEqual({ verified: 2, unverifiable: 0, deleted: 0, failed: 0, bytes: 446 + 447 });
    expect(outcomes).toHaveLength(2);
    for (const outcome of outcomes) {
      if (outcome.status !== 'verified') throw new Error(`${outcome.entry.loc}: ${outcome.status}`);
      const name = outcome.entry.loc.split('/').pop()!;
      expect(await readFile((outcome.sinkResult as TempFile).path)).toEqual(await readFile(join(DUMP_DIR, 'resources', name)));
    }
  });
});
