// A mirror made before 8.3-shaped names (`PROGRA~1`) and the code points HFS+ ignores were escaped: the next sync
// moves its files to the names a new mirror gives them, a kill at any step leaving what the sync after finishes.
import { createHash } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { audit } from './audit.ts';
import { caseKey, LocalPaths, PathClaims } from './local-path.ts';
import { completePathMoves, respelledPath } from './respell.ts';
import { MIRROR_MIGRATIONS, MirrorState, STATE_FILE, stateDirOf } from './state.ts';
import { sync } from './sync.ts';

const md5 = (s: string) => createHash('md5').update(s).digest('hex');
const ZWNJ = '\u200c';

describe('respelledPath', () => {
  it('spells an older path as local-path.ts spells the same URI now', () => {
    const cases: [string, string][] = [
      ['h/PROGRA~1/x.txt', 'h/PROGRA%7E1/x.txt'],
      ['h/abcdef~2.txt', 'h/abcdef%7E2.txt'],
      [`h/a${ZWNJ}b`, 'h/a%E2%80%8Cb'],
      [`h/x/a\ufeffb${ZWNJ}`, 'h/x/a%EF%BB%BFb%E2%80%8C'],
      // Case-clash alternates: a short one takes 7 digits, after its name is respelled.
      ['h/abcde%~2', 'h/abcde%~0000002'],
      ['h/A~1%~2', 'h/A%7E1%~0000002'],
      // The same names with what local-path.ts adds after them: a query, `%file`, `%dir`, an alternate.
      ['h/PROGRA~1%dir/x.txt', 'h/PROGRA%7E1%dir/x.txt'],
      ['h/PROGRA~1%file', 'h/PROGRA%7E1%file'],
      ['h/A~1%file%~2', 'h/A%7E1%file%~2'],
      ['h/PROGRA~1%qa=1', 'h/PROGRA%7E1%qa=1'],
      ['h/PROGRA~1%q%25~1', 'h/PROGRA%7E1%q%25~1'],
      // Shaped like a short name only with its query; `ı` and `ſ`, which NTFS upper-cases to ASCII.
      ['h/x%q~1', 'h/x%q%7E1'],
      ['h/%index%q~1', 'h/%index%q~1'],
      ['h/\u0131nstal~1/\u017fetup~1.exe', 'h/\u0131nstal%7E1/\u017fetup%7E1.exe'],
      // Nothing to do: not shaped like a short name, a long alternate, a shortened name's hash.
      ['h/~user/readme~1.markdown', 'h/~user/readme~1.markdown'],
      ['h/long-name%~2', 'h/long-name%~2'],
      ['h/abc%~0123456789abcdef.txt', 'h/abc%~0123456789abcdef.txt'],
    ];
    for (const [old, now] of cases) expect(respelledPath(old), old).toBe(now);
    // Respelling is done once: a name spelled as now stays.
    for (const [, now] of cases) expect(respelledPath(now), now).toBe(now);
    // As a new mirror places a file and a folder of one name, and a query.
    const claims = new PathClaims();
    const lp = new LocalPaths({ sourceUrl: 'http://h/' });
    const placed = (uri: string) => {
      const mapped = lp.map(uri);
      return mapped.ok ? claims.claim(mapped.path, uri) : mapped.reason;
    };
    expect(placed('http://h/PROGRA~1')).toBe(respelledPath('h/PROGRA~1'));
    expect(placed('http://h/PROGRA~1/x.txt')).toBe(respelledPath('h/PROGRA~1%dir/x.txt'));
    expect(placed('http://h/x?~1')).toBe(respelledPath('h/x%q~1'));
    const paths = new LocalPaths({ sourceUrl: 'http://h/' });
    for (const uri of ['http://h/PROGRA~1/x.txt', `http://h/a${encodeURIComponent(ZWNJ)}b`]) {
      const mapped = paths.map(uri);
      expect(mapped.ok && mapped.path, uri).toBe(respelledPath(uri === 'http://h/PROGRA~1/x.txt' ? 'h/PROGRA~1/x.txt' : `h/a${ZWNJ}b`));
    }
  });
});

describe('a mirror made before', () => {
  let server: Server;
  afterEach(() => new Promise<void>((r) => server.close(() => r())));

  const bodies = new Map([
    ['/PROGRA~1/x.txt', 'x\n'],
    ['/PROGRA~1/y.txt', 'y\n'],
    [`/a${encodeURIComponent(ZWNJ)}b`, 'a-zwnj-b\n'],
    ['/ab', 'ab\n'],
  ]);
  let fetched: string[] = [];

  async function source(): Promise<string> {
    const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
    server = createServer((req, res) => {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const path = req.url ?? '/';
      if (path === '/rl.xml') {
        const urls = [...bodies].map(([p, b]) => `<url><loc>${base}${p}</loc><rs:md hash="md5:${md5(b)}" length="${b.length}"/></url>`);
        return void res.writeHead(200, { 'content-type': 'application/xml' }).end(`<urlset ${ns}><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>${urls.join('')}</urlset>`);
      }
      const body = bodies.get(path);
      if (body === undefined) return void res.writeHead(404).end();
      fetched.push(path);
      res.end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** A mirror of the Source as an older version left it: its files and rows under the old names, its state at 15. */
  async function olderMirror(base: string): Promise<{ dest: string; host: string }> {
    const dest = mkdtempSync(join(tmpdir(), 'respell-'));
    expect(await sync({ url: `${base}/rl.xml`, dest, timeoutMs: 5_000, proxyEnv: {} })).toMatchObject({ created: 4, failed: 0 });
    const host = `127.0.0.1_${new URL(base).port}`;
    const db = new DatabaseSync(join(stateDirOf(dest), STATE_FILE));
    const setPath = db.prepare('UPDATE inventory SET path = ?, path_key = ? WHERE path = ?');
    for (const [now, old] of [
      ['PROGRA%7E1/x.txt', 'PROGRA~1/x.txt'],
      ['PROGRA%7E1/y.txt', 'PROGRA~1/y.txt'],
      ['a%E2%80%8Cb', `a${ZWNJ}b`],
    ]) {
      mkdirSync(dirname(join(dest, host, old!)), { recursive: true });
      renameSync(join(dest, host, now!), join(dest, host, old!));
      setPath.run(`${host}/${old}`, caseKey(`${host}/${old}`), `${host}/${now}`);
    }
    rmdirSync(join(dest, host, 'PROGRA%7E1'));
    // The state as it was before the migration that plans the moves.
    const planning = MIRROR_MIGRATIONS.findIndex((m) => m.toString().includes('planPathMoves'));
    db.exec(`DROP TABLE path_moves; PRAGMA user_version = ${planning}`);
    db.close();
    return { dest, host };
  }

  it("has its files moved by the next sync to the names a new mirror gives them, nothing fetched again, and says so", async () => {
    const base = await source();
    const { dest, host } = await olderMirror(base);
    expect(readdirSync(join(dest, host)).sort()).toEqual(['PROGRA~1', 'ab', `a${ZWNJ}b`]);
    // Opening the state (as the app does to show it) plans the moves; nothing moves yet.
    const state = new MirrorState(stateDirOf(dest));
    expect(state.db.prepare('SELECT count(*) AS n FROM path_moves').get()).toEqual({ n: 3 });
    state.close();
    expect(readdirSync(join(dest, host)).sort()).toEqual(['PROGRA~1', 'ab', `a${ZWNJ}b`]);

    fetched = [];
    const notes: string[] = [];
    expect(await sync({ dest, mode: 'baseline', timeoutMs: 5_000, proxyEnv: {}, onNote: (n) => void notes.push(n) })).toMatchObject({ failed: 0 });
    expect(notes.join('\n')).toMatch(/3 files were given the name this version gives them: a name shaped like a Windows short name \(PROGRA~1\) has its ~ written %7E/);
    expect(fetched).toEqual([]);
    expect(readdirSync(join(dest, host)).sort()).toEqual(['PROGRA%7E1', 'a%E2%80%8Cb', 'ab']);
    expect(readFileSync(join(dest, host, 'PROGRA%7E1', 'y.txt'), 'utf8')).toBe('y\n');
    const after = new MirrorState(stateDirOf(dest));
    expect([...after.rows()].map((r) => r.path).sort()).toEqual([`${host}/PROGRA%7E1/x.txt`, `${host}/PROGRA%7E1/y.txt`, `${host}/a%E2%80%8Cb`, `${host}/ab`]);
    expect(after.db.prepare('SELECT count(*) AS n FROM path_moves').get()).toEqual({ n: 0 });
    after.close();
    expect((await audit({ dest, proxyEnv: {} })).inSync).toBe(true);
  });

  it('finishes after a kill at any step, and writes over no file that holds a new name already', async () => {
    const base = await source();
    const { dest, host } = await olderMirror(base);
    const state = new MirrorState(stateDirOf(dest));
    const at = (p: string) => join(dest, host, p);
    // x.txt killed after its link, before its old name went; y.txt after both, before its row was told;
    // a<ZWNJ>b: a person's own file sits under its new name.
    state.db.exec("UPDATE path_moves SET stage = 'moving'");
    mkdirSync(at('PROGRA%7E1'));
    linkSync(at('PROGRA~1/x.txt'), at('PROGRA%7E1/x.txt'));
    renameSync(at('PROGRA~1/y.txt'), at('PROGRA%7E1/y.txt'));
    state.db.exec(`UPDATE path_moves SET stage = NULL WHERE to_path LIKE '%a\\%E2%' ESCAPE '\\'`);
    writeFileSync(at('a%E2%80%8Cb'), 'mine\n');
    const notes: string[] = [];
    const moves = await completePathMoves(state.db, dest, (n) => void notes.push(n));
    expect(moves).toMatchObject({ moved: 2, kept: 1 });
    expect(notes[1]).toMatch(/^1 file keeps an older name, since nothing is written over: .*a.b: a file is there already under its new name/);
    expect(readFileSync(at('a%E2%80%8Cb'), 'utf8')).toBe('mine\n');
    expect(readFileSync(at(`a${ZWNJ}b`), 'utf8')).toBe('a-zwnj-b\n');
    expect(existsSync(at('PROGRA~1'))).toBe(false);
    expect(readFileSync(at('PROGRA%7E1/x.txt'), 'utf8')).toBe('x\n');
    expect(state.get(`${base}/PROGRA~1/x.txt`)!.path).toBe(`${host}/PROGRA%7E1/x.txt`);
    expect(state.get(`${base}/a%E2%80%8Cb`)!.path).toBe(`${host}/a${ZWNJ}b`);
    expect(state.db.prepare('SELECT count(*) AS n FROM path_moves').get()).toEqual({ n: 0 });
    state.close();
  });
});

describe('a mirror whose moves were planned by migration 16', () => {
  it('has the names spelled otherwise since planned again, a move begun finished and then moved on', async () => {
    const dest = mkdtempSync(join(tmpdir(), 'respell17-'));
    mkdirSync(stateDirOf(dest), { recursive: true });
    const state = new MirrorState(stateDirOf(dest));
    const put = state.db.prepare("INSERT INTO inventory (uri, path, path_key, status) VALUES (?, ?, ?, 'verified')");
    const plan = state.db.prepare('INSERT INTO path_moves (uri, from_path, to_path, stage) VALUES (?, ?, ?, ?)');
    const files: [string, string, string | null, string | null][] = [
      // uri, path, what migration 16 planned and whether its move began
      ['http://h/PROGRA~1/x.txt', 'h/PROGRA~1%dir/x.txt', null, null],
      ['http://h/PROGRA~1/ABC~1', 'h/PROGRA~1%dir/ABC~1', 'h/PROGRA~1%dir/ABC%7E1', 'moving'],
      ['http://h/PROGRA~1/DEF~1', 'h/PROGRA~1%dir/DEF~1', 'h/PROGRA~1%dir/DEF%7E1', null],
      ['http://h/x?~1', 'h/x%q~1', null, null],
      ['http://h/%C4%B1nstal~1', 'h/\u0131nstal~1', null, null],
      ['http://h/plain', 'h/plain', null, null],
    ];
    for (const [uri, path, to, stage] of files) {
      put.run(uri, path, caseKey(path));
      mkdirSync(dirname(join(dest, path)), { recursive: true });
      writeFileSync(join(dest, path), `${uri}\n`);
      if (to !== null) plan.run(uri, path, to, stage);
    }
    state.db.exec(`PRAGMA user_version = ${MIRROR_MIGRATIONS.length - 1}`);
    state.close();

    const opened = new MirrorState(stateDirOf(dest));
    const planned = opened.db.prepare('SELECT uri, to_path AS "to", stage FROM path_moves ORDER BY uri').all();
    expect(planned).toEqual([
      { uri: 'http://h/%C4%B1nstal~1', to: 'h/\u0131nstal%7E1', stage: null },
      { uri: 'http://h/PROGRA~1/ABC~1', to: 'h/PROGRA~1%dir/ABC%7E1', stage: 'moving' },
      { uri: 'http://h/PROGRA~1/DEF~1', to: 'h/PROGRA%7E1%dir/DEF%7E1', stage: null },
      { uri: 'http://h/PROGRA~1/x.txt', to: 'h/PROGRA%7E1%dir/x.txt', stage: null },
      { uri: 'http://h/x?~1', to: 'h/x%q%7E1', stage: null },
    ]);
    const moves = await completePathMoves(opened.db, dest);
    expect(moves).toMatchObject({ moved: 5, kept: 0 });
    for (const [uri, path] of files) {
      const now = opened.get(uri)!.path;
      expect(now, uri).toBe(respelledPath(path));
      expect(readFileSync(join(dest, now), 'utf8')).toBe(`${uri}\n`);
    }
    expect(readdirSync(join(dest, 'h')).sort()).toEqual(['PROGRA%7E1%dir', 'plain', 'x%q%7E1', '\u0131nstal%7E1']);
    expect(opened.db.prepare('SELECT count(*) AS n FROM path_moves').get()).toEqual({ n: 0 });
    opened.close();
  });
});
