// Each command's --help against what the command accepts, and against docs/cli.md's synopsis: an option added to a
// command and not to its help (or to its help and not the docs) fails here. Plus usage errors: named, exit 2.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { COMMANDS, main, OPTIONS } from './rsdesk.ts';
import { HELP } from './usage.ts';
import type { Io } from './io.ts';

const DOC = readFileSync(fileURLToPath(new URL('../../docs/cli.md', import.meta.url)), 'utf8');

/** The lines of a synopsis that belong to `command` (its first line and the indented ones that go on with it). */
function synopsisOf(text: string, command: string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  let inside = false;
  for (const line of lines) {
    if (new RegExp(`^\\s*(Usage: )?rsdesk ${command}\\b`).test(line)) inside = true;
    else if (/^\s*(Usage: )?rsdesk /.test(line) || /^\S/.test(line) || line.trim() === '') inside = false;
    if (inside) out.push(line);
  }
  return out.join('\n');
}

/** The help's Options section: each option with its description (continuation lines joined). */
function optionsOf(help: string): Map<string, string> {
  const section = help.split('\nOptions:\n')[1]?.split('\n\n')[0] ?? '';
  const found = new Map<string, string>();
  let current: string | null = null;
  for (const line of section.split('\n')) {
    const m = /^ {2}(?:-\w, )?--([\w-]+)/.exec(line);
    if (m) {
      current = m[1]!;
      found.set(current, line);
    } else if (current !== null) found.set(current, `${found.get(current)} ${line.trim()}`);
  }
  return found;
}

/** String options whose absence means "none", so they have no default to state. */
const NO_DEFAULT = new Set(['dest', 'token', 'basic', 'header', 'allow-host', 'capabilitylist', 'public-url']);

async function rsdesk(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: Io = { out: (t) => void (out += t), err: (t) => void (err += t) };
  const code = await main(args, io);
  return { code, out, err };
}

describe('rsdesk <command> --help', () => {
  for (const command of COMMANDS) {
    it(`${command}: every option it takes is in its help (with a default where it has one), its synopsis, rsdesk --help and docs/cli.md; and no other`, async () => {
      const help = (await rsdesk([command, '--help'])).out;
      expect(help).toBe(HELP[command]);
      const listed = optionsOf(help);
      const taken = Object.keys(OPTIONS[command]);
      expect([...listed.keys()].sort()).toEqual([...taken].sort());
      for (const [name, config] of Object.entries(OPTIONS[command])) {
        if (name === 'help') continue;
        expect(synopsisOf(help, command), `${command} --help synopsis`).toContain(`--${name}`);
        expect(synopsisOf(HELP.main, command), `rsdesk --help, ${command}`).toContain(`--${name}`);
        expect(synopsisOf(DOC, command), `docs/cli.md, ${command}`).toContain(`--${name}`);
        if (config.type === 'string' && !NO_DEFAULT.has(name)) expect(listed.get(name), `${command} --${name}`).toMatch(/default/);
      }
      // Through `rsdesk help <command>` too.
      expect((await rsdesk(['help', command])).out).toBe(help);
    });
  }

  it('docs/cli.md lists the exit codes rsdesk --help lists', () => {
    for (const code of ['0', '1', '2', '75', '129', '130', '143', '141']) {
      expect(HELP.main).toMatch(new RegExp(`\\b${code}\\b`));
      expect(DOC.split('## Exit codes')[1] ?? '', `docs/cli.md: ${code}`).toMatch(new RegExp(`\\*\\*${code}\\*\\*`));
    }
  });
});

describe('usage errors: one plain line naming the option or value, then the synopsis; exit 2; nothing on stdout', () => {
  const cases: [string[], string][] = [
    [['sync', '--dest', 'd', '--bogus'], 'rsdesk: unknown option --bogus\n'],
    [['sync', '--dest', 'd', '--jsn'], 'rsdesk: unknown option --jsn (did you mean --json?)\n'],
    [['runs', '--dest', 'd', '--rehash'], 'rsdesk: unknown option --rehash (rsdesk audit takes it; runs does not)\n'],
    [['sync', '--dest', 'd', '--concurrency', 'abc'], 'rsdesk: --concurrency must be a whole number from 1 to 256, not "abc"\n'],
    [['sync', '--dest', 'd', '--mode', 'fast'], 'rsdesk: --mode must be auto, baseline or incremental, not "fast"\n'],
    [['sync', '--dest', 'd', '--delay', '2s'], 'rsdesk: --delay must be a number of seconds from 0 to 3600 (such as 0.5), not "2s"\n'],
    [['check', 'http://127.0.0.1:1/', '--timeout', '0'], 'rsdesk: --timeout must be a whole number of seconds from 1 to 600, not "0"\n'],
    [['serve', '--live-port', 'x'], 'rsdesk: --live-port must be a whole number from 0 to 65535 (0: any free port), not "x"\n'],
    [['serve', '--data-dir', ''], 'rsdesk: --data-dir is empty: give the folder for the database (an unset shell variable gives an empty value)\n'],
    [['audit', '--dest', ''], 'rsdesk: --dest is empty: give the folder of the mirror (an unset shell variable gives an empty value)\n'],
    [['watch', '--listen', 'nowhere'], 'rsdesk: --listen must be HOST:PORT (or PORT), not "nowhere"\n'],
    [['sync', '--dest', 'd', '--json=yes'], 'rsdesk: --json takes no value\n'],
  ];
  for (const [args, first] of cases) {
    it(`rsdesk ${args.join(' ')}`, async () => {
      const r = await rsdesk(args);
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      expect(r.err.split('\n')[0] + '\n').toBe(first);
      expect(r.err).toContain(`Run "rsdesk ${args[0]} --help" for every option.`);
    });
  }
});
