import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { LocalPaths, PathClaims, caseKey, escapeName, parseMap, safeName } from './local-path.ts';
import { MIRROR_MIGRATIONS, MirrorState, STATE_FILE, type InventoryRow } from './state.ts';

const SRC = 'http://example.org/dataset1/capabilitylist.xml';
const paths = (options: Partial<ConstructorParameters<typeof LocalPaths>[0]> = {}) => new LocalPaths({ sourceUrl: SRC, ...options });
const path = (uri: string, lp = paths()) => {
  const r = lp.map(uri);
  if (!r.ok) throw new Error(r.reason);
  return r.path;
};

describe('LocalPaths.map', () => {
  it('maps to <host>[_<port>]/<path> by default', () => {
    expect(path('http://example.org/a/b.txt')).toBe('example.org/a/b.txt');
    const lp = new LocalPaths({ sourceUrl: 'http://127.0.0.1:5399/x' });
    expect(path('http://127.0.0.1:5399/dataset1/res/1.txt', lp)).toBe('127.0.0.1_5399/dataset1/res/1.txt');
  });

  it('uses the longest --map prefix', () => {
    const lp = paths({ maps: [parseMap('http://example.org/=all'), parseMap('http://example.org/data/=data')] });
    expect(path('http://example.org/data/x/y.json', lp)).toBe('data/x/y.json');
    expect(path('http://example.org/other/z', lp)).toBe('all/other/z');
  });

  it('matches a --map prefix at a path-segment boundary', () => {
    const lp = paths({ maps: [parseMap('http://example.org/data=d'), parseMap('http://example.org/lists/=l'), parseMap('http://example.org/q?=q')] });
    for (const [uri, want] of [
      ['http://example.org/data/x', 'd/x'],
      ['http://example.org/data', 'd/%index'],
      ['http://example.org/data?a=1', 'd/%index%qa=1'],
      ['http://example.org/data#part', 'd/%index'],
      ['http://example.org/database/x', 'example.org/database/x'],
      ['http://example.org/data.json', 'example.org/data.json'],
      ['http://example.org/data%2Fx', 'example.org/data%2Fx'],
      ['http://example.org/lists/a', 'l/a'],
      ['http://example.org/listsx', 'example.org/listsx'],
      ['http://example.org/q?a', 'q/a'],
    ]) {
      expect(path(uri!, lp), uri).toBe(want);
    }
    // A prefix is compared in the form URIs are kept in (uri.ts).
    const escaped = paths({ maps: [parseMap('HTTP://Example.org:80/%7euser=u')] });
    expect(path('http://example.org/~user/a', escaped)).toBe('u/a');
    expect(path('http://example.org/~username', escaped)).toBe('example.org/~username');
    // The rule of mirrors made before, kept for those whose inventory relies on it.
    const old = paths({ maps: [{ ...parseMap('http://example.org/data=d'), rule: 'prefix' }] });
    expect(path('http://example.org/database/x', old)).toBe('d/base/x');
    // A map kept before the rule was recorded, not yet settled by a sync, is matched as its inventory was made.
    const unsettled = paths({ maps: [{ prefix: 'http://example.org/data', dir: 'd' }] });
    expect(path('http://example.org/database/x', unsettled)).toBe('d/base/x');
  });

  it('refuses other hosts unless allowed', () => {
    const r = paths().map('http://elsewhere.net/a');
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(/another host \(elsewhere\.net\)/);
    expect(path('http://elsewhere.net/a', paths({ allowHosts: ['elsewhere.net'] }))).toBe('elsewhere.net/a');
    expect(path('http://elsewhere.net:81/a', paths({ allowHosts: ['*'] }))).toBe('elsewhere.net_81/a');
    // A mapped prefix is allowed by the mapping itself.
    expect(path('http://mirror.net/a', paths({ maps: [parseMap('http://mirror.net/=m')] }))).toBe('m/a');
    expect(paths().map('ftp://example.org/a').ok).toBe(false);
    expect(paths().map('not a uri').ok).toBe(false);
  });

  it('escapes the controls that would make a name read as another (bidirectional overrides, C1 controls)', () => {
    // U+202E RIGHT-TO-LEFT OVERRIDE: "report\u202Etxt.exe" shows as "reportexe.txt".
    expect(path('http://example.org/report%E2%80%AEtxt.exe')).toBe('example.org/report%E2%80%AEtxt.exe');
    expect(path('http://example.org/a%C2%85b')).toBe('example.org/a%C2%85b');
    expect(path('http://example.org/caf%C3%A9')).toBe('example.org/café');
  });

  it('never climbs out: dot segments, encoded dots and slashes, absolute, NUL', () => {
    expect(path('http://example.org/a/../../../etc/passwd')).toBe('example.org/etc/passwd');
    expect(path('http://example.org/a/%2e%2e/%2E%2E/x')).toBe('example.org/x');
    expect(path('http://example.org/a/%2e%2e%2fx')).toBe('example.org/a/..%2Fx');
    expect(path('http://example.org/%2Fetc%2Fpasswd')).toBe('example.org/%2Fetc%2Fpasswd');
    expect(path('http://example.org/a%00b')).toBe('example.org/a%00b');
    expect(path('http://example.org/C:%5Cwin')).toBe('example.org/C%3A%5Cwin');
    for (const uri of ['http://example.org/..%2f..%2f', 'http://example.org/%2e%2e%5c%2e%2e%5cx', 'http://example.org/a/.%2e/.%2e/b']) {
      const p = path(uri);
      expect(p.split('/').every((s) => s !== '..' && s !== '.' && s !== '')).toBe(true);
      expect(p.startsWith('example.org/')).toBe(true);
    }
  });

  it('escapes characters unsafe on Windows or macOS, and % itself', () => {
    expect(path('http://example.org/a:b*c%3Fd"e<f>g|h')).toBe('example.org/a%3Ab*c%3Fd%22e%3Cf%3Eg%7Ch'.replace('b*c', 'b%2Ac'));
    expect(path('http://example.org/100%25')).toBe('example.org/100%25');
    expect(path('http://example.org/tab%09x')).toBe('example.org/tab%09x');
  });

  it('keeps Unicode, normalized to NFC', () => {
    const nfd = 'http://example.org/' + encodeURIComponent('e\u0301te\u0301');
    const nfc = 'http://example.org/' + encodeURIComponent('\u00e9t\u00e9');
    expect(path(nfd)).toBe('example.org/\u00e9t\u00e9');
    expect(path(nfc)).toBe('example.org/\u00e9t\u00e9');
    expect(path('http://example.org/日本語/文書')).toBe('example.org/日本語/文書');
  });

  it('escapes reserved Windows names and trailing dots or spaces', () => {
    expect(path('http://example.org/CON')).toBe('example.org/%43ON');
    expect(path('http://example.org/nul.txt')).toBe('example.org/%6Eul.txt');
    expect(path('http://example.org/com1')).toBe('example.org/%63om1');
    expect(path('http://example.org/console')).toBe('example.org/console');
    expect(path('http://example.org/name.')).toBe('example.org/name%2E');
    expect(path('http://example.org/name%20%20')).toBe('example.org/name%20%20');
    // Spaces before the extension do not hide a device name from Windows.
    expect(path('http://example.org/CON%20.txt')).toBe('example.org/%43ON .txt');
    expect(path('http://example.org/com1%20%20.log')).toBe('example.org/%63om1  .log');
    expect(path('http://example.org/con%20x.txt')).toBe('example.org/con x.txt');
    // A query's trailing dot ends the file's name: dropped by Windows, `?v=1.` would be `?v=1`'s file.
    expect(path('http://example.org/a?v=1.')).toBe('example.org/a%qv=1%2E');
    expect(path('http://example.org/a?v=1')).toBe('example.org/a%qv=1');
    expect(path('http://example.org/?..')).toBe('example.org/%index%q%2E%2E');
  });

  it('turns a trailing slash into a %index file, and keeps queries escaped', () => {
    expect(path('http://example.org/')).toBe('example.org/%index');
    expect(path('http://example.org')).toBe('example.org/%index');
    expect(path('http://example.org/a/')).toBe('example.org/a/%index');
    expect(path('http://example.org/a?x=1&y=%2F')).toBe('example.org/a%qx=1&y=%252F');
    expect(path('http://example.org/a?x=/')).toBe('example.org/a%qx=%2F');
    expect(path('http://example.org/a?')).toBe('example.org/a%q');
    expect(path('http://example.org/a/?q')).toBe('example.org/a/%index%qq');
    expect(path('http://example.org/%index')).toBe('example.org/%25index');
    expect(path('http://example.org/a#frag')).toBe('example.org/a');
    expect(path('http://example.org/a//b')).toBe('example.org/a/%empty/b');
    // Leading empty segments are segments too: `//a` is another URI than `/a`, with a path of its own.
    expect(path('http://example.org//a')).toBe('example.org/%empty/a');
    expect(path('http://example.org///a')).toBe('example.org/%empty/%empty/a');
    const mapped = paths({ maps: [parseMap('http://example.org/data/=d'), parseMap('http://example.org/seg=s')] });
    expect(path('http://example.org/data//x', mapped)).toBe('d/%empty/x');
    expect(path('http://example.org/data/x', mapped)).toBe('d/x');
    expect(path('http://example.org/data/', mapped)).toBe('d/%index');
    expect(path('http://example.org/data/?q', mapped)).toBe('d/%index%qq');
    expect(path('http://example.org/seg//x', mapped)).toBe('s/%empty/x');
  });

  it('gives distinct URIs distinct paths', () => {
    const uris = [
      'http://example.org/a', 'http://example.org/a/', 'http://example.org/a%3F', 'http://example.org/a?',
      'http://example.org/a?x', 'http://example.org/a%3Fx', 'http://example.org/a%25', 'http://example.org/a%2525',
      'http://example.org/a.', 'http://example.org/a%2E', 'http://example.org/%index', 'http://example.org/',
    ];
    const mapped = uris.map((u) => path(u));
    // `a.` and `a%2E` are the same URI after decoding; everything else differs.
    expect(new Set(mapped).size).toBe(uris.length - 1);
  });

  it('shortens over-long names with a hash, keeping the extension', () => {
    const long = 'x'.repeat(300);
    const p = path(`http://example.org/${long}.json`);
    const name = p.split('/').pop()!;
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(200);
    expect(name).toMatch(/^x+%~[0-9a-f]{16}\.json$/);
    expect(path(`http://example.org/${long}.jsoN`)).not.toBe(p);
    const multibyte = safeName('é'.repeat(300));
    expect(Buffer.byteLength(multibyte)).toBeLessThanOrEqual(200);
    const deep = path('http://example.org/' + Array.from({ length: 200 }, () => 'abcdefghij').join('/'));
    expect(deep.length).toBeLessThanOrEqual(1024);
  });

  it("escapes the code points HFS+ ignores in names, so that a name with one is not another's file on a Mac", () => {
    const ignored = ['\u200c', '\u200d', '\u200e', '\u200f', '\u202a', '\u202e', '\u206a', '\u206f', '\ufeff'];
    const plain = path('http://example.org/ab');
    for (const ch of ignored) {
      const mapped = path(`http://example.org/a${encodeURIComponent(ch)}b`);
      expect(mapped, JSON.stringify(ch)).toBe(`example.org/a${[...Buffer.from(ch)].map((b) => `%${b.toString(16).toUpperCase()}`).join('')}b`);
      // As HFS+ compares names: with those code points left out, still not the other URI's name.
      expect(mapped.replace(/[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g, '')).not.toBe(plain);
    }
  });

  it("escapes the ~ of a name of the form of a Windows short name, which NTFS would open as another file's", () => {
    expect(path('http://example.org/PROGRA~1')).toBe('example.org/PROGRA%7E1');
    expect(path('http://example.org/progra~2/abcdef~1.txt')).toBe('example.org/progra%7E2/abcdef%7E1.txt');
    expect(path('http://example.org/%C3%A9~1')).toBe('example.org/é~1');
    expect(path('http://example.org/a%25~1')).toBe('example.org/a%25%7E1');
    // Not of that form: more than 8 characters before the extension, more than 3 after it, no digits, two dots.
    for (const name of ['~user', 'progra~12', 'abcdefgh~1', 'abc~1.html', 'a~b', 'a~1.b.c', 'abc~']) expect(path(`http://example.org/${name}`)).toBe(`example.org/${name}`);
    // A query joined to the name can give it that form: `/x?~1` would be `x%q~1`.
    expect(path('http://example.org/x?~1')).toBe('example.org/x%q%7E1');
    expect(path('http://example.org/abc?~1.txt')).toBe('example.org/abc%q%7E1.txt');
    expect(path('http://example.org/a~b?~1')).toBe('example.org/a%7Eb%q%7E1');
    expect(path('http://example.org/x?%7E1')).toBe('example.org/x%q%257E1');
    expect(path('http://example.org/x?~12345')).toBe('example.org/x%q~12345');
    // NTFS upper-cases `ı` to `I` and `ſ` to `S`: `ınstal~1` is opened as the short name `INSTAL~1`.
    expect(path('http://example.org/%C4%B1nstal~1')).toBe('example.org/ınstal%7E1');
    expect(path('http://example.org/%C5%BFetup~1.exe')).toBe('example.org/ſetup%7E1.exe');
    // NTFS matches a short name whole: one followed by more (an escape, a marker) is longer than 8.3 and none.
    expect(path('http://example.org/PROGRA~1.')).toBe('example.org/PROGRA~1%2E');
    expect(path('http://example.org/PROGRA~1%22')).toBe('example.org/PROGRA~1%22');
    // An alternate name of that form (a case clash) takes a number no short name has.
    const claims = new PathClaims();
    expect(claims.claim('h/abc', 'u1')).toBe('h/abc');
    expect(claims.claim('h/ABC', 'u2')).toBe('h/ABC%~0000002');
    expect(claims.claim('h/Abc', 'u3')).toBe('h/Abc%~0000003');
    expect(claims.claim('h/abcdefgh', 'u4')).toBe('h/abcdefgh');
    expect(claims.claim('h/ABCDEFGH', 'u5')).toBe('h/ABCDEFGH%~2');
  });

  it('gives plain names the same safe name by its shortcut as by the full escaping', () => {
    const names = [
      'a', 'A.txt', 'file-1_2~3+4=5,6@7', 'x'.repeat(200), 'x'.repeat(201), '.hidden', 'name.', 'name..', 'a.b.c',
      'con', 'CON.txt', 'nul.tar.gz', 'com1', 'lpt9.x', 'console', 'conx', 'com10', 'aux-file', 'prn_', '-', '_', '~', '1',
      'a b', 'a%20b', 'é', 'a:b', 'a\\b', '..', '.', '', 'café.txt', 'PROGRA~1', 'progra~1.txt', 'abcdefgh~1', 'a~b',
    ];
    for (let i = 0; i < 2000; i++) {
      const alphabet = 'aAzZ09._~+=,@-%: /\\?é';
      let n = '';
      for (let j = 0; j < 1 + (i % 12); j++) n += alphabet[(i * 7 + j * 13 + j * j) % alphabet.length];
      names.push(n);
    }
    for (const name of names) expect(safeName(name), JSON.stringify(name)).toBe(escapeName(name));
  });

  it("maps the Source's plain URIs without parsing them to the path a parsed URI gets", () => {
    // The same URI with an empty fragment is always parsed (and the fragment dropped): the oracle.
    const sources = ['http://example.org/dataset1/capabilitylist.xml', 'http://127.0.0.1:5399/x', 'https://Example.ORG/'];
    const alphabet = ['a', 'Z', '0', '.', '..', '-', '_', '~', '/', '//', '%2e', '%41', '?', 'q=1', ' ', 'é', ':', '@', '\\', 'CON', 'x.'];
    for (const source of sources) {
      const origin = new URL(source).origin;
      for (const lp of [paths({ sourceUrl: source }), paths({ sourceUrl: source, maps: [parseMap(`${origin}/data/=mapped`)] })]) {
        const uris = [
          `${origin}/`, `${origin}/a`, `${origin}/a/`, `${origin}/./a`, `${origin}/a/..`, `${origin}/a/../b`, `${origin}/.a/b.`,
          `${origin}/data/x/y.txt`, `${origin}/data`, `${origin}:80/a`, `${origin}.other.org/a`, `${origin}@evil.org/a`, `${origin}/CON/nul.txt`,
          `${origin}/${'x'.repeat(300)}`, `${origin}/${Array.from({ length: 150 }, () => 'abcdefgh').join('/')}`,
        ];
        for (let i = 0; i < 1500; i++) {
          let rest = '';
          for (let j = 0; j < 1 + (i % 9); j++) rest += alphabet[(i * 11 + j * 7 + j * j * 3) % alphabet.length];
          uris.push(`${origin}/${rest}`);
        }
        for (const uri of uris) {
          const parsed = lp.map(`${uri}#`);
          // (A refusal quotes the URI as given, fragment included.)
          if (parsed.ok) expect(lp.map(uri), uri).toEqual(parsed);
          else expect(lp.map(uri).ok, uri).toBe(false);
        }
      }
    }
  });

  it("never places a file in the mirror's own folder, however a Source spells it, when the Source is mapped onto the folder itself", () => {
    for (const dir of ['.', '']) {
      const lp = paths({ maps: [parseMap(`http://example.org/=${dir}`)] });
      for (const p of [
        '.resourcesync/state.sqlite', '.resourcesync/state.sqlite-wal', '.resourcesync/lock', '.resourcesync/quarantine/a.txt', '.resourcesync/tmp/x',
        '.resourcesync', '.resourcesync/', '.ReSourceSync/state.sqlite', '%2Eresourcesync/lock', '.re%C5%BFourcesync/lock', '%EF%BC%8Eresourcesync/lock',
      ]) {
        const r = lp.map(`http://example.org/${p}`);
        expect(r.ok, p).toBe(false);
        expect(!r.ok && r.reason, p).toMatch(/inside \.resourcesync, the mirror's own folder/);
      }
      // Its short names (Windows) lose their `~`: then they are no longer its names.
      for (const p of ['RESOUR~1/state.sqlite', 'resour~2/lock', 'RE1A2B~1/lock']) expect(path(`http://example.org/${p}`, lp)).toBe(p.replace('~', '%7E'));
      // Names that only look alike, and the name deeper down, are ordinary.
      expect(path('http://example.org/.resourcesync2/a', lp)).toBe('.resourcesync2/a');
      expect(path('http://example.org/resourcesync/a', lp)).toBe('resourcesync/a');
      expect(path('http://example.org/data/.resourcesync/a', lp)).toBe('data/.resourcesync/a');
      expect(path('http://example.org/resource/a', lp)).toBe('resource/a');
      expect(path('http://example.org/.resourcesync?x=1', lp)).toBe('.resourcesync%qx=1');
    }
    // The other mappings put a folder first that cannot be the mirror's own.
    expect(path('http://example.org/.resourcesync/state.sqlite')).toBe('example.org/.resourcesync/state.sqlite');
    expect(path('http://example.org/.resourcesync/lock', paths({ maps: [parseMap('http://example.org/=data')] }))).toBe('data/.resourcesync/lock');
  });

  it('refuses --map folders that leave the mirror', () => {
    expect(() => parseMap('http://example.org/=../x')).toThrow(/inside the mirror/);
    expect(() => parseMap('http://example.org/=/abs')).toThrow(/relative/);
    expect(() => parseMap('nothing')).toThrow(/PREFIX=DIR/);
    // Every run empties .resourcesync/tmp: files mapped into the mirror's own folder would be lost, or break its state.
    for (const dir of ['.resourcesync/tmp', '.resourcesync', './.resourcesync/', '.RESOURCESYNC/Tmp', '.ResourceSync\\quarantine', 'RESOUR~1/tmp', '%2Eresourcesync']) {
      if (dir === '%2Eresourcesync' || dir === 'RESOUR~1/tmp') expect(parseMap(`http://example.org/=${dir}`).dir, dir).toBe(dir);
      else expect(() => parseMap(`http://example.org/=${dir}`), dir).toThrow(/cannot be inside \.resourcesync, the mirror's own folder/);
    }
    expect(() => paths({ maps: [{ prefix: 'http://example.org/', dir: '.resourcesync/tmp' }] })).toThrow(/mirror's own folder/);
    expect(parseMap('http://example.org/=data/.resourcesync')).toEqual({ prefix: 'http://example.org/', dir: 'data/.resourcesync', rule: 'segments' });
    expect(parseMap('http://example.org/=.')).toEqual({ prefix: 'http://example.org/', dir: '.', rule: 'segments' });
    expect(parseMap('http://example.org/?a=b=dir')).toEqual({ prefix: 'http://example.org/?a=b', dir: 'dir', rule: 'segments' });
  });
});

describe('PathClaims', () => {
  it('gives a case-only clash an alternate path', () => {
    const claims = new PathClaims();
    expect(claims.claim('h/Readme', 'u1')).toBe('h/Readme');
    expect(claims.claim('h/README', 'u2')).toBe('h/README%~2');
    expect(claims.claim('h/readme', 'u3')).toBe('h/readme%~3');
    expect(claims.claim('h/Readme', 'u1')).toBe('h/Readme');
    expect(caseKey('h/README%~2')).not.toBe(caseKey('h/readme%~3'));
  });

  it('folds case and Unicode normalization alike, ASCII or not', () => {
    expect(caseKey('h/Cafe\u0301/ÉTÉ')).toBe(caseKey('h/café/été'));
    expect(caseKey('h/Café')).toBe('h/café');
    expect(caseKey('H/Plain.TXT')).toBe('h/plain.txt');
    // One name to NTFS (upper case) or APFS (case folding), though lower case keeps them apart.
    for (const [a, b] of [['h/λόγος', 'h/λόγοσ'], ['h/ſ', 'h/s'], ['h/µ', 'h/μ'], ['h/kılıç', 'h/KILIÇ']]) expect(caseKey(a!), a).toBe(caseKey(b!));
  });

  it('resolves a URI that is a file where another needs a folder, either way round', () => {
    const claims = new PathClaims();
    expect(claims.claim('h/a', 'http://h/a')).toBe('h/a');
    expect(claims.claim('h/a/b', 'http://h/a/b')).toBe('h/a%dir/b');
    expect(claims.claim('h/a/c', 'http://h/a/c')).toBe('h/a%dir/c');
    const other = new PathClaims();
    expect(other.claim('h/x/y', 'http://h/x/y')).toBe('h/x/y');
    expect(other.claim('h/x', 'http://h/x')).toBe('h/x%file');
    expect(other.claim('h/X', 'http://h/X')).toBe('h/X%file%~2');
  });

  it('frees a removed path', () => {
    const claims = new PathClaims();
    claims.claim('h/a/b', 'u1');
    claims.remove('h/a/b');
    expect(claims.claim('h/a', 'u2')).toBe('h/a');
    expect(claims.holder('h/a')).toBe('u2');
    expect(claims.size).toBe(1);
    // The folder `h/a` was worked out once for `h/a/b`; now a file holds its name, so its files go elsewhere.
    expect(claims.claim('h/a/c', 'u3')).toBe('h/a%dir/c');
  });

  it('keeps finding clashes in a folder it has already worked out, for every file in it', () => {
    const claims = new PathClaims();
    expect(claims.claim('h/d/x', 'http://h/d/x')).toBe('h/d/x');
    expect(claims.claim('h/d/y', 'http://h/d/y')).toBe('h/d/y');
    expect(claims.claim('h/d', 'http://h/d')).toBe('h/d%file');
    expect(claims.claim('h/d/X', 'http://h/d/X')).toBe('h/d/X%~0000002');
    expect(claims.claim('h/D/z', 'http://h/D/z')).toBe('h/D/z');
    expect(claims.claim('h/d/x', 'http://h/d/x')).toBe('h/d/x');
    expect(claims.claim('h/d/x/deeper', 'http://h/d/x/deeper')).toBe('h/d/x%dir/deeper');
    expect(claims.claim('h/d/x/other', 'http://h/d/x/other')).toBe('h/d/x%dir/other');
  });
});

describe('PathClaims over a mirror inventory (looked up, not loaded)', () => {
  const row = (uri: string, path: string): InventoryRow => ({
    uri,
    path,
    length: 1,
    digests: {},
    lastmod: null,
    etag: null,
    lastModified: null,
    type: null,
    status: 'verified',
    verifiedAt: null,
    runId: 1,
  });

  function inventory(rows: [string, string][]): MirrorState {
    const state = new MirrorState(join(mkdtempSync(join(tmpdir(), 'claims-')), '.resourcesync'));
    state.transaction(() => rows.forEach(([uri, path]) => state.put(row(uri, path))));
    return state;
  }

  it('keeps clear of what the inventory holds: case clashes, files and folders either way round', () => {
    const state = inventory([
      ['http://h/Readme', 'h/Readme'],
      ['http://h/a', 'h/a'],
      ['http://h/x/y', 'h/x/y'],
    ]);
    try {
      const claims = new PathClaims(state);
      expect(claims.claim('h/Readme', 'http://h/Readme')).toBe('h/Readme');
      expect(claims.claim('h/README', 'http://h/README')).toBe('h/README%~2');
      expect(claims.claim('h/a/b', 'http://h/a/b')).toBe('h/a%dir/b');
      expect(claims.claim('h/X', 'http://h/X')).toBe('h/X%file');
      expect(claims.claim('h/free', 'http://h/free')).toBe('h/free');
      expect(claims.holder('h/Readme')).toBe('http://h/Readme');
      expect(claims.holder('h/a%dir/b')).toBe('http://h/a/b');
      expect(claims.size).toBe(4);
    } finally {
      state.close();
    }
  });

  it('frees an inventory path removed in this run', () => {
    const state = inventory([['http://h/a/b', 'h/a/b']]);
    try {
      const claims = new PathClaims(state);
      claims.remove('h/a/b');
      expect(claims.holder('h/a/b')).toBeUndefined();
      expect(claims.claim('h/a/B', 'http://h/a/B')).toBe('h/a/B');
    } finally {
      state.close();
    }
  });

  it('the migration fills the case-folded key of rows written before it', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'claims-')), '.resourcesync');
    mkdirSync(dir);
    const db = new DatabaseSync(join(dir, STATE_FILE));
    MIRROR_MIGRATIONS[0]!(db);
    db.exec('PRAGMA user_version = 1');
    db.prepare("INSERT INTO inventory (uri, path, status) VALUES ('http://h/%C3%84', 'h/\u00c4', 'verified')").run();
    db.close();
    const state = new MirrorState(dir);
    try {
      expect(state.fileByKey('h/\u00e4')).toEqual({ uri: 'http://h/%C3%84', path: 'h/\u00c4' });
      expect(state.hasUnder('h')).toBe(true);
      expect(state.hasUnder('h/\u00e4')).toBe(false);
    } finally {
      state.close();
    }
  });

  it('gives names a case-insensitive file system takes for one, though lower case keeps them apart, alternate paths', () => {
    const claims = new PathClaims();
    expect(claims.claim('h/λόγος', 'http://h/%CE%BB%CF%8C%CE%B3%CE%BF%CF%82')).toBe('h/λόγος');
    expect(claims.claim('h/λόγοσ', 'http://h/%CE%BB%CF%8C%CE%B3%CE%BF%CF%83')).toBe('h/λόγοσ%~2');
    const state = inventory([['http://h/%C5%BF', 'h/ſ']]);
    try {
      expect(new PathClaims(state).claim('h/s', 'http://h/s')).toBe('h/s%~0000002');
    } finally {
      state.close();
    }
  });

  it('the migration works out anew the key of paths that are not ASCII (migration 12)', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'claims-')), '.resourcesync');
    mkdirSync(dir);
    const db = new DatabaseSync(join(dir, STATE_FILE));
    for (const migration of MIRROR_MIGRATIONS.slice(0, 11)) migration(db);
    db.exec('PRAGMA user_version = 11');
    // The keys as lower case alone wrote them.
    const row = db.prepare("INSERT INTO inventory (uri, path, path_key, status) VALUES (?, ?, ?, 'verified')");
    row.run('http://h/%CF%82', 'h/\u03c2', 'h/\u03c2');
    row.run('http://h/A', 'h/A', 'h/a');
    db.close();
    const state = new MirrorState(dir);
    try {
      expect(state.fileByKey(caseKey('h/\u03c3'))).toEqual({ uri: 'http://h/%CF%82', path: 'h/\u03c2' });
      expect(state.fileByKey('h/a')).toEqual({ uri: 'http://h/A', path: 'h/A' });
    } finally {
      state.close();
    }
  });
});


describe('LocalPaths.inMappedFolder', () => {
  it("holds the paths of the Source's host folder, a map's folder, an allowed host's; no others", () => {
    const lp = paths({ maps: [{ prefix: 'http://example.org/a/', dir: 'mapped/a' }], allowHosts: ['other.net', 'third.net:8080'] });
    for (const uri of ['http://example.org/x', 'http://example.org/a/b', 'http://other.net/x', 'http://other.net:81/x', 'http://third.net:8080/x']) {
      expect(lp.inMappedFolder(path(uri, lp)), uri).toBe(true);
    }
    for (const rel of ['notes.txt', 'example.org', 'mapped/other', 'mapped/a', 'other.net_x/y', 'third.net_81/x', 'example.org_80/x']) expect(lp.inMappedFolder(rel), rel).toBe(false);
    expect(paths({ maps: [{ prefix: 'http://example.org/', dir: '.' }] }).inMappedFolder('notes.txt')).toBe(true);
    expect(paths({ allowHosts: ['*'] }).inMappedFolder('notes.txt')).toBe(true);
  });
});
