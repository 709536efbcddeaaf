// A local file the audit cannot read (a read error of the disk, a file made unreadable meanwhile) is a difference of
// its own, marked damaged for the next sync to fetch again, and not the end of the audit.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { audit } from './audit.ts';
import { MirrorState, stateDirOf } from './state.ts';
import { sync } from './sync.ts';

/** Files whose reading fails as a bad sector's would. */
const unreadable = new Set<string>();

vi.mock('./fixity.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('./fixity.ts')>();
  return {
    ...original,
    meterFile: (path: string, ...rest: Parameters<typeof original.meterFile> extends [string, ...infer R] ? R : never) =>
      unreadable.has(path) ? Promise.reject(Object.assign(new Error(`EIO: i/o error, read`), { code: 'EIO' })) : original.meterFile(path, ...rest),
  };
});

/** Folders whose listing fails as one without permission does. */
const unlistable = new Set<string>();
/** Folders whose listing fails after their first entry, as on a read error of the disk. */
const cutShort = new Set<string>();

vi.mock('node:fs', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:fs')>();
  const opendirSync = ((path: string, ...rest: unknown[]) => {
    if (unlistable.has(String(path))) throw Object.assign(new Error(`EACCES: permission denied, opendir '${path}'`), { code: 'EACCES' });
    const dir = (original.opendirSync as (...args: unknown[]) => import('node:fs').Dir)(path, ...rest);
    if (!cutShort.has(String(path))) return dir;
    let read = 0;
    const readSync = dir.readSync.bind(dir);
    return Object.assign(dir, {
      readSync: () => {
        if (read++ === 1) throw Object.assign(new Error(`EIO: i/o error, readdir '${path}'`), { code: 'EIO' });
        return readSync();
      },
    });
  }) as typeof original.opendirSync;
  return { ...original, default: { ...original, opendirSync }, opendirSync };
});

let fixture: FixtureSource;
let dest: string;
beforeEach(async () => {
  fixture = await startFixtureSource({ resources: 5, changeListSize: 2 });
  dest = mkdtempSync(join(tmpdir(), 'audit-unreadable-'));
  unreadable.clear();
  unlistable.clear();
  cutShort.clear();
});
afterEach(async () => {
  await fixture.close();
});

describe('audit --rehash of a file that cannot be read', () => {
  it('reports it changed, marks it damaged, and compares every other file', async () => {
    await sync({ url: fixture.url + fixture.paths.dataset1.capabilityList, dest, timeoutMs: 2_000 });
    const host = new URL(fixture.url).host.replace(':', '_');
    unreadable.add(join(dest, host, ...fixture.state.pathOf(2).split('/').filter(Boolean)));
    const report = await audit({ dest, rehash: true, timeoutMs: 2_000 });
    expect(report.changed).toEqual([{ uri: fixture.state.locOf(2), reason: 'the local copy cannot be read (EIO: i/o error, read); the next sync fetches it again' }]);
    expect(report.inSyncCount).toBe(fixture.state.live().length - 1);
    const state = new MirrorState(stateDirOf(dest));
    try {
      expect(state.get(fixture.state.locOf(2))?.status).toBe('damaged');
      expect(state.runs().at(-1)).toMatchObject({ kind: 'audit', status: 'completed' });
    } finally {
      state.close();
    }
  });
});

describe('an audit with a folder it cannot list', () => {
  it('says so in a note, and compares all the rest', async () => {
    await sync({ url: fixture.url + fixture.paths.dataset1.capabilityList, dest, timeoutMs: 2_000 });
    const theirs = join(dest, 'theirs');
    mkdirSync(theirs);
    unlistable.add(theirs);
    const report = await audit({ dest, timeoutMs: 2_000 });
    expect(report).toMatchObject({ inSync: true, inSyncCount: fixture.state.live().length, extra: [] });
    expect(report.notes).toEqual([
      "1 folder in the mirror could not be read, so files in it that no listed resource maps to are not known (the first: theirs (EACCES: permission denied, opendir '" + theirs + "')).",
    ]);
  });

  it('a folder whose listing fails part way: what was read of it is compared, and the note says the rest is not known', async () => {
    await sync({ url: fixture.url + fixture.paths.dataset1.capabilityList, dest, timeoutMs: 2_000 });
    const host = new URL(fixture.url).host.replace(':', '_');
    // In the host's folder, so a file no listed resource maps to is extra.
    const folder = join(dest, host, 'stray');
    mkdirSync(folder);
    for (const name of ['a', 'b', 'c']) writeFileSync(join(folder, name), name);
    cutShort.add(folder);
    const report = await audit({ dest, timeoutMs: 2_000 });
    expect(report.inSyncCount).toBe(fixture.state.live().length);
    // Its first entry only: the listing failed at the second.
    expect(report.extra).toHaveLength(1);
    expect(report.extra[0]).toMatch(new RegExp(`^${host}/stray/[abc]$`));
    expect(report.notes).toEqual([
      `1 folder in the mirror could not be read, so files in it that no listed resource maps to are not known (the first: ${host}/stray (EIO: i/o error, readdir '${folder}')).`,
    ]);
  });
});
