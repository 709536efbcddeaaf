// rsdesk sync / audit / runs as people run them: real processes against the fixture Source.
import { createServer as createHttpServer } from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../e2e/fixture-source/index.ts';
import { main } from './rsdesk.ts';
import { auditCommand } from './mirror-commands.ts';
import { exportAudit } from '../app/audit-export.ts';
import { lastAudit } from '../engine/mirror/audit.ts';
import { canMakeReadOnly, makeReadOnly } from '../engine/mirror/read-only-folder.ts';
import type { Io } from './io.ts';
import { runRsdesk, startRsdesk, waitUntil } from './run-rsdesk.ts';

let fixture: FixtureSource;

const rsdesk = (args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string) => runRsdesk(args, { env, cwd });

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
    expect(Object.keys(json)).toEqual(['mode', 'created', 'updated', 'deleted', 'unchanged', 'skipped', 'failed', 'bytes', 'seconds', 'failures']);
    expect(json).toMatchObject({ mode: 'baseline', created: 20, failed: 0, failures: [] });

    fixture.change('update', 2);
    const second = await rsdesk(['sync', '--dest', dest, '--json']);
    expect(JSON.parse(second.stdout)).toMatchObject({ mode: 'incremental', updated: 2, failed: 0 });

    const inSync = await rsdesk(['audit', '--dest', dest, '--json']);
    expect(inSync.code).toBe(0);
    // The shape of the app's JSON export (which adds what a file read alone needs): the same names for the same things.
    const inSyncJson = JSON.parse(inSync.stdout);
    expect(inSyncJson).toEqual({ inSync: true, inSyncCount: 20, missing: [], extra: [], changed: [], unverifiable: [], kept: [], at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), rehash: false });

    rmSync(join(dest, new URL(fixture.url).host.replace(':', '_'), ...fixture.state.pathOf(1).split('/').filter(Boolean)));
    const notInSync = await rsdesk(['audit', '--dest', dest, '--json']);
    expect(notInSync.code).toBe(1);
    expect(JSON.parse(notInSync.stdout).missing).toEqual([fixture.state.locOf(1)]);

    // The last report is kept in the mirror: --last prints it again, with nothing fetched.
    const requests = fixture.requests.length;
    const last = await rsdesk(['audit', '--dest', dest, '--last', '--json']);
    expect(last.code).toBe(1);
    expect(JSON.parse(last.stdout)).toMatchObject({ inSync: false, inSyncCount: 19, missing: [fixture.state.locOf(1)], rehash: false, at: JSON.parse(notInSync.stdout).at });
    expect(Object.keys(JSON.parse(last.stdout))).toEqual(Object.keys(JSON.parse(notInSync.stdout)));
    // One writer for both: the app's export is the same report, indented, with what a file read alone needs first.
    const file = join(mkdtempSync(join(tmpdir(), 'rsdesk-export-')), 'report.json');
    await exportAudit({ mirror: dest, runId: lastAudit(dest)!.runId, format: 'json', file, filter: null, replace: false, deletePolicy: 'keep', source: 'S' });
    const { mirror, source, filter, ...exported } = JSON.parse(readFileSync(file, 'utf8'));
    expect({ mirror, source, filter }).toEqual({ mirror: dest, source: 'S', filter: null });
    expect(last.stdout).toBe(`${JSON.stringify(exported)}\n`);
    const lastText = await rsdesk(['audit', '--dest', dest, '--last']);
    expect(lastText.stdout).toMatch(/^Last audit: \d{4}-\d\d-\d\dT[^\n]*\nNot in sync \(19 resources match, by size and the hashes recorded when mirrored; --rehash reads every file again\):\n  missing \(1\):/);
    expect(fixture.requests.length).toBe(requests);
    expect((await rsdesk(['audit', '--dest', dest, '--last', '--rehash'])).code).toBe(2);

    const runs = await rsdesk(['runs', '--dest', dest, '--json']);
    expect(runs.code).toBe(0);
    expect(JSON.parse(runs.stdout).runs.map((r: { kind: string }) => r.kind)).toEqual(['baseline', 'incremental', 'audit', 'audit']);
    const text = await rsdesk(['runs', '--dest', dest]);
    expect(text.stdout).toMatch(/#1 baseline \(auto\) completed/);
  }, 60_000);

  it('audit: --json prints every difference even when the report in memory holds the first few; the text says how many more', async () => {
    const dest = mkdtempSync(join(tmpdir(), 'rsdesk-audit-cut-'));
    expect((await rsdesk(['sync', fixture.url, '--dest', dest, '--capabilitylist', fixture.url + fixture.paths.dataset1.capabilityList])).code).toBe(0);
    const host = new URL(fixture.url).host.replace(':', '_');
    const ids = [1, 2, 3, 4];
    for (const id of ids) rmSync(join(dest, host, ...fixture.state.pathOf(id).split('/').filter(Boolean)));
    const command = async (json: boolean, last = false) => {
      const io = { out: '', err: '' };
      const sink: Io = { out: (t) => void (io.out += t), err: (t) => void (io.err += t) };
      const code = await auditCommand({ dest, rehash: false, json, last, userAgent: 'test', reportLimit: 1 }, sink);
      return { code, ...io };
    };
    const missing = ids.map((id) => fixture.state.locOf(id));
    const json = await command(true);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.out)).toEqual({ inSync: false, inSyncCount: 16, missing, extra: [], changed: [], unverifiable: [], kept: [], at: expect.any(String), rehash: false });
    expect(JSON.parse((await command(true, true)).out)).toMatchObject({ inSync: false, inSyncCount: 16, missing, rehash: false });
    const text = (await command(false)).out;
    expect(text).toContain(`  missing (4):\n    ${missing[0]}\n    … and 3 more (--json lists them all)\n`);
    expect(text).not.toContain('too long to show whole');
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

  it('sync --dest of a folder that is no mirror, without a URL, is a usage error (exit 2): nothing is made; a mirror needs none', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'rsdesk-nourl-'));
    const dest = join(parent, 'new');
    for (const args of [['sync', '--dest', dest], ['sync', '--dest', dest, '--json'], ['sync', '--dest', parent, '--dry-run']]) {
      const r = await rsdesk(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout, args.join(' ')).toBe('');
      const folder = args[2];
      expect(r.stderr.split('\n')[0]).toBe(`rsdesk: ${folder} is not a mirror yet, and a new mirror needs the URL of its Source: rsdesk sync <url> --dest ${folder} (a folder that is a mirror already needs none)`);
      expect(r.stderr).toContain('Run "rsdesk sync --help" for every option.');
    }
    expect(readdirSync(parent)).toEqual([]);
    expect((await rsdesk(['sync', fixture.url + fixture.paths.dataset1.resourceList, '--dest', dest])).code).toBe(0);
    const again = await rsdesk(['sync', '--dest', dest, '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ failed: 0 });
  }, 60_000);

  it('refuses an empty --dest (an unset shell variable) with exit code 2, and writes nothing in the current folder', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'rsdesk-cwd-'));
    for (const args of [
      ['sync', fixture.url + fixture.paths.dataset1.resourceList, '--dest', ''],
      ['sync', fixture.url + fixture.paths.dataset1.resourceList, '--dest', ' '],
      ['audit', '--dest', ''],
      ['runs', '--dest', ''],
      ['watch', fixture.url + fixture.paths.dataset1.capabilityList, '--dest', ''],
    ]) {
      const r = await rsdesk(args, {}, cwd);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain('rsdesk: --dest is empty: give the folder of the mirror');
    }
    expect(readdirSync(cwd)).toEqual([]);
  }, 60_000);
});

describe('--json on every failure path', () => {
  const capture = async (args: string[]) => {
    const io = { out: '', err: '' };
    const code = await main(args, { out: (t) => void (io.out += t), err: (t) => void (io.err += t) });
    return { code, ...io };
  };

  it('prints one JSON object with the error when the Source answers 500, or the folder is no mirror (exit 1)', async () => {
    const server = createHttpServer((_req, res) => void res.writeHead(500, { 'content-type': 'text/plain' }).end('boom'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
      const parent = mkdtempSync(join(tmpdir(), 'rsdesk-json-'));
      const dest = join(parent, 'mirror with spaces');
      // A real process: its stdout as a script's JSON parser reads it.
      const spawned = await rsdesk(['sync', url, '--dest', dest, '--json']);
      expect(spawned.code).toBe(1);
      expect(spawned.stderr).toBe(`rsdesk: No ResourceSync Source found from ${url} (it answered: 500 Internal Server Error)\n`);
      expect(JSON.parse(spawned.stdout)).toEqual({ error: { message: `No ResourceSync Source found from ${url} (it answered: 500 Internal Server Error)` } });
      expect(readdirSync(parent)).toEqual([]);
      for (const args of [
        ['audit', '--dest', dest, '--json'],
        ['audit', '--json', '--dest', dest, '--rehash'],
        ['runs', '--dest', dest, '--json'],
        ['retry', '--dest', dest, '--json'],
      ]) {
        const r = await capture(args);
        expect(r.code, args.join(' ')).toBe(1);
        const { error } = JSON.parse(r.out) as { error: { message: string } };
        expect(r.err, args.join(' ')).toBe(`rsdesk: ${error.message}\n`);
        expect(error.message, args.join(' ')).toContain(dest);
      }
      // Without --json, stdout stays empty; a usage error (exit 2) says so on stderr alone.
      expect(await capture(['runs', '--dest', dest])).toMatchObject({ code: 1, out: '' });
      expect(await capture(['runs', '--dest', dest, '--json', '--rehash'])).toMatchObject({ code: 2, out: '' });
    } finally {
      server.close();
    }
  }, 60_000);
});

describe('rsdesk sync refused before its run begins', () => {
  it('leaves a new folder as it was, not bound to that Source: the corrected command may name another Capability List', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'rsdesk-refused-'));
    const dest = join(parent, 'mirror');
    const refused = await rsdesk(['sync', fixture.url + fixture.paths.dataset1.capabilityList, '--dest', dest, '--mode', 'incremental', '--json']);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout).error.message).toBe(`${dest} has no checkpoint yet (no baseline completed): run a baseline first`);
    expect(readdirSync(parent)).toEqual([]);
    const own = await startFixtureSource({ resources: 3 });
    try {
      const other = await rsdesk(['sync', own.url + own.paths.dataset1.capabilityList, '--dest', dest, '--json']);
      expect(other.code, other.stderr).toBe(0);
      expect(JSON.parse(other.stdout)).toMatchObject({ mode: 'baseline', created: 3, failed: 0 });
    } finally {
      await own.close();
    }
  }, 60_000);
});

describe('rsdesk sync --dest a folder that cannot be made', () => {
  // Root writes through permissions: for root the folder is made read-only by a mount instead (read-only-folder.ts).
  it.skipIf(!canMakeReadOnly)('says so in plain words (not "EACCES: … mkdir"), exit 1; a file on the way is said too', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'rsdesk-unmade-'));
    writeFileSync(join(parent, 'file'), 'x');
    const readOnly = makeReadOnly(parent);
    try {
      const dest = join(parent, 'a', 'b');
      const r = await rsdesk(['sync', fixture.url + fixture.paths.dataset1.capabilityList, '--dest', dest]);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`rsdesk: The folder ${dest} cannot be made for the mirror (${readOnly.why}): give a folder this user can write, or make it first.\n`);
    } finally {
      readOnly.restore();
    }
    const under = join(parent, 'file', 'mirror');
    const r = await rsdesk(['sync', fixture.url + fixture.paths.dataset1.capabilityList, '--dest', under, '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual({ error: { message: `The folder ${under} cannot be made for the mirror (a part of its path is a file): give a folder this user can write, or make it first.` } });
  });

  it('a folder under /proc is refused at once in plain words (Node\'s recursive mkdir spun there for ever)', async () => {
    // On Linux, /proc answers ENOENT for a new folder whose parent is there; elsewhere, a folder of a few levels in a
    // fresh place is made, level by level, and mirrored.
    const dest = process.platform === 'linux' ? `/proc/rsdesk-test-${process.pid}/mirror` : join(mkdtempSync(join(tmpdir(), 'rsdesk-levels-')), 'a', 'b', 'c');
    const run = startRsdesk(['sync', fixture.url + fixture.paths.dataset1.capabilityList, '--dest', dest]);
    const deadline = setTimeout(() => run.child.kill('SIGKILL'), 15_000);
    const code = await run.ended.finally(() => clearTimeout(deadline));
    if (process.platform === 'linux') {
      expect(code, 'rsdesk did not end within 15 s').toBe(1);
      // As root, /proc lets one try; as another user, it says no first.
      expect(run.out.stderr).toMatch(new RegExp(`^rsdesk: The folder ${dest} cannot be made for the mirror \\((/proc takes no new folders|permission denied)\\): give a folder this user can write, or make it first\\.\n$`));
    } else {
      expect(code, run.out.stderr).toBe(0);
      expect(statSync(join(dest, '.resourcesync')).isDirectory()).toBe(true);
    }
  }, 30_000);
});

describe('rsdesk sync --dest inside another mirror\'s own folder', () => {
  it('is refused: a mirror made in its .resourcesync/tmp was emptied by the next run of the mirror around it', async () => {
    const outer = mkdtempSync(join(tmpdir(), 'rsdesk-outer-'));
    const url = fixture.url + fixture.paths.dataset1.resourceList;
    expect((await rsdesk(['sync', url, '--dest', outer])).code).toBe(0);
    for (const inner of [join(outer, '.resourcesync', 'tmp', 'inner'), join(outer, '.resourcesync'), join(outer, '.resourcesync', 'quarantine', 'x')]) {
      const io = { out: '', err: '' };
      const code = await main(['sync', url, '--dest', inner, '--json'], { out: (t) => void (io.out += t), err: (t) => void (io.err += t) });
      expect(code, inner).toBe(1);
      expect(io.err, inner).toContain(`, the own folder of the mirror in ${outer}, whose runs empty parts of it: choose a folder outside it`);
      expect(JSON.parse(io.out).error.message).toContain(inner);
    }
    expect(readdirSync(join(outer, '.resourcesync')).sort()).not.toContain('.resourcesync');
    expect(readdirSync(join(outer, '.resourcesync', 'tmp'))).toEqual([]);
    // A folder named so that holds no mirror's state is any folder.
    const plain = join(mkdtempSync(join(tmpdir(), 'rsdesk-outer-')), '.resourcesync', 'm');
    expect((await rsdesk(['sync', url, '--dest', plain])).code).toBe(0);
  }, 60_000);
});

describe('rsdesk sync --map into the mirror\'s own folder', () => {
  it('is a usage error: nothing is made, so no run can empty .resourcesync/tmp over the mirrored files', async () => {
    const dest = join(mkdtempSync(join(tmpdir(), 'rsdesk-sync-')), 'mirror');
    for (const dir of ['.resourcesync/tmp', '.ResourceSync', '.resourcesync/quarantine']) {
      const r = await rsdesk(['sync', fixture.url + fixture.paths.dataset1.capabilityList, '--dest', dest, '--map', `${fixture.url}/=${dir}`]);
      expect(r.code, dir).toBe(2);
      expect(r.stderr, dir).toContain("cannot be inside .resourcesync, the mirror's own folder");
      expect(() => statSync(dest), dir).toThrow();
    }
  }, 30_000);
});

describe('rsdesk sync with credentials and settings', () => {
  it('takes --basic and --header, keeps the password in the user data folder (not the mirror), reuses both on a reopen', async () => {
    const basic = `Basic ${Buffer.from('me:pw').toString('base64')}`;
    const source = await startFixtureSource({ resources: 5, auth: basic });
    try {
      const dest = mkdtempSync(join(tmpdir(), 'rsdesk-auth-'));
      const data = mkdtempSync(join(tmpdir(), 'rsdesk-data-'));
      const env = { XDG_DATA_HOME: data, HTTP_PROXY: '', http_proxy: '' };
      const url = source.url + source.paths.dataset1.resourceList;
      const denied = await rsdesk(['sync', url, '--dest', mkdtempSync(join(tmpdir(), 'rsdesk-auth-'))], env);
      expect(denied.code).toBe(1);
      expect(denied.stderr).toMatch(/401/);
      const first = await rsdesk(['sync', url, '--dest', dest, '--basic', 'me:pw', '--header', 'X-Archive: yes', '--delay', '0.001', '--json'], env);
      expect(first.code, first.stderr).toBe(0);
      expect(JSON.parse(first.stdout)).toMatchObject({ created: 5, failed: 0 });
      const secrets = join(data, 'resourcesync-desktop', 'mirror-secrets.json');
      expect(first.stderr).toContain(`kept unsealed (in clear, readable only by your user account) in ${secrets}`);
      expect(readFileSync(secrets, 'utf8')).toContain('"pw"');
      expect(statSync(secrets).mode & 0o777).toBe(0o600);
      expect(source.requests.filter((r) => r.headers.authorization === basic).every((r) => r.headers['x-archive'] === 'yes')).toBe(true);
      const n = source.requests.length;
      const again = await rsdesk(['sync', '--dest', dest, '--mode', 'baseline', '--json'], env);
      expect(again.code, again.stderr).toBe(0);
      expect(source.requests.slice(n).every((r) => r.headers.authorization === basic && r.headers['x-archive'] === 'yes')).toBe(true);
      const elsewhere = await rsdesk(['sync', '--dest', dest], { ...env, XDG_DATA_HOME: mkdtempSync(join(tmpdir(), 'rsdesk-data-')) });
      expect(elsewhere.code).toBe(1);
      expect(elsewhere.stderr).toContain('give it again with --basic USER:PASSWORD (or RSDESK_BASIC)');
      const viaEnv = await rsdesk(['audit', '--dest', dest, '--json'], { ...env, XDG_DATA_HOME: mkdtempSync(join(tmpdir(), 'rsdesk-data-')), RSDESK_BASIC: 'me:pw' });
      expect(viaEnv.code, viaEnv.stderr).toBe(0);
      for (const args of [
        ['sync', url, '--dest', dest, '--token', 't', '--basic', 'a:b'],
        ['sync', url, '--dest', dest, '--basic', 'nocolon'],
        ['sync', url, '--dest', dest, '--header', 'Authorization: x'],
        ['sync', url, '--dest', dest, '--header', 'nocolon'],
        ['sync', url, '--dest', dest, '--proxy', 'ftp://x'],
        ['sync', url, '--dest', dest, '--timeout', '0'],
        ['sync', url, '--dest', dest, '--delay', '-1'],
      ]) {
        expect((await rsdesk(args, env)).code, args.join(' ')).toBe(2);
      }
    } finally {
      await source.close();
    }
  }, 60_000);
});

describe('progress', () => {
  const capture = (errIsTTY: boolean) => {
    const io = { out: '', err: '' };
    const sink: Io = { out: (t) => void (io.out += t), err: (t) => void (io.err += t), errIsTTY, errColumns: 100 };
    return { io, sink };
  };

  it('is one line redrawn in place on a terminal, erased at the end; nothing when stderr is not a terminal', async () => {
    const url = fixture.url + fixture.paths.dataset1.resourceList;
    const tty = capture(true);
    expect(await main(['sync', url, '--dest', mkdtempSync(join(tmpdir(), 'rsdesk-tty-')), '--json'], tty.sink)).toBe(0);
    // Progress is drawn from before the list is read (0 of 0); a fast run may end before the next drawing.
    expect(tty.io.err.startsWith('\r\x1b[KBaseline: ')).toBe(true);
    expect(tty.io.err).toMatch(/\r\x1b\[KBaseline: \d+ of \d+ listed( so far)?, 0 failed, [\d.]+ (B|KiB)/);
    expect(tty.io.err.endsWith('\r\x1b[K')).toBe(true);
    expect(tty.io.err).not.toContain('\n');
    expect(JSON.parse(tty.io.out)).toMatchObject({ mode: 'baseline', created: 20 });

    const pipe = capture(false);
    expect(await main(['sync', url, '--dest', mkdtempSync(join(tmpdir(), 'rsdesk-tty-')), '--json'], pipe.sink)).toBe(0);
    expect(pipe.io.err).toBe('');

    // -q: none on a terminal either, for sync and retry; the output is the same.
    const quiet = capture(true);
    const dest = mkdtempSync(join(tmpdir(), 'rsdesk-tty-'));
    expect(await main(['sync', url, '--dest', dest, '-q', '--json'], quiet.sink)).toBe(0);
    expect(JSON.parse(quiet.io.out)).toMatchObject({ mode: 'baseline', created: 20 });
    fixture.setBroken(fixture.state.pathOf(2), 'corrupt');
    fixture.change('update', 1, 2);
    try {
      expect(await main(['sync', '--dest', dest, '--quiet'], quiet.sink)).toBe(1);
    } finally {
      fixture.setBroken(fixture.state.pathOf(2), null);
    }
    expect(await main(['retry', '--dest', dest, '--quiet'], quiet.sink)).toBe(0);
    expect(quiet.io.err).not.toContain('\r');
    expect(quiet.io.err).not.toContain('\x1b');
  });
});

describe('rsdesk sync, retry and audit --quiet (-q), as a cron line runs them: stderr a pipe', () => {
  it('no notes; stderr says one line exactly when the exit code is not 0 (failures, not in sync); stdout and --json as without it', async () => {
    // A mirror of a Resource List alone: every sync after the first says so in a note, which cron mailed every run.
    const dest = mkdtempSync(join(tmpdir(), 'rsdesk-quiet-'));
    expect((await rsdesk(['sync', fixture.url + fixture.paths.dataset1.resourceList, '--dest', dest])).code).toBe(0);
    const noisy = await rsdesk(['sync', '--dest', dest]);
    expect(noisy.code).toBe(0);
    expect(noisy.stderr).toContain('This mirror follows the Resource List');
    const quiet = await rsdesk(['sync', '--dest', dest, '--quiet']);
    expect(quiet).toMatchObject({ code: 0, stderr: '' });
    expect(quiet.stdout.replace(/ in [\d.]+ s/, '')).toBe(noisy.stdout.replace(/ in [\d.]+ s/, ''));
    const json = await rsdesk(['sync', '--dest', dest, '-q', '--json']);
    expect(json).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(json.stdout)).toMatchObject({ mode: 'baseline', unchanged: 20, failed: 0 });
    expect(await rsdesk(['audit', '--dest', dest, '-q'])).toMatchObject({ code: 0, stderr: '' });

    fixture.setBroken(fixture.state.pathOf(4), 'corrupt');
    fixture.change('update', 1, 4);
    try {
      const failed = await rsdesk(['sync', '--dest', dest, '-q']);
      expect(failed.code).toBe(1);
      expect(failed.stdout).toContain(`${fixture.state.locOf(4)}: fixity mismatch`);
      expect(failed.stderr).toBe(`rsdesk: 1 resource failed in run 6 of ${dest} (stdout lists them); rsdesk retry --dest ${dest} fetches them again.\n`);
      const again = await rsdesk(['retry', '--dest', dest, '-q', '--json']);
      expect(again.code).toBe(1);
      expect(JSON.parse(again.stdout)).toMatchObject({ mode: 'retry', failed: 1 });
      expect(again.stderr).toBe(`rsdesk: 1 resource failed in run 7 of ${dest} (stdout lists them); rsdesk retry --dest ${dest} fetches them again.\n`);
    } finally {
      fixture.setBroken(fixture.state.pathOf(4), null);
    }
    expect(await rsdesk(['retry', '--dest', dest, '-q'])).toMatchObject({ code: 0, stderr: '' });

    rmSync(join(dest, new URL(fixture.url).host.replace(':', '_'), ...fixture.state.pathOf(1).split('/').filter(Boolean)));
    const audit = await rsdesk(['audit', '--dest', dest, '--quiet']);
    expect(audit.code).toBe(1);
    expect(audit.stdout).toContain(fixture.state.locOf(1));
    expect(audit.stderr).toBe(`rsdesk: ${dest} is not in sync with its Source: 1 difference (stdout lists them).\n`);
    // Errors as ever.
    const locked = await rsdesk(['retry', '--dest', join(dest, 'nowhere'), '-q']);
    expect(locked.code).toBe(1);
    expect(locked.stderr).toMatch(/^rsdesk: .*nowhere is not a mirror/);
  }, 60_000);
});

describe('a token with a line break or a space', () => {
  it('is refused as the app refuses it (exit 2), before it replaces the good one kept for the mirror', async () => {
    const source = await startFixtureSource({ resources: 2, auth: 'Bearer GOOD' });
    try {
      const dest = mkdtempSync(join(tmpdir(), 'rsdesk-token-'));
      const data = mkdtempSync(join(tmpdir(), 'rsdesk-data-'));
      const env = { XDG_DATA_HOME: data, HTTP_PROXY: '', http_proxy: '', RSDESK_TOKEN: '' };
      const url = source.url + source.paths.dataset1.resourceList;
      const good = await rsdesk(['sync', url, '--dest', dest, '--token', 'GOOD', '--json'], env);
      expect(good.code, good.stderr).toBe(0);
      for (const [args, extra] of [
        [['sync', '--dest', dest, '--token', 'GOOD\n'], {}],
        [['sync', '--dest', dest, '--token', 'GO OD'], {}],
        [['audit', '--dest', dest, '--token', 'GOOD\r\n'], {}],
        [['sync', '--dest', dest], { RSDESK_TOKEN: 'GOOD\n' }],
      ] as const) {
        const bad = await rsdesk([...args], { ...env, ...extra });
        expect(bad.code, JSON.stringify(args)).toBe(2);
        expect(bad.stderr).toContain('rsdesk: The token contains a space, a line break or another control character');
        expect(bad.stderr).toContain('nothing was kept');
      }
      const secrets = JSON.parse(readFileSync(join(data, 'resourcesync-desktop', 'mirror-secrets.json'), 'utf8')) as Record<string, { value: string }>;
      expect(Object.values(secrets).map((s) => s.value)).toEqual(['GOOD']);
      const next = await rsdesk(['sync', '--dest', dest, '--json'], env);
      expect(next.code, next.stderr).toBe(0);
    } finally {
      await source.close();
    }
  }, 60_000);
});

describe('rsdesk sync --dry-run', () => {
  it('names what --delete delete or quarantine would remove, and removes nothing', async () => {
    const own = await startFixtureSource({ resources: 6 });
    try {
      const dest = mkdtempSync(join(tmpdir(), 'rsdesk-dry-'));
      expect((await rsdesk(['sync', own.url + own.paths.dataset1.capabilityList, '--dest', dest])).code).toBe(0);
      const gone = own.change('delete', 2).map((c) => c.loc);
      const files = () => readdirSync(dest, { recursive: true }).length;
      const before = files();
      for (const [policy, words] of [
        ['delete', '2 resource(s) the Source no longer has would be deleted (--delete delete):'],
        ['quarantine', '2 resource(s) the Source no longer has would be moved into .resourcesync/quarantine (--delete quarantine):'],
      ] as const) {
        const dry = await rsdesk(['sync', '--dest', dest, '--dry-run', '--delete', policy]);
        expect(dry.code, dry.stderr).toBe(0);
        expect(dry.stdout).toContain('Dry run, nothing changed: Incremental sync');
        expect(dry.stdout).toContain('deleted 2,');
        expect(dry.stdout).toContain(`${words}\n${gone.map((u) => `    ${u}`).join('\n')}\n`);
        expect(files()).toBe(before);
      }
      const real = await rsdesk(['sync', '--dest', dest, '--delete', 'delete', '--json']);
      expect(JSON.parse(real.stdout)).toMatchObject({ mode: 'incremental', deleted: 2, failed: 0 });
    } finally {
      await own.close();
    }
  });
});

describe('rsdesk sync --allow-mass-delete', () => {
  it('a baseline that would delete most of the mirror removes nothing and says how to allow it; allowed, it does', async () => {
    const own = await startFixtureSource({ resources: 12 });
    try {
      const dest = mkdtempSync(join(tmpdir(), 'rsdesk-mass-'));
      const url = own.url + own.paths.dataset1.capabilityList;
      expect((await rsdesk(['sync', url, '--dest', dest, '--json'])).code).toBe(0);
      own.change('delete', 10);
      const held = await rsdesk(['sync', '--dest', dest, '--mode', 'baseline', '--delete', 'delete']);
      expect(held.code).toBe(0);
      expect(held.stderr).toContain('The Source no longer lists 10 resources this mirror holds, more than the 2 it lists now: none was deleted');
      expect(held.stdout).toContain('10 resource(s) the Source no longer lists were not removed, being more than it lists now; --allow-mass-delete removes them:');
      const allowed = await rsdesk(['sync', '--dest', dest, '--mode', 'baseline', '--delete', 'delete', '--allow-mass-delete', '--json']);
      expect(JSON.parse(allowed.stdout)).toMatchObject({ mode: 'baseline', deleted: 10, failed: 0 });
    } finally {
      await own.close();
    }
  });
});

describe('rsdesk sync stopped by Ctrl-C or SIGTERM', () => {
  const start = startRsdesk;
  const until = waitUntil;
  const walk = (dir: string, prefix = ''): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]));
  const resourceGets = (source: FixtureSource) => source.requests.filter((r) => r.method === 'GET' && /\/res\/\d+/.test(r.path)).map((r) => r.path);

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal}: the downloads under way finish, every verified resource is kept, the lock is released, the next sync resumes without fetching them again`, async () => {
      const source = await startFixtureSource({ resources: 40, resourceDelayMs: 150 });
      try {
        const dest = mkdtempSync(join(tmpdir(), 'rsdesk-sigint-'));
        const run = start(['sync', source.url + source.paths.dataset1.resourceList, '--dest', dest, '--concurrency', '2']);
        // Some resources verified, well within the first durable batch (BATCH_SECONDS): none is on disk for good yet.
        await until(() => resourceGets(source).length >= 6);
        run.child.kill(signal);
        const code = await run.ended;
        expect(code).toBe(signal === 'SIGINT' ? 130 : 143);
        expect(run.out.stderr).toContain(`Stopping (${signal}): the downloads under way finish, and what was verified is kept`);
        expect(run.out.stderr).toContain(`rsdesk: stopped (${signal}). What was verified is kept; run 1 is left interrupted, and the next rsdesk sync --dest ${dest} resumes it.`);
        expect(run.out.stdout).toContain('Stopped before the end: the next sync resumes this run.');
        const visible = walk(dest).filter((p) => !p.startsWith('.resourcesync/'));
        const fetched = new Set(resourceGets(source));
        // Every resource asked for was finished and kept, and nothing else is in the visible tree.
        expect(visible.length).toBe(fetched.size);
        expect(visible.length).toBeGreaterThanOrEqual(6);
        expect(visible.length).toBeLessThan(40);
        expect(walk(join(dest, '.resourcesync')).filter((p) => p === 'lock' || p.startsWith('tmp/'))).toEqual([]);

        source.setResourceDelay(0);
        const next = await rsdesk(['sync', '--dest', dest, '--json']);
        expect(next.code, next.stderr).toBe(0);
        expect(next.stderr).not.toContain('Took over the lock');
        expect(next.stderr).toContain('Resuming run 1 (paused baseline)');
        expect(JSON.parse(next.stdout)).toMatchObject({ mode: 'baseline', created: 40, failed: 0 });
        const again = resourceGets(source).slice(fetched.size);
        expect(again.filter((p) => fetched.has(p))).toEqual([]);
        expect(new Set(again).size).toBe(40 - fetched.size);
      } finally {
        await source.close();
      }
    }, 60_000);
  }

  it('Ctrl-C while the Source stalls its Capability List stops at once, before any run, and leaves no mirror behind', async () => {
    const source = await startFixtureSource({ resources: 3 });
    try {
      source.setBroken(source.paths.dataset1.capabilityList, 'hang');
      const dest = mkdtempSync(join(tmpdir(), 'rsdesk-sigint-'));
      const run = start(['sync', source.url + source.paths.dataset1.capabilityList, '--dest', dest, '--timeout', '60']);
      await until(() => source.requests.some((r) => r.path === source.paths.dataset1.capabilityList));
      const t = Date.now();
      run.child.kill('SIGINT');
      expect(await run.ended).toBe(130);
      expect(Date.now() - t).toBeLessThan(10_000);
      expect(run.out.stdout).toContain('Stopped before the run began: nothing was fetched, and no run was recorded.');
      expect(run.out.stderr).toContain("rsdesk: stopped (SIGINT) before the run began, while the Source's lists were being read; nothing was fetched, and no run was recorded.");
      expect(walk(dest)).toEqual([]);
    } finally {
      await source.close();
    }
  }, 60_000);

  /** rsdesk audit of a mirror of `source` (made first), stopped by Ctrl-C while the Resource List stalls: its output. */
  const stoppedAudit = async (source: FixtureSource, flags: string[]) => {
    const dest = mkdtempSync(join(tmpdir(), 'rsdesk-sigint-'));
    expect((await rsdesk(['sync', source.url + source.paths.dataset1.resourceList, '--dest', dest])).code).toBe(0);
    source.setPathDelay(source.paths.dataset1.resourceList, 60_000);
    const n = source.requests.length;
    const run = start(['audit', '--dest', dest, ...flags]);
    await until(() => source.requests.slice(n).some((r) => r.path === source.paths.dataset1.resourceList));
    run.child.kill('SIGINT');
    expect(await run.ended).toBe(130);
    return { dest, out: run.out };
  };

  it('rsdesk audit: Ctrl-C cancels it, records its run cancelled and releases the lock', async () => {
    const source = await startFixtureSource({ resources: 3 });
    try {
      const { dest, out } = await stoppedAudit(source, ['--json']);
      expect(JSON.parse(out.stdout)).toEqual({ error: { message: 'audit stopped (SIGINT) before the end; no report is kept. Nothing in the mirror was changed.' } });
      expect(out.stderr).toContain('rsdesk: audit stopped (SIGINT) before the end; no report is kept. Nothing in the mirror was changed.');
      expect(walk(join(dest, '.resourcesync'))).not.toContain('lock');
      const runs = JSON.parse((await rsdesk(['runs', '--dest', dest, '--json'])).stdout).runs as { kind: string; status: string }[];
      expect(runs.at(-1)).toMatchObject({ kind: 'audit', status: 'cancelled' });
    } finally {
      await source.close();
    }
  }, 60_000);

  it('rsdesk audit -q: stderr is the one line that says why it exits 130 (before, "Stopping the audit (SIGINT)" came first)', async () => {
    const source = await startFixtureSource({ resources: 3 });
    try {
      const { out } = await stoppedAudit(source, ['-q']);
      expect(out.stderr).toBe('rsdesk: audit stopped (SIGINT) before the end; no report is kept. Nothing in the mirror was changed.\n');
    } finally {
      await source.close();
    }
  }, 60_000);

  it('a second Ctrl-C stops at once, without waiting for a long download, and still releases the lock', async () => {
    const source = await startFixtureSource({ resources: 10 });
    try {
      source.setPathDelay(source.state.pathOf(1), 60_000);
      const dest = mkdtempSync(join(tmpdir(), 'rsdesk-sigint-'));
      const run = start(['sync', source.url + source.paths.dataset1.resourceList, '--dest', dest, '--concurrency', '1']);
      await until(() => resourceGets(source).includes(source.state.pathOf(1)));
      run.child.kill('SIGINT');
      await until(() => run.out.stderr.includes('press Ctrl-C again to stop at once'));
      const t = Date.now();
      run.child.kill('SIGINT');
      expect(await run.ended).toBe(130);
      expect(Date.now() - t).toBeLessThan(10_000);
      expect(run.out.stderr).toContain(`rsdesk: stopped at once (SIGINT). The downloads under way and those not yet recorded are fetched again by the next rsdesk sync --dest ${dest}, which resumes the run.`);
      expect(walk(dest).filter((p) => !p.startsWith('.resourcesync/'))).toEqual([]);
      expect(walk(join(dest, '.resourcesync'))).not.toContain('lock');
      source.setPathDelay(source.state.pathOf(1), 0);
      const next = await rsdesk(['sync', '--dest', dest, '--json']);
      expect(next.code, next.stderr).toBe(0);
      expect(next.stderr).not.toContain('Took over the lock');
      expect(next.stderr).toContain('Resuming run 1');
      expect(JSON.parse(next.stdout)).toMatchObject({ created: 10, failed: 0 });
    } finally {
      await source.close();
    }
  }, 60_000);
});

describe('rsdesk sync --dry-run stopped by Ctrl-C', () => {
  it('says that nothing was written and that nothing is left to resume, at the first Ctrl-C and at a second', async () => {
    const source = await startFixtureSource({ resources: 3 });
    try {
      const dest = mkdtempSync(join(tmpdir(), 'rsdesk-dry-sigint-'));
      expect((await rsdesk(['sync', source.url + source.paths.dataset1.capabilityList, '--dest', dest])).code).toBe(0);
      const runsBefore = (await rsdesk(['runs', '--dest', dest, '--json'])).stdout;
      source.setPathDelay(source.paths.dataset1.changeListIndex, 60_000);
      const n = source.requests.length;
      const run = startRsdesk(['sync', '--dest', dest, '--dry-run']);
      await waitUntil(() => source.requests.slice(n).some((r) => r.path === source.paths.dataset1.changeListIndex));
      run.child.kill('SIGINT');
      await waitUntil(() => run.out.stderr.includes('press Ctrl-C again to stop at once'));
      run.child.kill('SIGINT');
      expect(await run.ended).toBe(130);
      // Before, the first said "what was verified is kept" and the second that the next sync "resumes the run".
      expect(run.out.stderr).toContain('Stopping (SIGINT): the dry run ends; it has written nothing, and leaves nothing to resume; press Ctrl-C again to stop at once.');
      expect(run.out.stderr).toContain('rsdesk: stopped at once (SIGINT) before the dry run ended; nothing was changed.');
      expect(run.out.stderr).not.toMatch(/resumes|verified is kept/);
      expect((await rsdesk(['runs', '--dest', dest, '--json'])).stdout).toBe(runsBefore);
    } finally {
      await source.close();
    }
  }, 60_000);
});

describe('--quiet and a stop by a signal', () => {
  // Before, "Stopping (SIGTERM): the downloads under way finish…" came first under --quiet too: two lines, the first
  // of them progress. Now only the line that explains the exit code.
  it('rsdesk sync --quiet: stderr is the one line that says why it exits 143', async () => {
    const source = await startFixtureSource({ resources: 20, resourceDelayMs: 150 });
    try {
      const dest = mkdtempSync(join(tmpdir(), 'rsdesk-quiet-stop-'));
      const run = startRsdesk(['sync', source.url + source.paths.dataset1.resourceList, '--dest', dest, '--quiet']);
      await waitUntil(() => source.requests.filter((r) => /\/res\/\d+/.test(r.path)).length >= 3);
      run.child.kill('SIGTERM');
      expect(await run.ended).toBe(143);
      expect(run.out.stderr).toBe(`rsdesk: stopped (SIGTERM). What was verified is kept; run 1 is left interrupted, and the next rsdesk sync --dest ${dest} resumes it.\n`);
    } finally {
      await source.close();
    }
  }, 60_000);
});

describe('rsdesk sync and a Source that refuses everything', () => {
  it('pauses after --pause-after-refusals seconds of refusals, says what the Source answered, exits 75 (try later), and the next sync resumes', async () => {
    const dest = mkdtempSync(join(tmpdir(), 'rsdesk-refused-'));
    const list = fixture.url + fixture.paths.dataset1.capabilityList;
    const wrong = await rsdesk(['sync', list, '--dest', dest, '--pause-after-refusals', '0']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--pause-after-refusals must be a whole number of seconds from 1 to 604,800 (a week), not "0"');
    fixture.setRefusing({ prefix: '/dataset1/res/', status: 503, headers: { 'retry-after': '1' } });
    try {
      const plain = await rsdesk(['sync', list, '--dest', dest, '--pause-after-refusals', '1']);
      // Not 1: nothing failed and nothing is wrong with the mirror; a scheduler tells "try later" from a failure.
      expect(plain.code).toBe(75);
      expect(plain.stdout).toMatch(/Paused: the Source refused all \d+ requests of the last 1 s \(since \d\d:\d\d UTC\); its last answer was HTTP 503 \(Service Unavailable\), asking to wait 1 s \(Retry-After\)\./);
      // Kept with the mirror: told nothing, the next run pauses as soon.
      const json = await rsdesk(['sync', '--dest', dest, '--json']);
      expect(json.code).toBe(75);
      expect(JSON.parse(json.stdout)).toMatchObject({ failed: 0, pausedBecause: expect.stringMatching(/^Paused: the Source refused/) });
    } finally {
      fixture.setRefusing(null);
    }
    const resumed = await rsdesk(['sync', '--dest', dest, '--json']);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toMatch(/Resuming run \d+ \(paused baseline\)/);
    expect(Object.keys(JSON.parse(resumed.stdout))).not.toContain('pausedBecause');
  });
});

describe('rsdesk sync and a Source that asks to wait an hour for its Change List', () => {
  it('pauses at once, says so whole with its checkpoint, exits 75, and does not say that no change is listed', async () => {
    const dest = mkdtempSync(join(tmpdir(), 'rsdesk-wait-'));
    const list = fixture.url + fixture.paths.dataset1.capabilityList;
    expect((await rsdesk(['sync', list, '--dest', dest])).code).toBe(0);
    fixture.setRefusing({ prefix: '/dataset1/changelist', status: 503, headers: { 'retry-after': '3600' } });
    try {
      const plain = await rsdesk(['sync', '--dest', dest]);
      expect(plain.code).toBe(75);
      expect(plain.stdout).toMatch(
        /Paused: the Source answered HTTP 503 \(Service Unavailable\) to http:\/\/127\.0\.0\.1:\d+\/dataset1\/changelist[^ ]*, asking to wait 1 h \(Retry-After\); a run waits at most 2 min for its lists and packages, so it stopped asking\. Nothing was taken for an answer: what was verified is kept and the checkpoint has not moved; run the sync again after [^;]* UTC to resume\. Checkpoint still \d{4}-/,
      );
      expect(plain.stdout + plain.stderr).not.toMatch(/no change is listed/);
      const json = await rsdesk(['sync', '--dest', dest, '--json']);
      expect(json.code).toBe(75);
      expect(JSON.parse(json.stdout)).toMatchObject({ failed: 0, pausedBecause: expect.stringMatching(/^Paused: the Source answered HTTP 503/) });
      // Run by hand before the hour is over: it asks all the same (the person chose to), says first that the Source
      // asked to wait and until when, and, refused again, pauses again saying when to try.
      const asked = fixture.requests.length;
      const early = await rsdesk(['sync', '--dest', dest]);
      expect(early.code).toBe(75);
      expect(fixture.requests.length).toBeGreaterThan(asked);
      expect(early.stderr).toMatch(/The Source asked, when run \d+ paused, not to be asked again before (\d{4}-\d\d-\d\d )?\d\d:\d\d UTC \(Retry-After\); this run asks it now all the same, and pauses again if it is still refused\./);
      expect(early.stdout).toMatch(/asking to wait 1 h \(Retry-After\);.* run the sync again after (\d{4}-\d\d-\d\d )?\d\d:\d\d UTC to resume\./);
    } finally {
      fixture.setRefusing(null);
    }
    // Served again: the run completes, and the Source's wait is over for the next one.
    const served = await rsdesk(['sync', '--dest', dest]);
    expect(served.code).toBe(0);
    expect(served.stderr).toContain('The Source asked, when run');
    const next = await rsdesk(['sync', '--dest', dest]);
    expect(next.code).toBe(0);
    expect(next.stderr).not.toContain('The Source asked');
  }, 60_000);
});

describe('rsdesk sync and lists that break the spec', () => {
  it('says what the lists break, in plain words and in --json, and rsdesk runs keeps it', async () => {
    const dest = mkdtempSync(join(tmpdir(), 'rsdesk-findings-'));
    const plain = await rsdesk(['sync', fixture.url + '/sloppy/capabilitylist.xml', '--dest', dest]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/The Source's lists break the spec in \d+ places \(the run read on; rsdesk check tells more\):\n {4}Error: http:\/\/127\.0\.0\.1:\d+\/sloppy\/resourcelist\.xml line 3: No <rs:ln rel="up"> to the Capability List/);
    fixture.change('update', 1);
    const json = JSON.parse((await rsdesk(['sync', '--dest', dest, '--json'])).stdout);
    expect(json.findingCount).toBe(2);
    expect(json.findings).toContainEqual(expect.objectContaining({ document: fixture.url + '/sloppy/changelist.xml', code: 'missing-from', severity: 'error', line: 3 }));
    const runs = await rsdesk(['runs', '--dest', dest]);
    expect(runs.stdout).toMatch(/#2 incremental \(auto\) completed .*\n {4}The Source's lists break the spec in 2 places/);
    expect(JSON.parse((await rsdesk(['runs', '--dest', dest, '--json'])).stdout).runs[1]).toMatchObject({ findingCount: 2, findings: json.findings });
  });
});
