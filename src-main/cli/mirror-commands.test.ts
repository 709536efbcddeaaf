// rsdesk sync / audit / runs as people run them: real processes against the fixture Source.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../e2e/fixture-source/index.ts';

const BIN = fileURLToPath(new URL('../../bin/rsdesk.mjs', import.meta.url));
let fixture: FixtureSource;

function rsdesk(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  fixture = await startFixtureSource({ resources: 20 });
});
afterAll(async () => {
  await fixture.close();
});

describe('rsdesk sync, audit, runs', () => {
  it('mirrors from the site URL, prints the JSON shape, audits in sync, lists the runs', async () => {
    const dest = mkdtempSync(join(tmpdir(), 'rsdesk-sync-'));
    // The site has two Capability Lists: the error lists them.
    const ambiguous = await rsdesk(['sync', fixture.url, '--dest', dest]);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toContain('--capabilitylist');
    expect(ambiguous.stderr).toContain(fixture.url + fixture.paths.dataset1.capabilityList);

    const first = await rsdesk(['sync', fixture.url, '--dest', dest, '--capabilitylist', fixture.url + fixture.paths.dataset1.capabilityList, '--json']);
    expect(first.code).toBe(0);
    const json = JSON.parse(first.stdout);
    expect(Object.keys(json)).toEqual(['mode', 'created', 'updated', 'deleted', 'unchanged', 'failed', 'bytes', 'seconds', 'failures']);
    expect(json).toMatchObject({ mode: 'baseline', created: 20, failed: 0, failures: [] });

    fixture.change('update', 2);
    const second = await rsdesk(['sync', '--dest', dest, '--json']);
    expect(JSON.parse(second.stdout)).toMatchObject({ mode: 'incremental', updated: 2, failed: 0 });

    const inSync = await rsdesk(['audit', '--dest', dest, '--json']);
    expect(inSync.code).toBe(0);
    expect(JSON.parse(inSync.stdout)).toEqual({ inSync: true, missing: [], extra: [], changed: [], unverifiable: [] });

    rmSync(join(dest, new URL(fixture.url).host.replace(':', '_'), ...fixture.state.pathOf(1).split('/').filter(Boolean)));
    const notInSync = await rsdesk(['audit', '--dest', dest, '--json']);
    expect(notInSync.code).toBe(1);
    expect(JSON.parse(notInSync.stdout).missing).toEqual([fixture.state.locOf(1)]);

    const runs = await rsdesk(['runs', '--dest', dest, '--json']);
    expect(runs.code).toBe(0);
    expect(JSON.parse(runs.stdout).runs.map((r: { kind: string }) => r.kind)).toEqual(['baseline', 'incremental', 'audit', 'audit']);
    const text = await rsdesk(['runs', '--dest', dest]);
    expect(text.stdout).toMatch(/#1 baseline \(auto\) completed/);
  }, 60_000);

  it('exits 1 when a resource failed, 2 on usage errors', async () => {
    const dest = mkdtempSync(join(tmpdir(), 'rsdesk-sync-'));
    fixture.setBroken(fixture.state.pathOf(3), 'corrupt');
    const failed = await rsdesk(['sync', fixture.url + fixture.paths.dataset1.resourceList, '--dest', dest]);
    fixture.setBroken(fixture.state.pathOf(3), null);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/failed 1/);
    expect(failed.stdout).toContain(`${fixture.state.locOf(3)}: fixity mismatch`);
    for (const args of [
      ['sync', fixture.url],
      ['sync', fixture.url, '--dest', dest, '--mode', 'sideways'],
      ['sync', fixture.url, '--dest', dest, '--delete', 'maybe'],
      ['sync', fixture.url, '--dest', dest, '--concurrency', '0'],
      ['sync', fixture.url, '--dest', dest, '--map', 'nothing'],
      ['audit'],
      ['runs', '--dest', dest, 'extra'],
    ]) {
      const r = await rsdesk(args);
      expect(r.code, args.join(' ')).toBe(2);
    }
  }, 60_000);
});
