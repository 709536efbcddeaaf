// What a sync makes of a folder: one Source per mirror (another is refused, as the app refuses it), nothing written by
// a dry run, and nothing left behind by a first sync that failed before it bound the folder to a Source.
import { existsSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { MirrorState, stateDirOf } from './state.ts';
import { sync } from './sync.ts';

let fixture: FixtureSource;
let root: string;

beforeEach(async () => {
  fixture = await startFixtureSource({ resources: 12, changeListSize: 5 });
  root = mkdtempSync(join(tmpdir(), 'binding-'));
});
afterEach(async () => {
  await fixture.close();
});

const url = (path: string) => fixture.url + path;
const bindingOf = (dest: string) => {
  const state = new MirrorState(stateDirOf(dest));
  try {
    return state.binding();
  } finally {
    state.close();
  }
};

describe('one Source per mirror', () => {
  it('refuses another Capability List in a mirror of one, dry run or not, and keeps the binding', async () => {
    const dest = join(root, 'm');
    await sync({ url: url(fixture.paths.dataset1.capabilityList), dest, timeoutMs: 2_000 });
    const before = bindingOf(dest);
    for (const dryRun of [true, false]) {
      await expect(sync({ url: url(fixture.paths.dataset2.capabilityList), dest, dryRun, timeoutMs: 2_000 })).rejects.toThrow(
        `${dest} is a mirror of ${url(fixture.paths.dataset1.capabilityList)} already, and ${url(fixture.paths.dataset2.capabilityList)} leads to ${url(fixture.paths.dataset2.capabilityList)}. Choose another folder for it.`,
      );
    }
    expect(bindingOf(dest)).toEqual(before);
    // The next sync by the folder alone goes on with the first Source.
    const next = await sync({ dest, timeoutMs: 2_000 });
    expect(next.mode).toBe('incremental');
  });

  it('takes another URL of the same Source (its site instead of its Capability List)', async () => {
    const dest = join(root, 'm');
    await sync({ url: url(fixture.paths.dataset1.capabilityList), dest, timeoutMs: 2_000 });
    const result = await sync({ url: url(fixture.paths.dataset1.resourceList), dest, mode: 'baseline', timeoutMs: 2_000 });
    expect(result.failed).toBe(0);
    expect(bindingOf(dest)?.capabilityListUrl).toBe(url(fixture.paths.dataset1.capabilityList));
  });
});

describe('a folder that is not a mirror yet', () => {
  it('a dry run writes nothing: a new folder is not made, an empty one stays empty', async () => {
    const missing = join(root, 'new');
    const result = await sync({ url: url(fixture.paths.dataset1.capabilityList), dest: missing, dryRun: true, timeoutMs: 2_000 });
    expect(result.created).toBe(12);
    expect(existsSync(missing)).toBe(false);
    const empty = join(root, 'empty');
    mkdirSync(empty);
    await sync({ url: url(fixture.paths.dataset1.capabilityList), dest: empty, dryRun: true, timeoutMs: 2_000 });
    expect(readdirSync(empty)).toEqual([]);
  });

  it('a first sync that fails before it finds the Source leaves no mirror behind', async () => {
    const dest = join(root, 'bad');
    // (The site offers two Capability Lists: the error says what the URL itself answered too.)
    await expect(sync({ url: url('/nowhere.xml'), dest, timeoutMs: 2_000 })).rejects.toThrow(
      new RegExp(`^${url('/nowhere.xml').replace(/[.?]/g, '\\$&')} answered 404 Not Found\\. The Source offers \\d+ Capability Lists; choose one with --capabilitylist:`),
    );
    expect(existsSync(dest)).toBe(false);
    const kept = join(root, 'kept');
    mkdirSync(kept);
    await expect(sync({ url: 'http://127.0.0.1:9/', dest: kept, timeoutMs: 1_000 })).rejects.toThrow();
    expect(readdirSync(kept)).toEqual([]);
  });

  it('a first sync that fails after it bound the folder keeps the mirror, to resume', async () => {
    const dest = join(root, 'm');
    fixture.setBroken(fixture.paths.dataset1.resourceList, { status: 500 });
    const result = await sync({ url: url(fixture.paths.dataset1.capabilityList), dest, mode: 'baseline', timeoutMs: 2_000 }).catch((e: Error) => e);
    expect(result).toBeInstanceOf(Error);
    expect(bindingOf(dest)?.capabilityListUrl).toBe(url(fixture.paths.dataset1.capabilityList));
  });
});

describe('a mirror of one list', () => {
  it('of a Change List: its first baseline comes from the Resource List beside it, then it follows the changes', async () => {
    const dest = join(root, 'm');
    const first = await sync({ url: url(fixture.paths.dataset1.changeListIndex), dest, timeoutMs: 2_000 });
    expect(first).toMatchObject({ mode: 'baseline', created: 12, failed: 0 });
    expect(bindingOf(dest)).toMatchObject({ changeListUrl: url(fixture.paths.dataset1.changeListIndex), resourceListUrl: url(fixture.paths.dataset1.resourceList) });
    fixture.change('update', 2);
    const next = await sync({ dest, timeoutMs: 2_000 });
    expect(next).toMatchObject({ mode: 'incremental', updated: 2, failed: 0 });
  });

  it('of a Resource List: says it follows that list alone, not that the Source offers no Change List', async () => {
    const dest = join(root, 'm');
    const list = url(fixture.paths.dataset1.resourceList);
    await sync({ url: list, dest, timeoutMs: 2_000 });
    const notes: string[] = [];
    await sync({ dest, timeoutMs: 2_000, onNote: (n) => notes.push(n) });
    expect(notes[0]).toBe(
      `This mirror follows the Resource List ${list} alone, without a Change List (mirror its Capability List ${url(fixture.paths.dataset1.capabilityList)} to follow the changes it offers): ` +
        'a new baseline is compared with the inventory instead. Only resources whose listed hash or length differ from the local copy are fetched (those the list gives neither for are asked for conditionally); what the Source no longer lists goes by the deletion policy.',
    );
  });
});
