// The user interface in Chromium against the real app server (`rsdesk serve`) and the project's fixture Source:
// what an archivist does, from pasting a URL to reading one entry of a 20,000-entry Resource List.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { expect, test, type Page } from '@playwright/test';
import { PATHS, startFixtureSource, type FixtureSource } from './fixture-source/index.ts';
import { startAppServer, type AppServer } from './app-server.ts';
import { addSource, dataRows, detail, entriesTable, expand, treeItem } from './ui-helpers.ts';

let fixture: FixtureSource;
/** A second Source that offers no discovery route: only what is pasted is found. */
let bare: FixtureSource;
let app: AppServer;
let dataDir: string;
/** The project folder; Playwright compiles specs to CommonJS here, so no import.meta. */
let root: string;
let screenshots: string;

test.describe.configure({ mode: 'serial' });

test.beforeAll(async ({}, testInfo) => {
  root = join(testInfo.project.testDir, '..');
  screenshots = join(root, 'resources', 'screenshots');
  mkdirSync(screenshots, { recursive: true });
  dataDir = mkdtempSync(join(tmpdir(), 'rsdesk-ui-'));
  fixture = await startFixtureSource();
  bare = await startFixtureSource({ routes: { wellKnown: false, htmlLink: false, linkHeader: false, robots: false } });
  app = await startAppServer(root, dataDir);
});

test.afterAll(async () => {
  await app?.stop();
  await fixture?.close();
  await bare?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function openBigList(page: Page): Promise<void> {
  const sd = treeItem(page, PATHS.wellKnown);
  await expect(sd).toContainText('Source Description');
  if ((await sd.getAttribute('aria-expanded')) !== 'true') await expand(sd);
  const cl2 = treeItem(page, PATHS.dataset2.capabilityList);
  await expand(cl2);
  const index = treeItem(page, PATHS.dataset2.resourceListIndex);
  await expect(index).toContainText('Resource List Index');
  await expand(index);
  const part = treeItem(page, PATHS.dataset2.resourceListPart(1));
  await expect(part).toContainText('20,000');
  await part.locator(':scope > .tree-row').click();
  await expect(part).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByTestId('entry-count')).toHaveText('20,000 of 20,000 entries');
}

test('adds a Source by URL, shows discovery live, and browses a 20,000-entry Resource List', async ({ page }) => {
  await page.goto(app.url);
  // The token moves from the address bar into the session.
  await expect(page).not.toHaveURL(/token=/);
  // Record each discovery step as it appears, and whether discovery was still running at that moment.
  await page.evaluate(() => {
    const seen: { route: string; running: boolean }[] = [];
    (window as unknown as { steps: typeof seen }).steps = seen;
    new MutationObserver((records) => {
      const running = document.querySelector('.add-form button')?.textContent === 'Discovering…';
      for (const record of records) {
        for (const node of record.addedNodes) {
          if (node instanceof HTMLElement && node.matches('.step[data-route]')) seen.push({ route: node.dataset.route!, running });
        }
      }
    }).observe(document.body, { childList: true, subtree: true });
  });
  // The start page answers a little late, so that discovery is seen running whatever the machine's load (the first
  // test of a cold app server once saw every step arrive with the end).
  fixture.setPathDelay('/', 400);
  await addSource(page, `${fixture.url}/`);
  const summary = page.getByRole('button', { name: /Added 127\.0\.0\.1/ });
  await expect(summary).toBeVisible();
  fixture.setPathDelay('/', 0);
  const live = await page.evaluate(() => (window as unknown as { steps: { route: string; running: boolean }[] }).steps);
  expect(live.filter((s) => s.running).map((s) => s.route)).toContain('document');

  const steps = page.getByRole('list', { name: 'Discovery steps' });
  // After a success the steps fold into one line; they are still there to read.
  if ((await summary.getAttribute('aria-expanded')) !== 'true') await summary.click();
  await expect(steps.locator('[data-route=well-known]')).toContainText('Source Description');
  await expect(steps.locator('[data-route=well-known]')).toContainText(`${fixture.url}${PATHS.wellKnown}`);
  await expect(steps.locator('[data-route=well-known] .step-mark')).toHaveText('✓');
  await summary.click();
  await expect(steps).toBeHidden();
  await expect(page.getByRole('list', { name: 'Saved Sources' })).toContainText('127.0.0.1');

  // The tree, unfolded by the add: Source Description → Capability Lists → capabilities (a channel with its hub,
  // not fetched).
  const sd = treeItem(page, PATHS.wellKnown);
  await expect(sd).toHaveAttribute('aria-level', '1');
  await expect(sd).toHaveAttribute('aria-expanded', 'true');
  const cl1 = treeItem(page, PATHS.dataset1.capabilityList);
  await expect(cl1).toContainText('Capability List');
  await expect(cl1).toHaveAttribute('aria-expanded', 'true');
  await expect(treeItem(page, PATHS.dataset1.resourceList)).toContainText('Resource List');
  await expect(treeItem(page, PATHS.dataset1.changeListIndex)).toContainText('Change List Index');
  const channel = page.getByRole('treeitem', { name: 'Change Notification channel' });
  await expect(channel).toContainText(`hub 127.0.0.1:${new URL(fixture.url).port}`);
  await expect(channel).toContainText('not fetched');
  expect(fixture.requests.some((r) => r.path === PATHS.dataset1.notifications)).toBe(false);

  await openBigList(page);
  const table = entriesTable(page);
  // Each loc shows what tells it apart from the others; the whole URI is in its title.
  await expect(page.locator('.entries-caption')).toHaveText(`loc relative to ${fixture.url}/dataset2/res/`);
  await expect(dataRows(page).first().locator('.c-loc')).toHaveText('1');
  await expect(dataRows(page).first().locator('.c-loc')).toHaveAttribute('title', `${fixture.url}/dataset2/res/1`);
  // Virtualized: a viewport of rows exists, not 20,000.
  expect(await dataRows(page).count()).toBeLessThan(80);
  await page.screenshot({ path: join(screenshots, 'tree.png') });

  // Scrolling far fetches only the pages the viewport needs.
  await table.evaluate((el) => (el.scrollTop = el.scrollHeight));
  await expect(table.locator('.c-loc', { hasText: /^20000$/ })).toBeVisible();
  await table.evaluate((el) => (el.scrollTop = el.scrollHeight / 2));
  await expect(table.locator('.c-loc', { hasText: /^10001$/ })).toBeVisible();
  expect(await dataRows(page).count()).toBeLessThan(80);

  // Filter by a URI substring: ids 1234 and 12340–12349.
  await page.getByLabel('Filter by URI').fill('res/1234');
  await expect(page.getByTestId('entry-count')).toHaveText('11 of 20,000 entries');
  await expect(dataRows(page)).toHaveCount(11);
  for (const loc of await dataRows(page).locator('.c-loc').evaluateAll((els) => els.map((el) => el.getAttribute('title')))) {
    expect(loc).toContain('/dataset2/res/1234');
  }

  // Sort by length, both ways, and say so to assistive technology.
  const lengthHeader = table.getByRole('columnheader', { name: 'length' });
  const lengths = async () =>
    (await dataRows(page).locator('.c-length').allTextContents()).map((s) => Number(s.replace(/,/g, '')));
  await lengthHeader.getByRole('button').click();
  await expect(lengthHeader).toHaveAttribute('aria-sort', 'ascending');
  await expect.poll(async () => { const l = await lengths(); return l.length === 11 && l.every((v, i) => i === 0 || l[i - 1] <= v); }).toBe(true);
  await lengthHeader.getByRole('button').click();
  await expect(lengthHeader).toHaveAttribute('aria-sort', 'descending');
  await expect.poll(async () => { const l = await lengths(); return l.length === 11 && l.every((v, i) => i === 0 || l[i - 1] >= v); }).toBe(true);
  const before = await lengths();
  expect(new Set(before).size).toBeGreaterThan(1);

  // An entry's detail: its rs:md, every attribute.
  const first = dataRows(page).first();
  const firstLoc = (await first.locator('.c-loc').getAttribute('title'))!;
  await first.click();
  await expect(first).toHaveAttribute('aria-selected', 'true');
  await expect(detail(page).getByRole('heading', { level: 2 })).toContainText('Entry');
  await expect(detail(page)).toContainText(firstLoc);
  const md = detail(page).getByRole('region', { name: 'rs:md' });
  await expect(md.getByRole('row', { name: /length/ })).toContainText(String(before[0]));
  await expect(md.getByRole('row', { name: /hash/ })).toContainText('md5:');
  await expect(md.getByRole('row', { name: /type/ })).toContainText('text/plain');
  await page.screenshot({ path: join(screenshots, 'entries.png') });

  // Deep in a 5 MB document the entry's line is past the head the engine keeps: the raw view says so and shows
  // the entry as parsed.
  const entryLine = (await detail(page).getByRole('region', { name: 'Entry' }).getByRole('button').textContent())!;
  expect(Number(entryLine)).toBeGreaterThan(10_000);
  await detail(page).getByRole('tab', { name: 'Raw XML' }).click();
  await expect(detail(page).getByRole('note').filter({ hasText: /^Showing first \d+ KiB of 5\.\d MiB/ })).toBeVisible();
  await expect(detail(page).getByText(`Line ${Number(entryLine).toLocaleString('en-US')} is past the part`)).toBeVisible();
  await expect(detail(page).getByLabel('Entry as parsed')).toContainText(`<loc>${firstLoc}</loc>`);
  await expect(detail(page).getByLabel('Entry as parsed')).toContainText(`length="${before[0]}"`);
  await detail(page).getByRole('tab', { name: 'Metadata' }).click();

  // Back to the document; its `up` link opens the parent inside the app, and Back returns.
  await detail(page).getByRole('button', { name: /Resource List ›/ }).click();
  await expect(detail(page).getByRole('heading', { level: 2 })).toContainText('Document');
  const upLink = detail(page).getByRole('region', { name: 'rs:ln' }).getByRole('link', { name: new RegExp(PATHS.dataset2.capabilityList) });
  await expect(upLink).toHaveAttribute('data-follow', 'inside');
  await upLink.click();
  await expect(treeItem(page, PATHS.dataset2.capabilityList)).toHaveAttribute('aria-selected', 'true');
  await expect(detail(page).getByRole('heading', { level: 2 })).toContainText('Capability List');
  await detail(page).getByRole('button', { name: /Back/ }).click();
  await expect(treeItem(page, PATHS.dataset2.resourceListPart(1))).toHaveAttribute('aria-selected', 'true');
});

test('a broken Source shows a clear error, with the routes discovery tried', async ({ page }) => {
  await page.goto(app.url);
  await addSource(page, `${bare.url}${PATHS.broken.notXml}`);
  const alert = page.getByRole('alert').filter({ hasText: 'Could not add' });
  await expect(alert).toBeVisible();
  await expect(alert).toContainText(`${bare.url}${PATHS.broken.notXml}`);
  await expect(alert).toContainText(/No ResourceSync Source found/i);
  const steps = page.getByRole('list', { name: 'Discovery steps' });
  await expect(steps.locator('.step')).not.toHaveCount(0);
  await expect(steps.locator('.step-found')).toHaveCount(0);
  await expect(steps.locator('[data-route=document]')).toContainText(PATHS.broken.notXml);
  // Nothing was saved.
  await expect(page.getByRole('list', { name: 'Saved Sources' })).not.toContainText(`127.0.0.1:${new URL(bare.url).port}`);
});

test('a document with findings: badge, findings list, raw XML at the line, and links of an entry', async ({ page }) => {
  await page.goto(app.url);
  // Without a Source Description the tree starts at the Capability List.
  await addSource(page, `${bare.url}${PATHS.broken.capabilityListWithoutUp}`);
  await expect(page.getByRole('button', { name: /Added 127\.0\.0\.1/ })).toBeVisible();
  const root = treeItem(page, PATHS.broken.capabilityListWithoutUp);
  await expect(root).toHaveAttribute('aria-level', '1');
  await expect(root).toContainText('Capability List');
  // No up link is an error (§9: mandatory); no describedby link a warning (recommended).
  await expect(root.locator(':scope > .tree-row .badge-error')).toContainText('1');
  await expect(root.locator(':scope > .tree-row .badge-warning')).toContainText('1');

  await root.locator(':scope > .tree-row').click();
  await detail(page).getByRole('tab', { name: /Findings/ }).click();
  const finding = detail(page).getByRole('table', { name: 'Findings' }).getByRole('row').filter({ hasText: 'missing-up' });
  await expect(finding).toContainText(/rel="up"/);
  await expect(finding.getByRole('img', { name: 'error' })).toBeVisible();
  const line = (await finding.getByRole('button').textContent())!;
  await page.screenshot({ path: join(screenshots, 'findings.png') });
  await finding.getByRole('button').click();
  await expect(detail(page).getByRole('tab', { name: 'Raw XML' })).toHaveAttribute('aria-selected', 'true');
  const raw = detail(page).getByRole('region', { name: 'Raw XML' });
  await expect(raw.locator(`.raw-line.raw-target[data-line="${line}"]`)).toBeVisible();
  await expect(raw).toContainText('<rs:md capability="capabilitylist"/>');
  await expect(raw.locator('.hljs-name').first()).toBeVisible();

  // An entry with every kind of link: documents open inside, other targets in the browser.
  await expand(root);
  await treeItem(page, PATHS.dataset1.resourceList).locator(':scope > .tree-row').click();
  await page.getByLabel('Filter by URI').fill('res/28.');
  await expect(page.getByTestId('entry-count')).toHaveText(/^1 of \d+ entries$/);
  await dataRows(page).first().click();
  const links = detail(page).getByRole('region', { name: 'rs:ln' });
  for (const rel of ['memento', 'timegate', 'timemap', 'describedby']) {
    await expect(links.getByRole('row').filter({ hasText: rel }).first()).toBeVisible();
  }
  const memento = links.getByRole('row').filter({ hasText: 'memento' });
  await expect(memento).toContainText('hash=');
  await expect(memento).toContainText('modified=');
  await expect(memento.getByRole('link')).toHaveAttribute('data-follow', 'external');
  await page.screenshot({ path: join(screenshots, 'detail.png') });

  const popup = page.context().waitForEvent('page');
  await memento.getByRole('link').click();
  expect((await popup).url()).toContain('/dataset1/mementos/28/');

  const describedby = links.getByRole('row').filter({ hasText: 'describedby' }).getByRole('link');
  await expect(describedby).toHaveAttribute('data-follow', 'inside');
  await describedby.click();
  await expect(detail(page)).toContainText('/dataset1/meta/28.xml');
  await detail(page).getByRole('button', { name: /Back/ }).click();
  await expect(detail(page).getByRole('heading', { level: 2 })).toContainText('Entry');

  // The entry's own place in the raw XML, marked.
  const entryLine = (await detail(page).getByRole('region', { name: 'Entry' }).getByRole('button').textContent())!;
  await detail(page).getByRole('tab', { name: 'Raw XML' }).click();
  const target = detail(page).locator(`.raw-line.raw-target[data-line="${entryLine}"]`);
  await expect(target).toBeVisible();
  await expect(target).toContainText('<url>');
  await expect(detail(page).locator(`.raw-line[data-line="${Number(entryLine) + 1}"]`)).toContainText('/dataset1/res/28.json');
});

test('the tree works from the keyboard (WAI-ARIA tree)', async ({ page }) => {
  await page.goto(app.url);
  const tree = page.getByRole('tree');
  const sd = treeItem(page, PATHS.wellKnown);
  await expect(sd).toBeVisible();
  await expect(sd).toHaveAttribute('tabindex', '0');
  await sd.focus();
  const focused = page.locator('[role=treeitem]:focus');

  await page.keyboard.press('ArrowRight');
  await expect(sd).toHaveAttribute('aria-expanded', 'true');
  // ArrowRight moves into the children once they are there (on a busy machine they take a moment to load).
  await expect(treeItem(page, PATHS.dataset1.capabilityList)).toBeVisible();
  await page.keyboard.press('ArrowRight');
  await expect(focused).toHaveAttribute('aria-level', '2');
  await expect(focused).toContainText(PATHS.dataset1.capabilityList);
  await page.keyboard.press('ArrowDown');
  await expect(focused).toContainText(PATHS.dataset2.capabilityList);
  await page.keyboard.press('ArrowRight');
  await expect(treeItem(page, PATHS.dataset2.capabilityList)).toHaveAttribute('aria-expanded', 'true');
  await page.keyboard.press('ArrowDown');
  await expect(focused).toContainText(PATHS.dataset2.resourceListIndex);
  await expect(focused).toHaveAttribute('aria-level', '3');
  await page.keyboard.press('Home');
  await expect(focused).toContainText(PATHS.wellKnown);
  await page.keyboard.press('End');
  await expect(focused).toContainText(PATHS.dataset2.resourceListIndex);
  await page.keyboard.press('ArrowLeft');
  await expect(focused).toContainText(PATHS.dataset2.capabilityList);
  await page.keyboard.press('ArrowLeft');
  await expect(treeItem(page, PATHS.dataset2.capabilityList)).toHaveAttribute('aria-expanded', 'false');
  await page.keyboard.press('ArrowUp');
  await expect(focused).toContainText(PATHS.dataset1.capabilityList);
  // Exactly one tab stop, on the focused item.
  await expect(tree.locator('[role=treeitem][tabindex="0"]')).toHaveCount(1);
  await expect(focused).toHaveAttribute('tabindex', '0');

  await page.keyboard.press('Enter');
  await expect(treeItem(page, PATHS.dataset1.capabilityList)).toHaveAttribute('aria-selected', 'true');
  await expect(detail(page).getByRole('heading', { level: 2 })).toContainText('Capability List');
  await expect(page.getByTestId('entry-count')).toHaveText('5 of 5 entries');
  // Type-ahead: a character goes to the next item whose name starts with it, round to the top; again, to the one after.
  await tree.locator('[role=treeitem]:focus').waitFor();
  await page.keyboard.press('s');
  await expect(focused).toContainText(PATHS.wellKnown);
  // (A key within 0.7 s of the last adds to the search: these wait longer.)
  await page.waitForTimeout(800);
  await page.keyboard.press('c');
  await expect(focused).toContainText(PATHS.dataset1.capabilityList);
  await page.waitForTimeout(800);
  await page.keyboard.press('c');
  await expect(focused).toContainText(PATHS.dataset2.capabilityList);
  // The same letter typed again and again goes round the items of that name, one item a letter (before, "cc" found
  // no name and focus stayed on the first Capability List).
  await page.waitForTimeout(800);
  await page.keyboard.type('cc', { delay: 50 });
  await expect(focused).toContainText(PATHS.dataset2.capabilityList);
  await page.waitForTimeout(800);
  await page.keyboard.type('ccc', { delay: 50 });
  await expect(focused).toContainText(PATHS.dataset1.capabilityList);
  // Characters typed quickly are one search; one that no name starts with leaves the focus where it is.
  await page.waitForTimeout(800);
  await page.keyboard.type('so', { delay: 50 });
  await expect(focused).toContainText(PATHS.wellKnown);
  await page.waitForTimeout(800);
  await page.keyboard.press('x');
  await expect(focused).toContainText(PATHS.wellKnown);
  await expect(tree.locator('[role=treeitem][tabindex="0"]')).toHaveCount(1);
});

test('saved Sources survive a reload and a restart of the app, and can be removed', async ({ page }) => {
  await page.goto(app.url);
  const saved = page.getByRole('list', { name: 'Saved Sources' });
  await expect(saved.getByRole('listitem')).toHaveCount(2);
  await page.reload();
  await expect(saved.getByRole('listitem')).toHaveCount(2);
  await expect(treeItem(page, PATHS.wellKnown)).toBeVisible();

  await app.stop();
  app = await startAppServer(root, dataDir);
  await page.goto(app.url);
  await expect(saved.getByRole('listitem')).toHaveCount(2);
  await expect(saved).toContainText(`${fixture.url}/`);
  await expect(saved).toContainText(`${bare.url}${PATHS.broken.capabilityListWithoutUp}`);

  const bareName = `127.0.0.1:${new URL(bare.url).port}`;
  await saved.getByRole('button', { name: `Remove Source ${bareName}` }).click();
  await expect(saved.getByRole('listitem')).toHaveCount(1);
  await page.reload();
  await expect(saved.getByRole('listitem')).toHaveCount(1);
  await expect(saved).not.toContainText(bareName);
});

test('dark theme follows the OS', async ({ browser }) => {
  const context = await browser.newContext({ colorScheme: 'dark', viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  try {
    await page.goto(app.url);
    const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(background).not.toBe('rgb(255, 255, 255)');
    await openBigList(page);
    await dataRows(page).nth(2).click();
    await expect(detail(page).getByRole('heading', { level: 2 })).toContainText('Entry');
    await page.screenshot({ path: join(screenshots, 'dark.png') });
  } finally {
    await context.close();
  }
});

test('Settings: a bearer token goes to the Source named for it on discovery, persists, and can be cleared', async ({ page }) => {
  const token = 'archive-s3cret-7f2c';
  const settingsButton = page.getByRole('button', { name: 'Settings' });
  const dialog = page.getByRole('dialog', { name: 'Settings' });
  const tokenField = dialog.getByLabel('Bearer token');
  const originField = dialog.getByLabel('Source the token is for');
  const timeoutField = dialog.getByLabel('Timeout (seconds)');
  const requests = dialog.getByRole('form', { name: 'Requests to Sources' });
  const saved = requests.getByRole('status');
  await page.goto(app.url);

  // A modal dialog: focus moves in, Tab stays in, Escape closes and hands focus back.
  await settingsButton.click();
  await expect(dialog).toBeVisible();
  await expect(dialog).toHaveAttribute('aria-modal', 'true');
  await expect(tokenField).toBeFocused();
  await expect(tokenField).toHaveAttribute('type', 'password');
  await expect(tokenField).toHaveValue('');
  await expect(timeoutField).toHaveValue('30');
  // Top to bottom: the requests' section with its Save, the callback server's with its own actions, then Close.
  await expect(dialog.getByRole('heading', { level: 3 })).toHaveText(['Requests to Sources', 'Callback server (live notifications)']);
  await expect(requests).toContainText("Stored unencrypted in the data folder of rsdesk serve, as is each mirror's own copy of it (readable only by your user account).");
  const order = ['Show token', 'Source the token is for', 'Save', 'Listen on address', 'Port', 'Public callback URL', 'Apply and restart the server', 'Test reachability', 'Close'];
  for (const name of order) {
    await page.keyboard.press('Tab');
    if (name === 'Save') await page.keyboard.press('Tab'); // past the timeout field
    const label = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement;
      return el.getAttribute('aria-label') ?? (el.id ? document.querySelector(`label[for="${el.id}"]`)?.textContent : null) ?? el.textContent ?? '';
    });
    expect(label.trim()).toBe(name);
  }
  await tokenField.focus();
  // Tab and Shift+Tab stay inside: twelve presses either way wrap around.
  for (const key of [...Array(12).fill('Tab'), ...Array(12).fill('Shift+Tab')] as string[]) {
    await page.keyboard.press(key);
    expect(await dialog.evaluate((el) => el.contains(document.activeElement) && el !== document.activeElement)).toBe(true);
  }
  await expect(tokenField).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await expect(settingsButton).toBeFocused();

  // The engine judges the range and its message is shown; nothing is saved.
  await settingsButton.click();
  await timeoutField.fill('0');
  await dialog.getByRole('button', { name: 'Save' }).click();
  const error = dialog.getByRole('alert');
  await expect(error).toContainText('Not saved');
  await expect(error).toContainText('Timeout must be a whole number of seconds from 1 to 600.');
  await expect(error).not.toContainText(/settings\.set|Invalid arguments|timeoutMs/);
  await expect(timeoutField).toHaveAttribute('aria-invalid', 'true');
  await timeoutField.fill('45');
  await expect(error).toBeHidden();

  await tokenField.fill(token);
  await dialog.getByRole('button', { name: 'Show token' }).click();
  await expect(tokenField).toHaveAttribute('type', 'text');
  await dialog.getByRole('button', { name: 'Hide token' }).click();
  await expect(tokenField).toHaveAttribute('type', 'password');
  // Not without the Source it is for: it would go nowhere.
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(originField).toHaveAttribute('aria-invalid', 'true');
  await expect(dialog).toContainText('Say which Source the token is for');
  await originField.fill(`${fixture.url}/`);
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(saved).toContainText('Saved');
  await expect(originField).toHaveValue(fixture.url);
  // Saving keeps focus in the dialog, so Escape and Tab still work.
  await expect(dialog.getByRole('button', { name: 'Save' })).toBeFocused();
  await page.screenshot({ path: join(screenshots, 'settings.png') });
  await dialog.getByRole('button', { name: 'Close' }).click();
  await expect(dialog).toBeHidden();

  // Discovery of the fixture Source: every request carries the token.
  let mark = fixture.requests.length;
  await addSource(page, `${fixture.url}/`);
  await expect(page.getByRole('button', { name: /Already saved: 127\.0\.0\.1/ })).toBeVisible();
  const withToken = fixture.requests.slice(mark);
  expect(withToken.map((r) => r.path)).toContain(PATHS.wellKnown);
  for (const request of withToken) expect(request.headers.authorization).toBe(`Bearer ${token}`);

  // Kept by the engine, not by the page.
  await page.reload();
  await settingsButton.click();
  await expect(tokenField).toHaveValue(token);
  await expect(originField).toHaveValue(fixture.url);
  await expect(timeoutField).toHaveValue('45');

  // Cleared: later requests carry no Authorization header at all.
  await tokenField.fill('');
  await timeoutField.fill('30');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(saved).toContainText('Saved');
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  mark = fixture.requests.length;
  await addSource(page, `${fixture.url}/`);
  await expect(page.getByRole('button', { name: /Already saved: 127\.0\.0\.1/ })).toBeVisible();
  const withoutToken = fixture.requests.slice(mark);
  expect(withoutToken.map((r) => r.path)).toContain(PATHS.wellKnown);
  for (const request of withoutToken) expect(request.headers).not.toHaveProperty('authorization');

  await settingsButton.click();
  await expect(tokenField).toHaveValue('');
  await expect(timeoutField).toHaveValue('30');
  await page.keyboard.press('Escape');

  // A token kept by an earlier version, which sent it to every host: kept, sent nowhere, and said so until its
  // Source is named.
  const db = new DatabaseSync(join(dataDir, 'rsdesk.sqlite'));
  db.prepare("INSERT INTO settings (key, value) VALUES ('bearerToken', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(JSON.stringify(token));
  db.prepare("DELETE FROM settings WHERE key = 'tokenOrigin'").run();
  db.close();
  await settingsButton.click();
  await expect(tokenField).toHaveValue(token);
  await expect(originField).toHaveValue('');
  const unbound = dialog.getByText('This token was kept from an earlier version');
  await expect(unbound).toContainText('It is now sent to no Source until you give the address of the Source it is for below and save');
  await originField.fill(fixture.url);
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(saved).toContainText('Saved');
  await expect(unbound).toBeHidden();
});
