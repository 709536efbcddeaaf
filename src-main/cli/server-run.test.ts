// rsdesk run unattended (cron, a systemd timer, a container), as docs/cli.md "Running on a server" describes it:
// real processes against the fixture Source, their stderr a pipe as a scheduler's is.
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../e2e/fixture-source/index.ts';
import { runRsdesk, startRsdesk, waitUntil } from './run-rsdesk.ts';

const start = startRsdesk;
const until = waitUntil;

const resourceGets = (source: FixtureSource) => source.requests.filter((r) => r.method === 'GET' && /\/res\/\d+/.test(r.path)).map((r) => r.path);

describe('rsdesk on a server', () => {
  it('a folder another run holds: sync, retry and audit exit 75 (try later) and say who holds it; the holder ends 0 with no terminal codes on its stderr', async () => {
    const source = await startFixtureSource({ resources: 4 });
    try {
      source.setPathDelay(source.state.pathOf(2), 15_000);
      const dest = mkdtempSync(join(tmpdir(), 'rsdesk-overlap-'));
      const first = start(['sync', source.url + source.paths.dataset1.resourceList, '--dest', dest]);
      await until(() => resourceGets(source).includes(source.state.pathOf(2)));
      for (const args of [['sync', '--dest', dest], ['retry', '--dest', dest], ['audit', '--dest', dest]]) {
        const second = await runRsdesk(args);
        expect(second.code, `${args[0]}: ${second.stderr}`).toBe(75);
        expect(second.stderr).toMatch(/^rsdesk: The mirror .* is in use by rsdesk sync \(process \d+ on /);
      }
      source.setPathDelay(source.state.pathOf(2), 0);
      expect(await first.ended).toBe(0);
      // A scheduler's log gets plain lines: no progress line redrawn with carriage returns and ANSI codes.
      expect(first.out.stderr).not.toMatch(/[\r\x1b]/);
      expect(first.out.stdout).not.toMatch(/[\r\x1b]/);
      expect(first.out.stdout).toMatch(/^Baseline of .* in [\d.]+ s\n {2}created 4,/);
    } finally {
      await source.close();
    }
  }, 60_000);

  it('SIGTERM during a long download: stops within its grace, says so, exits 143, and the next sync resumes the run', async () => {
    const source = await startFixtureSource({ resources: 6 });
    try {
      // One download longer than the grace (as a large file's would be; docker stop waits 10 s, then kills).
      source.setPathDelay(source.state.pathOf(3), 15_000);
      const dest = mkdtempSync(join(tmpdir(), 'rsdesk-term-'));
      const run = start(['sync', source.url + source.paths.dataset1.resourceList, '--dest', dest, '--concurrency', '1']);
      await until(() => resourceGets(source).includes(source.state.pathOf(3)));
      const t = Date.now();
      run.child.kill('SIGTERM');
      expect(await run.ended).toBe(143);
      const took = Date.now() - t;
      expect(took).toBeGreaterThanOrEqual(4_500);
      expect(took).toBeLessThan(11_000);
      expect(run.out.stderr).toContain('Stopping (SIGTERM): the downloads under way finish, and what was verified is kept; press Ctrl-C again to stop at once. If it has not stopped within 5 s, it stops at once.');
      expect(run.out.stderr).toContain('rsdesk: not stopped within 5 s of SIGTERM.');
      expect(run.out.stderr).toContain(`which resumes the run.`);
      expect(readdirSync(join(dest, '.resourcesync'))).not.toContain('lock');

      source.setPathDelay(source.state.pathOf(3), 0);
      const next = await runRsdesk(['sync', '--dest', dest, '--json']);
      expect(next.code, next.stderr).toBe(0);
      expect(next.stderr).toMatch(/Resuming run 1 \(paused baseline\)|Resuming run 1/);
      expect(JSON.parse(next.stdout)).toMatchObject({ mode: 'baseline', failed: 0 });
    } finally {
      await source.close();
    }
  }, 60_000);
});
