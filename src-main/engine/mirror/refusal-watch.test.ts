// A Source that refuses every request (503 with Retry-After, 429) for longer than the mirror's limit: the run pauses
// instead of going on for hours, says what the Source answered and when to try again, keeps what it verified, and the
// next sync resumes it without fetching that again. Against the fixture Source, refusing on demand (setRefusing).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { RefusalWatch } from './refusal-watch.ts';
import { readFolder } from './folder.ts';
import { retryResources } from './retry.ts';
import { sync } from './sync.ts';

let fixture: FixtureSource;
let dest: string;

beforeEach(async () => {
  fixture = await startFixtureSource({ resources: 12 });
  dest = mkdtempSync(join(tmpdir(), 'refusals-'));
});
afterEach(async () => {
  await fixture.close();
});

const capabilityList = () => fixture.url + fixture.paths.dataset1.capabilityList;
const resourceGets = () => fixture.requests.filter((r) => /^\/dataset1\/res\//.test(r.path)).map((r) => r.path);

/** The run journal, as rsdesk runs and the app read it. */
const runs = () => readFolder(dest)!.runs;

/** A first sync in which two resources fail (404); then the Source serves them again, for a retry to fetch. */
async function syncWithTwoFailuresHealed() {
  fixture.setBroken(fixture.state.pathOf(1), { status: 404 });
  fixture.setBroken(fixture.state.pathOf(2), { status: 404 });
  const first = await sync({ url: capabilityList(), dest, refusalLimitMs: 700, proxyEnv: {} });
  expect(first.failed).toBe(2);
  fixture.setBroken(fixture.state.pathOf(1), null);
  fixture.setBroken(fixture.state.pathOf(2), null);
  return first;
}

describe('a Source that refuses everything', () => {
  it('pauses the run once it has refused every request for the limit, says what it answered, and the next sync resumes it', async () => {
    // Half the resources come first; then the Source answers 503 "come back in 1 s" to everything, for good. Without
    // the limit each resource waits three times (3 s) before failing, and a real Retry-After of 120 s is hours.
    let served = 0;
    const notes: string[] = [];
    const t0 = Date.now();
    const first = await sync({
      url: capabilityList(),
      dest,
      concurrency: 2,
      batchSize: 2,
      refusalLimitMs: 1_200,
      proxyEnv: {},
      onNote: (n) => notes.push(n),
      onProgress: (p) => {
        if (p.created >= 6 && served === 0) {
          served = p.created;
          fixture.setRefusing({ prefix: '/dataset1/res/', status: 503, headers: { 'retry-after': '1' } });
        }
      },
    });
    const seconds = (Date.now() - t0) / 1000;
    expect(first.paused).toBe(true);
    expect(first.failed).toBe(0);
    expect(first.pausedBecause).toMatch(/^Paused: the Source refused (all \d+ requests|the one request) of the last 1.2 s \(since \d\d:\d\d UTC\); its last answer was HTTP 503 \(Service Unavailable\), asking to wait 1 s \(Retry-After\)\. What was verified is kept; run the sync again (after \d\d:\d\d UTC|later) to resume\. \(This limit is kept with the mirror: rsdesk sync --pause-after-refusals SECONDS changes it\.\)$/);
    // At the limit, not after every resource's three waits.
    expect(seconds).toBeLessThan(4);
    const run = runs().at(-1)!;
    expect(run.status).toBe('interrupted');
    expect(run.message).toBe(first.pausedBecause);
    const verified = first.created;
    expect(verified).toBeGreaterThanOrEqual(6);
    expect(verified).toBeLessThan(12);

    // The Source serves again: the next sync resumes the run and fetches only what it had not verified.
    fixture.setRefusing(null);
    const before = resourceGets().length;
    const second = await sync({ dest, proxyEnv: {}, onNote: (n) => notes.push(n) });
    expect(notes.some((n) => /^Resuming run \d+ \(paused baseline\)/.test(n))).toBe(true);
    expect(second.paused).toBe(false);
    expect(second.pausedBecause).toBeNull();
    expect(second.failed).toBe(0);
    expect(second.created).toBe(12);
    expect(resourceGets().length - before).toBe(12 - verified);
    expect(runs().at(-1)!.status).toBe('completed');
  });

  it('keeps the limit with the mirror, and counts 429 and a wait without Retry-After too', async () => {
    fixture.setRefusing({ prefix: '/dataset1/res/', status: 429, headers: {} });
    const first = await sync({ url: capabilityList(), dest, concurrency: 1, refusalLimitMs: 700, proxyEnv: {} });
    expect(first.paused).toBe(true);
    expect(first.pausedBecause).toMatch(/its last answer was HTTP 429 \(Too Many Requests\)\. What was verified is kept; run the sync again later to resume/);
    expect(first.created).toBe(0);
    // The next sync, told nothing, uses the kept limit: it pauses as soon, not after 30 min.
    const t0 = Date.now();
    const second = await sync({ dest, proxyEnv: {} });
    expect(second.paused).toBe(true);
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

  it('pauses a retry of failures too, saying to run the retry again', async () => {
    const first = await syncWithTwoFailuresHealed();
    fixture.setRefusing({ prefix: '/dataset1/res/', status: 503, headers: { 'retry-after': '1' } });
    const t0 = Date.now();
    const again = await retryResources({ dest, runId: first.runId!, proxyEnv: {} });
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(again.paused).toBe(true);
    expect(again.pausedBecause).toMatch(/^Paused: the Source refused .* HTTP 503 \(Service Unavailable\), asking to wait 1 s \(Retry-After\)\. What was verified is kept; run the retry again /);
    expect(runs().at(-1)).toMatchObject({ mode: 'retry', status: 'interrupted', message: again.pausedBecause });
  });

  it("pauses a retry whose lists the Source refuses too (they are read first), resumable; a long Retry-After pauses it at once", async () => {
    const first = await syncWithTwoFailuresHealed();
    // Everything the Source serves, its Resource List first.
    fixture.setRefusing({ prefix: '/dataset1/', status: 503, headers: { 'retry-after': '1' } });
    const t0 = Date.now();
    const again = await retryResources({ dest, runId: first.runId!, proxyEnv: {} });
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(again).toMatchObject({ paused: true, failed: 0, created: 0 });
    expect(again.pausedBecause).toMatch(/^Paused: the Source refused .* HTTP 503 \(Service Unavailable\), asking to wait 1 s \(Retry-After\)\. What was verified is kept; run the retry again /);
    expect(runs().at(-1)).toMatchObject({ mode: 'retry', status: 'interrupted', message: again.pausedBecause });

    fixture.setRefusing({ prefix: '/dataset1/', status: 429, headers: { 'retry-after': '3600' } });
    const later = await retryResources({ dest, runId: first.runId!, proxyEnv: {} });
    expect(later).toMatchObject({ paused: true, failed: 0 });
    expect(later.pausedBecause).toMatch(/^Paused: the Source answered HTTP 429 \(Too Many Requests\) to .*, asking to wait 1 h \(Retry-After\);.* run the retry again after /);

    fixture.setRefusing(null);
    const done = await retryResources({ dest, runId: first.runId!, proxyEnv: {} });
    expect(done).toMatchObject({ paused: false, failed: 0, created: 2 });
  });

  it('watches the list requests too: a Change List refused with Retry-After is asked again, then the run pauses at the limit and resumes', async () => {
    expect(await sync({ url: capabilityList(), dest, proxyEnv: {} })).toMatchObject({ mode: 'baseline', failed: 0 });
    const checkpoint = readFolder(dest)!.checkpoint?.at;
    fixture.change('update', 3);
    // Before, the first 503 was the answer: "Some Sources do so when no change is listed", the run completed.
    fixture.setRefusing({ prefix: '/dataset1/changelist', status: 503, headers: { 'retry-after': '1' } });
    const t0 = Date.now();
    const first = await sync({ dest, refusalLimitMs: 1_500, proxyEnv: {} });
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(first).toMatchObject({ mode: 'incremental', paused: true, updated: 0 });
    expect(first.pausedBecause).toMatch(/^Paused: the Source refused all \d+ requests of the last 1.5 s \(since \d\d:\d\d UTC\); its last answer was HTTP 503 \(Service Unavailable\), asking to wait 1 s \(Retry-After\)\. What was verified is kept; run the sync again /);
    // Asked again while the limit ran, not once.
    expect(fixture.requests.filter((r) => r.path === fixture.paths.dataset1.changeListIndex).length).toBeGreaterThan(1);
    expect(runs().at(-1)).toMatchObject({ status: 'interrupted', message: first.pausedBecause });
    expect(readFolder(dest)!.checkpoint?.at).toBe(checkpoint);

    fixture.setRefusing(null);
    const second = await sync({ dest, proxyEnv: {} });
    expect(second).toMatchObject({ mode: 'incremental', resumed: true, paused: false, failed: 0, updated: 3 });
  });

  it('a Resource List refused for a while, then served: the baseline waits for it and completes', async () => {
    fixture.setRefusing({ prefix: fixture.paths.dataset1.resourceList, status: 429, headers: { 'retry-after': '1' } });
    setTimeout(() => fixture.setRefusing(null), 1_500);
    const result = await sync({ url: capabilityList(), dest, refusalLimitMs: 10_000, proxyEnv: {} });
    expect(result).toMatchObject({ mode: 'baseline', paused: false, failed: 0, created: 12 });
  });

  it("a dump's package refused for a while, then served: the package is asked again and applied, not failed", async () => {
    const pkg = fixture.paths.dataset1.resourceDumpPackage(1);
    fixture.setRefusing({ prefix: pkg, status: 503, headers: { 'retry-after': '1' } });
    setTimeout(() => fixture.setRefusing(null), 1_500);
    const result = await sync({ url: capabilityList(), dest, useDumps: true, refusalLimitMs: 10_000, proxyEnv: {} });
    expect(result).toMatchObject({ mode: 'baseline', from: 'dumps', paused: false, failed: 0, created: 12 });
    expect(fixture.requests.filter((r) => r.path === pkg).length).toBeGreaterThan(1);
  });

  // A wait longer than a run gives a list (2 min): before, a Change List's run completed with "Some Sources do so when
  // no change is listed", a Resource List's baseline failed, and a package was failed as one that cannot be had.
  const PAUSED_FOR_AN_HOUR = (url: string, again = 'the sync') =>
    new RegExp(
      `^Paused: the Source answered HTTP 503 \\(Service Unavailable\\) to ${url.replace(/[.?]/g, '\\$&')}, asking to wait 1 h \\(Retry-After\\); a run waits at most 2 min for its lists and packages, so it stopped asking\\. ` +
        `Nothing was taken for an answer: what was verified is kept and the checkpoint has not moved; run ${again} again after (\\d{4}-\\d\\d-\\d\\d )?\\d\\d:\\d\\d UTC to resume\\.$`,
    );

  it('a Change List refused with a Retry-After longer than a run waits: the run pauses at once, says so, its checkpoint unmoved; the next sync resumes', async () => {
    expect(await sync({ url: capabilityList(), dest, proxyEnv: {} })).toMatchObject({ mode: 'baseline', failed: 0 });
    const checkpoint = readFolder(dest)!.checkpoint?.at;
    fixture.change('update', 3);
    fixture.setRefusing({ prefix: '/dataset1/changelist', status: 503, headers: { 'retry-after': '3600' } });
    const notes: string[] = [];
    const t0 = Date.now();
    const first = await sync({ dest, proxyEnv: {}, onNote: (n) => notes.push(n) });
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(first).toMatchObject({ mode: 'incremental', paused: true, updated: 0, failed: 0 });
    expect(first.pausedBecause).toMatch(PAUSED_FOR_AN_HOUR(fixture.url + fixture.paths.dataset1.changeListIndex));
    expect(notes.some((n) => /no change is listed/.test(n))).toBe(false);
    expect(runs().at(-1)).toMatchObject({ status: 'interrupted', message: first.pausedBecause });
    expect(readFolder(dest)!.checkpoint?.at).toBe(checkpoint);
    expect(first.checkpoint).toBe(checkpoint);

    fixture.setRefusing(null);
    expect(await sync({ dest, proxyEnv: {} })).toMatchObject({ mode: 'incremental', resumed: true, paused: false, failed: 0, updated: 3 });
  });

  it('a dry run paused by refusals says there is nothing to resume, and records no run to resume', async () => {
    expect(await sync({ url: capabilityList(), dest, proxyEnv: {} })).toMatchObject({ mode: 'baseline', failed: 0 });
    const journal = runs().length;
    fixture.change('update', 3);
    // Before, both said "what was verified is kept …; run the sync again … to resume", of a run that writes nothing.
    const RUN_IT_AGAIN = / A dry run writes nothing, so there is nothing to resume: run the dry run again (after (\d{4}-\d\d-\d\d )?\d\d:\d\d UTC|later); it starts from the beginning\./;
    fixture.setRefusing({ prefix: '/dataset1/changelist', status: 503, headers: { 'retry-after': '1' } });
    const refused = await sync({ dest, dryRun: true, refusalLimitMs: 700, proxyEnv: {} });
    expect(refused).toMatchObject({ dryRun: true, paused: true, runId: null });
    expect(refused.pausedBecause).toMatch(/^Paused: the Source refused /);
    expect(refused.pausedBecause).toMatch(RUN_IT_AGAIN);
    expect(refused.pausedBecause).not.toMatch(/verified is kept|the sync again/);
    fixture.setRefusing({ prefix: '/dataset1/changelist', status: 503, headers: { 'retry-after': '3600' } });
    const waiting = await sync({ dest, dryRun: true, proxyEnv: {} });
    expect(waiting).toMatchObject({ dryRun: true, paused: true, runId: null });
    expect(waiting.pausedBecause).toMatch(/^Paused: the Source answered HTTP 503 \(Service Unavailable\) to .*, asking to wait 1 h \(Retry-After\);.* Nothing was taken for an answer\. /);
    expect(waiting.pausedBecause).toMatch(RUN_IT_AGAIN);
    expect(waiting.pausedBecause).not.toMatch(/verified is kept|the sync again/);
    // Nothing was recorded: the next sync is a new incremental one, not a resumed one.
    expect(runs().length).toBe(journal);
    fixture.setRefusing(null);
    expect(await sync({ dest, proxyEnv: {} })).toMatchObject({ mode: 'incremental', resumed: false, paused: false, updated: 3 });
  });

  it('a Resource List refused with a Retry-After longer than a run waits: the baseline pauses, not fails', async () => {
    fixture.setRefusing({ prefix: fixture.paths.dataset1.resourceList, status: 503, headers: { 'retry-after': '3600' } });
    const first = await sync({ url: capabilityList(), dest, proxyEnv: {} });
    expect(first).toMatchObject({ mode: 'baseline', paused: true, failed: 0, created: 0, checkpoint: null });
    expect(first.pausedBecause).toMatch(PAUSED_FOR_AN_HOUR(fixture.url + fixture.paths.dataset1.resourceList));
    fixture.setRefusing(null);
    expect(await sync({ dest, proxyEnv: {} })).toMatchObject({ mode: 'baseline', resumed: true, paused: false, failed: 0, created: 12 });
  });

  it('every resource refused with a Retry-After longer than a run waits: the baseline pauses at once, not "failed" with a failure each', async () => {
    // Before, each resource failed at once ("the server asks to wait 1 h … longer than the 2 min a mirror waits"): the
    // baseline ended failed with 12 failures.
    fixture.setRefusing({ prefix: '/dataset1/res/', status: 503, headers: { 'retry-after': '3600' } });
    const t0 = Date.now();
    const first = await sync({ url: capabilityList(), dest, concurrency: 4, proxyEnv: {} });
    expect(Date.now() - t0).toBeLessThan(5_000);
    // (Resources with a copy elsewhere, rel="duplicate" under /mirror/, are served from it.)
    expect(first).toMatchObject({ mode: 'baseline', paused: true, failed: 0, checkpoint: null });
    expect(first.failures).toEqual([]);
    expect(first.pausedBecause).toMatch(
      /^Paused: the Source answered HTTP 503 \(Service Unavailable\) to http:\/\/127\.0\.0\.1:\d+\/dataset1\/res\/\S+, asking to wait 1 h \(Retry-After\); a run waits at most 2 min for a resource, so it stopped asking\. Nothing was taken for an answer: what was verified is kept and the checkpoint has not moved; run the sync again after (\d{4}-\d\d-\d\d )?\d\d:\d\d UTC to resume\.$/,
    );
    expect(runs().at(-1)).toMatchObject({ status: 'interrupted', message: first.pausedBecause });
    fixture.setRefusing(null);
    expect(await sync({ dest, proxyEnv: {} })).toMatchObject({ mode: 'baseline', resumed: true, paused: false, failed: 0, created: 12 });
  });

  it("a dump's package refused with a Retry-After longer than a run waits: the run pauses, the package is not failed, the next sync applies it", async () => {
    // The first package: the one under way when the refusal comes (a later one's download, started ahead, is seen to
    // fail only once its turn comes, after the pause stopped the loop).
    const pkg = fixture.paths.dataset1.resourceDumpPackage(1);
    fixture.setRefusing({ prefix: pkg, status: 503, headers: { 'retry-after': '3600' } });
    const first = await sync({ url: capabilityList(), dest, useDumps: true, proxyEnv: {} });
    expect(first).toMatchObject({ mode: 'baseline', from: 'dumps', paused: true, failed: 0, checkpoint: null });
    expect(first.failures).toEqual([]);
    expect(first.pausedBecause).toMatch(PAUSED_FOR_AN_HOUR(fixture.url + pkg));
    fixture.setRefusing(null);
    const second = await sync({ dest, useDumps: true, proxyEnv: {} });
    expect(second).toMatchObject({ mode: 'baseline', from: 'dumps', resumed: true, paused: false, failed: 0, created: 12 });
    expect(second.checkpoint).not.toBeNull();
  });

  it("a Change Dump's packages refused with a Retry-After longer than a run waits: the run pauses, nothing failed, the checkpoint unmoved", async () => {
    // Change Lists of four changes, so that the eight updates below close two, which the Change Dump then holds.
    await fixture.close();
    fixture = await startFixtureSource({ resources: 12, changeListSize: 4 });
    expect(await sync({ url: capabilityList(), dest, useDumps: true, proxyEnv: {} })).toMatchObject({ mode: 'baseline', failed: 0 });
    const checkpoint = readFolder(dest)!.checkpoint?.at;
    for (let id = 1; id <= 8; id++) fixture.change('update', 1, id);
    fixture.setRefusing({ prefix: '/dataset1/changedump/', status: 503, headers: { 'retry-after': '3600' } });
    const notes: string[] = [];
    const first = await sync({ dest, useDumps: true, proxyEnv: {}, onNote: (n) => notes.push(n) });
    // Not taken for a package that cannot be had ("could not be used", its changes sent to the Change List).
    expect(notes.filter((n) => /could not be used/.test(n))).toEqual([]);
    expect(first).toMatchObject({ mode: 'incremental', from: 'dumps', paused: true, failed: 0, updated: 0 });
    expect(first.pausedBecause).toMatch(/^Paused: the Source answered HTTP 503 \(Service Unavailable\) to http:\/\/127\.0\.0\.1:\d+\/dataset1\/changedump\/\d+\.zip, asking to wait 1 h/);
    expect(readFolder(dest)!.checkpoint?.at).toBe(checkpoint);
    fixture.setRefusing(null);
    expect(await sync({ dest, useDumps: true, proxyEnv: {} })).toMatchObject({ mode: 'incremental', resumed: true, paused: false, failed: 0, updated: 8 });
  });

  it('a Retry-After past what a date can hold is said as "later", not a crash of the run', async () => {
    const watch = new RefusalWatch(50);
    try {
      watch.refused('HTTP 503 (Service Unavailable)', 1e20);
      await new Promise((r) => setTimeout(r, 150));
      expect(watch.stopped?.message).toMatch(/asking to wait more than 100 years \(Retry-After\)\. .*run the sync again later to resume/);
    } finally {
      watch.close();
    }
    const asked = new RefusalWatch(60_000);
    asked.askedToWait('HTTP 429 (Too Many Requests)', 1e20, 120_000, 'http://127.0.0.1:1/changelist.xml');
    expect(asked.stopped?.message).toMatch(/asking to wait more than 100 years \(Retry-After\);.*run the sync again later to resume\.$/);
    expect(asked.signal.aborted).toBe(true);
  });

  it("a dump's package refused until the limit pauses the run: the package is not recorded failed, the next sync applies it", async () => {
    fixture.setRefusing({ prefix: fixture.paths.dataset1.resourceDumpPackage(1), status: 503, headers: { 'retry-after': '1' } });
    const first = await sync({ url: capabilityList(), dest, useDumps: true, refusalLimitMs: 700, proxyEnv: {} });
    expect(first).toMatchObject({ from: 'dumps', paused: true, failed: 0 });
    expect(first.failures).toEqual([]);
    expect(first.pausedBecause).toMatch(/^Paused: the Source refused /);
    fixture.setRefusing(null);
    expect(await sync({ dest, useDumps: true, proxyEnv: {} })).toMatchObject({ from: 'dumps', resumed: true, paused: false, failed: 0, created: 12 });
  });

  it('is not stopped by a Source that answers between its refusals', async () => {
    const watch = new RefusalWatch(200);
    try {
      for (let i = 0; i < 6; i++) {
        watch.refused('HTTP 503 (Service Unavailable)', 1000);
        await new Promise((r) => setTimeout(r, 60));
        watch.answered();
      }
      expect(watch.stopped).toBeNull();
      expect(watch.signal.aborted).toBe(false);
      watch.refused('HTTP 503 (Service Unavailable)', 1000);
      await new Promise((r) => setTimeout(r, 300));
      expect(watch.signal.aborted).toBe(true);
      expect(watch.stopped?.message).toMatch(/refused the one request of the last 0.2 s/);
    } finally {
      watch.close();
    }
  });
});
