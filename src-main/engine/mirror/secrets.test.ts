// The CLI's (and the app's) file of mirrors' credentials: a file that cannot be read is refused and left as it is,
// never replaced; writers in several processes at once lose nothing.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FileSecretStore, SecretStoreError } from './secrets.ts';

const MODULE = fileURLToPath(new URL('./secrets.ts', import.meta.url));

describe('FileSecretStore', () => {
  it('refuses a file that is not valid JSON, naming it, and leaves it untouched', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rsdesk-secrets-'));
    const path = join(dir, 'mirror-secrets.json');
    // A hand edit: a trailing comma.
    const text = '{\n "mirror:other-1": {"sealed": false, "value": "OTHER-1"},\n}\n';
    writeFileSync(path, text);
    const store = new FileSecretStore(path);
    for (const act of [() => store.set('mirror:new', 'NEW'), () => store.get('mirror:other-1'), () => store.delete('mirror:other-1')]) {
      let error: unknown;
      try {
        act();
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(SecretStoreError);
      expect((error as Error).message).toBe(
        `The file that keeps mirrors' credentials, ${path}, is not valid JSON (was it edited by hand?). It was left as it is: correct it, or move it away to start afresh (every mirror then needs its credentials given again).`,
      );
    }
    expect(readFileSync(path, 'utf8')).toBe(text);
    expect(readdirSync(dir)).toEqual(['mirror-secrets.json']);
  });

  it('takes over a lock a crashed writer left after a few seconds at most, not after the whole wait', () => {
    const dir = mkdtempSync(join(tmpdir(), 'secrets-stale-'));
    const path = join(dir, 'mirror-secrets.json');
    writeFileSync(`${path}.lock`, '');
    // Left 3 s ago by a writer that died holding it.
    const then = (Date.now() - 3_000) / 1000;
    utimesSync(`${path}.lock`, then, then);
    const store = new FileSecretStore(path);
    const t0 = Date.now();
    store.set('mirror:a', 'kept');
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(store.get('mirror:a')).toBe('kept');
    expect(readdirSync(dir)).toEqual(['mirror-secrets.json']);
  });

  it('loses no secret when processes write it at once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rsdesk-secrets-'));
    const path = join(dir, 'mirror-secrets.json');
    const writers = 6;
    const each = 25;
    const script = `const { FileSecretStore } = await import(${JSON.stringify(MODULE)}); const s = new FileSecretStore(${JSON.stringify(path)}); for (let i = 0; i < ${each}; i++) s.set('mirror:' + process.argv[1] + '-' + i, 'secret-' + i);`;
    await Promise.all(
      Array.from(
        { length: writers },
        (_, w) =>
          new Promise<void>((resolve, reject) => {
            const child = spawn(process.execPath, ['--input-type=module', '-e', script, String(w)], { stdio: ['ignore', 'ignore', 'pipe'] });
            let stderr = '';
            child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
            child.on('error', reject);
            child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`writer ${w} exited ${code}: ${stderr}`))));
          }),
      ),
    );
    const kept = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    expect(Object.keys(kept).length).toBe(writers * each);
    // No temporary file and no lock left behind.
    expect(readdirSync(dir)).toEqual(['mirror-secrets.json']);
  }, 60_000);
});
