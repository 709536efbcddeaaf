// The mirror writes, moves and deletes only inside its folder. Its paths are made safe as text (local-path.ts), but a
// symbolic link already inside the folder (put there by a person or another program) would carry a write or a
// deletion through it to anywhere: each folder on the way is checked to be a real folder, not a link.
import { lstatSync } from 'node:fs';
import { isAbsolute, relative, sep } from 'node:path';
import { clip } from '../clip.ts';

export class OutsideFolderError extends Error {}

/**
 * Throws when the mirror's state folder (`.resourcesync`) is a symbolic link or a file. A folder handed over with its
 * state folder linked elsewhere had its lock, temporary files and state read and written there, outside the mirror.
 */
export function checkStateDir(stateDir: string): void {
  let stat;
  try {
    stat = lstatSync(stateDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return;
  }
  if (stat.isSymbolicLink()) {
    throw new OutsideFolderError(
      `The mirror's state folder ${stateDir} is a symbolic link; the mirror keeps its state inside its own folder and does not read or write it through a link. ` +
        `Put the folder it points to in its place, or mirror into another folder.`,
    );
  }
  if (!stat.isDirectory()) throw new OutsideFolderError(`${stateDir} is a file where the mirror keeps its state folder; move it away, or mirror into another folder.`);
}

/**
 * Checks each folder that exists from `root` (excluded: the mirror's own folder may be a link) down to `dir`; those
 * missing are made by the caller. Throws OutsideFolderError for a link or a file on the way.
 */
export function checkFolders(root: string, dir: string): void {
  const rel = relative(root, dir);
  if (rel === '') return;
  // ("..data" is a name inside; on Windows a folder on another drive comes back absolute.)
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) throw new OutsideFolderError(`${dir} is not inside the mirror's folder`);
  let at = root;
  for (const part of rel.split(sep)) {
    at = `${at}${sep}${part}`;
    let stat;
    try {
      stat = lstatSync(at);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      return;
    }
    if (stat.isSymbolicLink()) throw new OutsideFolderError(`${at} is a symbolic link; the mirror does not write or delete through links`);
    if (!stat.isDirectory()) throw new OutsideFolderError(`${at} is a file where the mirror needs a folder`);
  }
}

// An empty, `.` or `..` segment, a backslash (a separator on Windows) or a NUL: local-path.ts never makes one.
const NOT_MADE_BY_MIRROR = /(?:^|\/)\.{0,2}(?:\/|$)|[\\\0]/;

/**
 * Why a path recorded in the mirror's state is not one the mirror could have made, or null. The state travels with the
 * folder and may be edited: a recorded `../../x` was joined to the folder and read there (an audit hashed a file
 * outside the mirror, and called the resource in sync).
 */
export function storedPathProblem(path: string): string | null {
  if (!NOT_MADE_BY_MIRROR.test(path)) return null;
  return `the mirror's state records its path as ${JSON.stringify(clip(path, 200))}, which leads out of the mirror's folder or is not a path the mirror makes; nothing is read, written or deleted there`;
}
