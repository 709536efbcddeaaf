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
import { tempFileSink, type TempFile } from './sinks.ts';

const DUMP_DIR = sharedDir('corpus', 'resync-client-fixtures', 'resourcedump');
const PACKAGE = join(DUMP_DIR, 'bitstream-package.zip');

let server: Server;
let base: string;
let dir: string;
const http = new Http({ timeoutMs: 5000 });

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/bitstream-package.zip') {
      res.writeHead(200, { 'content-type': 'application/zip' });
      createReadStream(PACKAGE).pipe(res);
    } else res.writeHead(404).end();
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
});
