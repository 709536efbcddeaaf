// The name of a mirror's own folder (state, lock, temporary files, quarantine), and the test that keeps every mapped
// path out of it. Apart from state.ts so that local-path.ts, which state.ts imports, can use it too.

export const STATE_DIR = '.resourcesync';

/**
 * Whether a file or folder name, as written to disk, would open the mirror's own folder somewhere: Windows and macOS
 * fold case (`.ReSourceSync`), NTFS folds more than toLowerCase does (`ſ` is an `s` there), and Windows may answer to
 * a folder's 8.3 short name (`RESOUR~1`, or a hashed `RE1A2B~1`). Compatibility forms (a fullwidth `．`) are folded
 * too: such a name is another folder on disk, but one a person cannot tell from the real one.
 */
export function isStateDirName(name: string): boolean {
  // Almost every first segment is a host or an ordinary name: one character tells it cannot be any of these.
  const c = name.charCodeAt(0);
  if (c < 0x80 && c !== 0x2e && c !== 0x52 && c !== 0x72) return false;
  const folded = name.normalize('NFKC').toUpperCase().toLowerCase();
  return folded === STATE_DIR || /^(?:resour|re[0-9a-f]{4})~[0-9]+$/.test(folded);
}

/** Whether a relative, `/`-separated path in the mirror's folder lies in the mirror's own folder. */
export function inStateDir(path: string): boolean {
  const slash = path.indexOf('/');
  return isStateDirName(slash === -1 ? path : path.slice(0, slash));
}
