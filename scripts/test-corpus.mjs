#!/usr/bin/env node
// `npm run test:corpus`: the suites that read the shared folder (`*.shared.test.ts`: the specs' examples, the corpus
// of documents written by others). The folder sits beside the repository on the developers' machines (or where
// RSDESK_SHARED points) and nowhere else, so when it is absent this says so in one line and succeeds, unless the
// run was asked for explicitly (`--require`, or RSDESK_SHARED set): then its absence is a failure.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Where the shared folder is looked for: the same rule as src-main/engine/documents/shared-dir.ts. */
export function sharedRoot(env = process.env, root = ROOT) {
  return env.RSDESK_SHARED ? resolve(env.RSDESK_SHARED) : resolve(root, '..', 'shared');
}

/**
 * What to do: `{ run: true, args }` (vitest's own arguments) or `{ run: false, exitCode, line }`.
 * `exists` is injected so that the decision can be tested without moving folders about.
 */
export function decide(argv, env = process.env, exists = existsSync, root = ROOT) {
  const required = argv.includes('--require') || Boolean(env.RSDESK_SHARED);
  const args = argv.filter((a) => a !== '--require');
  const dir = sharedRoot(env, root);
  if (exists(dir)) return { run: true, dir, args };
  if (required) return { run: false, exitCode: 1, line: `test:corpus: the shared folder ${dir} does not exist (it was required${env.RSDESK_SHARED ? ' by RSDESK_SHARED' : ' by --require'})` };
  return { run: false, exitCode: 0, line: `test:corpus: skipped, no shared folder at ${dir} (set RSDESK_SHARED to point at one; --require makes its absence an error)` };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const decision = decide(process.argv.slice(2));
  if (!decision.run) {
    (decision.exitCode === 0 ? console.log : console.error)(decision.line);
    process.exit(decision.exitCode);
  }
  const vitest = resolve(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
  const result = spawnSync(process.execPath, [vitest, 'run', '--config', 'vitest.corpus.config.ts', ...decision.args], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, RSDESK_SHARED: decision.dir },
  });
  process.exit(result.status ?? 1);
}
