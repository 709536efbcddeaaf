// Names inside a package: ZIP entry names as stored, and manifest `path`s (relative to the package root, with a
// leading slash, §11.2/§13.2). Both are compared NFC-normalized, so a package zipped on macOS (NFD names) matches a
// manifest written elsewhere. A name that could leave the folder it is extracted into is refused, never rewritten.
import yauzl from 'yauzl';
import { clip } from '../../clip.ts';

/** Why a name is unsafe, or null. Applied to ZIP names and to manifest paths alike. */
export function unsafeName(name: string): string | null {
  if (name === '') return 'an empty name';
  if (name.includes('\0')) return `a NUL character in ${clip(JSON.stringify(name))}`;
  if (name.includes('\\')) return `a backslash in ${clip(JSON.stringify(name))} (a Windows path separator or an escape)`;
  if (name.startsWith('/')) return `an absolute path ${clip(JSON.stringify(name))}`;
  if (/^[a-zA-Z]:/.test(name)) return `a drive letter in ${clip(JSON.stringify(name))}`;
  if (name.split('/').some((segment) => segment === '..')) return `".." in ${clip(JSON.stringify(name))}, which leads out of the package`;
  return null;
}

/** The ZIP name a manifest `path` designates: the leading slash dropped, NFC. */
export function zipNameOfPath(path: string): { name: string; warning?: string } {
  if (path.startsWith('/')) return { name: path.slice(1).normalize('NFC') };
  return { name: path.normalize('NFC'), warning: `"path" ${clip(JSON.stringify(path))} does not start with "/"; read relative to the package root` };
}

/**
 * An entry's name as stored: UTF-8 when flagged (or in an Info-ZIP Unicode Path field), CP437 otherwise;
 * backslashes kept, so they can be refused.
 */
export function decodeZipName(entry: yauzl.Entry): string {
  const raw = entry.fileName as unknown as Buffer;
  return yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, raw, entry.extraFields, true);
}

/**
 * The name as its bytes give it, when an Info-ZIP Unicode Path field gives another (decodeZipName takes the field's):
 * what a reader that ignores the field would take. Null when there is no such field.
 */
export function storedZipName(entry: yauzl.Entry): string | null {
  if (!entry.extraFields.some((f) => f.id === 0x7075)) return null;
  return yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileName as unknown as Buffer, [], true);
}

/** Unix mode bits of an entry made on Unix (version made by, high byte 3), else null. */
export function unixMode(entry: yauzl.Entry): number | null {
  if (entry.versionMadeBy >> 8 !== 3) return null;
  return (entry.externalFileAttributes >>> 16) & 0xffff;
}

export function isSymlink(entry: yauzl.Entry): boolean {
  const mode = unixMode(entry);
  return mode !== null && (mode & 0o170000) === 0o120000;
}
