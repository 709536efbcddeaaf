// A Change List Index (or Change Dump Index) whose list redirects back to the index, or to a list read before: a loop.
// Before, the index read as that list stopped the whole run ("… is not a Change List"). Now it is skipped with a note
// naming it, the other lists are applied, and the checkpoint stays before the skipped list's period (its changes may
// be missing), so the next sync asks for it again. Against the fixture Source, with the loop made on demand.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource, type FixtureSourceOptions } from '../../../e2e/fixture-source/index.ts';
import { audit } from './audit.ts';
import { readFolder } from './folder.ts';
import { sync, type SyncOptions } from './sync.ts';

let fixture: FixtureSource;
let dest: string;
let notes: string[];

async function start(options: FixtureSourceOptions = {}): Promise<void> {
  fixture = await startFixtureSource({ resources: 12, changeListSize: 4, ...options });
  dest = mkdtempSync(join(tmpdir(), 'list-loop-'));
  notes = [];
}
afterEach(async () => {
  await fixture.close();
});

const P = () => fixture.paths.dataset1;
const run = (options: Partial<SyncOptions> = {}) =>
  sync({ url: fixture.url + P().capabilityList, dest, timeoutMs: 5_000, proxyEnv: {}, onNote: (n) => void notes.push(n), ...options });
const fileOf = (id: number) => join(dest, new URL(fixture.url).host.replace(':', '_'), ...fixture.state.pathOf(id).split('/').filter(Boolean));
const inStep = (id: number) => {
  const r = fixture.state.resources.get(id)!;
  return existsSync(fileOf(id)) && readFileSync(fileOf(id)).equals(fixture.state.representation(id, r.version).body);
};
const iso = (s: string) => new Date(s).toISOString();

/**
 * A baseline, then twelve updates of resources 1–12: after the three Change Lists of the resources' creation, three
 * of four updates (lists 4 and 5 closed, 6 open), returned.
 */
async function baselineThenChanges() {
  expect(await run()).toMatchObject({ mode: 'baseline', failed: 0 });
  for (let id = 1; id <= 12; id++) fixture.change('update', 1, id);
  const lists = fixture.state.changeLists();
  expect(lists).toHaveLength(6);
  return lists.slice(3);
}

describe('a Change List Index whose list loops', () => {
  it('back to the index: that list is skipped and named, the others applied, the checkpoint kept before it; the next sync mends it', async () => {
    await start();
    const lists = await baselineThenChanges();
    fixture.setBroken(P().changeList(5), { status: 302, headers: { location: P().changeListIndex } });
    const result = await run();
    expect(result).toMatchObject({ mode: 'incremental', failed: 0, updated: 8 });
    expect(notes).toContain(
      `The Change List ${fixture.url}${P().changeList(5)}, named by the Change List Index ${fixture.url}${P().changeListIndex}, redirects back to the index or to a list already read, ` +
        'and was not read: the changes it lists may be missing, so the checkpoint stays before its period and the next sync asks again.',
    );
    // The first list's changes and the third's are in; the second's are not, and the checkpoint does not pass them.
    expect([1, 2, 3, 4, 9, 10, 11, 12].every(inStep)).toBe(true);
    expect([5, 6, 7, 8].some(inStep)).toBe(false);
    expect(result.checkpoint).toBe(iso(lists[1]!.from));
    expect(readFolder(dest)!.checkpoint?.at).toBe(iso(lists[1]!.from));

    fixture.setBroken(P().changeList(5), null);
    const next = await run();
    expect(next).toMatchObject({ mode: 'incremental', failed: 0 });
    expect(Array.from({ length: 12 }, (_, i) => i + 1).every(inStep)).toBe(true);
    expect(next.checkpoint).toBe(iso(lists[2]!.records.at(-1)!.datetime));
  });

  it('to a list read before: not read twice under another period; skipped and named the same way', async () => {
    await start();
    const lists = await baselineThenChanges();
    fixture.setBroken(P().changeList(6), { status: 301, headers: { location: P().changeList(4) } });
    const result = await run();
    expect(result).toMatchObject({ mode: 'incremental', failed: 0, updated: 8 });
    expect(notes.some((n) => n.startsWith(`The Change List ${fixture.url}${P().changeList(6)}, named by the Change List Index`))).toBe(true);
    expect([9, 10, 11, 12].some(inStep)).toBe(false);
    expect(result.checkpoint).toBe(iso(lists[2]!.from));
  });
});

describe('an audit over a Change List Index whose list loops', () => {
  it('says in its report which list it skipped and what that means, as a sync does', async () => {
    await start();
    await baselineThenChanges();
    expect(await run()).toMatchObject({ mode: 'incremental', failed: 0 });
    // The open list is the one an audit reads (the closed ones end before the Resource List's "at").
    fixture.setBroken(P().changeList(6), { status: 302, headers: { location: P().changeListIndex } });
    const report = await audit({ dest, timeoutMs: 5_000, proxyEnv: {} });
    expect(report.notes).toContain(
      `The Change List ${fixture.url}${P().changeList(6)}, named by the Change List Index ${fixture.url}${P().changeListIndex}, redirects back to the index or to a list already read, ` +
        'and was not read: the changes it lists may be missing, so the mirror is compared without its changes: resources it changed may show as changed, missing or extra.',
    );
    expect(fixture.requests.some((r) => r.path === P().changeList(6))).toBe(true);
  });
});

describe('a Change Dump Index whose Dump loops back to the index', () => {
  it('is named in the note, its packages are not read, and the Change List brings its changes', async () => {
    await start({ dumpIndexes: true, resources: 30, changeListSize: 20 });
    expect(await run({ useDumps: true })).toMatchObject({ mode: 'baseline', failed: 0 });
    for (let id = 1; id <= 25; id++) fixture.change('update', 1, id);
    fixture.setBroken(P().changeDumpChild(1), { status: 302, headers: { location: P().changeDumpIndex } });
    const result = await run({ useDumps: true });
    expect(result).toMatchObject({ mode: 'incremental', failed: 0 });
    expect(notes).toContain(
      `The Change Dump: ${fixture.url}${P().changeDumpChild(1)}, named by the Change Dump Index, redirects back to the index; its packages were not read; ` +
        'the checkpoint stays, and its changes are fetched from the Change List.',
    );
    expect(Array.from({ length: 25 }, (_, i) => i + 1).every(inStep)).toBe(true);
  });
});
