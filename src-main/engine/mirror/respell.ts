// The files of a mirror made before names shaped like Windows 8.3 short names (`PROGRA~1`) had their `~` escaped and
// the code points HFS+ ignores were escaped (local-path.ts): they are moved to the names this version gives them.
// NTFS opens `PROGRA~1` as the short name of another file (`Program Files`), and HFS+ takes `a<U+200C>b` for `ab`: two
// URIs could share one file for as long as the old names stayed.
//
// Migration 16 plans the moves in the state (path_moves: URI, old path, new path), with nothing on disk touched: a
// state is opened by the app to be read, perhaps while a run of another process holds the mirror. The next sync,
// under the mirror's lock, carries them out before it applies anything, in steps a kill may cut anywhere and the next
// sync finishes: the move is marked begun (its new name free then), the file linked under its new name (which fails
// rather than replace a file put there since), the folders made durable, the old name removed, then the row takes the
// new path and the plan's line goes, in one transaction. Nothing is written over: a file whose new name is another's
// keeps its old one, and the run says so. (Not at open, where the app reads the state without the lock.)
import { link, lstat, mkdir, rename, rmdir, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { transaction } from '../../store/tx.ts';
import { clip } from '../clip.ts';
import { fsyncDir } from './durable.ts';
import { caseKey, escapeChar, queryName, SHORT_NAME } from './local-path.ts';

/** The code points HFS+ ignores in names that older versions left as they were (local-path.ts escapes them now). */
const HFS_IGNORED = /[\u200c\u200d\u206a-\u206f\ufeff]/g;
/** A case-clash alternate (`name%~2`): its number, written short by older versions. */
const ALTERNATE = /^(.*)%~(\d{1,6})$/;
/** The marker of a file where a folder is, or of a folder where a file is, after the name it was added to. */
const PLACE_MARKER = /^(.*)(%file|%dir)$/;
/** A name shortened with a hash of the whole name: the hash cannot be made again without that name. */
const HASHED = /%~[0-9a-f]{16}/;

/** `path` (relative, `/`-separated) as this version spells each of its names. */
export function respelledPath(path: string): string {
  return path.split('/').map(respelledName).join('/');
}

/**
 * A name as local-path.ts makes it now, from the parts it was made of, in the order they were added: the name itself,
 * its query after `%q`, then `%file` or `%dir`, then a case-clash alternate `%~N`. Each part is spelled as now:
 * `PROGRA~1%dir` (the folder of `/PROGRA~1/x` beside a file `/PROGRA~1`) becomes `PROGRA%7E1%dir`, as a new mirror
 * has it, and `x%q~1` (`/x?~1`, shaped like a short name) `x%q%7E1`.
 */
function respelledName(name: string): string {
  const escaped = name.replace(HFS_IGNORED, escapeChar);
  if (HASHED.test(escaped)) return escaped;
  const alternate = ALTERNATE.exec(escaped);
  const numbered = alternate === null ? escaped : alternate[1]!;
  const marked = PLACE_MARKER.exec(numbered);
  const unmarked = marked === null ? numbered : marked[1]!;
  // A `%` of a name or query is written `%25`: the first `%q` is the marker.
  const q = unmarked.indexOf('%q');
  const base = q === -1 ? shortName(unmarked) : queryName(shortName(unmarked.slice(0, q)), unmarked.slice(q + 2));
  const whole = marked === null ? base : `${base}${marked[2]}`;
  if (alternate === null) return whole;
  // Its number as local-path.ts writes it now.
  const named = `${whole}%~${alternate[2]}`;
  return SHORT_NAME.test(named) ? `${whole}%~${alternate[2]!.padStart(7, '0')}` : named;
}

function shortName(name: string): string {
  return SHORT_NAME.test(name) ? name.replace(/~/g, '%7E') : name;
}

/**
 * Migrations 16 and 17: plans the moves of the rows whose path this version spells otherwise. Nothing on disk changes.
 * Planned again (17) when the spelling changed since (names after which local-path.ts adds a marker or a query, `ı`
 * and `ſ`): a move not begun takes the new name; one begun goes on to the name it began for, and completePathMoves
 * plans the rest from there.
 */
export function planPathMoves(db: DatabaseSync): void {
  db.exec('CREATE TABLE IF NOT EXISTS path_moves (uri TEXT PRIMARY KEY, from_path TEXT NOT NULL, to_path TEXT NOT NULL, stage TEXT) WITHOUT ROWID');
  // Only paths with a `~` followed by a digit, or an ignored code point, can change: picked out by SQLite.
  const page = db.prepare(
    "SELECT uri, path FROM inventory WHERE uri > ? AND (path GLOB '*~[0-9]*' OR path GLOB ?) ORDER BY uri LIMIT 10000",
  );
  const plan = db.prepare(
    'INSERT INTO path_moves (uri, from_path, to_path) VALUES (?, ?, ?) ON CONFLICT (uri) DO UPDATE SET from_path = excluded.from_path, to_path = excluded.to_path WHERE stage IS NULL',
  );
  for (let after = ''; ; ) {
    const rows = page.all(after, '*[\u200c\u200d\u206a-\u206f\ufeff]*') as { uri: string; path: string }[];
    if (rows.length === 0) break;
    for (const r of rows) {
      const next = respelledPath(r.path);
      if (next !== r.path) plan.run(r.uri, r.path, next);
    }
    after = rows.at(-1)!.uri;
  }
}

export interface PathMoves {
  moved: number;
  /** Files left under their old name; `examples` says why for the first few. */
  kept: number;
  examples: string[];
}

interface Move {
  uri: string;
  from: string;
  to: string;
  /** 'moving': the new name was free when the move began, so a file found under it since is this one. */
  stage: string | null;
}

/**
 * Carries out the moves migrations 16 and 17 planned, or finishes those a kill cut short. Call under the mirror's lock,
 * before the run applies anything; not in a dry run. Says what it did through `onNote`.
 */
export async function completePathMoves(db: DatabaseSync, dest: string, onNote?: (note: string) => void): Promise<PathMoves> {
  const result: PathMoves = { moved: 0, kept: 0, examples: [] };
  const page = db.prepare('SELECT uri, from_path AS "from", to_path AS "to", stage FROM path_moves WHERE uri > ? ORDER BY uri LIMIT 1000');
  const rowOf = db.prepare('SELECT path FROM inventory WHERE uri = ?');
  const takenBy = db.prepare('SELECT uri FROM inventory WHERE path_key = ? AND uri <> ? LIMIT 1');
  const begin = db.prepare("UPDATE path_moves SET stage = 'moving' WHERE uri = ?");
  const setPath = db.prepare('UPDATE inventory SET path = ?, path_key = ? WHERE uri = ?');
  const done = db.prepare('DELETE FROM path_moves WHERE uri = ?');
  const emptied = new Set<string>();
  const keep = (m: Move, why: string) => {
    result.kept++;
    if (result.examples.length < 3) result.examples.push(`${clip(m.from)}: ${why}`);
  };
  const replan = db.prepare('UPDATE path_moves SET from_path = ?, to_path = ?, stage = NULL WHERE uri = ?');
  /** Moves begun for a name planned by an older spelling, planned again from there (see planPathMoves). */
  let replanned = 0;
  for (let after = '', pass = 0; ; ) {
    const moves = page.all(after) as unknown as Move[];
    if (moves.length === 0) {
      // One pass more for those, whose new plan is on rows already passed.
      if (replanned === 0 || pass > 0) break;
      after = '';
      pass++;
      replanned = 0;
      continue;
    }
    after = moves.at(-1)!.uri;
    /** The new path each row takes (null: it keeps its own). */
    const settled = new Map<string, string | null>();
    const moving: Move[] = [];
    for (const m of moves) {
      const row = rowOf.get(m.uri) as { path: string } | undefined;
      // The row is gone, or has another path already: only the plan's line is left to go.
      if (row === undefined || row.path !== m.from) settled.set(m.uri, null);
      else if (m.stage === 'moving') moving.push(m);
      else {
        const other = takenBy.get(caseKey(m.to), m.uri) as { uri: string } | undefined;
        if (other !== undefined) {
          keep(m, `its new name ${clip(m.to)} is the file of ${clip(other.uri)}`);
          settled.set(m.uri, null);
        } else if ((await lstat(join(dest, m.to)).catch(() => null)) !== null) {
          keep(m, `a file is there already under its new name ${clip(m.to)}`);
          settled.set(m.uri, null);
        } else moving.push(m);
      }
    }
    // Recorded before anything moves: from here, a file under the new name is this one (the name was free).
    transaction(db, () => {
      for (const m of moving) if (m.stage !== 'moving') begin.run(m.uri);
    });
    for (const m of moving) {
      const why = await moveFile(join(dest, m.from), join(dest, m.to));
      if (why === null) {
        settled.set(m.uri, m.to);
        emptied.add(dirname(m.from));
        if (respelledPath(m.to) === m.to) result.moved++;
      } else {
        keep(m, why);
        settled.set(m.uri, null);
      }
    }
    // The folders' new and removed entries are durable before a row names the new path.
    for (const dir of new Set(moving.flatMap((m) => [dirname(join(dest, m.to)), dirname(join(dest, m.from))]))) await fsyncDir(dir);
    transaction(db, () => {
      for (const [uri, to] of settled) {
        if (to !== null) setPath.run(to, caseKey(to), uri);
        if (to !== null && respelledPath(to) !== to) {
          replan.run(to, respelledPath(to), uri);
          replanned++;
        } else done.run(uri);
      }
    });
  }
  // Folders the moves emptied (`PROGRA~1` once its files are in `PROGRA%7E1`), up to the mirror's own folder.
  for (const dir of [...emptied].sort((a, b) => b.length - a.length)) await removeEmpty(dest, dir);
  if (result.moved > 0) {
    onNote?.(
      `${result.moved.toLocaleString('en')} ${result.moved === 1 ? 'file was' : 'files were'} given the name this version gives ${result.moved === 1 ? 'it' : 'them'}: ` +
        `a name shaped like a Windows short name (PROGRA~1) has its ~ written %7E, and the characters macOS ignores in names are written %XX, so that no two resources share a file there.`,
    );
  }
  if (result.kept > 0) {
    onNote?.(
      `${result.kept.toLocaleString('en')} ${result.kept === 1 ? 'file keeps' : 'files keep'} an older name, since nothing is written over: ${result.examples.join('; ')}${result.kept > result.examples.length ? '; …' : ''}.`,
    );
  }
  return result;
}

/**
 * Moves a file whose new name was free when its move began, in steps a kill may cut anywhere: a link under the new
 * name (which fails rather than replace a file put there since), then the old name removed. Returns null when the file
 * is under its new name alone (or under neither: a missing file is the audit's to find), else why it stays.
 */
async function moveFile(from: string, to: string): Promise<string | null> {
  const [atFrom, atTo] = await Promise.all([lstat(from).catch(() => null), lstat(to).catch(() => null)]);
  if (atTo !== null) {
    if (atFrom === null) return null; // moved before a kill, the row not yet told
    if (atFrom.ino === atTo.ino && atFrom.dev === atTo.dev) {
      await unlink(from); // linked before a kill, the old name not yet removed
      return null;
    }
    return `a file was put under its new name ${clip(to)}`;
  }
  if (atFrom === null) return null;
  if (atFrom.isDirectory()) return 'a folder is there';
  try {
    await mkdir(dirname(to), { recursive: true });
    try {
      await link(from, to);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') return `a file was put under its new name ${clip(to)}`;
      // A file system without hard links (FAT, exFAT, some shares): renamed, the new name looked at just before,
      // under the mirror's lock.
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS' && code !== 'EXDEV') throw err;
      if ((await lstat(to).catch(() => null)) !== null) return `a file was put under its new name ${clip(to)}`;
      await rename(from, to);
      return null;
    }
    // The new name durable before the old goes: a power cut then leaves one name or both, never neither.
    await fsyncDir(dirname(to));
    await unlink(from);
    return null;
  } catch (err) {
    return `it could not be moved (${(err as Error).message})`;
  }
}

async function removeEmpty(dest: string, dir: string): Promise<void> {
  for (let at = dir; at !== '.' && at !== '' && at !== '/'; at = dirname(at)) {
    try {
      await rmdir(join(dest, at));
    } catch {
      return; // not empty (other files, a person's own), or gone already
    }
  }
}
