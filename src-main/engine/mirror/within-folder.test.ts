// A symbolic link inside the mirror's folder (put there by a person or another program) does not carry the mirror's
// writes, moves or deletions out of the folder.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { sync, type SyncOptions } from './sync.ts';
import { checkFolders, OutsideFolderError } from './within-folder.ts';

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
