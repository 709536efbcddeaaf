// URI → a safe path relative to the mirror's folder. By default `<host>[_<port>]/<path>`; `--map PREFIX=DIR` maps a
// URI prefix onto a folder (the longest prefix wins) and the rest of the URI becomes the relative path. A prefix
// matches at a path-segment boundary: ending in `/` as written, otherwise the URI itself or the URI followed by `/`,
// `?` or `#` (so `http://h/data` maps `http://h/data/x`, never `http://h/database/x`).
//
// Every segment is percent-decoded (so `%2e%2e` cannot climb out), NFC-normalized, then made safe on Windows, macOS
// and Linux alike: the characters those refuse (`: * ? " < > | \`, control characters) and `%` itself are written as
// `%XX`, so the mapping stays reversible and no two URIs share a path. Markers the mirror adds are a `%` followed by
// something that is not two hex digits (`%index`, `%empty`, `%q`, `%dir`, `%file`, `%~2`), which no escaped name can be.
// A URI on another host than the Source's is refused unless the person allows that host (the Sitemap protocol's
// rule that a list names only resources of its own authority).
import { createHash } from 'node:crypto';
import { clip } from '../clip.ts';
import { STATE_DIR, inStateDir, isStateDirName } from './state-dir.ts';
import { canonicalUri } from './uri.ts';

export interface PathMap {
  /** A URI prefix, e.g. `http://example.org/data/`. */
  prefix: string;
  /** A relative folder inside the mirror, `/`-separated, e.g. `data`. */
  dir: string;
  /**
   * How the prefix matches: `segments` at a path-segment boundary; `prefix` as a bare string prefix, the rule of
   * mirrors made before, kept by those whose inventory relies on it. Absent in the maps of such a mirror until a sync
   * settles it (sync.ts, settleMapRule): matched as a bare prefix meanwhile, as its inventory was made. Kept with each
   * map so that whatever maps the mirror's URIs from its binding (sync, audit, retry, the live side) agrees.
   */
  rule?: MapRule;
}

export interface LocalPathOptions {
  /** Any URL of the Source (its Capability List, say): its host and port are the Source's authority. */
  sourceUrl: string;
  maps?: PathMap[];
  /** Other hosts (`host` or `host:port`) whose URIs may be mirrored; `*` allows every host. */
  allowHosts?: string[];
}

export type MapRule = 'segments' | 'prefix';

/** Whether `uri` (normalized, without fragment) falls under the map `prefix` (normalized) by `rule`. */
export function underPrefix(uri: string, prefix: string, rule: MapRule = 'segments'): boolean {
  if (!uri.startsWith(prefix)) return false;
  // A prefix ending in `?` has its boundary written already, as one ending in `/` does.
  if (rule === 'prefix' || prefix.endsWith('/') || prefix.endsWith('?') || uri.length === prefix.length) return true;
  const next = uri.charCodeAt(prefix.length);
  // `/`, `?`, `#`
  return next === 0x2f || next === 0x3f || next === 0x23;
}

export type LocalPath = { ok: true; path: string } | { ok: false; reason: string };

/** Longest name (UTF-8 bytes) kept as is; file systems allow 255, the rest is room for alternates. */
export const MAX_NAME_BYTES = 200;
/** Longest whole relative path (characters) before names are shortened; Windows' classic limit is 260. */
export const MAX_PATH_CHARS = 1024;

const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)$/i;
// Characters refused by Windows or macOS in names, `/` (the separator), `%` (the escape itself), and the controls no
// name should hold: C1 controls, and the bidirectional ones that make "txt.exe" read as "exe.txt" in a file manager.
// Also the code points HFS+ ignores in names (U+200C, U+200D, U+206A–U+206F, U+FEFF, besides the bidirectional marks
// above): there `a\u200cb` and `ab` are one file, so two URIs would share it.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200c-\u200f\u202a-\u202e\u2066-\u206f\ufeff:*?"<>|\\/%]/g;

export function escapeChar(ch: string): string {
  return [...Buffer.from(ch, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}

/** Decodes %XX sequences that form UTF-8; a malformed sequence stays as written (and its `%` is escaped later). */
function percentDecode(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    // Decode the valid runs only.
    return segment.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    });
  }
}

/**
 * Names that need nothing done, by far the most common: ASCII letters, digits and `_+=,@-` (and dots, neither first
 * nor last), at most MAX_NAME_BYTES long, not a reserved Windows name. Checked first: one test instead of the steps
 * below, thousands of times a second in a mirror of small files. (Not `~`: a name with one may look like a short name.)
 */
const PLAIN = /^[A-Za-z0-9_+=,@-](?:[A-Za-z0-9._+=,@-]{0,198}[A-Za-z0-9_+=,@-])?$/;
const RESERVED_PLAIN = /^(?:con|prn|aux|nul|com[0-9]|lpt[0-9])(?:\.|$)/i;

/** One decoded name made safe to be a file or folder name anywhere. */
export function safeName(decoded: string): string {
  if (PLAIN.test(decoded) && !RESERVED_PLAIN.test(decoded)) return decoded;
  return escapeName(decoded);
}

/** safeName without its shortcut for plain names (exported for the test that both agree). */
export function escapeName(decoded: string): string {
  let name = decoded.normalize('NFC').replace(UNSAFE, escapeChar);
  if (name === '') return '%empty';
  if (name === '.' || name === '..') return name.replace(/\./g, '%2E');
  name = escapeTail(name);
  // Windows takes `CON .txt` for the device as it takes `CON.txt`: spaces before the extension do not count.
  const stem = name.split('.')[0]!.replace(/ +$/, '');
  if (WINDOWS_RESERVED.test(stem)) name = escapeChar(name[0]!) + name.slice(1);
  if (SHORT_NAME.test(name)) name = name.replace(/~/g, '%7E');
  return shorten(name, MAX_NAME_BYTES);
}

/**
 * A name of the form Windows gives the 8.3 short name of a long one (`PROGRA~1`, `ABCDEF~2.TXT`: at most 8 characters
 * ending `~` and digits, at most one dot and 3 after it, ASCII as short names are). NTFS opens a file by its short name too, so a URI whose name
 * has this form would land on another URI's file (`Program Files`); its `~` is escaped. Any case: NTFS ignores it,
 * comparing names through its upper-case table, in which `ı` (U+0131) is `I` and `ſ` (U+017F) is `S`: `ınstal~1` is
 * opened as `INSTAL~1`, so those two count as the ASCII letters they stand for. Only the whole name counts: NTFS
 * matches a short name exactly, so `PROGRA~1%dir` or `PROGRA~1%2E` (longer than 8.3) is never one.
 */
export const SHORT_NAME = /^(?=[!-\-/-~\u0131\u017f]{1,8}(?:\.[!-\-/-~\u0131\u017f]{0,3})?$)[^.]*~[0-9]+(?:\.[^.]*)?$/;

/** Windows drops trailing dots and spaces silently: two URIs would land on one file. */
function escapeTail(name: string): string {
  return name.replace(/[. ]+$/, (tail) => [...tail].map(escapeChar).join(''));
}

/** A name over `max` UTF-8 bytes becomes its start plus a hash of the whole name, keeping a short extension. */
export function shorten(name: string, max: number): string {
  if (Buffer.byteLength(name, 'utf8') <= max) return name;
  const digest = createHash('sha256').update(name).digest('hex').slice(0, 16);
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 && name.length - dot <= 10 && !name.slice(dot).includes('%') ? name.slice(dot) : '';
  const room = max - Buffer.byteLength(`%~${digest}${ext}`, 'utf8');
  let head = '';
  for (const ch of name) {
    if (Buffer.byteLength(head + ch, 'utf8') > room) break;
    head += ch;
  }
  // Never end the kept part inside an escape: `%2` alone would read as a marker.
  head = head.replace(/%[0-9A-F]?$/, '');
  return `${head}%~${digest}${ext}`;
}

/** The key two paths clash on where the file system ignores case (Windows, macOS by default). */
export function caseKey(path: string): string {
  // ASCII is its own NFC: normalizing it cost a third of this, called several times per resource.
  if (ASCII.test(path)) return path.toLowerCase();
  // Through upper case: NTFS compares names by their upper case and APFS by case folding, under which `ς` is `σ`,
  // `ſ` is `s`, `µ` is `μ`, and `ı` is `i` (NTFS), though lower case keeps each apart. What this joins that a file
  // system keeps apart (`ß` and `ss`) costs only an alternate name.
  return path.normalize('NFC').toUpperCase().toLowerCase().normalize('NFC');
}

const ASCII = /^[\x00-\x7f]*$/;

function checkDir(dir: string): string {
  const parts = dir.replace(/\\/g, '/').split('/').filter((p) => p !== '' && p !== '.');
  if (/^([a-zA-Z]:|\/)/.test(dir) || parts.some((p) => p === '..')) {
    throw new Error(`The folder of a --map must be relative and stay inside the mirror, not ${JSON.stringify(clip(dir))}`);
  }
  const safe = parts.map((p) => safeName(p));
  // Every run empties the mirror's temporary folder, and its state must never be written over: files mapped there
  // would be lost, or would break the mirror.
  if (safe.length > 0 && isStateDirName(safe[0]!)) {
    throw new Error(`The folder of a --map cannot be inside ${STATE_DIR}, the mirror's own folder (its state, temporary files and quarantine), not ${JSON.stringify(clip(dir))}`);
  }
  return safe.join('/');
}

/** Parses `PREFIX=DIR` (the last `=` splits, since URIs may contain `=`). */
export function parseMap(text: string): PathMap {
  const at = text.lastIndexOf('=');
  if (at <= 0) throw new Error(`--map takes PREFIX=DIR, not ${JSON.stringify(clip(text))}`);
  const prefix = text.slice(0, at);
  let url: URL;
  try {
    url = new URL(prefix);
  } catch {
    throw new Error(`--map: ${JSON.stringify(clip(prefix))} is not an absolute URI prefix`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--map: only http(s) prefixes can be mapped, not ${clip(prefix)}`);
  const dir = text.slice(at + 1);
  checkDir(dir);
  return { prefix, dir, rule: 'segments' };
}

function authority(url: URL): string {
  return url.port === '' ? url.hostname : `${url.hostname}:${url.port}`;
}

export class LocalPaths {
  readonly #source: URL;
  readonly #maps: { prefix: string; dir: string; rule: MapRule }[];
  readonly #allowed: Set<string>;
  readonly #allowAll: boolean;
  readonly #sourceAuthority: string;
  /** The Source's origin as a URL parser writes it, and the folder its own URIs go in. */
  readonly #sourceOrigin: string;
  readonly #sourceBase: string;

  constructor(options: LocalPathOptions) {
    this.#source = new URL(options.sourceUrl);
    this.#sourceAuthority = authority(this.#source);
    this.#sourceOrigin = this.#source.origin;
    this.#sourceBase = safeName(this.#source.port === '' ? this.#source.hostname : `${this.#source.hostname}_${this.#source.port}`);
    // Prefixes compare against the parsed (normalized) form of each URI.
    this.#maps = (options.maps ?? [])
      .map((m) => ({ prefix: normalizePrefix(m.prefix), dir: checkDir(m.dir), rule: m.rule ?? 'prefix' }))
      .sort((a, b) => b.prefix.length - a.prefix.length);
    this.#allowed = new Set((options.allowHosts ?? []).map((h) => h.toLowerCase()));
    this.#allowAll = this.#allowed.has('*');
  }

  /** The relative, `/`-separated path for a URI, or why it is refused. */
  map(uri: string): LocalPath {
    // Most URIs of a list are the Source's own with a plain path, written as a URL parser would write them: parsing
    // would change nothing, so it is skipped (a tenth of the main thread's own time per resource in a baseline).
    const origin = this.#sourceOrigin;
    if (uri.length > origin.length && uri.startsWith(origin) && PLAIN_PATH.test(uri.slice(origin.length))) {
      const map = this.#maps.find((m) => underPrefix(uri, m.prefix, m.rule));
      return map ? this.#place(map.dir, restAfter(uri, map.prefix)) : this.#place(this.#sourceBase, uri.slice(origin.length));
    }
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      return { ok: false, reason: `not a valid URI: ${clip(uri)}` };
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, reason: `not an http(s) URI: ${clip(uri)}` };
    // (Only a URI written with `#` has a fragment: setting the hash costs a re-serialization.)
    if (uri.includes('#')) url.hash = '';
    const href = url.href;
    const map = this.#maps.find((m) => underPrefix(href, m.prefix, m.rule));
    let base: string;
    let rest: string;
    if (map) {
      base = map.dir;
      rest = restAfter(href, map.prefix);
    } else {
      const host = authority(url);
      if (host !== this.#sourceAuthority && !this.#allowAll && !this.#allowed.has(host.toLowerCase()) && !this.#allowed.has(url.hostname.toLowerCase())) {
        return {
          ok: false,
          reason: `on another host (${clip(host, 100)}) than the Source's (${this.#sourceAuthority}); not mirrored unless that host is allowed`,
        };
      }
      base = safeName(url.port === '' ? url.hostname : `${url.hostname}_${url.port}`);
      // From the href, not pathname + search: `/a?` (an empty query) is another URI than `/a`.
      rest = href.slice(url.origin.length);
    }
    return this.#place(base, rest);
  }

  /**
   * Whether a relative, `/`-separated path lies in a folder this mapping writes into: a map's folder, the Source's
   * host folder, or an allowed host's (any host's when every host is allowed). Files elsewhere in the mirror's folder
   * are none of the mirror's business (an audit does not call them extra).
   */
  inMappedFolder(path: string): boolean {
    if (this.#allowAll) return true;
    for (const { dir } of this.#maps) if (dir === '' || path.startsWith(`${dir}/`)) return true;
    const slash = path.indexOf('/');
    if (slash === -1) return false;
    const top = path.slice(0, slash);
    if (top === this.#sourceBase) return true;
    for (const host of this.#allowed) {
      // `host:port` allows that port alone, a bare host name any port (the folder `host_port`).
      const port = /^(.*):(\d+)$/.exec(host);
      if (port ? top === safeName(`${port[1]}_${port[2]}`) : top === safeName(host) || (top.startsWith(`${safeName(host)}_`) && /^\d+$/.test(top.slice(safeName(host).length + 1)))) {
        return true;
      }
    }
    return false;
  }

  /** The path under folder `base` for `rest`, the normalized URI's path and query after its origin or map prefix. */
  #place(base: string, rest: string): LocalPath {
    const q = rest.indexOf('?');
    const pathPart = q === -1 ? rest : rest.slice(0, q);
    const query = q === -1 ? '' : rest.slice(q);
    // One `/` only: the one after the origin or the map's prefix. Those after it are empty segments, as inside the
    // path (`//a` is not `/a`).
    const segments = (pathPart.startsWith('/') ? pathPart.slice(1) : pathPart).split('/');
    const last = segments.length - 1;
    // A trailing slash (or the bare host) names a folder's own resource.
    const names = segments.map((s, i) => (i === last && s === '' ? '%index' : safeName(percentDecode(s))));
    if (query !== '') {
      // The query is kept escaped as sent (not decoded), so `?a=%2F` and `?a=/` stay apart; it is joined by the
      // marker `%q`, since a `?` decoded from the path is written `%3F`.
      // A query ending in `.` (`?v=1.`) ends the name too.
      names[last] = shorten(queryName(names[last]!, query.slice(1).replace(UNSAFE, escapeChar)), MAX_NAME_BYTES);
    }
    let path = [base, ...names].filter((p) => p !== '').join('/');
    if (path.length > MAX_PATH_CHARS) {
      // Deep paths: keep the first folders, fold the rest into one hashed name.
      const digest = createHash('sha256').update(path).digest('hex').slice(0, 16);
      path = `${path.slice(0, MAX_PATH_CHARS - 40).replace(/\/[^/]*$/, '').replace(/%[0-9A-F]?$/, '')}/%~${digest}`;
    }
    // A Source mapped onto the folder itself (`--map PREFIX=.`) could otherwise name the mirror's state or lock.
    if (inStateDir(path)) return { ok: false, reason: `its path ${clip(path)} would be inside ${STATE_DIR}, the mirror's own folder` };
    return { ok: true, path };
  }
}

/**
 * A name and its query (escaped) joined by `%q`. The name was made safe alone, but the two together may be shaped like
 * a short name (`/x?~1` → `x%q~1`, `/a?b~2.txt`): its `~` is escaped then too (a `%` of the query is `%25`, so `%7E`
 * can only be a `~`). Only names with a query get here: the per-resource cost of the rest is unchanged.
 */
export function queryName(name: string, escapedQuery: string): string {
  const joined = escapeTail(`${name}%q${escapedQuery}`);
  return SHORT_NAME.test(joined) ? joined.replace(/~/g, '%7E') : joined;
}

/**
 * The n-th alternate of a path: `%~n` after its name. A short name (`abc%~2`) could be the 8.3 name Windows gave
 * another file of the folder (`abc%25x`): its number is written on 7 digits then, which no short name holds.
 */
function alternate(path: string, n: number): string {
  const named = `${path}%~${n}`;
  return SHORT_NAME.test(named.slice(named.lastIndexOf('/') + 1)) ? `${path}%~${String(n).padStart(7, '0')}` : named;
}

/** What follows a map's prefix, from the `/` that ends the prefix when it ends with one (as after an origin). */
function restAfter(uri: string, prefix: string): string {
  return prefix.endsWith('/') ? uri.slice(prefix.length - 1) : uri.slice(prefix.length);
}

/**
 * A path a URL parser leaves as it is: `/`-separated segments of unreserved characters, none of them `.` or `..`
 * (which it would resolve). No `%`, query or fragment.
 */
const PLAIN_PATH = /^(?:\/(?!\.\.?(?:\/|$))[A-Za-z0-9._~-]*)+$/;

export function normalizePrefix(prefix: string): string {
  // In the form the mirror keeps URIs in (uri.ts): `http://h/%7Euser/` must match `http://h/~user/a`. And
  // `new URL('http://h')` adds a `/`: a prefix written without a path still matches `http://h/…`.
  new URL(prefix); // throws on what is no URL, as before
  return canonicalUri(prefix);
}

/**
 * The paths a mirror's inventory already holds, looked up on demand: a mirror may hold millions of them, far too many
 * to load for a run that touches a thousand (MirrorState implements it with an index on the case-folded path).
 */
export interface ClaimStore {
  /** The row whose `caseKey(path)` is `key`, if any. */
  fileByKey(key: string): { path: string; uri: string } | undefined;
  /** True when some row's path lies under the folder whose `caseKey` is `key`. */
  hasUnder(key: string): boolean;
}

/**
 * Which relative paths are taken, so that two URIs never share one: case-only clashes (the file systems of Windows
 * and macOS fold case) and a URI that is a file where another needs a folder (`/a` and `/a/b`). A clash gets an
 * alternate path; the inventory records it, so it stays the same on later runs. What this run claims and removes is
 * kept here; what the inventory held before is asked of the store.
 */
/** A folder files are claimed in: its path (with any `%dir` alternates) and the caseKey of each folder on its way. */
interface Folder {
  path: string;
  keys: string[];
}

/** Resolved folders remembered by PathClaims (bounded; forgetting costs only working one out again). */
const MAX_FOLDERS = 10_000;

export class PathClaims {
  /** caseKey(file path) → the exact path and the URI that holds it; null: removed in this run. */
  readonly #files = new Map<string, { path: string; uri: string } | null>();
  /** caseKey(folder) → how many of this run's claimed files lie under it. */
  readonly #dirs = new Map<string, number>();
  readonly #store: ClaimStore | null;
  /** Folders (caseKey) the store holds no file as: asked once per run, not once per file inside them. */
  readonly #notFiles = new Set<string>();
  /** A wanted folder → where its files go (claim); forgotten when a path is removed or added from outside. */
  readonly #folders = new Map<string, Folder>();

  constructor(store: ClaimStore | null = null) {
    this.#store = store;
  }

  /** Paths claimed or added in this run (the store's not counted). */
  get size(): number {
    let n = 0;
    for (const f of this.#files.values()) if (f !== null) n++;
    return n;
  }

  #file(key: string): { path: string; uri: string } | undefined {
    const here = this.#files.get(key);
    if (here !== undefined) return here ?? undefined;
    return this.#store?.fileByKey(key);
  }

  #isFile(key: string): boolean {
    if (this.#files.has(key)) return this.#files.get(key) !== null;
    if (this.#store === null || this.#notFiles.has(key)) return false;
    if (this.#store.fileByKey(key) !== undefined) return true;
    this.#notFiles.add(key);
    return false;
  }

  // A folder whose files were all removed in this run still counts as a folder here: a file claiming its name gets
  // the alternate `%file` name, which is safe (only unusual).
  #isDir(key: string): boolean {
    return this.#dirs.has(key) || (this.#store?.hasUnder(key) ?? false);
  }

  /** Records a path that is already in use (from the inventory). */
  add(path: string, uri: string): void {
    this.#folders.clear();
    const parts = path.split('/');
    const keys: string[] = [];
    for (let i = 1; i < parts.length; i++) keys.push(caseKey(parts.slice(0, i).join('/')));
    this.#add(path, caseKey(path), uri, keys);
  }

  /** `key` is caseKey(path); `folderKeys` the caseKey of each folder on its way. */
  #add(path: string, key: string, uri: string, folderKeys: string[]): void {
    if (this.#files.get(key)) return;
    this.#files.set(key, { path, uri });
    for (const dir of folderKeys) this.#dirs.set(dir, (this.#dirs.get(dir) ?? 0) + 1);
  }

  remove(path: string): void {
    // A folder emptied by a removal may be free to be a file again: resolved folders are worked out anew.
    this.#folders.clear();
    const key = caseKey(path);
    const held = this.#files.get(key);
    if (held) {
      if (held.path !== path) return;
      this.#releaseFolders(path);
    } else if (held === null || this.#store?.fileByKey(key)?.path !== path) return;
    if (this.#store === null) this.#files.delete(key);
    else this.#files.set(key, null);
  }

  /**
   * Forgets every path claimed in this run that the store now holds for the same URI: the store answers for them from
   * then on (see `stored`).
   */
  forgetStored(): void {
    if (this.#store === null) return;
    for (const [key, held] of this.#files) {
      if (held !== null && this.#store.fileByKey(key)?.uri === held.uri) this.#forget(key, held.path);
    }
  }

  /**
   * `path`, claimed for `uri` in this run, is now held by a row of the store, which answers for it: forgotten here, so
   * that what a run claims is not all kept in memory until its end.
   */
  stored(path: string, uri: string): void {
    const key = caseKey(path);
    const held = this.#files.get(key);
    if (held && held.uri === uri && held.path === path) this.#forget(key, path);
  }

  /** A removal of `path` was committed: the store answers for it again (no row, or the row kept when it failed). */
  settled(path: string): void {
    if (this.#store === null) return;
    const key = caseKey(path);
    if (this.#files.get(key) === null) this.#files.delete(key);
  }

  #forget(key: string, path: string): void {
    this.#files.delete(key);
    // Asked of the store again, which holds it now.
    this.#notFiles.delete(key);
    this.#releaseFolders(path);
  }

  /** One file fewer in each folder on the way to `path`: a folder with none left is no longer claimed. */
  #releaseFolders(path: string): void {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const dir = caseKey(parts.slice(0, i).join('/'));
      const n = (this.#dirs.get(dir) ?? 1) - 1;
      if (n <= 0) this.#dirs.delete(dir);
      else this.#dirs.set(dir, n);
    }
  }

  /** The URI that holds exactly this path, if any. */
  holder(path: string): string | undefined {
    const held = this.#file(caseKey(path));
    return held?.path === path ? held.uri : undefined;
  }

  /** The path to use for `uri`, wanted at `wanted` (itself when free), claimed. */
  claim(wanted: string, uri: string): string {
    const slash = wanted.lastIndexOf('/');
    const name = wanted.slice(slash + 1);
    const wantedFolder = slash === -1 ? '' : wanted.slice(0, slash);
    let folder: Folder | undefined;
    let known = true;
    if (slash !== -1) {
      folder = this.#folders.get(wantedFolder);
      if (folder === undefined) {
        folder = this.#folder(wantedFolder.split('/'));
        known = false;
      }
    }
    let path = folder === undefined ? name : `${folder.path}/${name}`;
    let key = caseKey(path);
    // A file where a folder is in use: the file gets an alternate name beside it.
    if (this.#isDir(key)) {
      path = `${path}%file`;
      key = caseKey(path);
    }
    const taken = this.#file(key);
    if (taken !== undefined) {
      if (taken.uri === uri) return taken.path;
      let n = 2;
      const free = (p: string) => {
        const t = this.#file(caseKey(p));
        return (t === undefined || t.uri === uri) && !this.#isDir(caseKey(p));
      };
      while (!free(alternate(path, n))) n++;
      path = alternate(path, n);
      key = caseKey(path);
      const mine = this.#file(key);
      if (mine?.uri === uri) return mine.path;
    }
    this.#add(path, key, uri, folder?.keys ?? []);
    if (!known && folder !== undefined) {
      // Its folders now hold a file of this run: none of them can become a file (a file claiming one gets `%file`),
      // so the next file wanted in the same folder goes in the same one, without asking again.
      if (this.#folders.size >= MAX_FOLDERS) this.#folders.clear();
      this.#folders.set(wantedFolder, folder);
    }
    return path;
  }

  /**
   * The folder a file wanted under `parts` goes in: each folder on the way that is a file already gets an alternate
   * name (`%dir`).
   */
  #folder(parts: string[]): Folder {
    const keys: string[] = [];
    let path = '';
    for (let i = 0; i < parts.length; i++) {
      let prefix = i === 0 ? parts[0]! : `${path}/${parts[i]}`;
      let key = caseKey(prefix);
      if (this.#isFile(key)) {
        prefix = `${prefix}%dir`;
        key = caseKey(prefix);
      }
      path = prefix;
      keys.push(key);
    }
    return { path, keys };
  }
}
