// Checking a whole Source from the UI, in Chromium over `rsdesk serve` and the fixture Source: the progress while it
// runs, Cancel, the summary and findings of the small broken Source, filters, exports and opening a document.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { BROKEN_SOURCE, PATHS, startFixtureSource, type FixtureSource } from './fixture-source/index.ts';
import { startAppServer, type AppServer } from './app-server.ts';
import { addSource, detail, expectAccessible } from './ui-helpers.ts';

let fixture: FixtureSource;
let app: AppServer;
let dataDir: string;
let root: string;
let screenshots: string;

test.describe.configure({ mode: 'serial' });

test.beforeAll(async ({}, testInfo) => {
  root = join(testInfo.project.testDir, '..');
  screenshots = join(root, 'resources', 'screenshots');
  mkdirSync(screenshots, { recursive: true });
  dataDir = mkdtempSync(join(tmpdir(), 'rsdesk-check-ui-'));
  fixture = await startFixtureSource({ bigListEntries: 2000 });
  app = await startAppServer(root, dataDir);
});

test.afterAll(async () => {
  await app?.stop();
  await fixture?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Changes the app's request timeout through its HTTP API, as the page itself would. */
async function setTimeoutMs(timeoutMs: number): Promise<void> {
  const token = new URL(app.url).hash.replace(/^#token=/, '');
  const response = await fetch(`${app.origin}/api/invoke`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, origin: app.origin, 'content-type': 'application/json' },
    body: JSON.stringify({ command: 'settings.set', args: { timeoutMs } }),
  });
  expect(((await response.json()) as { ok: boolean }).ok).toBe(true);
}

function report(page: Page) {
  return page.getByRole('region', { name: 'Check report' });
}

async function addAndSelect(page: Page, url: string, label: RegExp): Promise<void> {
  await addSource(page, url);
  await expect(page.getByRole('button', { name: /Added 127\.0\.0\.1/ })).toBeVisible();
  await page.getByRole('list', { name: 'Saved Sources' }).getByRole('button', { name: label }).click();
}

test('a running check shows its progress and can be cancelled', async ({ page }) => {
  // The dataset2 index never answers: the check stays running until it is cancelled. The request timeout goes up to
  // its most meanwhile, so that slow axe runs on a busy machine cannot outlast it and end the check by themselves.
  fixture.setBroken(PATHS.dataset2.resourceListIndex, 'hang');
  await setTimeoutMs(600_000);
  try {
    await page.goto(app.url);
    await addAndSelect(page, `${fixture.url}/`, new RegExp(`${fixture.url.replace(/[.]/g, '\\.')}/$`));
    await page.getByRole('button', { name: 'Check Source' }).focus();
    await page.keyboard.press('Enter');
    const bar = report(page).getByRole('progressbar', { name: 'Documents checked' });
    await expect(bar).toBeVisible();
    await expect.poll(async () => Number(await bar.getAttribute('aria-valuenow'))).toBeGreaterThan(3);
    // Both read at once: the check goes on meanwhile.
    const [now, max] = await bar.evaluate((el) => [Number(el.getAttribute('aria-valuenow')), Number(el.getAttribute('aria-valuemax'))]);
    expect(max).toBeGreaterThanOrEqual(now);
    await expect(report(page)).toContainText(/\d+ documents? checked of \d+ documents known so far/);
    await expectAccessible(page, 'the check report while running (light)');
    await page.emulateMedia({ colorScheme: 'dark' });
    await expectAccessible(page, 'the check report while running (dark)');
    await page.emulateMedia({ colorScheme: 'light' });

    await report(page).getByRole('button', { name: 'Cancel' }).click();
    await expect(report(page).getByRole('status')).toContainText('Cancelled: some documents were not checked.');
    await expect(bar).toHaveCount(0);
    await expect(report(page).getByRole('table', { name: 'Findings of the check' })).toContainText('Check cancelled after');
  } finally {
    fixture.setBroken(PATHS.dataset2.resourceListIndex, null);
    await setTimeoutMs(30_000);
  }
});

test('a finished check shows the summary and every finding; filter, export, open a document', async ({ page }) => {
  await page.goto(app.url);
  await addAndSelect(page, fixture.url + BROKEN_SOURCE.sourceDescription, /broken-source/);
  await page.getByRole('button', { name: 'Check Source' }).click();
  const summary = report(page).getByRole('status');
  await expect(summary).toContainText('14 documents, 21 entries: 5 errors, 8 warnings');
  const table = report(page).getByRole('table', { name: 'Findings of the check' });
  const rows = table.locator('tbody tr');
  // 5 errors and 8 warnings, 3 of them missing describedby links (recommended, §8/§9).
  await expect(rows).toHaveCount(13);
  await expect(table.locator('thead th')).toHaveText(['document', 'severity', 'code', 'line', 'message']);
  await expect(table).toContainText('up-link-elsewhere');
  await expect(table).toContainText('Refused:');
  await expectAccessible(page, 'the check report when done (light)');
  await page.screenshot({ path: join(screenshots, 'check.png') });

  await page.emulateMedia({ colorScheme: 'dark' });
  await expectAccessible(page, 'the check report when done (dark)');
  await page.emulateMedia({ colorScheme: 'light' });

  // Filters: by severity, then by text.
  await report(page).getByRole('combobox').selectOption('error');
  await expect(rows).toHaveCount(5);
  await expect(rows.locator('td:nth-child(2)')).toHaveText(Array(5).fill(/error/));
  await report(page).getByRole('searchbox', { name: 'Filter findings by text' }).fill('http-status');
  await expect(rows).toHaveCount(2);
  await expect(report(page)).toContainText('2 of 13 findings');
  await report(page).getByRole('combobox').selectOption('all');
  await report(page).getByRole('searchbox', { name: 'Filter findings by text' }).fill('');
  await expect(rows).toHaveCount(13);

  // Exports: the downloaded files hold the whole report.
  const [csvDownload] = await Promise.all([page.waitForEvent('download'), report(page).getByRole('button', { name: 'Export CSV' }).click()]);
  expect(csvDownload.suggestedFilename()).toMatch(/^check-127\.0\.0\.1_\d+-\d{4}-\d\d-\d\d\.csv$/);
  const csv = readFileSync((await csvDownload.path())!, 'utf8');
  // With a byte order mark, so that Excel reads it as UTF-8.
  expect(csv.startsWith('\ufeff')).toBe(true);
  const lines = csv.slice(1).trimEnd().split('\r\n');
  expect(lines[0]).toBe('document,severity,code,line,message');
  expect(lines).toHaveLength(14);
  expect(lines).toContain(
    `${fixture.url + BROKEN_SOURCE.changeList},warning,up-link-elsewhere,,` +
      `"Its rs:ln rel=""up"" points to ${fixture.url + BROKEN_SOURCE.elsewhere}, but it was reached from the Capability List ${fixture.url + BROKEN_SOURCE.capabilityList}"`,
  );
  const [jsonDownload] = await Promise.all([page.waitForEvent('download'), report(page).getByRole('button', { name: 'Export JSON' }).click()]);
  const json = JSON.parse(readFileSync((await jsonDownload.path())!, 'utf8'));
  expect(json.summary).toMatchObject({ documents: 14, entries: 21, errors: 5, warnings: 8, truncated: false });
  expect(json.findings).toHaveLength(13);
  expect(json.documents).toHaveLength(14);

  // A document opens in the detail pane; the report comes back with "Show last check".
  await table.getByRole('button', { name: fixture.url + BROKEN_SOURCE.changeList }).first().click();
  await expect(report(page)).toHaveCount(0);
  await expect(detail(page)).toContainText('Change List');
  await page.getByRole('button', { name: 'Show last check' }).click();
  await expect(report(page).getByRole('status')).toContainText('14 documents');
});
