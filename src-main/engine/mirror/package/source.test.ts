// Dumps of the project's fixture Source, end to end over loopback: listing, download (resumed after a cut), reading.
import { mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HOSTILE_DUMP_EXPECTED, PATHS, startFixtureSource, type FixtureSource } from '../../../../e2e/fixture-source/index.ts';
import { Http } from '../../http/index.ts';
import { downloadPackage } from './download.ts';
import type { ManifestEntry } from './model.ts';
import { tempFileSink, type TempFile } from './sinks.ts';
import { dumpPackages, fetchPackage, PackagePrefetch, packagePath } from './source.ts';

let fixture: FixtureSource;
let dir: string;
let work: string;
let out: string;
const http = new Http({ timeoutMs: 5000 });

beforeAll(async () => {
  fixture = await startFixtureSource({ resources: 12, changeListSize: 6, bigListParts: 1, bigListEntries: 5 });
});
afterAll(async () => {
  await http.close();
  await fixture.close();
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rsdesk-dumps-'));
  work = join(dir, 'work');
  out = join(dir, 'out');
  await mkdir(work);
  await mkdir(out);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('dumps of the fixture Source', () => {
  it('lists the Resource Dump\'s packages and extracts every live resource, verified, byte for byte', async () => {
    const listing = await dumpPackages(http, fixture.url + PATHS.dataset1.resourceDump);
    expect(listing.kind).toBe('resourcedump');
    expect(listing.problems).toEqual([]);
    expect(listing.packages.map((p) => p.entry.loc)).toEqual([1, 2].map((n) => fixture.url + PATHS.dataset1.resourceDumpPackage(n)));
    const got = new Map<string, Buffer>();
    for (const pkg of listing.packages) {
      const { download, report } = await fetchPackage({ http, package: pkg, workDir: work, kind: listing.kind, sink: tempFileSink(out) });
      expect(download.digests.md5).toBeDefined();
      expect(report.contentsMismatch).toEqual([]);
      expect(report.counts.failed).toBe(0);
      for (const o of report.outcomes) {
        if (o.status !== 'verified') throw new Error(`${o.entry.loc}: ${o.status}`);
        got.set(o.entry.loc, await readFile((o.sinkResult as TempFile).path));
      }
    }
    const live = fixture.state.live();
    expect(got.size).toBe(live.length);
    for (const r of live) expect(got.get(fixture.state.locOf(r.id))).toEqual(fixture.state.representation(r.id, r.version).body);
    // Packages are removed once read; nothing is left in the work folder.
    expect(await readdir(work)).toEqual([]);
  });

  it('downloads the next package while the current one is read, and only once', async () => {
    const listing = await dumpPackages(http, fixture.url + PATHS.dataset1.resourceDump);
    const [first, second] = listing.packages;
    const secondPath = PATHS.dataset1.resourceDumpPackage(2);
    const requestsOfSecond = () => fixture.requests.filter((r) => r.path === secondPath).length;
    const before = requestsOfSecond();
    const prefetch = new PackagePrefetch();
    const of = (p: typeof first) => ({ http, package: p!, workDir: work });
    const sinkOut = tempFileSink(out);
    let secondAskedWhileReadingFirst = false;
    await fetchPackage({
      http,
      package: first!,
      workDir: work,
      kind: 'resourcedump',
      downloading: prefetch.downloadFor(of(first), of(second)),
      sink: async (entry, stream) => {
        // Reading the first package: the second one's request comes meanwhile (or the test fails after 10 s).
        for (let waited = 0; requestsOfSecond() === before && waited < 10_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
        secondAskedWhileReadingFirst ||= requestsOfSecond() > before;
        return sinkOut(entry, stream);
      },
    });
    expect(secondAskedWhileReadingFirst).toBe(true);
    const { download, report } = await fetchPackage({ http, package: second!, workDir: work, kind: 'resourcedump', downloading: prefetch.take(second!), sink: sinkOut });
    expect(download.reused).toBe(false);
    expect(report.counts.failed).toBe(0);
    expect(requestsOfSecond() - before).toBe(1);
    await prefetch.settle();
    expect(await readdir(work)).toEqual([]);
  });

  it('a prefetched download the run no longer needs is stopped and left to resume', async () => {
    const listing = await dumpPackages(http, fixture.url + PATHS.dataset1.resourceDump);
    const path = PATHS.dataset1.resourceDumpPackage(1);
    fixture.setBroken(path, { stallAfter: 300 });
    const prefetch = new PackagePrefetch();
    // A client that would wait two minutes for the stalled body: only stopping it ends this test in time.
    const patient = new Http({ timeoutMs: 120_000 });
    prefetch.start({ http: patient, package: listing.packages[0]!, workDir: work });
    const part = `${packagePath(work, fixture.url + path)}.part`;
    for (let waited = 0; waited < 10_000; waited += 10) {
      const size = await readFile(part).then((b) => b.length, () => 0);
      if (size >= 300) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    await prefetch.settle();
    // What came stays for the next run to resume from.
    expect((await readFile(part)).length).toBe(300);
    fixture.setBroken(path, null);
    await patient.close();
  });

  it('resumes a package download that broke off, with Range and If-Range', async () => {
    const listing = await dumpPackages(http, fixture.url + PATHS.dataset1.resourceDump);
    const pkg = listing.packages[0];
    const path = PATHS.dataset1.resourceDumpPackage(1);
    fixture.setBroken(path, { cutAfter: 700 });
    const before = fixture.requests.length;
    const { download, report } = await fetchPackage({ http, package: pkg, workDir: work, kind: 'resourcedump', sink: tempFileSink(out) });
    expect(download).toMatchObject({ resumes: 1, restarts: 0 });
    const gets = fixture.requests.slice(before).filter((r) => r.path === path);
    expect(gets).toHaveLength(2);
    expect(gets[1].headers.range).toBe('bytes=700-');
    expect(gets[1].headers['if-range']).toMatch(/^"[0-9a-f]{32}"$/);
    expect(report.counts.failed).toBe(0);
  });

  it('a download an earlier run left in the work folder is resumed, not started over', async () => {
    const listing = await dumpPackages(http, fixture.url + PATHS.dataset1.resourceDump);
    const pkg = listing.packages[1];
    fixture.setBroken(PATHS.dataset1.resourceDumpPackage(2), { cutAfter: 500 });
    // An earlier run that stopped when the transfer broke off.
    await expect(
      downloadPackage({ http, url: pkg.entry.loc, dest: packagePath(work, pkg.entry.loc), length: pkg.entry.md.length, hash: pkg.entry.md.hash, maxResumes: 0 }),
    ).rejects.toMatchObject({ name: 'NetworkError' });
    expect((await readdir(work)).length).toBe(2);
    const { download, report } = await fetchPackage({ http, package: pkg, workDir: work, kind: 'resourcedump', sink: tempFileSink(out) });
    expect(download).toMatchObject({ resumedFrom: 500, resumes: 0, restarts: 0 });
    expect(report.counts.failed).toBe(0);
    expect(await readdir(work)).toEqual([]);
  });

  it('applies Change Dump packages: bitstreams in order, deletions without a path', async () => {
    fixture.change('update', 5);
    fixture.change('delete', 2);
    fixture.change('create', 6);
    const listing = await dumpPackages(http, fixture.url + PATHS.dataset1.changeDump);
    expect(listing.kind).toBe('changedump');
    expect(listing.packages.length).toBeGreaterThanOrEqual(3);
    // Chronological, as §13.1 asks.
    const froms = listing.packages.map((p) => p.fromMs!);
    expect([...froms].sort((a, b) => a - b)).toEqual(froms);
    const applied: string[] = [];
    const deleted: ManifestEntry[] = [];
    let verified = 0;
    for (const pkg of listing.packages) {
      const { report } = await fetchPackage({
        http,
        package: pkg,
        workDir: work,
        kind: 'changedump',
        sink: async (entry, stream) => {
          applied.push(`${entry.md.datetime} ${entry.change}`);
          return tempFileSink(out)(entry, stream);
        },
        onDeleted: (entry) => {
          deleted.push(entry);
          applied.push(`${entry.md.datetime} deleted`);
        },
      });
      expect(report.counts.failed).toBe(0);
      expect(report.contentsMismatch).toEqual([]);
      verified += report.counts.verified;
    }
    const closed = fixture.state.changeLists().filter((s) => s.until !== undefined).flatMap((s) => s.records);
    expect(verified).toBe(closed.filter((r) => r.change !== 'deleted').length);
    expect(deleted.map((e) => e.loc)).toEqual(closed.filter((r) => r.change === 'deleted').map((r) => r.loc));
    expect(deleted.every((e) => e.md.path === undefined)).toBe(true);
    expect(applied).toEqual(closed.map((r) => `${r.datetime} ${r.change}`));
  });

  it('the fixture\'s hostile package: each bad entry refused with its reason, the good one verified', async () => {
    const listing = await dumpPackages(http, fixture.url + PATHS.hostileDump.resourceDump);
    expect(listing.packages).toHaveLength(1);
    const { report } = await fetchPackage({ http, package: listing.packages[0], workDir: work, kind: 'resourcedump', sink: tempFileSink(out) });
    const got = Object.fromEntries(report.outcomes.map((o) => [o.entry.loc.split('/').pop(), o.status === 'failed' ? o.code : o.status]));
    expect(got).toEqual(HOSTILE_DUMP_EXPECTED);
    expect(report.refusedZipEntries.map((r) => r.code).sort()).toEqual(['bomb', 'path-escapes', 'symlink']);
    // Only the good bitstream is left on disk.
    expect(await readdir(out)).toHaveLength(1);
  });

  it('refuses to list what is not a dump', async () => {
    await expect(dumpPackages(http, fixture.url + PATHS.dataset1.resourceList)).rejects.toThrow(/is a resourcelist, not a Resource Dump or Change Dump/);
  });
});

describe('dumpPackages against a Dump that lists very many packages', () => {
  it('lists 200,000 packages (a spread into push() overflowed the stack past some 120,000)', async () => {
    const NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(`<urlset ${NS}><rs:md capability="resourcedump" at="2020-01-01T00:00:00Z"/>${Array.from({ length: 200_000 }, (_, i) => `<url><loc>/p${i}.zip</loc></url>`).join('')}</urlset>`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const listing = await dumpPackages(http, `http://127.0.0.1:${(server.address() as AddressInfo).port}/rd.xml`);
      expect(listing.packages).toHaveLength(200_000);
      expect(listing.packages[199_999]!.entry.loc).toBe('/p199999.zip');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
