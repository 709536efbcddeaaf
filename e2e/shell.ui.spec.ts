// The page shell in Chromium over `rsdesk serve`: every request it makes on load succeeds (the favicon included),
// and the Content-Security-Policy raises no complaint in the console.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { startAppServer, type AppServer } from './app-server.ts';

let app: AppServer;
let dataDir: string;

test.beforeAll(async ({}, testInfo) => {
  dataDir = mkdtempSync(join(tmpdir(), 'rsdesk-shell-'));
  app = await startAppServer(join(testInfo.project.testDir, '..'), dataDir);
});

test.afterAll(async () => {
  await app?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('loads without a failed request (favicon included) and without CSP complaints', async ({ page }) => {
  const failed: string[] = [];
  const requested: string[] = [];
  const console: string[] = [];
  page.on('response', (response) => {
    requested.push(new URL(response.url()).pathname);
    if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
  });
  page.on('requestfailed', (request) => failed.push(`failed ${request.url()}`));
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') console.push(message.text());
  });
  await page.goto(app.url);
  await expect(page.getByLabel('Source URL')).toBeVisible();
  const icon = await page.locator('link[rel="icon"]').getAttribute('href');
  expect(icon).toBeTruthy();
  // Chromium fetches the icon lazily; ask for it as it would.
  const response = await page.request.get(new URL(icon!, page.url()).href);
  expect(response.status()).toBe(200);
  expect(response.headers()['content-type']).toBe('image/svg+xml');
  await page.waitForTimeout(500);
  expect(failed).toEqual([]);
  expect(requested).not.toContain('/favicon.ico');
  expect(console.filter((text) => /Content Security Policy|Content-Security-Policy/i.test(text))).toEqual([]);
});
