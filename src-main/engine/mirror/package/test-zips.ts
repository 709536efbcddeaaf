// Test support: packages written with yazl, and byte-level surgery for the hostile ones yazl refuses to write
// (escaping names, disagreeing headers, encryption flags). Not used by the engine.
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import yazl from 'yazl';

export interface ZipFileSpec {
  name: string;
  body: Buffer | string;
  /** Deflate (default) or store. */
  compress?: boolean;
  /** Unix mode, e.g. 0o120777 for a symbolic link. */
  mode?: number;
  zip64?: boolean;
  /** Written as a stream of unknown size: its CRC-32 and sizes follow its data in a data descriptor (bit 3). */
  descriptor?: boolean;
}

const DATE = new Date(Date.UTC(2024, 0, 2, 3, 4, 6));

export function buildZip(files: ZipFileSpec[], options: { zip64?: boolean } = {}): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const f of files) {
    const body = typeof f.body === 'string' ? Buffer.from(f.body) : f.body;
    const o = { compress: f.compress ?? true, mtime: DATE, mode: f.mode, forceZip64Format: f.zip64 ?? options.zip64 };
    if (f.descriptor) zip.addReadStream(Readable.from([body]), f.name, o);
    else zip.addBuffer(body, f.name, o);
  }
  zip.end({ forceZip64Format: options.zip64 ?? false, comment: '' });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}

/** Replaces every occurrence of a name's bytes (same length): renames an entry in its local header and central directory. */
export function renameEntry(zip: Buffer, from: string, to: string): Buffer {
  const a = Buffer.from(from, 'latin1');
  const b = Buffer.from(to, 'latin1');
  if (a.length !== b.length) throw new Error('names must have the same length');
  const out = Buffer.from(zip);
  let at = out.indexOf(a);
  let n = 0;
  while (at !== -1) {
    b.copy(out, at);
    n++;
    at = out.indexOf(a, at + 1);
  }
  if (n === 0) throw new Error(`${from} not found`);
  return out;
}

/** Offsets of the local header and the central directory record of the entry called `name`. */
export function headersOf(zip: Buffer, name: string): { local: number; central: number } {
  const nameBytes = Buffer.from(name);
  let local = -1;
  let central = -1;
  for (let i = 0; i + 46 <= zip.length; i++) {
    const sig = zip.readUInt32LE(i);
    if (sig === 0x04034b50 && local === -1) {
      const len = zip.readUInt16LE(i + 26);
      if (zip.subarray(i + 30, i + 30 + len).equals(nameBytes)) local = i;
    } else if (sig === 0x02014b50 && central === -1) {
      const len = zip.readUInt16LE(i + 28);
      if (zip.subarray(i + 46, i + 46 + len).equals(nameBytes)) central = i;
    }
  }
  if (local === -1 || central === -1) throw new Error(`headers of ${name} not found`);
  return { local, central };
}

/** Field offsets within each header. */
export const LOCAL = { flags: 6, method: 8, crc: 14, compressed: 18, uncompressed: 22 } as const;
export const CENTRAL = { flags: 8, method: 10, crc: 16, compressed: 20, uncompressed: 24, offset: 42 } as const;

export function patch(zip: Buffer, name: string, where: 'local' | 'central', field: keyof typeof CENTRAL, value: number, bytes: 2 | 4 = 4): Buffer {
  const out = Buffer.from(zip);
  const h = headersOf(out, name);
  const at = where === 'local' ? h.local + LOCAL[field as keyof typeof LOCAL] : h.central + CENTRAL[field];
  if (bytes === 2) out.writeUInt16LE(value, at);
  else out.writeUInt32LE(value >>> 0, at);
  return out;
}

/**
 * Rewrites a field of the data descriptor that follows the entry `name`'s data (see ZipFileSpec.descriptor): its
 * CRC-32, or its compressed or uncompressed size (the 4-byte form, after the signature).
 */
export function patchDescriptor(zip: Buffer, name: string, field: 'crc' | 'compressed' | 'uncompressed', value: number): Buffer {
  const out = Buffer.from(zip);
  const { local, central } = headersOf(out, name);
  const dataStart = local + 30 + out.readUInt16LE(local + 26) + out.readUInt16LE(local + 28);
  const at = dataStart + out.readUInt32LE(central + CENTRAL.compressed);
  if (out.readUInt32LE(at) !== 0x08074b50) throw new Error(`${name} has no data descriptor`);
  out.writeUInt32LE(value >>> 0, at + { crc: 4, compressed: 8, uncompressed: 12 }[field]);
  return out;
}

export function md5(body: Buffer | string): string {
  return createHash('md5').update(body).digest('hex');
}

export function sha256(body: Buffer | string): string {
  return createHash('sha256').update(body).digest('hex');
}

export interface ManifestItem {
  loc: string;
  path?: string;
  hash?: string;
  length?: number | string;
  change?: string;
  datetime?: string;
}

export function manifestXml(capability: 'resourcedump-manifest' | 'changedump-manifest', items: ManifestItem[]): string {
  const head =
    capability === 'resourcedump-manifest'
      ? '<rs:md capability="resourcedump-manifest" at="2024-01-02T03:04:05Z"/>'
      : '<rs:md capability="changedump-manifest" from="2024-01-01T00:00:00Z" until="2024-01-03T00:00:00Z"/>';
  const attr = (name: string, v: unknown) => (v === undefined ? '' : ` ${name}="${String(v)}"`);
  const urls = items
    .map(
      (i) =>
        `  <url><loc>${i.loc}</loc><rs:md${attr('change', i.change)}${attr('datetime', i.datetime)}${attr('hash', i.hash)}${attr('length', i.length)}${attr('path', i.path)}/></url>`,
    )
    .join('\n');
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">\n' +
    '  <rs:ln rel="up" href="http://example.com/capabilitylist.xml"/>\n' +
    `  ${head}\n${urls}\n</urlset>\n`
  );
}

/**
 * A Resource Dump package of `n` stored (uncompressed) bitstreams of 256 KiB each, manifest last: large enough that
 * a download takes a while to trickle, for the tests of packages read while they download.
 */
export async function storedPackage(n: number): Promise<{ zip: Buffer; bodies: Map<string, Buffer> }> {
  const bodies = new Map<string, Buffer>();
  const files: ZipFileSpec[] = [];
  const items: ManifestItem[] = [];
  for (let i = 0; i < n; i++) {
    const body = randomBytes(256 * 1024);
    const loc = `http://example.com/r${i}`;
    bodies.set(loc, body);
    files.push({ name: `r${i}.bin`, body, compress: false });
    items.push({ loc, path: `/r${i}.bin`, hash: `md5:${md5(body)}`, length: body.length });
  }
  files.push({ name: 'manifest.xml', body: manifestXml('resourcedump-manifest', items) });
  return { zip: await buildZip(files), bodies };
}
