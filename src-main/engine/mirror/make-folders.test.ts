import { spawnSync } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeFolders } from './make-folders.ts';

describe('makeFolders', () => {
  it('makes the missing levels, and leaves a folder that is there as it is', () => {
    const base = mkdtempSync(join(tmpdir(), 'make-folders-'));
    const deep = join(base, 'a', 'b', 'c');
    makeFolders(deep);
    expect(statSync(deep).isDirectory()).toBe(true);
    expect(() => makeFolders(deep)).not.toThrow();
    expect(() => makeFolders(base)).not.toThrow();
  });

  it('under /proc, throws ENOENT for the first level at once instead of spinning (in a child process: a spin would hold this one)', () => {
    const script = `import { makeFolders } from ${JSON.stringify(new URL('./make-folders.ts', import.meta.url).href)};
try { makeFolders('/proc/make-folders-test/a/b'); console.log('made'); } catch (err) { console.log(err.code, err.path); }`;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 10_000 });
    expect(child.error, 'the child did not end within 10 s').toBeUndefined();
    // Off Linux there is no /proc to refuse: its first level is made, or refused as any other folder would be.
    if (process.platform === 'linux') expect(child.stdout.trim()).toBe('ENOENT /proc/make-folders-test');
    else expect(child.status).toBe(0);
  });
});
