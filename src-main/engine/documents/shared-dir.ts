// Where the project's shared folder (specs and the corpus of documents written by others) lives: beside the
// repository, as on developers' machines, or where RSDESK_SHARED points. Only the `*.shared.test.ts` suites read
// it (`npm run test:corpus`, which finds it by the same rule in scripts/test-corpus.mjs).
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

export function sharedDir(...parts: string[]): string {
  const root = process.env.RSDESK_SHARED ? resolve(process.env.RSDESK_SHARED) : resolve(import.meta.dirname, '../../../../shared');
  const dir = resolve(root, ...parts);
  if (!existsSync(dir)) throw new Error(`${dir} is missing: the shared folder must sit beside the repository (or set RSDESK_SHARED)`);
  return dir;
}
