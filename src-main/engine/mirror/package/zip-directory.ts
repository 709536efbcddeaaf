// The package's central directory, read once with yauzl (which handles ZIP64 and never holds file data), each entry
// checked on its own: a bad entry is refused and reported, the others stay usable. Names are decoded and validated
// here rather than by yauzl, which would end the whole enumeration at the first bad name.
import type { Readable } from 'node:stream';
import { createInflateRaw } from 'node:zlib';
import yauzl from 'yauzl';
import { clip } from '../../clip.ts';
import { BytesReader, fileBytes, rangeStream, readFully, windowed, type PackageBytes } from './bytes.ts';
import { PackageError, type EntryFailureCode, type ZipEntryRefusal } from './model.ts';
import { decodeZipName, isSymlink, storedZipName, unsafeName } from './names.ts';
import { FixityError } from './verify.ts';

/**
 * What is kept of a central directory record: the fields the bitstream is read and checked by. Not yauzl's Entry,
 * which holds four buffers and a dozen fields more: a package of 100,000 entries kept them all while it was read.
 */
export interface ZipRecord {
  /** The name's bytes as stored, one character per byte (latin1): compared with the local header's. */
  rawName: string;
  compressionMethod: number;
  generalPurposeBitFlag: number;
  compressedSize: number;
  uncompressedSize: number;
  crc32: number;
  relativeOffsetOfLocalHeader: number;
}

export interface ZipItem {
  /** Decoded name as stored. */
  name: string;
  entry: ZipRecord;
  /** Set when the entry must not be extracted; the reason says why. */
  refusal?: { code: EntryFailureCode; reason: string };
}

export interface ZipDirectory {
  /**
   * The entries asked for (`keep`), by NFC name. A refused one is kept with its refusal, so a manifest entry naming
   * it fails with that reason. Only these are held in memory: a package of a million entries costs what its
   * manifest names, not a million records.
   */
  items: Map<string, ZipItem>;
  /** Entries refused whatever the manifest says, the first REPORTED_MAX of them; `refusedLeftOut` counts the rest. */
  refused: ZipEntryRefusal[];
  refusedLeftOut: number;
  /** Names of the entries not asked for (folders aside), the first REPORTED_MAX; `unlistedLeftOut` counts the rest. */
  unlisted: string[];
  unlistedLeftOut: number;
  fileSize: number;
  /** Opens the uncompressed bytes of an entry, after checking its local header against the central directory. */
  openData(item: ZipItem): Promise<Readable>;
  /** Where an entry's stored bytes lie in the package, after the same checks as openData. */
  locate(item: ZipItem): Promise<DataRange>;
  /** The stored bytes of a located range, in memory (small bitstreams). */
  readRange(range: DataRange): Promise<Buffer>;
  /** The package's bytes, for a reader that reads a located range itself (see PackageBytes.fileRange). */
  bytes: PackageBytes;
  close(): Promise<void>;
}

/** An entry's data as stored: bytes [start, end) of the package, deflated (method 8) or stored (method 0). */
export interface DataRange {
  start: number;
  end: number;
  method: number;
}

export interface DirectoryOptions {
  bombRatio: number;
  bombMinBytes: number;
  maxZipEntries: number;
}

/** How many refused or unlisted names a report keeps. */
export const REPORTED_MAX = 100;
const DATA_DESCRIPTOR = 0x08;
const ENCRYPTED = 0x01;

function openZip(bytes: PackageBytes): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    const options = { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: false };
    yauzl.fromRandomAccessReader(new BytesReader(bytes), bytes.size, options, (err, zip) => {
      if (err) reject(err);
      else resolve(zip);
    });
  });
}

/** Everything wrong with one central directory entry, whatever the manifest says about it. */
function checkEntry(name: string, entry: yauzl.Entry, options: DirectoryOptions, fileSize: number): ZipItem['refusal'] {
  // A ZIP64 offset or size past the package's end (2^60) would reach the file system as an impossible position.
  if (entry.relativeOffsetOfLocalHeader + entry.compressedSize > fileSize) {
    return { code: 'size-mismatch', reason: `Refused: ${clip(name)} is said to lie past the end of the package (at byte ${entry.relativeOffsetOfLocalHeader.toLocaleString('en')}, ${entry.compressedSize.toLocaleString('en')} bytes, in a package of ${fileSize.toLocaleString('en')})` };
  }
  const unsafe = unsafeName(name);
  if (unsafe !== null) return { code: 'path-escapes', reason: `Refused: ${unsafe}` };
  // A harmless name in a Unicode Path field does not make up for a stored one that escapes: a reader that ignores the
  // field (or cannot check it) takes the stored one.
  const stored = storedZipName(entry);
  const unsafeStored = stored === null || stored === name ? null : unsafeName(stored);
  if (unsafeStored !== null) {
    return { code: 'path-escapes', reason: `Refused: its name as stored, ${clip(JSON.stringify(stored))}, has ${unsafeStored} (its Unicode Path field says ${clip(JSON.stringify(name))})` };
  }
  if (isSymlink(entry)) return { code: 'symlink', reason: `Refused: ${clip(name)} is a symbolic link` };
  if (entry.generalPurposeBitFlag & ENCRYPTED) return { code: 'encrypted', reason: `Refused: ${clip(name)} is encrypted` };
  if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
    return { code: 'unsupported-compression', reason: `Refused: ${clip(name)} uses compression method ${entry.compressionMethod} (only stored and deflate are read)` };
  }
  if (entry.compressionMethod === 0 && entry.compressedSize !== entry.uncompressedSize) {
    return {
      code: 'size-mismatch',
      reason: `Refused: ${clip(name)} is stored uncompressed but its sizes differ (${entry.compressedSize.toLocaleString('en')} and ${entry.uncompressedSize.toLocaleString('en')} bytes)`,
    };
  }
  const ratio = entry.uncompressedSize / Math.max(1, entry.compressedSize);
  if (entry.uncompressedSize > options.bombMinBytes && ratio > options.bombRatio) {
    return {
      code: 'bomb',
      reason:
        `Refused: ${clip(name)} would expand ${Math.round(ratio).toLocaleString('en')}:1 ` +
        `(${entry.compressedSize.toLocaleString('en')} → ${entry.uncompressedSize.toLocaleString('en')} bytes), ` +
        `over the limit of ${options.bombRatio}:1 for entries over ${(options.bombMinBytes / 1048576).toFixed(0)} MiB`,
    };
  }
  return undefined;
}

/**
 * Reads the central directory, keeping the entries whose NFC name `keep` accepts. Given a path, the file is opened
 * and closed with the directory; given PackageBytes, they stay the caller's. With `window`, the local headers and
 * small bitstreams are read through a window (bytes.ts, `windowed`): for reading the entries in package order.
 */
export async function readZipDirectory(
  from: string | PackageBytes,
  options: DirectoryOptions,
  keep: (key: string) => boolean,
  window = false,
): Promise<ZipDirectory> {
  let own: PackageBytes;
  if (typeof from === 'string') {
    try {
      own = await fileBytes(from);
    } catch (err) {
      throw new PackageError('io', `Cannot read ${from}: ${(err as Error).message}`, { cause: err });
    }
  } else own = from;
  const bytes = window ? windowed(own) : own;
  const release = async () => {
    if (typeof from === 'string') await own.close();
  };
  let zip: yauzl.ZipFile;
  try {
    zip = await openZip(bytes);
  } catch (err) {
    await release();
    if (err instanceof PackageError) throw err;
    throw new PackageError('not-zip', `The package is not a readable ZIP file: ${(err as Error).message}`, { cause: err });
  }
  if (zip.entryCount > options.maxZipEntries) {
    zip.close();
    await release();
    throw new PackageError(
      'too-many-entries',
      `The package has ${zip.entryCount.toLocaleString('en')} entries, over the limit of ${options.maxZipEntries.toLocaleString('en')}; not read`,
    );
  }
  const items = new Map<string, ZipItem>();
  const refused: ZipEntryRefusal[] = [];
  const unlisted: string[] = [];
  let refusedLeftOut = 0;
  let unlistedLeftOut = 0;
  const refuse = (refusal: ZipEntryRefusal): void => {
    if (refused.length < REPORTED_MAX) refused.push(refusal);
    else refusedLeftOut++;
  };
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (entry: yauzl.Entry) => {
        const name = decodeZipName(entry);
        // Folders carry no bitstream.
        if (!name.endsWith('/') || entry.uncompressedSize !== 0) {
          const key = name.normalize('NFC');
          const refusal = checkEntry(name, entry, options, zip.fileSize);
          if (refusal) refuse({ name, ...refusal });
          if (!keep(key)) {
            if (unlisted.length < REPORTED_MAX) unlisted.push(name);
            else unlistedLeftOut++;
          } else {
            const earlier = items.get(key);
            if (earlier !== undefined) {
              const reason = `Refused: ${clip(name)} appears more than once in the package; which copy is meant is ambiguous`;
              if (earlier.refusal?.code !== 'duplicate-name') refuse({ name, code: 'duplicate-name', reason });
              earlier.refusal = { code: 'duplicate-name', reason };
            } else {
              items.set(key, { name, entry: recordOf(entry), refusal });
            }
          }
        }
        zip.readEntry();
      });
      zip.once('end', () => resolve());
      zip.once('error', reject);
      zip.readEntry();
    });
  } catch (err) {
    zip.close();
    await release();
    if (err instanceof PackageError) throw err;
    throw new PackageError('not-zip', `The package's central directory cannot be read: ${(err as Error).message}`, { cause: err });
  }

  return {
    items,
    refused,
    refusedLeftOut,
    unlisted,
    unlistedLeftOut,
    fileSize: bytes.size,
    openData: (item) => openData(zip, bytes, item),
    locate: (item) => locateData(zip, bytes, item),
    readRange: async ({ start, end }) => {
      const out = Buffer.allocUnsafe(end - start);
      if ((await readFully(bytes, out, 0, out.length, start)) !== out.length) throw new FixityError('corrupt', 'The package ends before the entry does');
      return out;
    },
    bytes,
    close: async () => {
      zip.close();
      await release();
    },
  };
}

function recordOf(entry: yauzl.Entry): ZipRecord {
  return {
    // A copy, so that the buffer yauzl read the whole record into is not kept alive by a view of it.
    rawName: (entry.fileName as unknown as Buffer).toString('latin1'),
    compressionMethod: entry.compressionMethod,
    generalPurposeBitFlag: entry.generalPurposeBitFlag,
    compressedSize: entry.compressedSize,
    uncompressedSize: entry.uncompressedSize,
    crc32: entry.crc32,
    relativeOffsetOfLocalHeader: entry.relativeOffsetOfLocalHeader,
  };
}

function localHeader(zip: yauzl.ZipFile, entry: ZipRecord): Promise<yauzl.LocalFileHeader> {
  return new Promise((resolve, reject) => {
    // yauzl reads a local header by the entry's offset and compressed size only.
    zip.readLocalFileHeader(entry as unknown as yauzl.Entry, (err, header) => (err ? reject(err) : resolve(header)));
  });
}

/** Sizes in a local header, with a ZIP64 extra field read when the 32-bit ones are saturated. */
function localSizes(header: yauzl.LocalFileHeader): { compressed: number; uncompressed: number } {
  let compressed = header.compressedSize;
  let uncompressed = header.uncompressedSize;
  if (compressed === 0xffffffff || uncompressed === 0xffffffff) {
    for (const field of yauzl.parseExtraFields(header.extraField)) {
      if (field.id !== 0x0001) continue;
      // In a local header the ZIP64 field holds both sizes, uncompressed first.
      if (field.data.length >= 16) {
        uncompressed = Number(field.data.readBigUInt64LE(0));
        compressed = Number(field.data.readBigUInt64LE(8));
      }
    }
  }
  return { compressed, uncompressed };
}

async function openData(zip: yauzl.ZipFile, bytes: PackageBytes, item: ZipItem): Promise<Readable> {
  const { start, end, method } = await locateData(zip, bytes, item);
  const raw = rangeStream(bytes, start, end, () => new FixityError('corrupt', 'The package ends before the entry does'));
  if (method === 0) return raw;
  // Large output chunks: fewer, bigger buffers to hash and write.
  const inflate = createInflateRaw({ chunkSize: 256 * 1024 });
  raw.on('error', (err) => inflate.destroy(err));
  inflate.on('close', () => raw.destroy());
  return raw.pipe(inflate);
}

async function locateData(zip: yauzl.ZipFile, bytes: PackageBytes, item: ZipItem): Promise<DataRange> {
  const { entry, name } = item;
  let header: yauzl.LocalFileHeader;
  try {
    header = await localHeader(zip, entry);
  } catch (err) {
    throw new FixityError('corrupt', `${clip(name)}: its local header cannot be read: ${(err as Error).message}`);
  }
  if (header.fileName.toString('latin1') !== entry.rawName) {
    throw new FixityError(
      'header-mismatch',
      `Refused: ${clip(name)} is named ${clip(JSON.stringify(header.fileName.toString('latin1')))} in its local header; the package is inconsistent`,
    );
  }
  if (header.compressionMethod !== entry.compressionMethod || (header.generalPurposeBitFlag & ENCRYPTED) !== (entry.generalPurposeBitFlag & ENCRYPTED)) {
    throw new FixityError('header-mismatch', `Refused: ${clip(name)}'s local header and central directory disagree on how it is stored`);
  }
  // With a data descriptor the local header holds zeros, and the real values follow the data.
  if (!(header.generalPurposeBitFlag & DATA_DESCRIPTOR)) {
    const local = localSizes(header);
    if (local.compressed !== entry.compressedSize || local.uncompressed !== entry.uncompressedSize) {
      throw new FixityError(
        'size-mismatch',
        `Refused: ${clip(name)} is ${local.uncompressed.toLocaleString('en')} bytes (${local.compressed.toLocaleString('en')} compressed) ` +
          `by its local header but ${entry.uncompressedSize.toLocaleString('en')} (${entry.compressedSize.toLocaleString('en')}) by the central directory`,
      );
    }
    if (header.crc32 >>> 0 !== entry.crc32 >>> 0) {
      throw new FixityError('header-mismatch', `Refused: ${clip(name)}'s local header and central directory give different CRC-32s`);
    }
  }
  const start = header.fileDataStart;
  const end = start + entry.compressedSize;
  if (end > zip.fileSize) {
    throw new FixityError('corrupt', `${clip(name)}: its data runs past the end of the package`);
  }
  if (header.generalPurposeBitFlag & DATA_DESCRIPTOR) await checkDescriptor(bytes, end, item);
  return { start, end, method: entry.compressionMethod };
}

const DESCRIPTOR_SIGNATURE = 0x08074b50;

/**
 * An entry written with a data descriptor (general purpose bit 3: its local header holds zeros) has its CRC-32 and
 * sizes in a record right after its data, and a reader that streams the package (unzip -, Java's ZipInputStream)
 * goes by that record. One that disagrees with the central directory makes the package mean two things: refused, as
 * a local header that disagrees is. Before, it was not read at all. The record may begin with a signature, and holds
 * 4-byte sizes, or 8-byte ones in a ZIP64 package: whichever reading agrees with the central directory is taken.
 */
async function checkDescriptor(bytes: PackageBytes, at: number, item: ZipItem): Promise<void> {
  const { entry, name } = item;
  const record = Buffer.alloc(24);
  const n = await readFully(bytes, record, 0, record.length, at);
  const readings: { crc: number; compressed: number; uncompressed: number }[] = [];
  for (const from of record.readUInt32LE(0) === DESCRIPTOR_SIGNATURE && n >= 4 ? [4, 0] : [0]) {
    if (n >= from + 12) readings.push({ crc: record.readUInt32LE(from), compressed: record.readUInt32LE(from + 4), uncompressed: record.readUInt32LE(from + 8) });
    if (n >= from + 20) readings.push({ crc: record.readUInt32LE(from), compressed: Number(record.readBigUInt64LE(from + 4)), uncompressed: Number(record.readBigUInt64LE(from + 12)) });
  }
  const sizesAgree = (r: (typeof readings)[number]) => r.compressed === entry.compressedSize && r.uncompressed === entry.uncompressedSize;
  const agrees = readings.find((r) => sizesAgree(r) && r.crc >>> 0 === entry.crc32 >>> 0);
  if (agrees !== undefined) return;
  const sized = readings.find(sizesAgree);
  if (sized !== undefined) {
    throw new FixityError('header-mismatch', `Refused: ${clip(name)}'s data descriptor and central directory give different CRC-32s`);
  }
  // The reading that names the signature (or else the first): the sizes the record gives, for the message.
  const shown = readings[0];
  throw new FixityError(
    'size-mismatch',
    shown === undefined
      ? `Refused: ${clip(name)} says its sizes follow its data, but the package ends there`
      : `Refused: ${clip(name)} is ${shown.uncompressed.toLocaleString('en')} bytes (${shown.compressed.toLocaleString('en')} compressed) by its data descriptor ` +
          `but ${entry.uncompressedSize.toLocaleString('en')} (${entry.compressedSize.toLocaleString('en')}) by the central directory`,
  );
}
