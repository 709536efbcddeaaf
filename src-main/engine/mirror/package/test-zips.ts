// Test support: packages written with yazl, and byte-level surgery for the hostile ones yazl refuses to write
// (escaping names, disagreeing headers, encryption flags). Not used by the engine.
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
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

/**
 * A ZIP of stored entries written byte by byte, for what yazl will not write: names as raw bytes and extra fields of
 * one's own (both in the local header and the central directory).
 */
export function rawZip(entries: { name: Buffer | string; body: Buffer | string; extra?: Buffer; flags?: number }[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = typeof e.name === 'string' ? Buffer.from(e.name) : e.name;
    const body = typeof e.body === 'string' ? Buffer.from(e.body) : e.body;
    const extra = e.extra ?? Buffer.alloc(0);
    const crc = crc32(body);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(e.flags ?? 0, 6);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(body.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(extra.length, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(e.flags ?? 0, 8);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(body.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt16LE(extra.length, 30);
    central.writeUInt32LE(offset, 42);
    const record = Buffer.concat([local, name, extra, body]);
    locals.push(record);
    centrals.push(Buffer.concat([central, name, extra]));
    offset += record.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** An Info-ZIP Unicode Path extra field (0x7075) giving `unicode` as the name of the entry stored as `raw`. */
export function unicodePathField(raw: Buffer | string, unicode: string): Buffer {
  const name = Buffer.from(unicode);
  const field = Buffer.alloc(4 + 5 + name.length);
  field.writeUInt16LE(0x7075, 0);
  field.writeUInt16LE(5 + name.length, 2);
  field.writeUInt8(1, 4);
  field.writeUInt32LE(crc32(typeof raw === 'string' ? Buffer.from(raw) : raw), 5);
  name.copy(field, 9);
  return field;
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
