// Launches the real Electron app. Where no Electron binary exists (the npm package downloads it on first use,
// which fails on machines without outside network) the test skips itself and says why.
import { existsSync, mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { _electron as electron, expect, test } from '@playwright/test';

function electronBinary(): string | null {
  try {
    const path = createRequire(import.meta.url)('electron') as unknown;
    return typeof path === 'string' && existsSync(path) ? path : null;
  } catch {
    return null;
  }
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
