// Launches the real Electron app. Where no Electron binary exists (the npm package downloads it on first use,
// which fails on machines without outside network) the test skips itself and says why.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { _electron as electron, expect, test } from '@playwright/test';

// Looks for the binary the way the electron package does, without requiring it: `require('electron')` tries to
// download a missing binary from outside, and tests talk to 127.0.0.1 only.
function electronBinary(): string | null {
  if (process.env.ELECTRON_EXEC_PATH) return existsSync(process.env.ELECTRON_EXEC_PATH) ? process.env.ELECTRON_EXEC_PATH : null;
  const pkg = join(process.cwd(), 'node_modules', 'electron');
  const pathFile = join(pkg, 'path.txt');
  const relative = existsSync(pathFile) ? readFileSync(pathFile, 'utf8').trim() : platformDefault();
  const dist = process.env.ELECTRON_OVERRIDE_DIST_PATH ?? join(pkg, 'dist');
  const full = join(dist, relative);
  return existsSync(full) ? full : null;
}

function platformDefault(): string {
  if (process.platform === 'darwin') return 'Electron.app/Contents/MacOS/Electron';
  return process.platform === 'win32' ? 'electron.exe' : 'electron';
}

const binary = electronBinary();

test('the Electron window is hardened and talks to the engine over the preload bridge', async () => {
  test.skip(!binary, 'No Electron binary on this machine (npm could not download it): the real-window test runs where Electron is installed.');
  const app = await electron.launch({
    executablePath: binary!,
    args: ['.'],
    env: { ...process.env, RSDESK_USER_DATA: mkdtempSync(join(tmpdir(), 'rsdesk-electron-')) },
  });
  try {
    const window = await app.firstWindow();
    await expect(window).toHaveTitle(/ResourceSync Desktop/);
    const csp = await window.evaluate(
      () => document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.getAttribute('content') ?? '',
    );
    expect(csp).toContain("script-src 'self'");
    const exposed = await window.evaluate(() => ({
      keys: Object.keys((window as unknown as { rs: object }).rs).sort(),
      require: typeof (window as unknown as { require?: unknown }).require,
      process: typeof (window as unknown as { process?: unknown }).process,
    }));
    expect(exposed).toEqual({ keys: ['invoke', 'on'], require: 'undefined', process: 'undefined' });
    const info = await window.evaluate(() =>
      (window as unknown as { rs: { invoke: (c: string, a: object) => Promise<{ adapter: string }> } }).rs.invoke('app.info', {}),
    );
    expect(info.adapter).toBe('electron');
    await expect(window.getByRole('button', { name: /add source/i })).toBeVisible();
  } finally {
    await app.close();
  }
});
