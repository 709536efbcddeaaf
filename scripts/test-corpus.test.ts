// `npm run test:corpus` where the shared folder is absent: one line, and a failure only when it was asked for.
// The script is run from a copy in an empty folder, so that "beside the repository" is a place without `shared`.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const tmp = mkdtempSync(join(tmpdir(), 'rsdesk-corpus-'));
const script = join(tmp, 'repo', 'scripts', 'test-corpus.mjs');
mkdirSync(join(tmp, 'repo', 'scripts'), { recursive: true });
copyFileSync(join(import.meta.dirname, 'test-corpus.mjs'), script);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function run(args: string[], env: Record<string, string | undefined> = {}) {
  const merged: Record<string, string | undefined> = { ...process.env, RSDESK_SHARED: undefined, ...env };
  const clean = Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== undefined)) as Record<string, string>;
  return spawnSync(process.execPath, [script, ...args], { encoding: 'utf8', env: clean });
}

describe('scripts/test-corpus.mjs without a shared folder', () => {
  it('says so in one line and exits 0 when not asked for explicitly', () => {
    const result = run([]);
    expect(result.status).toBe(0);
    expect(result.stdout.trimEnd().split('\n')).toEqual([expect.stringContaining(`skipped, no shared folder at ${join(tmp, 'shared')}`)]);
    expect(result.stderr).toBe('');
  });

  it('exits 1 with one line when asked for with --require', () => {
    const result = run(['--require']);
    expect(result.status).toBe(1);
    expect(result.stderr.trimEnd().split('\n')).toEqual([expect.stringContaining(`the shared folder ${join(tmp, 'shared')} does not exist`)]);
    expect(result.stdout).toBe('');
  });

  it('exits 1 when RSDESK_SHARED names a folder that does not exist', () => {
    const result = run([], { RSDESK_SHARED: join(tmp, 'elsewhere') });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`${join(tmp, 'elsewhere')} does not exist (it was required by RSDESK_SHARED)`);
  });
});
