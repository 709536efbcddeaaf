import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExtractBudget, readPackage, type BitstreamFiles, type ReadPackageOptions } from './extract.ts';
import { PackageError, type EntryOutcome, type ManifestEntry } from './model.ts';
import { tempFileSink, type TempFile } from './sinks.ts';
import { buildZip, CENTRAL, headersOf, manifestXml, md5, patch, patchDescriptor, rawZip, renameEntry, sha256, unicodePathField, type ManifestItem, type ZipFileSpec } from './test-zips.ts';

let dir: string;
let out: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rsdesk-pkg-'));
  out = join(dir, 'out');
  await import('node:fs/promises').then((fs) => fs.mkdir(out));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const R1 = 'Resource one, deflated. '.repeat(200);
const R2 = 'Resource two, stored as is.';
const R3 = Buffer.from([0, 1, 2, 3, 255, 254, 253]);

function good(): { files: ZipFileSpec[]; items: ManifestItem[] } {
  return {
    files: [
      { name: 'resources/res1', body: R1 },
      { name: 'resources/res2', body: R2, compress: false },
      { name: 'resources/sub/res3.bin', body: R3 },
    ],
    items: [
      { loc: 'http://example.com/res1', path: '/resources/res1', hash: `md5:${md5(R1)}`, length: R1.length },
      { loc: 'http://example.com/res2', path: '/resources/res2', hash: `md5:${md5(R2)} sha-256:${sha256(R2)}`, length: R2.length },
      { loc: 'http://example.com/res3', path: '/resources/sub/res3.bin', hash: `sha-256:${sha256(R3)}` },
    ],
  };
}

async function write(files: ZipFileSpec[], manifest: string | null, zip64 = false): Promise<string> {
  const all = manifest === null ? files : [{ name: 'manifest.xml', body: manifest }, ...files];
  return save(await buildZip(all, { zip64 }));
}

async function save(zip: Buffer): Promise<string> {
  const path = join(dir, `package-${Math.random().toString(36).slice(2)}.zip`);
  await writeFile(path, zip);
  return path;
}

/**
 * How bitstreams reach the caller: streamed to a sink, extracted into files on the extraction thread, or (`small`)
 * those up to SMALL_BITSTREAM verified in memory and handed over as bytes, the others as files.
 */
let mode: 'stream' | 'files' | 'small' = 'stream';
let n = 0;

/** Files written on the extraction thread into `out`, given back like tempFileSink's. */
function filesInto(dir: string): BitstreamFiles {
  return { pathFor: () => join(dir, `file-${++n}.tmp`), written: (_entry, path): TempFile => ({ path }) };
}

/** Small bitstreams handed over as verified bytes, written here. */
function bytesInto(dir: string): ReadPackageOptions['verifiedBytes'] {
  return (_entry, bytes): TempFile => {
    const path = join(dir, `bytes-${++n}.tmp`);
    writeFileSync(path, bytes);
    return { path };
  };
}

async function read(path: string, extra: Partial<ReadPackageOptions> = {}) {
  const deleted: ManifestEntry[] = [];
  const report = await readPackage(path, {
    kind: 'resourcedump',
    url: 'http://example.com/package.zip',
    // A test that brings its own sink is about the stream; otherwise, with files, the stream sink must not be used.
    ...(mode !== 'stream' && extra.sink === undefined
      ? { files: filesInto(out), sink: () => Promise.reject(new Error('the stream sink was used instead of the files')) }
      : { sink: tempFileSink(out) }),
    ...(mode === 'small' && extra.sink === undefined ? { verifiedBytes: bytesInto(out) } : {}),
    onDeleted: (e) => {
      deleted.push(e);
    },
    ...extra,
  });
  return { report, deleted };
}

function byLoc(outcomes: EntryOutcome[], loc: string): EntryOutcome {
  const found = outcomes.find((o) => o.entry.loc === loc);
  if (!found) throw new Error(`no outcome for ${loc}`);
  return found;
}

async function contentOf(outcome: EntryOutcome): Promise<Buffer> {
  if (outcome.status !== 'verified' && outcome.status !== 'unverifiable') throw new Error(`${outcome.entry.loc} is ${outcome.status}`);
  return readFile((outcome.sinkResult as TempFile).path);
}

describe.each(['stream', 'files', 'small'] as const)('readPackage: a good Resource Dump package (bitstreams as %s)', (how) => {
  beforeEach(() => {
    mode = how;
  });
  afterEach(() => {
    mode = 'stream';
  });

  it('streams every bitstream to the sink, verified against the manifest', async () => {
    const { files, items } = good();
    const { report } = await read(await write(files, manifestXml('resourcedump-manifest', items)));
    expect(report.counts).toEqual({ verified: 3, unverifiable: 0, deleted: 0, failed: 0, bytes: R1.length + R2.length + R3.length });
    expect(report.outcomes.map((o) => o.entry.loc)).toEqual(items.map((i) => i.loc));
    expect((await contentOf(report.outcomes[0])).toString()).toBe(R1);
    expect((await contentOf(report.outcomes[1])).toString()).toBe(R2);
    expect(await contentOf(report.outcomes[2])).toEqual(R3);
    const o2 = report.outcomes[1];
    expect(o2.status === 'verified' && o2.digests).toEqual({ md5: md5(R2), 'sha-256': sha256(R2) });
    expect(report.manifest.capability).toBe('resourcedump-manifest');
    expect(report.refusedZipEntries).toEqual([]);
    expect(report.unlisted).toEqual([]);
  });

  it('reads a ZIP64 package', async () => {
    const { files, items } = good();
    const path = await write(files, manifestXml('resourcedump-manifest', items), true);
    const zip = await readFile(path);
    // yazl marks ZIP64 with the end-of-central-directory locator signature.
    expect(zip.includes(Buffer.from([0x50, 0x4b, 0x06, 0x07]))).toBe(true);
    const { report } = await read(path);
    expect(report.counts.verified).toBe(3);
    expect((await contentOf(report.outcomes[0])).toString()).toBe(R1);
  });

  it('computes md5 for an entry the manifest gives no hash for, and reports files it does not list', async () => {
    const body = 'no hash given';
    const path = await write(
      [
        { name: 'a.txt', body },
        { name: 'extra.txt', body: 'not in the manifest' },
      ],
      manifestXml('resourcedump-manifest', [{ loc: 'http://example.com/a', path: '/a.txt' }]),
    );
    const { report } = await read(path);
    const o = report.outcomes[0];
    expect(o.status).toBe('verified');
    expect(o.status === 'verified' && o.digests).toEqual({ md5: md5(body) });
    expect(report.unlisted).toEqual(['extra.txt']);
  });

  it('checks the manifest against the Dump\'s rel="contents" copy', async () => {
    const { files, items } = good();
    const manifest = manifestXml('resourcedump-manifest', items);
    const path = await write(files, manifest);
    const same = await read(path, { contentsCopy: { url: 'http://example.com/m.xml', body: Readable.from([Buffer.from(manifest)]) } });
    expect(same.report.contentsMismatch).toEqual([]);
    const other = manifestXml('resourcedump-manifest', [items[0], { ...items[1], hash: `md5:${md5('other')}` }]);
    const differs = await read(path, { contentsCopy: { url: 'http://example.com/m.xml', body: Readable.from([Buffer.from(other)]) } });
    expect(differs.report.contentsMismatch.join('\n')).toMatch(/res2 .*not the same in the linked copy/);
    expect(differs.report.contentsMismatch.join('\n')).toMatch(/res3 .*not the same in the linked copy/);
    // The package's own manifest is what is applied.
    expect(differs.report.counts.verified).toBe(3);
    const broken = await read(path, { contentsCopy: { url: 'http://example.com/m.xml', body: Readable.from([Buffer.from('<html>')]) } });
    expect(broken.report.contentsMismatch[0]).toMatch(/could not be read/);
  });
});

describe('readPackage: concurrency', () => {
  it('hands a Resource Dump\'s bitstreams to the sink two at a time, a Change Dump\'s one at a time; outcomes keep the order', async () => {
    const files = Array.from({ length: 6 }, (_, i) => ({ name: `f${i}`, body: `body ${i}` }));
    const observe = () => {
      let open = 0;
      let most = 0;
      const sink = async (_e: ManifestEntry, stream: Readable) => {
        open++;
        most = Math.max(most, open);
        await new Promise((r) => setTimeout(r, 15));
        for await (const _ of stream);
        open--;
      };
      return { sink, most: () => most };
    };
    const rd = await write(files, manifestXml('resourcedump-manifest', files.map((f) => ({ loc: `http://example.com/${f.name}`, path: `/${f.name}` }))));
    const a = observe();
    const { report } = await read(rd, { sink: a.sink });
    expect(a.most()).toBe(2);
    expect(report.outcomes.map((o) => o.entry.loc)).toEqual(files.map((f) => `http://example.com/${f.name}`));
    const cd = await write(
      files,
      manifestXml('changedump-manifest', files.map((f, i) => ({ loc: `http://example.com/${f.name}`, path: `/${f.name}`, change: 'updated', datetime: `2024-01-02T0${i}:00:00Z` }))),
    );
    const b = observe();
    await read(cd, { kind: 'changedump', sink: b.sink, concurrency: 4 });
    expect(b.most()).toBe(1);
  });
});

describe.each(['stream', 'files', 'small'] as const)('readPackage: entries that fail alone (bitstreams as %s)', (how) => {
  beforeEach(() => {
    mode = how;
  });
  afterEach(() => {
    mode = 'stream';
  });

  it('large bitstreams are verified, and a wrong digest fails that one alone', async () => {
    const { randomBytes } = await import('node:crypto');
    const big1 = randomBytes(3 * (1 << 20) + 5);
    const big2 = randomBytes(2 * (1 << 20));
    const path = await write(
      [
        { name: 'big1', body: big1 },
        { name: 'big2', body: big2, compress: false },
      ],
      manifestXml('resourcedump-manifest', [
        { loc: 'http://example.com/big1', path: '/big1', hash: `md5:${md5(big1)} sha-256:${sha256(big1)}`, length: big1.length },
        { loc: 'http://example.com/big2', path: '/big2', hash: `sha-256:${sha256(Buffer.from('not these bytes'))}` },
      ]),
    );
    const { report } = await read(path);
    const o1 = byLoc(report.outcomes, 'http://example.com/big1');
    expect(o1).toMatchObject({ status: 'verified', length: big1.length });
    expect(o1.status === 'verified' && o1.digests).toMatchObject({ md5: md5(big1), 'sha-256': sha256(big1) });
    const o2 = byLoc(report.outcomes, 'http://example.com/big2');
    expect(o2).toMatchObject({ status: 'failed', code: 'hash-mismatch' });
    expect(o2.status === 'failed' && o2.reason).toMatch(/sha-256 is [0-9a-f]{64}, the manifest says/);
    expect(await readdir(out)).toHaveLength(1);
  });

  it('a hash or length that does not match fails that entry; the sink sees its stream error', async () => {
    const { files, items } = good();
    items[0].hash = `md5:${md5('something else')}`;
    items[1].length = R2.length + 1;
    const sunk: string[] = [];
    const sink = tempFileSink(out);
    const { report } = await read(await write(files, manifestXml('resourcedump-manifest', items)), {
      sink: async (entry, stream) => {
        sunk.push(entry.loc);
        return sink(entry, stream);
      },
    });
    const o1 = byLoc(report.outcomes, 'http://example.com/res1');
    expect(o1).toMatchObject({ status: 'failed', code: 'hash-mismatch' });
    expect(o1.status === 'failed' && o1.reason).toMatch(/md5 is [0-9a-f]{32}, the manifest says/);
    // A length disagreement is known before reading: the sink never sees it.
    expect(byLoc(report.outcomes, 'http://example.com/res2')).toMatchObject({ status: 'failed', code: 'length-mismatch' });
    // Two bitstreams are read at a time, so the sink sees them in either order.
    expect(sunk.sort()).toEqual(['http://example.com/res1', 'http://example.com/res3']);
    expect(report.counts).toMatchObject({ verified: 1, failed: 2 });
    // The bad bitstream's temporary file was removed by the sink.
    expect(await readdir(out)).toHaveLength(1);
  });

  it('a malformed or unknown hash makes the entry unverifiable, not failed', async () => {
    const { files, items } = good();
    items[0].hash = 'md5:xyz';
    items[1].hash = `crc32:1234abcd sha-256:${sha256(R2)}`;
    const { report } = await read(await write(files, manifestXml('resourcedump-manifest', items)));
    const o1 = report.outcomes[0];
    expect(o1.status).toBe('unverifiable');
    expect(o1.status === 'unverifiable' && o1.problems.join()).toMatch(/not hexadecimal/);
    expect(report.outcomes[1].status).toBe('unverifiable');
    expect(report.outcomes[2].status).toBe('verified');
    expect(report.counts).toMatchObject({ verified: 1, unverifiable: 2 });
  });

  it('refuses names that escape the package, whether in the ZIP or in the manifest', async () => {
    const body = 'evil';
    let zip = await buildZip([
      { name: 'manifest.xml', body: manifestXml('resourcedump-manifest', [
        { loc: 'http://example.com/dotdot', path: '/xx/evil1' },
        { loc: 'http://example.com/abs', path: '/xetc/evil' },
        { loc: 'http://example.com/drive', path: '/C_/evil3' },
        { loc: 'http://example.com/backslash', path: '/a_b/evil4' },
        { loc: 'http://example.com/nul', path: '/nul_x/evil5' },
        { loc: 'http://example.com/manifest-dotdot', path: '/../../etc/passwd' },
        { loc: 'http://example.com/ok', path: '/ok.txt', hash: `md5:${md5(body)}` },
      ]) },
      { name: 'xx/evil1', body },
      { name: 'xetc/evil', body },
      { name: 'C_/evil3', body },
      { name: 'a_b/evil4', body },
      { name: 'nul_x/evil5', body },
      { name: 'ok.txt', body },
    ]);
    // Names yazl will not write, put in by hand (the manifest keeps the harmless spelling).
    zip = renameEntry(zip, 'xx/evil1', '../evil1');
    zip = renameEntry(zip, 'xetc/evil', '/etc/evil');
    zip = renameEntry(zip, 'C_/evil3', 'C:/evil3');
    zip = renameEntry(zip, 'a_b/evil4', 'a\\b/evil4');
    // A NUL would cut the name short for a reader in C ("nul" and "nul\0x/evil5" the same file).
    zip = renameEntry(zip, 'nul_x/evil5', 'nul\0x/evil5');
    const { report } = await read(await save(zip));
    const codes = Object.fromEntries(report.refusedZipEntries.map((r) => [r.name, r.code]));
    expect(codes).toEqual({ '../evil1': 'path-escapes', '/etc/evil': 'path-escapes', 'C:/evil3': 'path-escapes', 'a\\b/evil4': 'path-escapes', 'nul\0x/evil5': 'path-escapes' });
    expect(report.refusedZipEntries.find((r) => r.name === 'a\\b/evil4')?.reason).toMatch(/backslash/);
    expect(report.refusedZipEntries.find((r) => r.name === 'nul\0x/evil5')?.reason).toBe('Refused: a NUL character in "nul\\u0000x/evil5"');
    expect(byLoc(report.outcomes, 'http://example.com/nul')).toMatchObject({ status: 'failed', code: 'not-in-package' });
    expect(byLoc(report.outcomes, 'http://example.com/manifest-dotdot')).toMatchObject({ status: 'failed', code: 'path-escapes' });
    // The manifest's harmless names now name nothing.
    expect(byLoc(report.outcomes, 'http://example.com/dotdot')).toMatchObject({ status: 'failed', code: 'not-in-package' });
    expect(byLoc(report.outcomes, 'http://example.com/ok').status).toBe('verified');
  });

  it('refuses an entry whose stored name escapes the package though its Unicode Path field gives a harmless one', async () => {
    // A reader that ignores the field (or an older one) would take the stored name.
    const zip = rawZip([
      { name: 'manifest.xml', body: manifestXml('resourcedump-manifest', [{ loc: 'http://example.com/two', path: '/two.txt' }, { loc: 'http://example.com/ok', path: '/ok.txt' }]) },
      { name: '../a.txt', body: 'evil', extra: unicodePathField('../a.txt', 'two.txt') },
      { name: 'ok-raw.txt', body: 'fine', extra: unicodePathField('ok-raw.txt', 'ok.txt') },
    ]);
    const { report } = await read(await save(zip));
    expect(report.outcomes.map((o) => (o.status === 'failed' ? o.code : o.status))).toEqual(['path-escapes', 'verified']);
    expect(report.outcomes[0].status === 'failed' && report.outcomes[0].reason).toBe(
      'Refused: its name as stored, "../a.txt", has ".." in "../a.txt", which leads out of the package (its Unicode Path field says "two.txt")',
    );
  });

  it('a manifest entry naming a refused ZIP entry fails with the refusal', async () => {
    let zip = await buildZip([
      { name: 'manifest.xml', body: manifestXml('resourcedump-manifest', [{ loc: 'http://example.com/x', path: '/a/../b' }, { loc: 'http://example.com/y', path: '/a/xx/b' }]) },
      { name: 'a/xx/b', body: 'x' },
    ]);
    zip = renameEntry(zip, 'a/xx/b', 'a/../b');
    const { report } = await read(await save(zip));
    expect(report.outcomes.map((o) => o.status === 'failed' && o.code)).toEqual(['path-escapes', 'not-in-package']);
  });

  it('refuses symbolic links', async () => {
    const path = await write(
      [{ name: 'link', body: '/etc/passwd', mode: 0o120777 }, { name: 'file', body: 'f' }],
      manifestXml('resourcedump-manifest', [{ loc: 'http://example.com/link', path: '/link' }, { loc: 'http://example.com/file', path: '/file' }]),
    );
    const { report } = await read(path);
    expect(report.outcomes.map((o) => o.status === 'failed' ? o.code : o.status)).toEqual(['symlink', 'verified']);
    expect(report.refusedZipEntries).toEqual([{ name: 'link', code: 'symlink', reason: expect.stringMatching(/symbolic link/) }]);
  });

  it('refuses an entry whose local header and central directory disagree on its size, name or CRC', async () => {
    const body = 'local header disagrees '.repeat(50);
    const files = [{ name: 'a.txt', body }, { name: 'b.txt', body }, { name: 'c.txt', body }, { name: 'd.txt', body, compress: false }, { name: 'ok.txt', body }];
    const manifest = manifestXml('resourcedump-manifest', files.map((f) => ({ loc: `http://example.com/${f.name}`, path: `/${f.name}` })));
    let zip = await buildZip([{ name: 'manifest.xml', body: manifest }, ...files]);
    zip = patch(zip, 'a.txt', 'local', 'uncompressed', body.length + 10);
    zip = patch(zip, 'b.txt', 'local', 'crc', 0x12345678);
    // The central directory claims more bytes than there are: the stream comes up short.
    zip = patch(zip, 'c.txt', 'central', 'uncompressed', body.length + 5);
    zip = patch(zip, 'c.txt', 'local', 'uncompressed', body.length + 5);
    // Both headers agree on a CRC the bytes do not have.
    zip = patch(zip, 'd.txt', 'central', 'crc', 0xdeadbeef);
    zip = patch(zip, 'd.txt', 'local', 'crc', 0xdeadbeef);
    const { report } = await read(await save(zip));
    expect(report.outcomes.map((o) => (o.status === 'failed' ? o.code : o.status))).toEqual([
      'size-mismatch',
      'header-mismatch',
      'length-mismatch',
      'crc-mismatch',
      'verified',
    ]);
    expect(report.outcomes[0].status === 'failed' && report.outcomes[0].reason).toMatch(/by its local header but .* by the central directory/);
    expect(await readdir(out)).toHaveLength(1);
  });

  it('refuses an entry whose data descriptor and central directory disagree on its sizes or CRC, and reads those that agree', async () => {
    const body = 'sizes after the data '.repeat(50);
    const files = [
      { name: 'ok.txt', body, descriptor: true },
      { name: 'stored.txt', body, compress: false, descriptor: true },
      // ZIP64: 8-byte sizes in the descriptor.
      { name: 'zip64.txt', body, descriptor: true, zip64: true },
      { name: 'size.txt', body, descriptor: true },
      { name: 'csize.txt', body, descriptor: true },
      { name: 'crc.txt', body, descriptor: true },
    ];
    const manifest = manifestXml('resourcedump-manifest', files.map((f) => ({ loc: `http://example.com/${f.name}`, path: `/${f.name}`, hash: `md5:${md5(body)}` })));
    let zip = await buildZip([{ name: 'manifest.xml', body: manifest }, ...files]);
    // A reader that streams the package would take these; the central directory (and the manifest) say otherwise.
    zip = patchDescriptor(zip, 'size.txt', 'uncompressed', body.length + 7);
    zip = patchDescriptor(zip, 'csize.txt', 'compressed', 3);
    zip = patchDescriptor(zip, 'crc.txt', 'crc', 0x12345678);
    const { report } = await read(await save(zip));
    expect(report.outcomes.map((o) => (o.status === 'failed' ? o.code : o.status))).toEqual(['verified', 'verified', 'verified', 'size-mismatch', 'size-mismatch', 'header-mismatch']);
    const compressed = zip.readUInt32LE(headersOf(zip, 'size.txt').central + CENTRAL.compressed).toLocaleString('en');
    expect(report.outcomes[3].status === 'failed' && report.outcomes[3].reason).toBe(
      `Refused: size.txt is ${(body.length + 7).toLocaleString('en')} bytes (${compressed} compressed) by its data descriptor but ${body.length.toLocaleString('en')} (${compressed}) by the central directory`,
    );
    expect(report.outcomes[5].status === 'failed' && report.outcomes[5].reason).toBe("Refused: crc.txt's data descriptor and central directory give different CRC-32s");
    expect(await readdir(out)).toHaveLength(3);
  });

  it('fails an entry that inflates to more bytes than both headers say, or whose deflated bytes end early', async () => {
    const body = 'inflates to more than declared '.repeat(60);
    const files = [{ name: 'more.txt', body }, { name: 'cut.txt', body }, { name: 'ok.txt', body }];
    const manifest = manifestXml('resourcedump-manifest', files.map((f) => ({ loc: `http://example.com/${f.name}`, path: `/${f.name}` })));
    let zip = await buildZip([{ name: 'manifest.xml', body: manifest }, ...files]);
    for (const where of ['local', 'central'] as const) zip = patch(zip, 'more.txt', where, 'uncompressed', body.length - 100);
    const { local } = headersOf(zip, 'cut.txt');
    const compressed = zip.readUInt32LE(local + 18);
    for (const where of ['local', 'central'] as const) zip = patch(zip, 'cut.txt', where, 'compressed', Math.floor(compressed / 2));
    const { report } = await read(await save(zip));
    expect(report.outcomes.map((o) => (o.status === 'failed' ? o.code : o.status))).toEqual(['size-mismatch', 'corrupt', 'verified']);
    expect(report.outcomes[0].status === 'failed' && report.outcomes[0].reason).toMatch(/more bytes than the [\d,]+ the package declares/);
    expect(await readdir(out)).toHaveLength(1);
  });

  it('judges an entry by the manifest digest when there is one, and by the CRC-32 only when there is none', async () => {
    const body = 'checked by its digest '.repeat(50);
    const files = [{ name: 'digest.txt', body }, { name: 'crc-only.txt', body }];
    const manifest = manifestXml('resourcedump-manifest', [
      { loc: 'http://example.com/digest.txt', path: '/digest.txt', hash: `md5:${md5(body)}` },
      { loc: 'http://example.com/crc-only.txt', path: '/crc-only.txt' },
    ]);
    let zip = await buildZip([{ name: 'manifest.xml', body: manifest }, ...files]);
    // Both headers agree on a CRC the bytes do not have: the digest stands for the bytes where the manifest gives one.
    for (const name of ['digest.txt', 'crc-only.txt']) {
      zip = patch(zip, name, 'central', 'crc', 0xdeadbeef);
      zip = patch(zip, name, 'local', 'crc', 0xdeadbeef);
    }
    const { report } = await read(await save(zip));
    expect(report.outcomes.map((o) => (o.status === 'failed' ? o.code : o.status))).toEqual(['verified', 'crc-mismatch']);
  });

  it('refuses a compression bomb and stops at the total size limit', async () => {
    const zeros = Buffer.alloc(20 * 1024 * 1024);
    const small = 'small '.repeat(1000);
    const path = await write(
      [{ name: 'bomb', body: zeros }, { name: 's1', body: small }, { name: 's2', body: small }],
      manifestXml('resourcedump-manifest', [
        { loc: 'http://example.com/bomb', path: '/bomb' },
        { loc: 'http://example.com/s1', path: '/s1' },
        { loc: 'http://example.com/s2', path: '/s2' },
      ]),
    );
    const { report } = await read(path, { limits: { maxTotalBytes: small.length + 100 } });
    expect(report.outcomes.map((o) => (o.status === 'failed' ? o.code : o.status))).toEqual(['bomb', 'verified', 'total-limit']);
    expect(report.outcomes[0].status === 'failed' && report.outcomes[0].reason).toMatch(/would expand [\d,]+:1/);
    expect(report.outcomes[2].status === 'failed' && report.outcomes[2].reason).toMatch(/limit of [\d,]+ bytes/);
  });

  it('refuses a package whose manifest lists more entries than the limit, before anything is extracted', async () => {
    const path = await write(
      [1, 2, 3].map((n) => ({ name: `f${n}`, body: `f${n}` })),
      manifestXml('resourcedump-manifest', [1, 2, 3].map((n) => ({ loc: `http://example.com/f${n}`, path: `/f${n}` }))),
    );
    await expect(read(path, { limits: { maxManifestEntries: 2 } })).rejects.toThrow(/The manifest lists more than 2 entries \(a document may hold 50,000\); the package is not read/);
    expect((await read(path, { limits: { maxManifestEntries: 3 } })).report.counts.verified).toBe(3);
  });

  it('refuses an entry said to lie past the end of the package, in plain words', async () => {
    const body = 'body';
    let zip = await buildZip([
      { name: 'manifest.xml', body: manifestXml('resourcedump-manifest', [{ loc: 'http://example.com/far', path: '/far.txt' }, { loc: 'http://example.com/ok', path: '/ok.txt' }]) },
      { name: 'far.txt', body },
      { name: 'ok.txt', body },
    ]);
    zip = patch(zip, 'far.txt', 'central', 'offset', 0xfffff000);
    const { report } = await read(await save(zip));
    expect(report.refusedZipEntries).toEqual([{ name: 'far.txt', code: 'size-mismatch', reason: expect.stringMatching(/^Refused: far\.txt is said to lie past the end of the package \(at byte 4,294,963,200/) }]);
    expect(byLoc(report.outcomes, 'http://example.com/far')).toMatchObject({ status: 'failed', code: 'size-mismatch' });
    expect(byLoc(report.outcomes, 'http://example.com/ok').status).toBe('verified');
  });

  it("holds the packages of one run to one budget: an entry the manifest names again and again, package after package", async () => {
    // 3 MiB of zeros (under the bomb check's 4 MiB), named four times: 12 MiB from a package of a few KiB.
    const zeros = Buffer.alloc(3 * 1024 * 1024);
    const path = await write(
      [{ name: 'zeros', body: zeros }],
      manifestXml('resourcedump-manifest', [1, 2, 3, 4].map((n) => ({ loc: `http://example.com/z${n}`, path: '/zeros' }))),
    );
    // A test-sized floor: what 1 GiB is to a real run (100 × this small package stays under it).
    const budget = new ExtractBudget(7 * 1024 * 1024);
    const first = (await read(path, { budget })).report;
    expect(first.outcomes.map((o) => (o.status === 'failed' ? o.code : o.status))).toEqual(['verified', 'verified', 'total-limit', 'total-limit']);
    expect(first.outcomes[2]!.status === 'failed' && first.outcomes[2]!.reason).toMatch(/this run's packages would exceed 7,340,032 bytes/);
    // The next package of the same run starts where the first left the budget.
    const second = (await read(path, { budget })).report;
    expect(second.outcomes.every((o) => o.status === 'failed' && o.code === 'total-limit')).toBe(true);
    expect(budget.extracted).toBe(2 * zeros.length);
  });

  it('a manifest entry missing from the package, a duplicated name, an encrypted entry, a missing path each fail alone', async () => {
    const body = 'body';
    const manifest = manifestXml('resourcedump-manifest', [
      { loc: 'http://example.com/missing', path: '/missing.txt' },
      { loc: 'http://example.com/dup', path: '/dup.txt' },
      { loc: 'http://example.com/secret', path: '/secret.txt' },
      { loc: 'http://example.com/nopath' },
      { loc: 'http://example.com/ok', path: '/ok.txt', hash: `md5:${md5(body)}`, length: body.length },
    ]);
    let zip = await buildZip([
      { name: 'manifest.xml', body: manifest },
      { name: 'dup.txt', body: 'first' },
      { name: 'dup.txt', body: 'second' },
      { name: 'secret.txt', body: 'sssh', compress: false },
      { name: 'ok.txt', body },
    ]);
    zip = patch(zip, 'secret.txt', 'central', 'flags', 0x0801, 2);
    zip = patch(zip, 'secret.txt', 'local', 'flags', 0x0801, 2);
    const { report } = await read(await save(zip));
    expect(report.outcomes.map((o) => (o.status === 'failed' ? o.code : o.status))).toEqual([
      'not-in-package',
      'duplicate-name',
      'encrypted',
      'missing-path',
      'verified',
    ]);
    expect(report.refusedZipEntries.map((r) => [r.name, r.code])).toEqual([
      ['dup.txt', 'duplicate-name'],
      ['secret.txt', 'encrypted'],
    ]);
  });

  it('a sink that fails or stops early fails that entry only', async () => {
    const { files, items } = good();
    const { report } = await read(await write(files, manifestXml('resourcedump-manifest', items)), {
      sink: async (entry, stream) => {
        if (entry.loc.endsWith('res1')) throw new Error('disk full');
        if (entry.loc.endsWith('res2')) return 'ignored the stream';
        for await (const _ of stream);
        return 'read it all';
      },
    });
    expect(report.outcomes.map((o) => (o.status === 'failed' ? o.code : o.status))).toEqual(['sink-failed', 'sink-incomplete', 'verified']);
    expect(report.outcomes[0].status === 'failed' && report.outcomes[0].reason).toMatch(/disk full/);
  });
});

describe('readPackage: packages refused whole', () => {
  it('not a ZIP, no manifest, a manifest of the wrong kind or refused by the reader', async () => {
    const notZip = join(dir, 'not.zip');
    await writeFile(notZip, '<html>not a zip</html>');
    await expect(read(notZip)).rejects.toMatchObject({ name: 'PackageError', code: 'not-zip' });
    await expect(read(await write([{ name: 'a', body: 'a' }], null))).rejects.toMatchObject({ code: 'no-manifest' });
    const wrong = await write([], manifestXml('changedump-manifest', []));
    await expect(read(wrong)).rejects.toThrow(/changedump-manifest, not the resourcedump-manifest/);
    const doctype = await write([], '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><urlset/>');
    const err = await read(doctype).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PackageError);
    expect(err).toMatchObject({ code: 'manifest-refused' });
  });
});

describe('readPackage: Change Dump packages', () => {
  it.each(['stream', 'verified bytes'] as const)('applies several bitstreams of one URI in datetime order; deletions carry no path (%s)', async (how) => {
    const v1 = 'res7 as created';
    const v2 = 'res7 as updated';
    const r9 = 'res9 updated';
    const items: ManifestItem[] = [
      // Listed out of order on purpose: the reader applies them by datetime.
      { loc: 'http://example.com/res7.html', change: 'updated', datetime: '2024-01-02T20:00:00Z', path: '/changes/res7-2.html', hash: `md5:${md5(v2)}` },
      { loc: 'http://example.com/res7.html', change: 'created', datetime: '2024-01-02T12:00:00Z', path: '/changes/res7.html', hash: `md5:${md5(v1)}` },
      { loc: 'http://example.com/res5.tiff', change: 'deleted', datetime: '2024-01-02T19:00:00Z' },
      { loc: 'http://example.com/res9.pdf', change: 'updated', datetime: '2024-01-02T13:00:00Z', path: '/changes/res9.pdf', hash: `md5:${md5(r9)}` },
      { loc: 'http://example.com/bad', change: 'moved', datetime: '2024-01-02T14:00:00Z', path: '/changes/res9.pdf' },
      { loc: 'http://example.com/nopath', change: 'created', datetime: '2024-01-02T15:00:00Z' },
    ];
    const path = await write(
      [
        { name: 'changes/res7.html', body: v1 },
        { name: 'changes/res7-2.html', body: v2 },
        { name: 'changes/res9.pdf', body: r9 },
      ],
      manifestXml('changedump-manifest', items),
    );
    const order: string[] = [];
    const sink = tempFileSink(out);
    const deleted: ManifestEntry[] = [];
    const bytes = bytesInto(out)!;
    const { report } = await read(path, {
      kind: 'changedump',
      sink: async (entry, stream) => {
        if (how !== 'stream') throw new Error('the stream sink was used for a small bitstream');
        order.push(`${entry.change} ${entry.loc}`);
        return sink(entry, stream);
      },
      ...(how === 'stream'
        ? {}
        : {
            verifiedBytes: (entry: ManifestEntry, body: Buffer) => {
              order.push(`${entry.change} ${entry.loc}`);
              return bytes(entry, body);
            },
          }),
      onDeleted: (entry) => {
        deleted.push(entry);
        order.push(`deleted ${entry.loc}`);
      },
    });
    expect(report.outcomes.map((o) => `${o.entry.md.datetime} ${o.status === 'failed' ? o.code : o.status}`)).toEqual([
      '2024-01-02T12:00:00Z verified',
      '2024-01-02T13:00:00Z verified',
      '2024-01-02T14:00:00Z bad-change',
      '2024-01-02T15:00:00Z missing-path',
      '2024-01-02T19:00:00Z deleted',
      '2024-01-02T20:00:00Z verified',
    ]);
    expect(order).toEqual([
      'created http://example.com/res7.html',
      'updated http://example.com/res9.pdf',
      'deleted http://example.com/res5.tiff',
      'updated http://example.com/res7.html',
    ]);
    expect(deleted.map((e) => [e.loc, e.zipName])).toEqual([['http://example.com/res5.tiff', undefined]]);
    expect((await contentOf(report.outcomes[5])).toString()).toBe(v2);
    expect(report.counts).toMatchObject({ verified: 3, deleted: 1, failed: 2 });
  });

  it('keeps document order when some entry has no datetime', async () => {
    const items: ManifestItem[] = [
      { loc: 'http://example.com/b', change: 'updated', datetime: '2024-01-02T20:00:00Z', path: '/b' },
      { loc: 'http://example.com/a', change: 'created', path: '/a' },
    ];
    const path = await write([{ name: 'a', body: 'a' }, { name: 'b', body: 'b' }], manifestXml('changedump-manifest', items));
    const { report } = await read(path, { kind: 'changedump' });
    expect(report.outcomes.map((o) => o.entry.loc)).toEqual(['http://example.com/b', 'http://example.com/a']);
  });
});

describe('readPackage: cancellation', () => {
  it('stops between bitstreams when the signal aborts, with a PackageError', async () => {
    const files = Array.from({ length: 5 }, (_, i) => ({ name: `f${i}`, body: `body ${i}` }));
    const path = await write(files, manifestXml('resourcedump-manifest', files.map((f) => ({ loc: `http://example.com/${f.name}`, path: `/${f.name}` }))));
    const controller = new AbortController();
    let seen = 0;
    const err = await read(path, {
      concurrency: 1,
      sink: async (_e, stream) => {
        for await (const _ of stream);
        if (++seen === 2) controller.abort();
      },
      signal: controller.signal,
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'PackageError', code: 'aborted' });
    expect(seen).toBe(2);
  });
});

describe('readPackage: bounded reports', () => {
  it('lists the first 100 unlisted and refused names and counts the rest; two manifest.xml refuse the package', async () => {
    const many = Array.from({ length: 130 }, (_, i) => ({ name: `zz/${String(i).padStart(3, '0')}`, body: 'x' }));
    let zip = await buildZip([{ name: 'manifest.xml', body: manifestXml('resourcedump-manifest', []) }, ...many]);
    for (let i = 0; i < 110; i++) zip = renameEntry(zip, `zz/${String(i).padStart(3, '0')}`, `../${String(i).padStart(3, '0')}`);
    const { report } = await read(await save(zip));
    expect(report.unlisted).toHaveLength(100);
    expect(report.unlistedLeftOut).toBe(30);
    expect(report.refusedZipEntries).toHaveLength(100);
    expect(report.refusedLeftOut).toBe(10);

    const manifest = manifestXml('resourcedump-manifest', []);
    const twice = await save(await buildZip([{ name: 'manifest.xml', body: manifest }, { name: 'manifest.xml', body: manifest }]));
    await expect(read(twice)).rejects.toMatchObject({ code: 'manifest-refused', message: expect.stringMatching(/more than once/) });
  });
});

describe('readPackage: bitstreams extracted into files off the main thread', () => {
  it('verifies without keeping what pathFor declines, and a file the caller cannot take fails alone and is removed', async () => {
    const { files, items } = good();
    const path = await write(files, manifestXml('resourcedump-manifest', items));
    const { report } = await read(path, {
      files: {
        pathFor: (entry) => (entry.loc.endsWith('res2') ? null : join(out, `${entry.loc.split('/').pop()}.tmp`)),
        written: (entry, file) => {
          if (entry.loc.endsWith('res3')) throw new Error('the inventory is closed');
          return { path: file };
        },
      },
      sink: () => Promise.reject(new Error('the stream sink was used instead of the files')),
    });
    expect(report.outcomes.map((o) => (o.status === 'failed' ? o.code : o.status))).toEqual(['verified', 'verified', 'sink-failed']);
    expect(report.outcomes[1]).toMatchObject({ sinkResult: null, digests: { md5: md5(R2), 'sha-256': sha256(R2) } });
    expect(report.outcomes[2].status === 'failed' && report.outcomes[2].reason).toMatch(/the inventory is closed/);
    expect(await readdir(out)).toEqual(['res1.tmp']);
    expect((await readFile(join(out, 'res1.tmp'))).toString()).toBe(R1);
  });

  it('a cancelled read stops the bitstream being extracted and leaves no file', async () => {
    const { randomBytes } = await import('node:crypto');
    const bodies = Array.from({ length: 3 }, () => randomBytes(8 << 20));
    const files = bodies.map((body, i) => ({ name: `big${i}`, body }));
    const path = await write(files, manifestXml('resourcedump-manifest', files.map((f) => ({ loc: `http://example.com/${f.name}`, path: `/${f.name}` }))));
    const controller = new AbortController();
    const err = await read(path, {
      concurrency: 1,
      files: {
        pathFor: (entry) => {
          // Cancelled as the second bitstream starts.
          if (entry.loc.endsWith('big1')) setImmediate(() => controller.abort());
          return join(out, `${entry.loc.split('/').pop()}.tmp`);
        },
        written: (_entry, file) => ({ path: file }),
      },
      signal: controller.signal,
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'PackageError', code: 'aborted' });
    expect(await readdir(out)).toEqual(['big0.tmp']);
  });
});
