// A symbolic link inside the mirror's folder (put there by a person or another program) does not carry the mirror's
// writes, moves or deletions out of the folder.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { audit } from './audit.ts';
import { sync, type SyncOptions } from './sync.ts';
import { readFolder } from './folder.ts';
import { retryStanding } from './retry.ts';
import { checkFolders, OutsideFolderError, storedPathProblem } from './within-folder.ts';

let fixture: FixtureSource;
let root: string;
beforeEach(async () => {
  fixture = await startFixtureSource({ resources: 6, changeListSize: 2 });
  root = mkdtempSync(join(tmpdir(), 'within-'));
});
afterEach(async () => {
  await fixture.close();
});

const host = () => new URL(fixture.url).host.replace(':', '_');
const run = (dest: string, options: Partial<SyncOptions> = {}) =>
  sync({ url: fixture.url + fixture.paths.dataset1.capabilityList, dest, timeoutMs: 5_000, proxyEnv: {}, ...options });

describe('a symbolic link inside the mirror', () => {
  it('is not written through: the resources under it fail, saying why, and nothing lands outside', async () => {
    const dest = join(root, 'm');
    const outside = join(root, 'outside');
    mkdirSync(join(dest, host()), { recursive: true });
    mkdirSync(outside);
    symlinkSync(outside, join(dest, host(), 'dataset1'));
    const result = await run(dest);
    expect(result.created).toBe(0);
    expect(result.failed).toBe(6);
    expect(result.failures[0]!.reason).toMatch(/dataset1 is a symbolic link; the mirror does not write or delete through links/);
    expect(readdirSync(outside)).toEqual([]);
  });

  it('is not deleted through', async () => {
    const dest = join(root, 'm');
    expect(await run(dest)).toMatchObject({ mode: 'baseline', failed: 0 });
    // The files move outside, and a link takes their folder's place.
    const folder = join(dest, host(), 'dataset1', 'res');
    const outside = join(root, 'outside');
    cpSync(folder, outside, { recursive: true });
    renameSync(folder, join(root, 'moved'));
    symlinkSync(outside, folder);
    const [gone] = fixture.change('delete', 1);
    const result = await run(dest, { deletePolicy: 'delete' });
    expect(result).toMatchObject({ mode: 'incremental', deleted: 0, failed: 1 });
    expect(result.failures[0]!.reason).toMatch(/^could not be deleted: .* is a symbolic link/);
    expect(existsSync(join(outside, ...fixture.state.pathOf(gone!.id).split('/').slice(-1)))).toBe(true);
  });

  it('checkFolders: real folders pass (and missing ones), links and files on the way do not', () => {
    mkdirSync(join(root, 'a', 'b'), { recursive: true });
    expect(() => checkFolders(root, join(root, 'a', 'b', 'c'))).not.toThrow();
    writeFileSync(join(root, 'a', 'f'), 'x');
    expect(() => checkFolders(root, join(root, 'a', 'f', 'g'))).toThrow(/is a file where the mirror needs a folder/);
    symlinkSync(join(root, 'a'), join(root, 'l'));
    expect(() => checkFolders(root, join(root, 'l', 'b'))).toThrow(OutsideFolderError);
    expect(() => checkFolders(root, join(root, '..', 'elsewhere'))).toThrow(/not inside the mirror's folder/);
    // A name that merely begins with two dots is inside.
    mkdirSync(join(root, '..data'));
    expect(() => checkFolders(root, join(root, '..data', 'x'))).not.toThrow();
  });
});

describe('a path in the mirror\'s state that leads out of its folder (the state edited, or handed over so)', () => {
  /** A baseline whose every row is pointed at a copy of its file outside the mirror; returns those copies. */
  async function pointedOutside(dest: string): Promise<{ outside: string; uris: string[] }> {
    expect(await run(dest)).toMatchObject({ mode: 'baseline', failed: 0 });
    const outside = join(root, 'outside');
    mkdirSync(outside);
    const db = new DatabaseSync(join(dest, '.resourcesync', 'state.sqlite'));
    const rows = db.prepare('SELECT uri, path FROM inventory ORDER BY uri').all() as { uri: string; path: string }[];
    rows.forEach((r, i) => {
      cpSync(join(dest, ...r.path.split('/')), join(outside, String(i)));
      db.prepare('UPDATE inventory SET path = ? WHERE uri = ?').run(`../outside/${i}`, r.uri);
    });
    db.close();
    return { outside, uris: rows.map((r) => r.uri) };
  }

  it('is not read by an audit: each such resource is changed, saying why', async () => {
    const dest = join(root, 'm');
    const { uris } = await pointedOutside(dest);
    for (const rehash of [true, false]) {
      const report = await audit({ dest, rehash, proxyEnv: {}, timeoutMs: 5_000 });
      // (The copies outside are byte for byte the resources: read, they made each one in sync.)
      expect(report.inSyncCount).toBe(0);
      expect(report.changed.map((c) => c.uri).sort()).toEqual(uris);
      expect(report.changed[0]!.reason).toMatch(/^the mirror's state records its path as "\.\.\/outside\/0", which leads out of the mirror's folder/);
    }
  });

  it('is not written, deleted or read by a sync: the resources fail, saying why, and the files outside stay as they were', async () => {
    const dest = join(root, 'm');
    const { outside } = await pointedOutside(dest);
    const before = readdirSync(outside).map((n) => readFileSync(join(outside, n)));
    fixture.change('update', 1);
    fixture.change('delete', 1);
    const result = await run(dest, { deletePolicy: 'delete' });
    expect(result).toMatchObject({ mode: 'incremental', updated: 0, deleted: 0, failed: 2 });
    const reasons = result.failures.map((f) => f.reason).sort();
    expect(reasons[0]).toMatch(/^could not be deleted: the mirror's state records its path as "\.\.\/outside\/\d", which leads out/);
    expect(reasons[1]).toMatch(/^the mirror's state records its path as "\.\.\/outside\/\d", which leads out/);
    expect(readdirSync(outside).map((n) => readFileSync(join(outside, n)))).toEqual(before);
  });

  it('storedPathProblem: what local-path.ts makes passes; empty, `.` and `..` segments, backslashes and NULs do not', () => {
    for (const ok of ['h/a/b.txt', 'h/.hidden', 'h/x..y', 'h/...', '127.0.0.1_80/%2E%2E']) expect(storedPathProblem(ok)).toBeNull();
    for (const bad of ['', '.', '..', '../x', 'a/../../x', '/etc/passwd', 'a//b', 'a/', 'a/./b', 'a\\..\\..\\x', 'a\0b']) {
      expect(storedPathProblem(bad)).toMatch(/leads out of the mirror's folder/);
    }
  });
});

describe('a mirror whose state folder is a symbolic link', () => {
  it('is not opened: sync, audit, retry and reading its status say why, and nothing is written where the link points', async () => {
    const dest = join(root, 'm');
    expect(await run(dest)).toMatchObject({ mode: 'baseline', failed: 0 });
    const elsewhere = join(root, 'elsewhere');
    renameSync(join(dest, '.resourcesync'), elsewhere);
    symlinkSync(elsewhere, join(dest, '.resourcesync'));
    const before = readdirSync(elsewhere).sort();
    const said = /state folder .*\.resourcesync is a symbolic link; the mirror keeps its state inside its own folder/;
    fixture.change('update', 2);
    await expect(run(dest)).rejects.toThrow(said);
    await expect(audit({ dest, rehash: true, proxyEnv: {}, timeoutMs: 5_000 })).rejects.toThrow(said);
    await expect(retryStanding({ dest, proxyEnv: {}, timeoutMs: 5_000 })).rejects.toThrow(said);
    expect(() => readFolder(dest)).toThrow(said);
    expect(readdirSync(elsewhere).sort()).toEqual(before);
  });
});
