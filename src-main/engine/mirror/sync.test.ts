// Mirroring end to end against the fixture Source: baseline, incremental with each deletion policy, dry run, audit,
// skipped downloads and conditional requests, mirror locations, failures on demand, and a resume after kill -9.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { PLACING_FILE, quarantinePlace } from './apply.ts';
import { audit, lastAudit, savedAuditItems } from './audit.ts';
import { KEPT_AUDIT_REPORTS, MirrorState, stateDirOf } from './state.ts';
import { sync, type SyncOptions, type SyncProgress } from './sync.ts';

const BIN = fileURLToPath(new URL('../../../bin/rsdesk.mjs', import.meta.url));
let fixture: FixtureSource;
let dest: string;

beforeEach(async () => {
  fixture = await startFixtureSource({ resources: 30, changeListSize: 20 });
  dest = mkdtempSync(join(tmpdir(), 'mirror-'));
});
afterEach(async () => {
  await fixture.close();
});

const capabilityList = () => fixture.url + fixture.paths.dataset1.capabilityList;
const run = (options: Partial<SyncOptions> = {}) => sync({ url: capabilityList(), dest, batchSize: 7, timeoutMs: 2_000, ...options });
const host = () => new URL(fixture.url).host.replace(':', '_');
const fileOf = (id: number) => join(dest, host(), ...fixture.state.pathOf(id).split('/').filter(Boolean));
const resourceRequests = () => fixture.requests.filter((r) => /\/res\/\d+/.test(r.path));

function inventory() {
  const state = new MirrorState(stateDirOf(dest));
  try {
    return [...state.rows()];
  } finally {
    state.close();
  }
}

/** Every live resource of the fixture is on disk with its current bytes, and nothing else is. */
function expectMirrorMatchesSource(): void {
  for (const r of fixture.state.live()) {
    const body = fixture.state.representation(r.id, r.version).body;
    expect(readFileSync(fileOf(r.id)).equals(body), `resource ${r.id}`).toBe(true);
  }
}

/**
 * A baseline whose first batch's commit fails after its files were renamed into place (as far as the state goes, a
 * kill): the visible files no row records, its first batch of 7.
 */
async function diedBeforeFirstCommit(): Promise<string[]> {
  const addToRun = MirrorState.prototype.addToRun;
  let calls = 0;
  MirrorState.prototype.addToRun = function (this: MirrorState, ...args: Parameters<typeof addToRun>) {
    if (calls++ === 0) throw new Error('killed');
    return addToRun.apply(this, args);
  };
  try {
    await run().catch(() => undefined);
  } finally {
    MirrorState.prototype.addToRun = addToRun;
  }
  const recorded = new Set(inventory().map((r) => r.path));
  const left = visibleFiles().filter((f) => !recorded.has(f));
  expect(left).toHaveLength(7);
  return left;
}

function visibleFiles(dir = dest, rel = ''): string[] {
  return readdirSync(join(dir, rel), { withFileTypes: true }).flatMap((d) => {
    if (rel === '' && d.name === '.resourcesync') return [];
    const path = rel ? `${rel}/${d.name}` : d.name;
    return d.isDirectory() ? visibleFiles(dir, path) : [path];
  });
}

describe('baseline', () => {
  it('mirrors every listed resource, verified, with lastmod as mtime, and sets the checkpoint', async () => {
    const result = await run();
    expect(result).toMatchObject({ mode: 'baseline', created: 30, failed: 0, updated: 0 });
    expectMirrorMatchesSource();
    const rows = inventory();
    expect(rows).toHaveLength(30);
    expect(rows.every((r) => r.status === 'verified' && r.digests.md5 && r.digests['sha-256'])).toBe(true);
    const r1 = fixture.state.resources.get(1)!;
    expect(statSync(fileOf(1)).mtimeMs).toBe(Date.parse(r1.lastmod));
    expect(result.checkpoint).toBe(fixture.state.now());
    expect(visibleFiles().every((f) => !f.endsWith('.part'))).toBe(true);
    expect(existsSync(join(dest, '.resourcesync', 'lock'))).toBe(false);
    // Mirror locations (rs:ln rel="duplicate") first: resource 5 came from /mirror/…
    expect(fixture.requests.some((r) => r.path === `/mirror${fixture.state.pathOf(5)}`)).toBe(true);
    expect(fixture.requests.some((r) => r.path === fixture.state.pathOf(5))).toBe(false);
  });

  it('does not download again what already matches, and falls back to loc when a mirror fails', async () => {
    await run();
    const before = resourceRequests().length;
    const again = await run({ mode: 'baseline' });
    expect(again).toMatchObject({ unchanged: 30, created: 0, updated: 0, failed: 0 });
    expect(resourceRequests().length).toBe(before);

    // A fresh mirror whose files exist but whose state is gone: files are checked, not downloaded.
    const state = new MirrorState(stateDirOf(dest));
    state.db.exec('DELETE FROM inventory');
    state.setCheckpoint(null);
    state.close();
    fixture.setBroken(`/mirror${fixture.state.pathOf(10)}`, { status: 404 });
    const adopted = await run({ mode: 'baseline' });
    expect(adopted).toMatchObject({ unchanged: 30, failed: 0 });
    expect(resourceRequests().length).toBe(before);
    expect(inventory()).toHaveLength(30);

    // A changed local file (listed hash no longer matches the recorded one) → fetched; its mirror fails → loc.
    writeFileSync(fileOf(10), 'tampered');
    const s2 = new MirrorState(stateDirOf(dest));
    s2.db.prepare('UPDATE inventory SET md5 = ? WHERE uri = ?').run('0'.repeat(32), fixture.state.locOf(10));
    s2.close();
    const fixed = await run({ mode: 'baseline' });
    expect(fixed).toMatchObject({ updated: 1, unchanged: 29, failed: 0 });
    expect(fixture.requests.some((r) => r.path === fixture.state.pathOf(10))).toBe(true);
    expectMirrorMatchesSource();
  });

  it('retries 429 and 503 honouring Retry-After, and fails alone what cannot be had', async () => {
    fixture.setBroken(fixture.state.pathOf(1), { status: 429, headers: { 'retry-after': '1' }, times: 1 });
    fixture.setBroken(fixture.state.pathOf(2), { status: 503, times: 2 });
    fixture.setBroken(fixture.state.pathOf(3), 'corrupt');
    fixture.setBroken(fixture.state.pathOf(4), 'long');
    fixture.setBroken(fixture.state.pathOf(6), 'stall');
    fixture.setBroken(fixture.state.pathOf(7), { status: 404 });
    const t0 = Date.now();
    const progress: SyncProgress[] = [];
    const result = await run({ onProgress: (p) => progress.push(p) });
    // The progress says what failed last, as it happens (a Source that went down shows at once).
    expect(progress.find((p) => p.latestFailure !== null && p.settled < 30)?.latestFailure).toMatchObject({ uri: expect.stringMatching(/\/res\/[3467]\./), reason: expect.any(String) });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
    expect(result.failures.map((f) => f.uri).sort()).toEqual([3, 4, 6, 7].map((id) => fixture.state.locOf(id)).sort());
    expect(result.created).toBe(26);
    expect(result.failed).toBe(4);
    const reasons = Object.fromEntries(result.failures.map((f) => [f.uri, f.reason]));
    expect(reasons[fixture.state.locOf(3)]).toMatch(/fixity mismatch: md5 is/);
    expect(reasons[fixture.state.locOf(4)]).toMatch(/announces \d+ bytes, the list says/);
    expect(reasons[fixture.state.locOf(6)]).toMatch(/[Tt]imed out|deadline/);
    expect(reasons[fixture.state.locOf(7)]).toMatch(/HTTP 404/);
    expect(existsSync(fileOf(3))).toBe(false);
    expect(readFileSync(fileOf(1)).equals(fixture.state.representation(1, 1).body)).toBe(true);
    // No checkpoint with failures; the next run fetches only what failed.
    expect(result.checkpoint).toBeNull();
    for (const id of [3, 4, 6, 7]) fixture.setBroken(fixture.state.pathOf(id), null);
    const before = resourceRequests().length;
    const retry = await run();
    expect(retry).toMatchObject({ mode: 'baseline', created: 4, unchanged: 26, failed: 0 });
    expect(resourceRequests().length - before).toBe(4);
    expect(retry.checkpoint).not.toBeNull();
  }, 60_000);

  it('stops a body that trickles in under the idle timeout, saying so, and lets the others finish', async () => {
    for (const path of [fixture.state.pathOf(5), `/mirror${fixture.state.pathOf(5)}`]) fixture.setBroken(path, { trickleMs: 50 });
    const t0 = Date.now();
    const result = await run({ timeoutMs: 400 });
    // A byte every 50 ms never trips the 400 ms idle timeout; the rate check stops it after one window (twice that
    // timeout), not the 10 min deadline.
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(result.failures).toEqual([{ uri: fixture.state.locOf(5), reason: expect.stringMatching(/^its copy at http:\/\/127\.0\.0\.1:\d+\/mirror\/dataset1\/res\/5\.html: arrived too slowly: \d+ bytes in 0\.8 s, when at least 820 were expected .*; its own address: arrived too slowly/) }]);
    expect(result.created).toBe(29);
    for (const path of [fixture.state.pathOf(5), `/mirror${fixture.state.pathOf(5)}`]) fixture.setBroken(path, null);
  });

  it('reads the list ahead of the downloads, so its total is known while they have barely begun', async () => {
    fixture.setResourceDelay(30);
    try {
      const progress: SyncProgress[] = [];
      await run({ concurrency: 1, onProgress: (p) => progress.push({ ...p }) });
      const known = progress.find((p) => p.listComplete)!;
      expect(known.listed).toBe(30);
      expect(known.settled).toBeLessThan(10);
    } finally {
      fixture.setResourceDelay(0);
    }
  });

  it('spaces the requests by the delay across all those in flight, not per connection', async () => {
    const started = Date.now();
    const result = await run({ concurrency: 4, delayMs: 25 });
    expect(result.created).toBe(30);
    // 30 resources, each request at least 25 ms after the one before: 29 gaps. (With the pause per connection, eight
    // in flight took a little over 100 ms.)
    expect(Date.now() - started).toBeGreaterThanOrEqual(29 * 25);
  });

  it('refuses a second writer while one holds the mirror', async () => {
    const first = run();
    await expect(run()).rejects.toThrow(/is busy with rsdesk sync here, since /);
    await first;
  });

  it("never replaces a file the inventory does not know: another is left as it is and failed, the same bytes are taken as the copy", async () => {
    mkdirSync(join(fileOf(1), '..'), { recursive: true });
    writeFileSync(fileOf(1), 'my own notes, not the Source copy');
    mkdirSync(join(fileOf(2), '..'), { recursive: true });
    writeFileSync(fileOf(2), fixture.state.representation(2, 1).body);
    // A dry run says so too (and records nothing: it has no run in the journal).
    const dry = await run({ dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, created: 28, unchanged: 1, failed: 1 });
    expect(dry.failures.map((f) => f.uri)).toEqual([fixture.state.locOf(1)]);
    const result = await run();
    expect(result).toMatchObject({ created: 28, unchanged: 1, failed: 1 });
    const rel = `${host()}${fixture.state.pathOf(1)}`;
    expect(result.failures).toEqual([
      { uri: fixture.state.locOf(1), reason: `a file not made by this mirror is already at ${rel}; it was left as it is (move it elsewhere, and the next sync fetches this resource)` },
    ]);
    expect(readFileSync(fileOf(1), 'utf8')).toBe('my own notes, not the Source copy');
    expect(inventory().some((r) => r.uri === fixture.state.locOf(1))).toBe(false);
    expect(resourceRequests().some((r) => r.path.endsWith(fixture.state.pathOf(2)))).toBe(false);
    // Moved away, it is fetched.
    rmSync(fileOf(1));
    expect(await run()).toMatchObject({ failed: 0 });
    expectMirrorMatchesSource();
  });

  it('a file put in place but not recorded (the run died before its commit) is known as the mirror\'s, checked, not fetched again', async () => {
    const left = await diedBeforeFirstCommit();
    const placing = readFileSync(join(stateDirOf(dest), PLACING_FILE), 'utf8');
    for (const path of left) expect(placing).toContain(JSON.stringify(path));
    const before = resourceRequests().length;
    const next = await run();
    expect(next).toMatchObject({ failed: 0 });
    // Checked against the list, not fetched again.
    expect(resourceRequests().slice(before).filter((r) => left.some((p) => p.endsWith(r.path)))).toEqual([]);
    expect(inventory().every((r) => r.status === 'verified')).toBe(true);
    expect(readFileSync(join(stateDirOf(dest), PLACING_FILE), 'utf8')).toBe('');
    expectMirrorMatchesSource();
  });

  it('a file at a path the dead run noted, but put there well after its note (by someone else), is not taken over', async () => {
    const left = await diedBeforeFirstCommit();
    // The note was made two minutes before these files came: they are not the ones the run renamed.
    const placing = join(stateDirOf(dest), PLACING_FILE);
    const then = (Date.now() - 120_000) / 1000;
    utimesSync(placing, then, then);
    for (const path of left) writeFileSync(join(dest, path), `someone's ${path}`);
    const next = await run();
    expect(next.failed).toBe(7);
    expect(next.failures.every((f) => f.reason.startsWith('a file not made by this mirror is already at '))).toBe(true);
    for (const path of left) expect(readFileSync(join(dest, path), 'utf8')).toBe(`someone's ${path}`);
  });

  it('a new file that cannot be put in place leaves no row behind', async () => {
    mkdirSync(fileOf(3), { recursive: true });
    writeFileSync(join(fileOf(3), 'inside'), 'x');
    const result = await run();
    expect(result.failures.map((f) => f.uri)).toEqual([fixture.state.locOf(3)]);
    expect(result.failures[0]!.reason).toMatch(/could not be put in place/);
    expect(inventory().some((r) => r.uri === fixture.state.locOf(3))).toBe(false);
  });
});

describe('a baseline that would delete more than the Source lists', () => {
  it('deletes nothing and says why, in a dry run too, unless allowed; fewer go as the policy says', async () => {
    await run();
    const gone = fixture.change('delete', 20).map((c) => c.loc);
    const notes: string[] = [];
    for (const policy of ['delete', 'quarantine'] as const) {
      for (const dryRun of [true, false]) {
        const held = await run({ mode: 'baseline', deletePolicy: policy, dryRun, onNote: (n) => notes.push(n) });
        expect(held, `${policy}${dryRun ? ', dry run' : ''}`).toMatchObject({ deleted: 0, failed: 0 });
        expect([...held.wouldDelete].sort()).toEqual([...gone].sort());
      }
    }
    expect(notes.filter((n) => n.startsWith('The Source no longer lists 20 resources this mirror holds, more than the 10 it lists now: none was'))).toHaveLength(4);
    expect(visibleFiles()).toHaveLength(30);
    // Allowed fewer than there are (what a person was shown before the Source dropped more): held back again.
    expect(await run({ mode: 'baseline', deletePolicy: 'delete', allowMassDelete: 19 })).toMatchObject({ deleted: 0 });
    const allowed = await run({ mode: 'baseline', deletePolicy: 'delete', allowMassDelete: 20 });
    expect(allowed).toMatchObject({ deleted: 20, failed: 0 });
    expect(visibleFiles()).toHaveLength(10);
    // Four more of the ten left: deleted as the policy says.
    fixture.change('delete', 4);
    expect(await run({ mode: 'baseline', deletePolicy: 'delete' })).toMatchObject({ deleted: 4 });
  });

  it('judges by what the Source lists, whatever the size of the batches: 12 deleted and 12 created of 20', async () => {
    const dests: string[] = [];
    for (const batchSize of [1, 500]) {
      await fixture.close();
      fixture = await startFixtureSource({ resources: 20, changeListSize: 20 });
      dest = mkdtempSync(join(tmpdir(), 'mirror-'));
      dests.push(dest);
      await run({ batchSize });
      fixture.change('delete', 12);
      fixture.change('create', 12);
      expect(await run({ mode: 'baseline', deletePolicy: 'delete', batchSize }), `batches of ${batchSize}`).toMatchObject({ deleted: 12, created: 12, failed: 0 });
    }
  });
});

describe('incremental', () => {
  it('applies created/updated/deleted after the checkpoint, last change per URI, keep by default', async () => {
    await run();
    const created = fixture.change('create', 3);
    const updated = fixture.change('update', 4);
    const deleted = fixture.change('delete', 2);
    const before = resourceRequests().length;
    const dry = await run({ dryRun: true });
    expect(dry.mode).toBe('incremental');
    expect(resourceRequests().length).toBe(before);
    const result = await run();
    expect(result.mode).toBe('incremental');
    const deletedIds = new Set(deleted.map((d) => d.id));
    const createdLive = created.filter((c) => !deletedIds.has(c.id)).length;
    expect(result.created).toBe(createdLive);
    expect(result.deleted).toBe(0);
    expect(result.wouldDelete.sort()).toEqual(deleted.filter((d) => d.id <= 30).map((d) => d.loc).sort());
    expect(result.failed).toBe(0);
    expect(result.checkpoint).toBe(deleted.at(-1)!.datetime.replace('Z', '.000Z'));
    expectMirrorMatchesSource();
    // Fetched once each, at most: an update of a just-created resource is one fetch.
    const fetched = resourceRequests().slice(before).map((r) => r.path);
    expect(new Set(fetched).size).toBe(fetched.length);
    expect(updated.length).toBe(4);
    // Nothing new: nothing fetched.
    const quiet = await run();
    expect(quiet).toMatchObject({ mode: 'incremental', created: 0, updated: 0, failed: 0 });
  });

  it("a new version that cannot be put in place leaves the older copy's row as it was, not damaged", async () => {
    await run();
    const [u] = fixture.change('update', 1);
    // Where the file was, a folder with something in it now: the new version cannot be renamed over it.
    rmSync(fileOf(u!.id));
    mkdirSync(fileOf(u!.id));
    writeFileSync(join(fileOf(u!.id), 'inside'), 'x');
    const result = await run();
    expect(result.failures.map((f) => f.uri)).toEqual([fixture.state.locOf(u!.id)]);
    expect(result.failures[0]!.reason).toMatch(/could not be put in place/);
    const row = inventory().find((r) => r.uri === fixture.state.locOf(u!.id))!;
    expect(row.status).toBe('verified');
  });

  it('deletes or quarantines by policy', async () => {
    await run();
    const [gone] = fixture.change('delete', 1);
    fixture.change('create', 2);
    const progress: SyncProgress[] = [];
    const result = await run({ deletePolicy: 'delete', onProgress: (p) => progress.push(p) });
    expect(result.deleted).toBe(1);
    // What the mirror holds moves by the rows added less those removed (the app's "resources" during a run).
    expect(progress.at(-1)!.inventoryChange).toBe(1);
    expect(existsSync(fileOf(gone.id))).toBe(false);
    const [q] = fixture.change('delete', 1);
    const rel = fileOf(q.id).slice(dest.length + 1);
    const quarantined = await run({ deletePolicy: 'quarantine' });
    expect(quarantined.deleted).toBe(1);
    expect(existsSync(fileOf(q.id))).toBe(false);
    expect(existsSync(join(dest, '.resourcesync', 'quarantine', rel))).toBe(true);
    expect(inventory().some((r) => r.uri === q.loc)).toBe(false);
  });

  it('keeps every quarantined copy of a path: one deleted, created again and deleted again leaves both', async () => {
    await run();
    const [gone] = fixture.change('delete', 1);
    const rel = `${host()}${fixture.state.pathOf(gone!.id)}`;
    const v1 = readFileSync(fileOf(gone!.id));
    expect((await run({ deletePolicy: 'quarantine' })).deleted).toBe(1);
    // Created again (as far as the mirror goes: its file and its row), then gone from the Source again.
    writeFileSync(fileOf(gone!.id), 'version 2');
    const state = new MirrorState(stateDirOf(dest));
    state.put({ uri: gone!.loc, path: rel, length: 9, digests: {}, lastmod: null, etag: null, lastModified: null, type: null, status: 'unchecked', verifiedAt: null, runId: 1 });
    state.close();
    const again = await run({ deletePolicy: 'quarantine', mode: 'baseline' });
    expect(again.deleted).toBe(1);
    const folder = join(dest, '.resourcesync', 'quarantine', host(), ...fixture.state.pathOf(gone!.id).split('/').slice(1, -1));
    const name = rel.split('/').at(-1)!;
    const dot = name.lastIndexOf('.');
    const runId = again.runId;
    expect(readdirSync(folder).sort()).toEqual([name, `${name.slice(0, dot)}%run${runId}${name.slice(dot)}`].sort());
    expect(readFileSync(join(folder, name)).equals(v1)).toBe(true);
    expect(readFileSync(join(folder, `${name.slice(0, dot)}%run${runId}${name.slice(dot)}`), 'utf8')).toBe('version 2');
  });

  it('a quarantined copy goes beside an earlier one of the same path, never over it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'quarantine-'));
    const place = (name: string) => {
      const p = quarantinePlace(join(dir, name), 12);
      writeFileSync(p, '');
      return p.slice(dir.length + 1);
    };
    expect(['a.txt', 'a.txt', 'a.txt', 'a.txt'].map(place)).toEqual(['a.txt', 'a%run12.txt', 'a%run12-2.txt', 'a%run12-3.txt']);
    expect(['%index', '%index', '.hidden', '.hidden', 'x.tar.gz', 'x.tar.gz', 'page%qa=1', 'page%qa=1'].map(place)).toEqual([
      '%index', '%index%run12', '.hidden', '.hidden%run12', 'x.tar.gz', 'x.tar%run12.gz', 'page%qa=1', 'page%qa=1%run12',
    ]);
  });

  it('keeps the checkpoint before a change that failed, and applies it next time', async () => {
    await run();
    const [u] = fixture.change('update', 1);
    fixture.setBroken(fixture.state.pathOf(u.id), { status: 500 });
    fixture.setBroken(`/mirror${fixture.state.pathOf(u.id)}`, { status: 500 });
    const checkpoint = (await run()).checkpoint;
    const failed = await run();
    expect(failed.failed).toBe(1);
    expect(failed.checkpoint).toBe(checkpoint);
    fixture.setBroken(fixture.state.pathOf(u.id), null);
    fixture.setBroken(`/mirror${fixture.state.pathOf(u.id)}`, null);
    const ok = await run();
    expect(ok).toMatchObject({ updated: 1, failed: 0 });
    expectMirrorMatchesSource();
  });
});

describe('audit', () => {
  it('finds missing, extra, changed; rehash reads the files', async () => {
    await run();
    expect(await audit({ dest })).toMatchObject({ inSync: true, missing: [], extra: [] });
    writeFileSync(join(dest, host(), 'stray.txt'), 'x');
    const { rmSync } = await import('node:fs');
    rmSync(fileOf(2));
    writeFileSync(fileOf(3), readFileSync(fileOf(3)).map((b, i) => (i === 0 ? b ^ 1 : b)));
    fixture.change('update', 1);
    const report = await audit({ dest, journalLimit: 2 });
    expect(report.inSync).toBe(false);
    expect(report.missing).toContain(fixture.state.locOf(2));
    // Three differences: all in the report, two in the run's journal, all counted.
    const state = new MirrorState(stateDirOf(dest));
    try {
      const last = state.runs().at(-1)!;
      expect(last.failed).toBe(3);
      expect(state.failures(last.id)).toHaveLength(2);
    } finally {
      state.close();
    }
    expect(report.extra).toEqual([`${host()}/stray.txt`]);
    expect(report.changed.length).toBe(1);
    const rehashed = await audit({ dest, rehash: true });
    expect(rehashed.changed.map((c) => c.uri)).toContain(fixture.state.locOf(3));
    expect(rehashed.missing).toContain(fixture.state.locOf(2));
    // What the audit found missing and damaged, the next sync (incremental) fetches again.
    expect((await run()).mode).toBe('incremental');
    expect(readFileSync(fileOf(2)).equals(fixture.state.representation(2, fixture.state.resources.get(2)!.version).body)).toBe(true);
    rmSync(join(dest, host(), 'stray.txt'));
    expect(await audit({ dest })).toMatchObject({ inSync: true, missing: [], changed: [] });
  });

  it('holds the first reportLimit differences of each kind, counts them all, says what it cut; the saved report and the journal hold them all', async () => {
    await run();
    for (const id of [1, 2, 3, 4, 5]) rmSync(fileOf(id));
    for (const name of ['a', 'b', 'c']) writeFileSync(join(dest, host(), `stray-${name}.txt`), 'x');
    const report = await audit({ dest, reportLimit: 2 });
    expect(report.inSync).toBe(false);
    expect(report.missing).toEqual([1, 2, 3, 4, 5].map((id) => fixture.state.locOf(id)).slice(0, 2));
    expect(report.extra).toHaveLength(2);
    expect(report.counts).toEqual({ missing: 5, extra: 3, changed: 0, unverifiable: 0, kept: 0 });
    expect(report.notes).toEqual([
      `This report is too long to show whole: it shows the first 2 of 5 missing resources, the first 2 of 3 extra files. ` +
        `The whole report is kept with the mirror: the app's Export buttons write every item, and so does rsdesk audit --last --json --dest "${dest}".`,
    ]);
    // Read back with the same limit: the same report; with the default one: every item, and no note.
    expect(lastAudit(dest, 2)!.report).toEqual(report);
    const whole = lastAudit(dest)!.report;
    expect(whole.missing).toHaveLength(5);
    expect(whole.extra).toHaveLength(3);
    expect(whole.notes).toBeUndefined();
    expect([...savedAuditItems(dest, report.runId!, 'missing')].map((f) => f.item)).toEqual(whole.missing);
    const state = new MirrorState(stateDirOf(dest));
    try {
      expect(state.failures(report.runId!)).toHaveLength(8);
      // Every missing copy was marked damaged, not only those the report holds.
      expect(state.damagedCount()).toBe(5);
    } finally {
      state.close();
    }
  });

  it('a copy replaced by a FIFO or a link (to /dev/zero, out of the mirror) is damaged, read not at all, and fetched again', async () => {
    await run();
    const outside = join(mkdtempSync(join(tmpdir(), 'outside-')), 'same');
    writeFileSync(outside, readFileSync(fileOf(3)));
    rmSync(fileOf(1));
    execFileSync('mkfifo', [fileOf(1)]);
    rmSync(fileOf(2));
    symlinkSync('/dev/zero', fileOf(2));
    rmSync(fileOf(3));
    symlinkSync(outside, fileOf(3));
    for (const rehash of [true, false]) {
      const report = await audit({ dest, rehash });
      expect(report.changed.map((c) => c.uri).sort(), `rehash ${rehash}`).toEqual([1, 2, 3].map((id) => fixture.state.locOf(id)).sort());
      expect(report.changed.every((c) => /not a regular file/.test(c.reason))).toBe(true);
    }
    expect((await run()).failed).toBe(0);
    for (const id of [1, 2, 3]) expect(lstatSync(fileOf(id)).isFile()).toBe(true);
    expect(await audit({ dest, rehash: true })).toMatchObject({ inSync: true, changed: [] });
  });

  it('a copy replaced by a link to the same bytes outside the mirror is not taken as the copy by a sync: it is fetched again', async () => {
    await run();
    const outside = join(mkdtempSync(join(tmpdir(), 'outside-')), 'same');
    writeFileSync(outside, readFileSync(fileOf(3)));
    rmSync(fileOf(3));
    symlinkSync(outside, fileOf(3));
    // No audit first: a baseline alone finds it (its size was read through the link, and it was counted unchanged).
    const result = await run({ mode: 'baseline' });
    expect(result).toMatchObject({ failed: 0, updated: 1 });
    expect(lstatSync(fileOf(3)).isFile()).toBe(true);
    expect(readFileSync(outside)).toEqual(readFileSync(fileOf(3)));
  });

  it('a folder replaced by a link (to a copy outside the mirror) is not followed: its files are changed, not in sync', async () => {
    await run();
    const folder = join(fileOf(1), '..');
    const outside = join(mkdtempSync(join(tmpdir(), 'outside-')), 'res');
    execFileSync('cp', ['-r', folder, outside]);
    rmSync(folder, { recursive: true });
    symlinkSync(outside, folder);
    const inFolder = fixture.state.live().filter((r) => fixture.state.pathOf(r.id).startsWith(fixture.state.pathOf(1).replace(/[^/]*$/, ''))).length;
    for (const rehash of [false, true]) {
      const report = await audit({ dest, rehash });
      expect(report.inSync).toBe(false);
      expect(report.inSyncCount, `rehash ${rehash}`).toBe(0);
      expect(report.changed).toHaveLength(inFolder);
      expect(report.changed[0]!.reason).toMatch(/^its folder .*res is a symbolic link; the mirror does not read or write through links; the next sync fetches it again$/);
    }
  });

  it('files kept by the deletion policy keep are listed apart, not as extra, and leave the mirror in sync', async () => {
    await run();
    const [gone] = fixture.change('delete', 1);
    const result = await run();
    expect(result.wouldDelete).toEqual([fixture.state.locOf(gone!.id)]);
    writeFileSync(join(dest, host(), 'stray.txt'), 'x');
    const report = await audit({ dest });
    expect(report.kept).toEqual([fixture.state.locOf(gone!.id)]);
    expect(report.extra).toEqual([`${host()}/stray.txt`]);
    const { rmSync } = await import('node:fs');
    rmSync(join(dest, host(), 'stray.txt'));
    expect(await audit({ dest })).toMatchObject({ inSync: true, extra: [], kept: [fixture.state.locOf(gone!.id)] });
    expect(lastAudit(dest)!.report.kept).toEqual([fixture.state.locOf(gone!.id)]);
  });

  it('a Change List that cannot be read does not stop an audit: it compares with the Resource List and says so', async () => {
    await run();
    fixture.setBroken(fixture.paths.dataset1.changeListIndex, { status: 500 });
    const report = await audit({ dest, timeoutMs: 2_000 });
    expect(report.inSync).toBe(true);
    expect(report.notes).toHaveLength(1);
    expect(report.notes![0]).toMatch(/^The Change List .*changelist-index\.xml could not be read \(.*500.*\); the mirror is compared with the Resource List as of .* alone/);
    // Kept with the report: `rsdesk audit --last` and the app (which shows the kept report) say it too.
    expect(lastAudit(dest)!.report.notes).toEqual(report.notes);
  });

  it('damaged local copies: an audit marks them, the next sync (incremental or baseline) fetches them again', async () => {
    await run();
    const sameSize = fileOf(3);
    const longer = fileOf(4);
    writeFileSync(sameSize, readFileSync(sameSize).map((b, i) => (i === 0 ? b ^ 1 : b)));
    writeFileSync(longer, Buffer.concat([readFileSync(longer), Buffer.from('tail')]));
    // Without reading the files, only the size tells.
    const quick = await audit({ dest });
    expect(quick.changed.map((c) => c.uri)).toEqual([fixture.state.locOf(4)]);
    expect(quick.changed[0]!.reason).toMatch(/ bytes, \d+ were mirrored; the next sync fetches it again$/);
    const rehashed = await audit({ dest, rehash: true });
    expect(rehashed.changed.map((c) => c.uri).sort()).toEqual([fixture.state.locOf(3), fixture.state.locOf(4)].sort());
    expect(inventory().filter((r) => r.status === 'damaged').map((r) => r.uri).sort()).toEqual([fixture.state.locOf(3), fixture.state.locOf(4)].sort());
    // An audit without --rehash still says so, from the mark.
    expect((await audit({ dest })).changed.find((c) => c.uri === fixture.state.locOf(3))?.reason).toMatch(/earlier audit found the local file changed/);
    const notes: string[] = [];
    const before = resourceRequests().length;
    const next = await run({ onNote: (n) => notes.push(n) });
    expect(next.mode).toBe('incremental');
    expect(notes).toContain('2 local files that an audit found damaged are fetched again.');
    expect(resourceRequests().length - before).toBe(2);
    expectMirrorMatchesSource();
    expect((await audit({ dest, rehash: true })).inSync).toBe(true);
    expect(inventory().some((r) => r.status === 'damaged')).toBe(false);
  });

  it('damaged copies are read from the state a page at a time, and every page is fetched again', async () => {
    await run();
    const ids = [2, 3, 5, 6, 8];
    for (const id of ids) writeFileSync(fileOf(id), Buffer.concat([readFileSync(fileOf(id)), Buffer.from('tail')]));
    await audit({ dest });
    const pages: number[] = [];
    const original = MirrorState.prototype.damagedAfter;
    const read = vi.spyOn(MirrorState.prototype, 'damagedAfter').mockImplementation(function (this: MirrorState, after, limit) {
      const rows = original.call(this, after, limit);
      pages.push(rows.length);
      return rows;
    });
    try {
      const notes: string[] = [];
      const before = resourceRequests().length;
      await run({ inMemoryUris: 2, onNote: (n) => notes.push(n) });
      expect(notes).toContain('5 local files that an audit found damaged are fetched again.');
      // Two at a time, and the empty page that ends it.
      expect(pages).toEqual([2, 2, 1, 0]);
      expect(resourceRequests().length - before).toBe(5);
    } finally {
      read.mockRestore();
    }
    expect(inventory().some((r) => r.status === 'damaged')).toBe(false);
    expectMirrorMatchesSource();
  });

  it('a damaged copy of what the Source deleted (kept by the policy) is said, not failed, run after run', async () => {
    await run();
    const longer = fileOf(3);
    writeFileSync(longer, Buffer.concat([readFileSync(longer), Buffer.from('tail')]));
    await audit({ dest });
    fixture.change('delete', 1, 3);
    for (let i = 0; i < 2; i++) {
      const notes: string[] = [];
      const result = await run({ onNote: (n) => notes.push(n) });
      expect(result).toMatchObject({ mode: 'incremental', failed: 0 });
      expect(notes.some((n) => n.startsWith(`${fixture.state.locOf(3)}: its local copy is damaged, and the Source no longer has it (HTTP 4`))).toBe(true);
    }
    expect(inventory().find((r) => r.uri === fixture.state.locOf(3))?.status).toBe('damaged');
  });

  it('a baseline fetches again a file whose size changed, unconditionally (a 304 would keep the damage)', async () => {
    await run();
    const longer = fileOf(5);
    writeFileSync(longer, Buffer.concat([readFileSync(longer), Buffer.from('tail')]));
    const before = fixture.requests.length;
    const result = await run({ mode: 'baseline' });
    expect(result.updated).toBe(1);
    const asked = fixture.requests.slice(before).filter((r) => r.path.endsWith(fixture.state.pathOf(5)));
    expect(asked).toHaveLength(1);
    expect(asked[0]!.headers['if-none-match'] ?? asked[0]!.headers['if-modified-since']).toBeUndefined();
    expectMirrorMatchesSource();
  });

  it('a cancel while the files are compared stops the audit there; its run is recorded cancelled, and no report is kept', async () => {
    await run();
    await audit({ dest });
    const kept = lastAudit(dest)!;
    const controller = new AbortController();
    const get = MirrorState.prototype.get;
    let calls = 0;
    // The lists are read whole by then: the cancel comes while listed resources are compared with their files.
    MirrorState.prototype.get = function (this: MirrorState, uri: string) {
      if (++calls === 3) controller.abort();
      return get.call(this, uri);
    };
    try {
      await expect(audit({ dest, rehash: true, signal: controller.signal })).rejects.toThrow(/cancelled/i);
    } finally {
      MirrorState.prototype.get = get;
    }
    expect(calls).toBe(3);
    expect(lastAudit(dest)!.runId).toBe(kept.runId);
    const state = new MirrorState(stateDirOf(dest));
    try {
      expect(state.runs().at(-1)).toMatchObject({ kind: 'audit', status: 'cancelled', message: 'Cancelled before the end; no report is kept' });
    } finally {
      state.close();
    }
  });

  it('a cancel once the audit has compared everything stops nothing: it is recorded completed, its report kept', async () => {
    await run();
    const controller = new AbortController();
    let decided = 0;
    // The app answers such a Cancel false from this moment on (mirrors.ts): the audit must then end as it says.
    const report = await audit({ dest, signal: controller.signal, onFinishing: () => {
      decided++;
      controller.abort();
    } });
    expect(decided).toBe(1);
    expect(report.inSync).toBe(true);
    expect(lastAudit(dest)!.runId).toBe(report.runId);
    const state = new MirrorState(stateDirOf(dest));
    try {
      expect(state.runs().at(-1)).toMatchObject({ kind: 'audit', status: 'completed' });
    } finally {
      state.close();
    }
  });

  it('keeps the last reports in the mirror state: read back whole after the state is closed, the newest few only', async () => {
    expect(() => lastAudit(join(dest, 'nowhere'))).toThrow(/is not a mirror/);
    await run();
    expect(lastAudit(dest)).toBeNull();
    const clean = await audit({ dest });
    const first = lastAudit(dest)!;
    expect(first).toMatchObject({ rehash: false, report: { ...clean } });
    expect(first.report).toEqual(clean);
    expect(Date.parse(first.at)).not.toBeNaN();
    writeFileSync(join(dest, host(), 'stray.txt'), 'x');
    rmSync(fileOf(2));
    writeFileSync(fileOf(3), readFileSync(fileOf(3)).map((b, i) => (i === 0 ? b ^ 1 : b)));
    const dirty = await audit({ dest, rehash: true });
    const saved = lastAudit(dest)!;
    // Every item, in the order the audit found them, with its reason: the same report as the one returned.
    expect(saved.report).toEqual(dirty);
    expect(saved).toMatchObject({ rehash: true });
    expect(saved.runId).toBeGreaterThan(first.runId);
    // The run it belongs to is the audit's run in the journal.
    const state = new MirrorState(stateDirOf(dest));
    try {
      expect(state.run(saved.runId)).toMatchObject({ kind: 'audit', mode: 'rehash', status: 'completed' });
      for (let i = 0; i < KEPT_AUDIT_REPORTS; i++) await audit({ dest });
      expect(state.auditRuns()).toHaveLength(KEPT_AUDIT_REPORTS);
      expect(state.audit(first.runId)).toBeNull();
      expect(Number((state.db.prepare('SELECT COUNT(*) AS n FROM audit_items WHERE run_id = ?').get(saved.runId) as { n: number }).n)).toBe(0);
    } finally {
      state.close();
    }
  });
});

describe('resume after kill -9', () => {
  it('leaves no temporary file in view, keeps files and inventory consistent, and fetches nothing verified twice', async () => {
    await fixture.close();
    fixture = await startFixtureSource({ resources: 400, changeListSize: 1000 });
    const child = spawn(process.execPath, [BIN, 'sync', capabilityList(), '--dest', dest, '--concurrency', '2', '--json'], { stdio: 'ignore' });
    // Kill it at a random point after some resources were fetched.
    const target = 40 + Math.floor(Math.random() * 250);
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (resourceRequests().length >= target || child.exitCode !== null) {
          clearInterval(timer);
          resolve();
        }
      }, 5);
    });
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(visibleFiles().filter((f) => f.includes('.resourcesync') || f.endsWith('.part'))).toEqual([]);
    const verified = inventory().filter((r) => r.status === 'verified');
    for (const row of verified) {
      const file = join(dest, ...row.path.split('/'));
      expect(createHash('md5').update(readFileSync(file)).digest('hex')).toBe(row.digests.md5);
    }
    const before = fixture.requests.length;
    const resumed = await run({ concurrency: 4 });
    expect(resumed.failed).toBe(0);
    const refetched = fixture.requests.slice(before).map((r) => fixture.url + r.path.replace('/mirror/', '/'));
    const verifiedUris = new Set(verified.map((r) => r.uri));
    expect(refetched.filter((u) => verifiedUris.has(u))).toEqual([]);
    expect(resumed.created + resumed.unchanged).toBe(400 - verified.length);
    expectMirrorMatchesSource();
    expect(inventory()).toHaveLength(400);
    const state = new MirrorState(stateDirOf(dest));
    const runs = state.runs();
    state.close();
    expect(runs[0]!.status).toBe('completed');
  }, 60_000);
});

describe('a server that answers a part of a resource to a request for the whole', () => {
  it('fails it, with the reason, instead of keeping the part as the file (the list gives nothing to tell)', async () => {
    const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
    const server = createServer((req, res) => {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      if (req.url === '/rl.xml') {
        res.writeHead(200, { 'content-type': 'application/xml' });
        return void res.end(`<urlset ${ns}><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/><url><loc>${base}/part</loc></url><url><loc>${base}/whole</loc></url></urlset>`);
      }
      if (req.url === '/part') return void res.writeHead(206, { 'content-range': 'bytes 0-3/100' }).end('the ');
      if (req.url === '/whole') return void res.end('the whole resource');
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (server.address() as AddressInfo).port;
      const target = mkdtempSync(join(tmpdir(), 'mirror-partial-'));
      const result = await sync({ url: `http://127.0.0.1:${port}/rl.xml`, dest: target, timeoutMs: 5_000, proxyEnv: {} });
      expect(result).toMatchObject({ created: 1, failed: 1 });
      expect(result.failures[0]!.reason).toBe(`HTTP 206 for http://127.0.0.1:${port}/part: the server sent a part of the resource, not the resource, though the whole was asked for; not kept`);
      expect(existsSync(join(target, `127.0.0.1_${port}`, 'part'))).toBe(false);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
