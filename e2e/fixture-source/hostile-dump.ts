// A Resource Dump whose one package is hostile on purpose: beside a good bitstream, entries a package reader must
// refuse one by one (and go on). Served at PATHS.hostileDump, linked from no Capability List, so discovery and
// checks of the fixture never meet it. `HOSTILE_DUMP_EXPECTED` says what each manifest entry must come to.
import { createHash } from 'node:crypto';
import { buildZip, manifestXml, md5, patch, patchDescriptor, renameEntry } from '../../src-main/engine/mirror/package/test-zips.ts';
import { document } from './xml.ts';

const GOOD = 'A good bitstream among hostile ones.\n';
const BODY = 'some bytes\n'.repeat(40);

/** Manifest entry (by the last segment of its loc) → the outcome a package reader must give it. */
export const HOSTILE_DUMP_EXPECTED: Readonly<Record<string, string>> = {
  good: 'verified',
  escape: 'path-escapes',
  link: 'symlink',
  bomb: 'bomb',
  missing: 'not-in-package',
  'bad-hash': 'hash-mismatch',
  'local-header': 'size-mismatch',
  descriptor: 'size-mismatch',
};

export interface HostileDump {
  dump: string;
  zip: Buffer;
  /** A Capability List offering only this Resource Dump. */
  capabilityList: string;
}

const cache = new Map<string, Promise<HostileDump>>();

export function hostileDump(base: string, paths: { resourceDump: string; package: string; capabilityList: string }): Promise<HostileDump> {
  let built = cache.get(base);
  if (!built) {
    built = build(base, paths);
    cache.set(base, built);
  }
  return built;
}

async function build(base: string, paths: { resourceDump: string; package: string; capabilityList: string }): Promise<HostileDump> {
  const loc = (name: string) => `${base}/hostile-dump/r/${name}`;
  const at = '2025-01-01T00:00:00Z';
  const manifest = manifestXml('resourcedump-manifest', [
    { loc: loc('good'), path: '/good.txt', hash: `md5:${md5(GOOD)}`, length: GOOD.length },
    { loc: loc('escape'), path: '/xx/escape.txt' },
    { loc: loc('link'), path: '/link' },
    { loc: loc('bomb'), path: '/bomb.bin' },
    { loc: loc('missing'), path: '/missing.txt' },
    { loc: loc('bad-hash'), path: '/bad-hash.txt', hash: `md5:${md5('not these bytes')}` },
    { loc: loc('local-header'), path: '/local-header.txt' },
    { loc: loc('descriptor'), path: '/descriptor.txt' },
  ]).replace('/xx/escape.txt', '/../escape.txt');
  let zip = await buildZip([
    { name: 'manifest.xml', body: manifest },
    { name: 'good.txt', body: GOOD },
    { name: 'xx/escape.txt', body: BODY },
    { name: 'link', body: '/etc/passwd', mode: 0o120777 },
    { name: 'bomb.bin', body: Buffer.alloc(8 * 1024 * 1024) },
    { name: 'bad-hash.txt', body: BODY },
    { name: 'local-header.txt', body: BODY },
    // Its sizes follow its data (a data descriptor), and say another length than the central directory.
    { name: 'descriptor.txt', body: BODY, descriptor: true },
  ]);
  // What yazl refuses to write, put in by hand.
  zip = renameEntry(zip, 'xx/escape.txt', '../escape.txt');
  zip = patch(zip, 'local-header.txt', 'local', 'uncompressed', BODY.length + 1);
  zip = patchDescriptor(zip, 'descriptor.txt', 'uncompressed', BODY.length + 1);
  const dump = document('urlset', { capability: 'resourcedump', at, completed: at }, [], [
    {
      loc: base + paths.package,
      md: { type: 'application/zip', length: zip.length, at, hash: `md5:${createHash('md5').update(zip).digest('hex')}` },
    },
  ]);
  const capabilityList = document('urlset', { capability: 'capabilitylist' }, [], [{ loc: base + paths.resourceDump, md: { capability: 'resourcedump' } }]);
  return { dump, zip, capabilityList };
}
