// Where the CLI finds the package (version, built renderer) and keeps its data.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root: this file is src-main/cli/paths.ts. */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The built renderer; RSDESK_RENDERER_DIR points elsewhere (tests, portable setups). */
export function rendererDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.RSDESK_RENDERER_DIR || join(PACKAGE_ROOT, 'out', 'renderer');
}

const APP_DIR = 'resourcesync-desktop';

export function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** The platform's usual place for application data. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  const home = env.HOME || homedir();
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', APP_DIR);
  if (platform === 'win32') return join(env.APPDATA || join(home, 'AppData', 'Roaming'), APP_DIR);
  return join(env.XDG_DATA_HOME || join(home, '.local', 'share'), APP_DIR);
}
