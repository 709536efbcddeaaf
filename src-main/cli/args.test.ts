// Usage errors as people meet them: real rsdesk processes (started without npx: usage errors answer before the
// engine loads, so these are quick), every command, every mistyped option and every numeric option's range.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TIMEOUT_RANGE } from '../contract/limits.ts';
import { fileErrorMessage } from '../engine/documents/reader.ts';
import { closest, editDistance, parseCommandArgs } from './args.ts';
import { parseConcurrency, parseDelay, parseMaxDocuments, parsePort } from './usage.ts';
import { RSDESK_BIN, runRsdesk } from './run-rsdesk.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(args: string[]): Promise<Run> {
  return runRsdesk(args, { cwd: ROOT });
}

/** The first line on stderr: the message (the command's help follows a usage error). */
function firstLine(result: Run): string {
  return result.stderr.split('\n')[0]!;
}

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1;
}

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'rsdesk-args-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('did you mean', () => {
  it('finds the option or command one or two edits away, or the one typed only in part', () => {
    expect(editDistance('--jsn', '--json')).toBe(1);
    expect(closest('--jsn', ['--json', '--token', '--timeout', '--help'])).toBe('--json');
    expect(closest('--timout', ['--json', '--token', '--timeout'])).toBe('--timeout');
    expect(closest('--max', ['--json', '--max-documents'])).toBe('--max-documents');
    expect(closest('inspekt', ['discover', 'inspect', 'check'])).toBe('inspect');
    expect(closest('--colour', ['--json', '--token'])).toBeUndefined();
    expect(closest('x', ['discover', 'inspect'])).toBeUndefined();
  });
});

describe('numeric options: digits only, the range said exactly', () => {
  it('checks --port, --max-documents, --concurrency and --delay', () => {
    expect(parsePort('0')).toBe(0);
    expect(parsePort('65535')).toBe(65535);
    for (const bad of ['65536', '-1', '80x', '', '8e3']) expect(() => parsePort(bad), bad).toThrow(`--port must be a whole number from 0 to 65535 (0: any free port), not ${JSON.stringify(bad)}`);
    expect(parseMaxDocuments('1')).toBe(1);
    expect(parseMaxDocuments('100000')).toBe(100_000);
    for (const bad of ['0', '100001', '1.5', 'many']) expect(() => parseMaxDocuments(bad), bad).toThrow(`--max-documents must be a whole number from 1 to 100,000, not ${JSON.stringify(bad)}`);
    expect(parseConcurrency('1')).toBe(1);
    expect(parseConcurrency('256')).toBe(256);
    for (const bad of ['0', '257', '2.5', '']) expect(() => parseConcurrency(bad), bad).toThrow(`--concurrency must be a whole number from 1 to 256, not ${JSON.stringify(bad)}`);
    expect(parseDelay('0')).toBe(0);
    expect(parseDelay('0.25')).toBe(250);
    expect(parseDelay('3600')).toBe(3_600_000);
    for (const bad of ['3601', '-1', 'x', '', '1e3', '.5']) expect(() => parseDelay(bad), bad).toThrow(`--delay must be a number of seconds from 0 to 3600 (such as 0.5), not ${JSON.stringify(bad)}`);
  });
});

describe('an option given twice', () => {
  it('is refused with two values, taken once with the same value twice; repeatable options and flags take any number', () => {
    const options = { dest: { type: 'string' }, map: { type: 'string', multiple: true }, json: { type: 'boolean' } } as const;
    expect(() => parseCommandArgs('sync', ['--dest', 'a', '--dest=b'], options)).toThrow('--dest is given twice, as "a" and as "b": give it once');
    expect(parseCommandArgs('sync', ['--dest', 'a', '--json', '--dest', 'a', '--json'], options).values).toEqual({ dest: 'a', json: true });
    expect(parseCommandArgs('sync', ['--map', 'x=a', '--map', 'y=b'], options).values.map).toEqual(['x=a', 'y=b']);
  });
});

describe('local files in plain words', () => {
  it('names what is wrong without the error code or the system call', () => {
    const err = (code: string, message: string) => Object.assign(new Error(message), { code });
    expect(fileErrorMessage('/x.xml', err('ENOENT', "ENOENT: no such file or directory, stat '/x.xml'"))).toBe('no such file: /x.xml');
    expect(fileErrorMessage('/x.xml', err('EACCES', "EACCES: permission denied, open '/x.xml'"))).toBe('not allowed to read /x.xml (permission denied)');
    expect(fileErrorMessage('/x.xml', err('EISDIR', "EISDIR: illegal operation on a directory, read"))).toBe('/x.xml is a folder, not a file');
    expect(fileErrorMessage('/f/x.xml', err('ENOTDIR', "ENOTDIR: not a directory, stat '/f/x.xml'"))).toBe('no such file: /f/x.xml (a part of its path is a file, not a folder)');
    expect(fileErrorMessage('/x.xml', err('EIO', "EIO: i/o error, read '/x.xml'"))).toBe('cannot read /x.xml: i/o error');
  });
});

describe('rsdesk usage errors', { timeout: 120_000 }, () => {
  it('an unknown command gets the nearest one', async () => {
    const cases: [string[], string][] = [
      [['inspekt', 'x.xml'], 'rsdesk: unknown command inspekt (did you mean inspect?)'],
      [['discovr', 'example.org'], 'rsdesk: unknown command discovr (did you mean discover?)'],
      [['chek'], 'rsdesk: unknown command chek (did you mean check?)'],
      [['synch'], 'rsdesk: unknown command synch (did you mean sync?)'],
      [['adit'], 'rsdesk: unknown command adit (did you mean audit?)'],
      [['run'], 'rsdesk: unknown command run (did you mean runs?)'],
      [['serv'], 'rsdesk: unknown command serv (did you mean serve?)'],
      [['frobnicate'], 'rsdesk: unknown command frobnicate'],
      [['--verison'], 'rsdesk: unknown option --verison (did you mean --version?)'],
    ];
    for (const [args, message] of cases) {
      const result = await run(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(firstLine(result), args.join(' ')).toBe(message);
      expect(result.stdout).toBe('');
    }
  });

  it('an unknown option gets the nearest option of that command, or the command that has it', async () => {
    const cases: [string[], string][] = [
      [['discover', 'example.org', '--jsn'], 'rsdesk: unknown option --jsn (did you mean --json?)'],
      [['inspect', 'x.xml', '--jsn'], 'rsdesk: unknown option --jsn (did you mean --json?)'],
      [['inspect', 'x.xml', '--timout', '5'], 'rsdesk: unknown option --timout (did you mean --timeout?)'],
      [['check', 'example.org', '--max-document', '5'], 'rsdesk: unknown option --max-document (did you mean --max-documents?)'],
      [['serve', '--prot', '80'], 'rsdesk: unknown option --prot (did you mean --port?)'],
      [['serve', '--datadir', 'd'], 'rsdesk: unknown option --datadir (did you mean --data-dir?)'],
      [['sync', 'example.org', '--dest', 'd', '--concurency', '2'], 'rsdesk: unknown option --concurency (did you mean --concurrency?)'],
      [['sync', '--dest', 'd', '--dryrun'], 'rsdesk: unknown option --dryrun (did you mean --dry-run?)'],
      [['sync', '--dest', 'd', '--proxi', 'none'], 'rsdesk: unknown option --proxi (did you mean --proxy?)'],
      [['audit', '--dest', 'd', '--proxy', 'none'], 'rsdesk: unknown option --proxy (rsdesk sync takes it; audit does not)'],
      [['audit', '--dest', 'd', '--rehsh'], 'rsdesk: unknown option --rehsh (did you mean --rehash?)'],
      [['runs', '--dest', 'd', '--jsno'], 'rsdesk: unknown option --jsno (did you mean --json?)'],
      [['watch', '--dest', 'd', '--lese', '60'], 'rsdesk: unknown option --lese (did you mean --lease?)'],
      [['discover', 'example.org', '--max-documents', '5'], 'rsdesk: unknown option --max-documents (rsdesk check takes it; discover does not)'],
      [['runs', '--dest', 'd', '--rehash'], 'rsdesk: unknown option --rehash (rsdesk audit takes it; runs does not)'],
      [['inspect', 'x.xml', '-x'], 'rsdesk: unknown option -x'],
      [['discover', 'example.org', '--token'], 'rsdesk: --token needs a value'],
      [['discover', 'example.org', '--token', '--json'], 'rsdesk: --token needs a value (to give one that starts with "-", write --token=--json)'],
      [['inspect', 'x.xml', '--json=yes'], 'rsdesk: --json takes no value'],
      [['runs', '--dest'], 'rsdesk: --dest needs a value'],
      [['sync', '--dest', 'old', '--json', '--dest', 'new'], 'rsdesk: --dest is given twice, as "old" and as "new": give it once'],
      [['retry', '--dest', 'd', '--run', '1', '--run=2'], 'rsdesk: --run is given twice, as "1" and as "2": give it once'],
      [['audit', '--dest', 'd', '--token', 'SECRET1', '--token', 'SECRET2'], 'rsdesk: --token is given twice with two values: give it once'],
    ];
    for (const [args, message] of cases) {
      const result = await run(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(firstLine(result), args.join(' ')).toBe(message);
      // Then the command's own usage lines, once, and where the rest is: not its whole help, which buried the error.
      expect(occurrences(result.stderr, `Usage: rsdesk ${args[0]}`), args.join(' ')).toBe(1);
      expect(result.stderr.trimEnd().endsWith(`Run "rsdesk ${args[0]} --help" for every option.`), args.join(' ')).toBe(true);
      expect(result.stderr).not.toContain('Options:');
      expect(result.stderr).not.toContain('SECRET');
      expect(result.stdout).toBe('');
    }
  });

  it('every numeric option of every command states the range it checks', async () => {
    const timeout = (bad: string) => `rsdesk: --timeout must be ${TIMEOUT_RANGE}, not "${bad}"`;
    const cases: [string[], string][] = [
      [['discover', 'example.org', '--timeout', '0'], timeout('0')],
      [['inspect', 'x.xml', '--timeout', '601'], timeout('601')],
      [['check', 'example.org', '--timeout', '2.5'], timeout('2.5')],
      [['sync', '--dest', join(tmp, 'm'), '--timeout', 'soon'], timeout('soon')],
      [['audit', '--dest', join(tmp, 'm'), '--timeout', '0'], timeout('0')],
      [['watch', '--dest', join(tmp, 'm'), '--timeout', '700'], timeout('700')],
      [['check', 'example.org', '--max-documents', '0'], 'rsdesk: --max-documents must be a whole number from 1 to 100,000, not "0"'],
      [['check', 'example.org', '--max-documents', '100001'], 'rsdesk: --max-documents must be a whole number from 1 to 100,000, not "100001"'],
      [['serve', '--port', '65536'], 'rsdesk: --port must be a whole number from 0 to 65535 (0: any free port), not "65536"'],
      [['sync', '--dest', join(tmp, 'm'), '--concurrency', '0'], 'rsdesk: --concurrency must be a whole number from 1 to 256, not "0"'],
      [['sync', '--dest', join(tmp, 'm'), '--delay', '3601'], 'rsdesk: --delay must be a number of seconds from 0 to 3600 (such as 0.5), not "3601"'],
      [['sync', '--dest', join(tmp, 'm'), '--delay=-1'], 'rsdesk: --delay must be a number of seconds from 0 to 3600 (such as 0.5), not "-1"'],
    ];
    expect(TIMEOUT_RANGE).toBe('a whole number of seconds from 1 to 600');
    for (const [args, message] of cases) {
      const result = await run(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(firstLine(result), args.join(' ')).toBe(message);
    }
  });
});

describe('a reader that goes away', { timeout: 60_000 }, () => {
  it('(rsdesk … | head -1) ends rsdesk quietly with 141, as SIGPIPE would, not with a stack trace', async () => {
    const child = spawn(process.execPath, [RSDESK_BIN, 'sync', '--help'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    // Closed before rsdesk has started: its first write finds no reader.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(141);
  });
});

describe('rsdesk says each thing once, in plain words', { timeout: 120_000 }, () => {
  it('a missing file, a folder: one line on stderr, exit 1', async () => {
    const missing = join(tmp, 'nothing-here.xml');
    expect(await run(['inspect', missing])).toEqual({ code: 1, stdout: '', stderr: `rsdesk: no such file: ${missing}\n` });
    expect(await run(['inspect', tmp])).toEqual({ code: 1, stdout: '', stderr: `rsdesk: ${tmp} is a folder, not a file\n` });
    const json = await run(['inspect', missing, '--json']);
    expect(json.code).toBe(1);
    expect(json.stderr).toBe('');
    expect(JSON.parse(json.stdout).error).toEqual({ severity: 'error', code: 'io', message: `no such file: ${missing}` });
  });

  it('discover names each route as the app does and each URL once per line', async () => {
    // A port nothing listens on: every route is refused.
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const start = `http://127.0.0.1:${port}/`;
    const result = await run(['discover', start]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('');
    const routes = result.stdout.split('\n').filter((line) => line.startsWith('  ✗'));
    expect(routes).toEqual([
      `  ✗ URL itself   ${start}  Connection refused by 127.0.0.1:${port}`,
      `  ✗ .well-known  ${start}.well-known/resourcesync  Connection refused by 127.0.0.1:${port}`,
      `  ✗ robots.txt   ${start}robots.txt  Connection refused by 127.0.0.1:${port}`,
    ]);
    expect(result.stdout).toContain(`error   nothing-found: No ResourceSync Source found at ${start}; tried: URL itself, .well-known, robots.txt`);
    // --json keeps the machine names.
    const json = JSON.parse((await run(['discover', start, '--json'])).stdout) as { routes: { route: string; message: string }[] };
    expect(json.routes.map((r) => r.route)).toEqual(['document', 'well-known', 'robots']);
    expect(json.routes[0]!.message).toBe(`Connection refused by 127.0.0.1:${port}`);
  });
});
