// rsdesk run unattended (cron, a systemd timer, a container), as docs/cli.md "Running on a server" describes it:
// real processes against the fixture Source, their stderr a pipe as a scheduler's is.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../e2e/fixture-source/index.ts';
import { RSDESK_BIN, runRsdesk, startRsdesk, waitUntil } from './run-rsdesk.ts';
import { processAlive } from '../engine/mirror/lock.ts';

const start = startRsdesk;
const until = waitUntil;

const walk = (dir: string, prefix = ''): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]));
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
      // No "press Ctrl-C again": no one at a terminal sent SIGTERM.
      expect(run.out.stderr).toContain('Stopping (SIGTERM): the downloads under way finish, and what was verified is kept. If it has not stopped within 5 s, or at a second SIGTERM, it stops at once.');
      expect(run.out.stderr).not.toContain('Ctrl-C');
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

  /** What a stop that kept every verified resource leaves; then the next sync resumes, fetching none of them again. */
  async function expectResumable(source: FixtureSource, dest: string): Promise<void> {
    const visible = walk(dest).filter((p) => !p.startsWith('.resourcesync/'));
    const fetched = new Set(resourceGets(source));
    // Every resource asked for was finished and kept (a kill at once keeps none of the first durable batch).
    expect(visible.length).toBe(fetched.size);
    expect(visible.length).toBeGreaterThanOrEqual(6);
    expect(walk(join(dest, '.resourcesync')).filter((p) => p === 'lock' || p.startsWith('tmp/'))).toEqual([]);
    source.setResourceDelay(0);
    const next = await runRsdesk(['sync', '--dest', dest, '--json']);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).not.toContain('Took over the lock');
    expect(next.stderr).toContain('Resuming run 1');
    expect(JSON.parse(next.stdout)).toMatchObject({ mode: 'baseline', created: 40, failed: 0 });
    expect(resourceGets(source).slice(fetched.size).filter((p) => fetched.has(p))).toEqual([]);
  }

  it('SIGHUP (a closed ssh session), under nohup too: the downloads under way finish, exit 129, and the next sync resumes', async () => {
    const source = await startFixtureSource({ resources: 40, resourceDelayMs: 150 });
    try {
      const dest = mkdtempSync(join(tmpdir(), 'rsdesk-hup-'));
      // nohup cannot keep a Node program from a hangup (Node resets the ignored SIGHUP when it starts): what its
      // users get is the same stop as without it, never a run killed mid-batch.
      const run = start(['sync', source.url + source.paths.dataset1.resourceList, '--dest', dest, '--concurrency', '2'], { command: ['nohup'] });
      await until(() => resourceGets(source).length >= 6);
      run.child.kill('SIGHUP');
      expect(await run.ended).toBe(129);
      expect(run.out.stderr).toContain(
        'Stopping (SIGHUP): the downloads under way finish, and what was verified is kept (a hangup: the terminal or ssh session it ran in was closed, or kill -HUP). If it has not stopped within 5 s, or at a second SIGHUP, it stops at once.',
      );
      expect(run.out.stderr).not.toContain('Ctrl-C');
      expect(run.out.stderr).toContain(`rsdesk: stopped (SIGHUP). What was verified is kept; run 1 is left interrupted, and the next rsdesk sync --dest ${dest} resumes it.`);
      await expectResumable(source, dest);
    } finally {
      await source.close();
    }
  }, 60_000);

  it('its terminal closed under it (a pseudo-terminal hung up): the run stops as for SIGHUP, its output to the gone terminal is dropped, and the next sync resumes', async () => {
    const source = await startFixtureSource({ resources: 40, resourceDelayMs: 150 });
    try {
      const dest = mkdtempSync(join(tmpdir(), 'rsdesk-tty-'));
      const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
      const command = [process.execPath, RSDESK_BIN, 'sync', source.url + source.paths.dataset1.resourceList, '--dest', dest, '--concurrency', '2'].map(quote).join(' ');
      // script(1) runs rsdesk on a terminal of its own (a pseudo-terminal, its progress line drawn there); killed, it
      // closes that terminal as a closed terminal window or a dropped ssh -t session does: the kernel sends SIGHUP,
      // and every later write to the terminal fails (EIO).
      const terminal = spawn('script', ['-qfec', `exec ${command}`, '/dev/null'], { stdio: ['pipe', 'ignore', 'ignore'] });
      await until(() => resourceGets(source).length >= 6);
      const pid = (JSON.parse(readFileSync(join(dest, '.resourcesync', 'lock'), 'utf8')) as { pid: number }).pid;
      terminal.kill('SIGKILL');
      await until(() => !processAlive(pid));
      await expectResumable(source, dest);
    } finally {
      await source.close();
    }
  }, 60_000);
});
