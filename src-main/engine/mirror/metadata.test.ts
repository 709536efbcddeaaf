// describedby metadata (--with-metadata) against the fixture Source: fetched beside the resources they describe (from
// lists and from dumps), known to the inventory, not extra in an audit nor deleted as unlisted by a baseline, and gone
// with the resource they describe.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import type { Applier } from './apply.ts';
import { audit } from './audit.ts';
import { MetadataFetcher } from './metadata.ts';
import { MirrorState, stateDirOf } from './state.ts';
import { sync, type SyncOptions } from './sync.ts';

let fixture: FixtureSource;
let dest: string;

beforeEach(async () => {
  fixture = await startFixtureSource({ resources: 30, changeListSize: 100 });
  dest = mkdtempSync(join(tmpdir(), 'mirror-meta-'));
});
afterEach(async () => {
  await fixture.close();
});

const run = (options: Partial<SyncOptions> = {}) =>
  sync({ url: fixture.url + fixture.paths.dataset1.capabilityList, dest, batchSize: 7, timeoutMs: 5_000, withMetadata: true, ...options });
const host = () => new URL(fixture.url).host.replace(':', '_');
const metaUri = (id: number) => `${fixture.url}/dataset1/meta/${id}.xml`;
const metaFile = (id: number) => join(dest, host(), 'dataset1', 'meta', `${id}.xml`);
/** Resources with a describedby link in the fixture: every seventh. */
const DESCRIBED = [7, 14, 21, 28];

function described(): { uri: string; describes: string }[] {
  const state = new MirrorState(stateDirOf(dest));
  try {
    return state.db.prepare('SELECT uri, describes FROM described_by ORDER BY uri').all() as { uri: string; describes: string }[];
  } finally {
    state.close();
  }
}

describe('describedby metadata', () => {
  it('is mirrored beside its resource, known to the inventory, kept by baselines and audits, and goes with it', async () => {
    const result = await run();
    expect(result).toMatchObject({ mode: 'baseline', created: 34, failed: 0, metadata: 4 });
    for (const id of DESCRIBED) {
      expect(readFileSync(metaFile(id), 'utf8')).toContain(`<dc:identifier>${fixture.state.locOf(id)}</dc:identifier>`);
    }
    expect(described()).toEqual(DESCRIBED.map((id) => ({ uri: metaUri(id), describes: fixture.state.locOf(id) })).sort((a, b) => a.uri.localeCompare(b.uri)));
    const state = new MirrorState(stateDirOf(dest));
    expect(state.get(metaUri(7))).toMatchObject({ status: 'unchecked', type: 'application/xml' });
    state.close();
    expect(await audit({ dest })).toMatchObject({ inSync: true, extra: [] });

    // A baseline without --with-metadata keeps them: they are not resources the Source stopped listing.
    const plain = await run({ withMetadata: false, mode: 'baseline', deletePolicy: 'delete' });
    expect(plain).toMatchObject({ deleted: 0, failed: 0, metadata: 0 });
    expect(existsSync(metaFile(7))).toBe(true);

    // Deleting a resource deletes its metadata by the same policy; an update fetches its metadata again.
    fixture.change('delete', 1, 7);
    fixture.change('update', 1, 14);
    const dry = await run({ deletePolicy: 'delete', dryRun: true });
    expect(dry).toMatchObject({ deleted: 2, dryRun: true });
    expect(described()).toHaveLength(4);
    expect(existsSync(metaFile(7))).toBe(true);
    const before = fixture.requests.length;
    const inc = await run({ deletePolicy: 'delete' });
    expect(inc).toMatchObject({ mode: 'incremental', deleted: 2, failed: 0, metadata: 1 });
    expect(existsSync(metaFile(7))).toBe(false);
    expect(existsSync(join(dest, host(), ...fixture.state.pathOf(7).split('/').filter(Boolean)))).toBe(false);
    expect(fixture.requests.slice(before).some((r) => r.path === '/dataset1/meta/14.xml')).toBe(true);
    expect(readFileSync(metaFile(14), 'utf8')).toContain(`<dc:date>${fixture.state.resources.get(14)!.lastmod}</dc:date>`);
    expect(described().map((d) => d.uri)).not.toContain(metaUri(7));
    expect(await audit({ dest })).toMatchObject({ inSync: true, extra: [] });
  });

  it('comes with a baseline from a Resource Dump too, and not at all without --with-metadata', async () => {
    const result = await run({ useDumps: true });
    expect(result).toMatchObject({ from: 'dumps', created: 34, failed: 0, metadata: 4 });
    for (const id of DESCRIBED) expect(existsSync(metaFile(id))).toBe(true);

    const other = mkdtempSync(join(tmpdir(), 'mirror-meta-'));
    const without = await sync({ url: fixture.url + fixture.paths.dataset1.capabilityList, dest: other, timeoutMs: 5_000 });
    expect(without).toMatchObject({ created: 30, metadata: 0 });
    expect(existsSync(join(other, host(), 'dataset1', 'meta'))).toBe(false);
  });
});

describe('MetadataFetcher', () => {
  it('fetches while entries are noted, from a bounded queue, each relation recorded', async () => {
    const state = new MirrorState(stateDirOf(dest));
    let inFlight = 0;
    let most = 0;
    const applied: string[] = [];
    const applier = {
      apply: async (e: { loc: string }) => {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((r) => setImmediate(r));
        applied.push(e.loc);
        inFlight--;
      },
      delete: () => undefined,
    } as unknown as Applier;
    const fetcher = new MetadataFetcher({ state, applier, enabled: true, concurrency: 4 });
    // Noted but not yet handed to the applier, at most: without the bound it would reach all 2,000.
    let lag = 0;
    for (let i = 0; i < 2_000; i++) {
      await fetcher.note({ loc: `http://s.example/r/${i}`, links: [{ rel: 'describedby', href: `http://s.example/m/${i}.xml` }] });
      lag = Math.max(lag, i + 1 - applied.length - inFlight);
    }
    await fetcher.run();
    expect(applied).toHaveLength(2_000);
    expect(most).toBeLessThanOrEqual(4);
    expect(lag).toBeLessThanOrEqual(513);
    expect(Number((state.db.prepare('SELECT COUNT(*) AS n FROM described_by').get() as { n: number }).n)).toBe(2_000);
    state.close();
  });
});
