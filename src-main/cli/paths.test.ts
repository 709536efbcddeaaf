import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultDataDir, PACKAGE_ROOT, packageVersion, rendererDir } from './paths.ts';
import { parsePort, parseTimeout, UsageError } from './usage.ts';

describe('cli paths', () => {
  it('finds the package root and its version', () => {
    expect(existsSync(join(PACKAGE_ROOT, 'bin', 'rsdesk.mjs'))).toBe(true);
    expect(packageVersion()).toMatch(/^\d+\.\d+\.\d+/);
    expect(rendererDir({})).toBe(join(PACKAGE_ROOT, 'out', 'renderer'));
    expect(rendererDir({ RSDESK_RENDERER_DIR: '/tmp/r' })).toBe('/tmp/r');
  });

  it('uses the platform folder for application data', () => {
    expect(defaultDataDir({ HOME: '/home/a' }, 'linux')).toBe('/home/a/.local/share/resourcesync-desktop');
    expect(defaultDataDir({ HOME: '/home/a', XDG_DATA_HOME: '/xdg' }, 'linux')).toBe('/xdg/resourcesync-desktop');
    expect(defaultDataDir({ HOME: '/Users/a' }, 'darwin')).toBe('/Users/a/Library/Application Support/resourcesync-desktop');
    expect(defaultDataDir({ HOME: '/h', APPDATA: 'C:/Users/a/AppData/Roaming' }, 'win32')).toBe(join('C:/Users/a/AppData/Roaming', 'resourcesync-desktop'));
  });

  it('checks --timeout and --port', () => {
    expect(parseTimeout('1')).toBe(1000);
    expect(parseTimeout('600')).toBe(600_000);
    expect(parseTimeout(undefined)).toBeUndefined();
    for (const bad of ['0', '-1', 'x', '', '601', '2.5', '1e2', ' 5']) {
      expect(() => parseTimeout(bad), bad).toThrow(`--timeout must be a whole number of seconds from 1 to 600, not ${JSON.stringify(bad)}`);
    }
    expect(parsePort('0')).toBe(0);
    expect(parsePort('8080')).toBe(8080);
    for (const bad of ['65536', '-1', '80x', '']) expect(() => parsePort(bad), bad).toThrow(UsageError);
  });
});
