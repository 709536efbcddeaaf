// The `rsdesk` examples of README.md and docs/cli.md, run as written against the fixture Source (`npm run fixture`'s
// defaults), so that an example that stops working, or output that changes from what the page shows, fails here.
// - ```console blocks: each `$ npx rsdesk …` line is run in a fresh folder (the block's commands in order, in the same
//   folder); it must exit 0 and print on stdout what the block shows under it, times and the folder aside.
// - README's command table: each `rsdesk …` is run in order in one folder, must exit 0 and print
//   the output its row quotes (the quoted text with a … in it). serve and watch run until Ctrl-C: rsdesk.test.ts and
//   watch-command.test.ts run them.
import { mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../e2e/fixture-source/index.ts';
import { runRsdesk } from './run-rsdesk.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PAGES = ['README.md', 'docs/cli.md'] as const;
/** The address the pages use for the fixture Source (`npm run fixture -- --port 5399`). */
const DOC_SOURCE = 'http://127.0.0.1:5399';
/** The folder the pages show the examples run in. */
const DOC_HOME = '/home/me';

let fixture: FixtureSource;
beforeAll(async () => {
  fixture = await startFixtureSource();
});
afterAll(async () => {
  await fixture.close();
});

interface Step {
  args: string[];
  shown: string;
}

/** The ```console blocks of a page, each as its commands and the output shown under each. */
function consoleBlocks(markdown: string): Step[][] {
  const blocks: Step[][] = [];
  for (const [, body] of markdown.matchAll(/^```console\n([\s\S]*?)^```$/gm)) {
    const steps: Step[] = [];
    for (const line of body!.split('\n').slice(0, -1)) {
      const command = /^\$ npx rsdesk (.*)$/.exec(line);
      if (command) steps.push({ args: command[1]!.split(' '), shown: '' });
      else if (steps.length > 0) steps.at(-1)!.shown += `${line}\n`;
      else throw new Error(`a console block starts with something else than "$ npx rsdesk": ${line}`);
    }
    blocks.push(steps);
  }
  return blocks;
}

/** What changes from one run to the next: durations, and where the folder is. */
function steady(text: string, cwd: string): string {
  return text
    .replaceAll(realpathSync(cwd), DOC_HOME)
    .replace(/ in [\d.]+ s$/gm, ' in N s')
    .replace(/"seconds":[\d.]+/g, '"seconds":N');
}

const withSource = (args: string[]) => args.map((a) => a.replaceAll(DOC_SOURCE, fixture.url));

describe('the console examples of README.md and docs/cli.md', () => {
  for (const page of PAGES) {
    it.concurrent(`${page}: each runs as written, exits 0 and prints what the page shows`, async () => {
      const blocks = consoleBlocks(readFileSync(join(ROOT, page), 'utf8'));
      expect(blocks.length).toBeGreaterThan(0);
      await Promise.all(
        blocks.map(async (steps) => {
          const cwd = mkdtempSync(join(tmpdir(), 'rsdesk-docs-'));
          for (const { args, shown } of steps) {
            const run = await runRsdesk(withSource(args), { cwd });
            expect(run.code, `rsdesk ${args.join(' ')}: ${run.stderr}`).toBe(0);
            expect(steady(run.stdout, cwd), `rsdesk ${args.join(' ')}`).toBe(steady(shown.replaceAll(DOC_SOURCE, fixture.url), cwd));
          }
        }),
      );
    }, 60_000);
  }
});

/** README's table of commands: each row's command and the output it quotes (the quoted text with … in it). */
function tableRows(markdown: string): { args: string[]; quoted: string[] }[] {
  return [...markdown.matchAll(/^\| `rsdesk ([^`]*)` \| (.*) \|$/gm)].map(([, command, what]) => ({
    args: command!.split(' '),
    quoted: [...what!.matchAll(/`([^`]*…[^`]*)`/g)].map((m) => m[1]!),
  }));
}


describe("README's table of commands", () => {
  it.concurrent('each runs as written, in order, with its documented exit code and the output its row quotes', async () => {
    const rows = tableRows(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    expect(rows.map((r) => r.args[0])).toEqual(['discover', 'inspect', 'check', 'serve', 'sync', 'retry', 'audit', 'runs', 'watch']);
    const cwd = mkdtempSync(join(tmpdir(), 'rsdesk-readme-'));
    for (const { args, quoted } of rows) {
      if (args[0] === 'serve' || args[0] === 'watch') continue;
      const run = await runRsdesk(withSource(args), { cwd });
      // retry included: the sync before left nothing to retry, which is no failure.
      expect(run.code, `rsdesk ${args.join(' ')}: ${run.stderr}`).toBe(0);
      for (const text of quoted) {
        const pattern = new RegExp(text.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*'));
        expect(run.stdout, `rsdesk ${args.join(' ')}`).toMatch(pattern);
      }
    }
  }, 60_000);
});
