// The list reader's findings (what a Resource List or Change List breaks of the spec) reach the run: its result and
// its journal, bounded, and a resumed run's journal without repeats. The fixture's sloppy view breaks a few rules.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SLOPPY, startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { ListFindings, MAX_RUN_FINDINGS } from './list-findings.ts';
import { MirrorState, stateDirOf } from './state.ts';
import { sync } from './sync.ts';
import { runsCommand } from '../../cli/mirror-commands.ts';

let fixture: FixtureSource;
let dest: string;

beforeEach(async () => {
  fixture = await startFixtureSource({ resources: 10 });
  dest = mkdtempSync(join(tmpdir(), 'findings-'));
});
afterEach(async () => {
  await fixture.close();
});

function journal() {
  const state = new MirrorState(stateDirOf(dest));
  try {
    return state.runs().map((r) => ({ ...r, findings: state.runFindings(r.id) }));
  } finally {
    state.close();
  }
}

describe('what the lists break reaches the run', () => {
  it('a baseline and an incremental sync report and journal the findings of every list they read', async () => {
    const first = await sync({ url: fixture.url + SLOPPY.capabilityList, dest, proxyEnv: {} });
    const index = fixture.url + '/sloppy/resourcelist.xml';
    expect(first.findings).toContainEqual({ document: index, severity: 'error', code: 'missing-up', message: expect.stringContaining('must link up to it'), line: 3 });
    // The parts of the index too, each under its own URL.
    expect(first.findings.filter((f) => f.code === 'missing-up').map((f) => f.document)).toEqual([index, fixture.url + '/sloppy/resourcelist-1.xml', fixture.url + '/sloppy/resourcelist-2.xml']);
    expect(first.findingCount).toBe(first.findings.length);
    const [run] = journal();
    expect(run!.findingCount).toBe(first.findingCount);
    expect(run!.findings).toEqual(first.findings);

    fixture.change('update', 2);
    const second = await sync({ dest, proxyEnv: {} });
    expect(second.mode).toBe('incremental');
    expect(second.findings.map((f) => f.code).sort()).toEqual(['missing-from', 'missing-up']);
    expect(journal()[1]!.findings).toEqual(second.findings);
    // A dry run reports them, and records nothing.
    const dry = await sync({ dest, proxyEnv: {}, dryRun: true });
    expect(dry.findings.length).toBeGreaterThan(0);
    expect(journal()).toHaveLength(2);
  });

  it('keeps the first findings of a run and counts the rest; a resumed run reads its lists again without counting them twice', async () => {
    const pause = new AbortController();
    fixture.setResourceDelay(100);
    const first = await sync({
      url: fixture.url + SLOPPY.capabilityList,
      dest,
      concurrency: 1,
      proxyEnv: {},
      pauseSignal: pause.signal,
      onProgress: (p) => {
        if (p.settled >= 2) pause.abort();
      },
    });
    expect(first.paused).toBe(true);
    fixture.setResourceDelay(0);
    const second = await sync({ dest, proxyEnv: {} });
    expect(second.resumed).toBe(true);
    const [run] = journal();
    expect(run!.findingCount).toBe(second.findingCount);
    expect(run!.findings).toHaveLength(second.findingCount);

    const state = new MirrorState(stateDirOf(dest));
    try {
      const id = state.startRun('baseline', 'auto', null).id;
      const findings = new ListFindings(state, id);
      const many = Array.from({ length: 70 }, (_, i) => ({ severity: 'warning' as const, code: 'x', message: `m${i}`, line: i + 1 }));
      findings.add('http://a/1.xml', many);
      findings.add('http://a/2.xml', many);
      expect(findings.count).toBe(140);
      expect(findings.first).toHaveLength(MAX_RUN_FINDINGS);
      expect(state.runFindings(id)).toHaveLength(MAX_RUN_FINDINGS);
      expect(state.runFindings(id).at(-1)).toEqual({ document: 'http://a/2.xml', severity: 'warning', code: 'x', message: 'm29', line: 30 });
      expect(state.run(id)!.findingCount).toBe(140);
    } finally {
      state.close();
    }
  });

  it("a dump run reports and journals what its packages' manifests break, each under its package", async () => {
    await fixture.close();
    fixture = await startFixtureSource({ resources: 10, changeListSize: 4, manifestsWithoutUp: true });
    const P = fixture.paths.dataset1;
    const first = await sync({ url: fixture.url + P.capabilityList, dest, proxyEnv: {}, useDumps: true });
    expect(first).toMatchObject({ mode: 'baseline', from: 'dumps', failed: 0 });
    const manifests = first.findings.filter((f) => f.code === 'missing-up').map((f) => f.document);
    expect(manifests).toEqual([1, 2].map((n) => `${fixture.url}${P.resourceDumpPackage(n)} (its manifest.xml)`));
    expect(journal()[0]!.findings).toEqual(first.findings);
    expect(journal()[0]!.findingCount).toBe(first.findingCount);

    fixture.change('update', 4);
    const second = await sync({ dest, proxyEnv: {}, useDumps: true });
    expect(second).toMatchObject({ mode: 'incremental', from: 'dumps', failed: 0 });
    // The closed list of the changes after the baseline is the third: its package holds them.
    expect(second.findings.filter((f) => f.code === 'missing-up').map((f) => f.document)).toEqual([`${fixture.url}${P.changeDumpPackage(3)} (its manifest.xml)`]);
    expect(journal()[1]!.findings).toEqual(second.findings);
    let out = '';
    runsCommand({ dest, json: false }, { out: (t) => void (out += t), err: () => {} });
    expect(out).toContain(`Error: ${fixture.url}${P.changeDumpPackage(3)} (its manifest.xml) line `);
  });
});
