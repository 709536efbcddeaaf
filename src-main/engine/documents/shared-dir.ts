// Where the project's shared folder (specs and the corpus of documents written by others) lives: beside the
// repository, as on developers' machines and in CI. RSDESK_SHARED points elsewhere.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

export function sharedDir(...parts: string[]): string {
  const root = process.env.RSDESK_SHARED ?? resolve(import.meta.dirname, '../../../../shared');
  const dir = resolve(root, ...parts);
  if (!existsSync(dir)) throw new Error(`${dir} is missing: the shared folder must sit beside the repository (or set RSDESK_SHARED)`);
  return dir;
}
