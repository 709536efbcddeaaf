// A folder as a person gives it to the app: a full path, or one under the home folder ("~/mirrors/x"). A relative
// path would be taken from the app's working folder, which nobody chose (the root folder, or where it is installed).
import { homedir } from 'node:os';
import { isAbsolute, join, normalize } from 'node:path';
import { InvalidArgumentsError } from './errors.ts';

export function absoluteFolder(path: string): string {
  let trimmed = path.trim();
  // "~/mirrors/x", as people type a folder in the path field (the desktop app's folder dialog gives full paths).
  if (trimmed === '~' || /^~[\\/]/.test(trimmed)) trimmed = join(homedir(), trimmed.slice(1));
  if (!isAbsolute(trimmed)) throw new InvalidArgumentsError(`Give the folder's full path (${JSON.stringify(trimmed.slice(0, 200))} is relative).`);
  const n = normalize(trimmed);
  return n.length > 1 ? n.replace(/[\\/]+$/, '') : n;
}
