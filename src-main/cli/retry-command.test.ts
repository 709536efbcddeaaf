// rsdesk retry as people run it: a real process against the fixture Source fetches again only what failed, and
// Ctrl-C pauses it as it pauses rsdesk sync; the next rsdesk retry takes it up for what it had not done.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../e2e/fixture-source/index.ts';
import { RSDESK_BIN, runRsdesk } from './run-rsdesk.ts';

let source: FixtureSource;
let dest: string;

beforeEach(async () => {
  source = await startFixtureSource({ resources: 20 });
  dest = mkdtempSync(join(tmpdir(), 'rsdesk-retry-'));
});
afterEach(async () => {
  await source.close();
});

const rsdesk = (args: string[]) => runRsdesk(args, { env: { HTTP_PROXY: '', http_proxy: '' } });
const resourceGets = () => source.requests.filter((r) => r.method === 'GET' && /\/res\/\d+/.test(r.path)).map((r) => r.path.replace(/^\/mirror\//, '/'));
const walk = (dir: string, prefix = ''): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]));

function breakResources(ids: number[], broken: boolean): void {
  for (const id of ids) {
    const path = source.state.pathOf(id);
    source.setBroken(path, broken ? { status: 404 } : null);
    source.setBroken(`/mirror${path}`, broken ? { status: 404 } : null);
  }
}

async function failedSync(ids: number[]): Promise<void> {
  breakResources(ids, true);
  const first = await rsdesk(['sync', source.url + source.paths.dataset1.capabilityList, '--dest', dest, '--json', '--timeout', '5']);
  expect(first.code, first.stderr).toBe(1);
  expect(JSON.parse(first.stdout)).toMatchObject({ created: 20 - ids.length, failed: ids.length });
  breakResources(ids, false);
}

describe('rsdesk retry', () => {
  it('fetches again only the failures of the last run, prints the sync --json shape, exits 1 when one fails again', async () => {
    await failedSync([3, 5, 7]);
    breakResources([7], true);
    let before = resourceGets().length;
    const retry = await rsdesk(['retry', '--dest', dest, '--json']);
    expect(retry.code, retry.stderr).toBe(1);
    const json = JSON.parse(retry.stdout);
    expect(Object.keys(json)).toEqual(['mode', 'created', 'updated', 'deleted', 'unchanged', 'skipped', 'failed', 'bytes', 'seconds', 'failures']);
    expect(json).toMatchObject({ mode: 'retry', created: 2, failed: 1, failures: [{ uri: source.state.locOf(7) }] });
    expect(new Set(resourceGets().slice(before))).toEqual(new Set([3, 5, 7].map((id) => source.state.pathOf(id))));

    // The last run is now the retry: what still stands of the run it retried (7) is fetched, nothing else.
    breakResources([7], false);
    before = resourceGets().length;
    const again = await rsdesk(['retry', '--dest', dest]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^Retry \(run 3\) of 1 resource that failed in run 1, in [\d.]+ s\n {2}created 1, updated 0, deleted 0, unchanged 0, skipped 0, failed 0;/);
    expect(resourceGets().slice(before)).toEqual([source.state.pathOf(7)]);

    // Nothing left to retry is no failure (a nightly retry from a timer exited 1 for it): said, exit 0, no run.
    const nothing = await rsdesk(['retry', '--dest', dest, '--json']);
    expect(nothing.code).toBe(0);
    expect(JSON.parse(nothing.stdout)).toMatchObject({ mode: 'retry', failed: 0, failures: [], nothingToRetry: 'Every resource that failed in run 1 has been mirrored since; there is nothing to retry.' });
    const runs = JSON.parse((await rsdesk(['runs', '--dest', dest, '--json'])).stdout).runs as { mode: string; status: string }[];
    expect(runs.map((r) => [r.mode, r.status])).toEqual([
      ['auto', 'failed'],
      ['retry', 'failed'],
      ['retry', 'completed'],
    ]);
  }, 60_000);

  it('--run picks the run; one with no failures (exit 0), an audit, a run that does not exist and no mirror (exit 1) are said plainly', async () => {
    await failedSync([2]);
    expect((await rsdesk(['sync', '--dest', dest])).code).toBe(0);
    const none = await rsdesk(['retry', '--dest', dest]);
    expect(none.code).toBe(0);
    expect(none.stdout).toBe('Run 2 has no failures to retry.\n');
    expect((await rsdesk(['audit', '--dest', dest])).code).toBe(0);
    const audit = await rsdesk(['retry', '--dest', dest, '--run', '3']);
    expect(audit.code).toBe(1);
    expect(audit.stderr).toContain('Run 3 is an audit');
    expect((await rsdesk(['retry', '--dest', dest, '--run', '9'])).stderr).toContain('This mirror has no run 9.');
    // Run 1's failure was mirrored by the sync since.
    expect((await rsdesk(['retry', '--dest', dest, '--run', '1'])).stdout).toContain('has been mirrored since');
    const empty = mkdtempSync(join(tmpdir(), 'rsdesk-retry-'));
    const notMirror = await rsdesk(['retry', '--dest', empty]);
    expect(notMirror.code).toBe(1);
    expect(notMirror.stderr).toContain('is not a mirror');
    expect(readdirSync(empty)).toEqual([]);
    for (const args of [['retry'], ['retry', '--dest', dest, '--run', '0'], ['retry', '--dest', dest, '--run', 'last'], ['retry', '--dest', dest, '--concurrency', '0'], ['retry', '--dest', dest, 'x']]) {
      expect((await rsdesk(args)).code, args.join(' ')).toBe(2);
    }
  }, 60_000);

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal} pauses it (exit ${signal === 'SIGINT' ? 130 : 143}); rsdesk retry takes it up without fetching again what was verified`, async () => {
      const ids = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
      await failedSync(ids);
      source.setResourceDelay(150);
      const before = resourceGets().length;
      const child = spawn(process.execPath, [RSDESK_BIN, 'retry', '--dest', dest, '--concurrency', '1'], { stdio: ['ignore', 'pipe', 'pipe'] });
      const out = { stdout: '', stderr: '' };
      child.stdout.setEncoding('utf8').on('data', (c: string) => (out.stdout += c));
      child.stderr.setEncoding('utf8').on('data', (c: string) => (out.stderr += c));
      const ended = new Promise<number | null>((res) => child.on('close', (code) => res(code)));
      const deadline = Date.now() + 20_000;
      while (resourceGets().length - before < 3) {
        if (Date.now() > deadline) throw new Error('waited too long');
        await new Promise((r) => setTimeout(r, 20));
      }
      child.kill(signal);
      expect(await ended).toBe(signal === 'SIGINT' ? 130 : 143);
      expect(out.stderr).toContain(`Stopping (${signal}): the downloads under way finish, and what was verified is kept`);
      expect(out.stderr).toContain(`rsdesk: stopped (${signal}). What was verified is kept; retry run 2 is left interrupted, and the next rsdesk retry --dest ${dest} takes it up again.`);
      expect(out.stdout).toContain(`Stopped before the end: the next rsdesk retry --dest ${dest} takes it up again`);
      expect(walk(join(dest, '.resourcesync')).filter((p) => p === 'lock' || p.startsWith('tmp/'))).toEqual([]);
      const fetched = new Set(resourceGets().slice(before));
      expect(fetched.size).toBeGreaterThanOrEqual(3);
      expect(fetched.size).toBeLessThan(ids.length);
      const runs = JSON.parse((await rsdesk(['runs', '--dest', dest, '--json'])).stdout).runs as { mode: string; status: string }[];
      expect(runs.at(-1)).toMatchObject({ mode: 'retry', status: 'interrupted' });

      // A sync does not take a retry up; rsdesk retry does, for the rest only.
      source.setResourceDelay(0);
      const n = resourceGets().length;
      const resumed = await rsdesk(['retry', '--dest', dest, '--json']);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(JSON.parse(resumed.stdout)).toMatchObject({ mode: 'retry', created: ids.length, failed: 0 });
      const again = resourceGets().slice(n);
      expect(again.filter((p) => fetched.has(p))).toEqual([]);
      expect(new Set(again).size).toBe(ids.length - fetched.size);
      const after = JSON.parse((await rsdesk(['runs', '--dest', dest, '--json'])).stdout).runs as { id: number; mode: string; status: string }[];
      expect(after.map((r) => [r.id, r.mode, r.status])).toEqual([
        [1, 'auto', 'failed'],
        [2, 'retry', 'completed'],
      ]);
    }, 60_000);
  }
});
