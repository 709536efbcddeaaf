// Browsing a Source as an archivist reads it, in Chromium over `rsdesk serve` and the fixture Source: entries that
// can be read at a glance (loc relative to the document, columns that follow the capability, resizable), a dump's
// Manifests under it, a keyboard grid, a UI that remembers where the person was, and axe on every view in light and
// dark.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Locator, type Page } from '@playwright/test';
import { PATHS, startFixtureSource, type FixtureSource } from './fixture-source/index.ts';
import { startAppServer, type AppServer } from './app-server.ts';
import { addSource, dataRows, detail, entriesTable, expand, expectAccessible, treeItem } from './ui-helpers.ts';

const ENTRIES = 2000;

let fixture: FixtureSource;
/** A Source that offers no discovery route, for a Capability List with a finding and a failed discovery. */
let bare: FixtureSource;
let app: AppServer;
let port: number;
let dataDir: string;
let root: string;

test.describe.configure({ mode: 'serial' });

/** A free port now, so the app can be restarted on the same origin (and so keep its localStorage). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: found } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return found;
}

test.beforeAll(async ({}, testInfo) => {
  root = join(testInfo.project.testDir, '..');
  dataDir = mkdtempSync(join(tmpdir(), 'rsdesk-browse-ui-'));
  fixture = await startFixtureSource({ bigListEntries: ENTRIES });
  bare = await startFixtureSource({ bigListEntries: 10, routes: { wellKnown: false, htmlLink: false, linkHeader: false, robots: false } });
  port = await freePort();
  app = await startAppServer(root, dataDir, 30_000, port);
});

test.afterAll(async () => {
  await app?.stop();
  await fixture?.close();
  await bare?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function row(item: Locator): Locator {
  return item.locator(':scope > .tree-row');
}

function hostName(source: FixtureSource): string {
  return `127.0.0.1:${new URL(source.url).port}`;
}

/** Opens the app with the fixture Source saved (added once, by the first test that needs it) and selected. */
async function openApp(page: Page): Promise<void> {
  await page.goto(app.url);
  const saved = page.getByRole('list', { name: 'Saved Sources' });
  await expect(saved.or(page.getByText('No Sources yet'))).toBeVisible();
  const button = saved.getByRole('button', { name: new RegExp(`^${hostName(fixture).replace(/\./g, '\\.')}`) });
  if (!(await saved.isVisible()) || (await button.count()) === 0) {
    await addSource(page, `${fixture.url}/`);
    await expect(page.getByRole('button', { name: /Added 127\.0\.0\.1/ })).toBeVisible();
  }
  await button.click();
  await expect(treeItem(page, PATHS.wellKnown)).toBeVisible();
}

async function expanded(item: Locator): Promise<void> {
  await expect(item).toHaveAttribute('aria-expanded', /true|false/);
  if ((await item.getAttribute('aria-expanded')) !== 'true') await expand(item);
}

/** Selects the tree node at `path` under the Capability List `capabilityList`, expanding what leads there. */
async function open(page: Page, capabilityList: string, ...path: string[]): Promise<Locator> {
  await expanded(treeItem(page, PATHS.wellKnown));
  let item = treeItem(page, capabilityList);
  for (const next of path) {
    await expanded(item);
    item = treeItem(page, next);
  }
  await row(item).click();
  await expect(item).toHaveAttribute('aria-selected', 'true');
  return item;
}

function headers(page: Page): Locator {
  return entriesTable(page).getByRole('columnheader');
}

async function headerNames(page: Page): Promise<string[]> {
  return (await headers(page).locator('.th-button, .th-text').allTextContents()).map((t) => t.replace(/[▲▼]/g, '').trim());
}

test('the loc column shows what tells entries apart; the full URI on hover and in the detail', async ({ page }) => {
  await openApp(page);
  await open(page, PATHS.dataset2.capabilityList, PATHS.dataset2.resourceListIndex, PATHS.dataset2.resourceListPart(1));
  await expect(page.getByTestId('entry-count')).toHaveText(`2,000 of 2,000 entries`);
  const prefix = `${fixture.url}/dataset2/res/`;
  await expect(page.locator('.entries-caption')).toHaveText(`loc relative to ${prefix}`);
  const first = dataRows(page).first();
  await expect(first.locator('.c-loc')).toHaveText('1');
  await expect(first.locator('.c-loc')).toHaveAttribute('title', `${prefix}1`);
  await page.screenshot({ path: '/tmp/browse-1.png' });
});

test('columns follow the capability, and none is always empty', async ({ page }) => {
  await openApp(page);
  const everyColumnHasValues = async () => {
    const names = await headerNames(page);
    for (let i = 0; i < names.length; i++) {
      const values = await dataRows(page).locator(`[role=gridcell]:nth-child(${i + 1})`).allTextContents();
      expect(values.some((v) => v.trim() !== ''), `column ${names[i]} has a value`).toBe(true);
    }
  };

  await row(treeItem(page, PATHS.wellKnown)).click();
  await expect.poll(() => headerNames(page)).toEqual(['#', 'loc', 'capability']);
  await everyColumnHasValues();

  await open(page, PATHS.dataset1.capabilityList);
  await expect.poll(() => headerNames(page)).toEqual(['#', 'loc', 'capability']);
  await expect(dataRows(page).first().locator('.c-capability')).toHaveText('resourcelist');

  await open(page, PATHS.dataset1.capabilityList, PATHS.dataset1.resourceList);
  await expect.poll(() => headerNames(page)).toEqual(['#', 'loc', 'lastmod', 'length', 'type', 'hash']);
  await expect(page.getByLabel('Change type')).toHaveCount(0);
  await everyColumnHasValues();

  const changeList = fixture.state.changeLists()[0]!;
  await open(page, PATHS.dataset1.capabilityList, PATHS.dataset1.changeListIndex, PATHS.dataset1.changeList(changeList.number));
  await expect.poll(() => headerNames(page)).toEqual(['#', 'loc', 'change', 'datetime', 'lastmod', 'length', 'type', 'hash']);
  await expect(page.getByLabel('Change type')).toBeVisible();
  await everyColumnHasValues();
});

test("a dump's Manifests are in the tree under it, with their paths", async ({ page }) => {
  await openApp(page);
  const dump = await open(page, PATHS.dataset1.capabilityList, PATHS.dataset1.resourceDump);
  // The dump's own entries are its packages.
  await expect(dataRows(page).first().locator('.c-loc')).toHaveText('part1.zip');
  await expanded(dump);
  const manifest = treeItem(page, PATHS.dataset1.resourceDumpManifest(1));
  await expect(manifest).toHaveAttribute('aria-level', '4');
  await expect(manifest).toContainText('Resource Dump Manifest');
  await expect(treeItem(page, PATHS.dataset1.resourceDumpManifest(2))).toBeVisible();
  await row(manifest).click();
  await expect.poll(() => headerNames(page)).toContain('path');
  const paths = await dataRows(page).locator('.c-path').allTextContents();
  expect(paths.length).toBeGreaterThan(0);
  for (const path of paths) expect(path).toMatch(/^\/?resources\//);

  const changeDump = await open(page, PATHS.dataset1.capabilityList, PATHS.dataset1.changeDump);
  await expanded(changeDump);
  const changeManifest = page.getByRole('treeitem', { name: /Change Dump Manifest/ }).first();
  await row(changeManifest).click();
  await expect.poll(() => headerNames(page)).toEqual(expect.arrayContaining(['path', 'change', 'datetime']));
});

for (const scheme of ['light', 'dark'] as const) {
  test(`axe finds nothing serious or critical on any view, whole page, ${scheme}`, async ({ page }) => {
    await page.emulateMedia({ colorScheme: scheme });
    await openApp(page);
    const check = (view: string) => expectAccessible(page, `${view} (${scheme})`);

    // The tree: a selected Source, open and closed change documents, a selected node with its count.
    await open(page, PATHS.dataset1.capabilityList, PATHS.dataset1.changeListIndex);
    await expanded(treeItem(page, PATHS.dataset1.changeListIndex));
    await expect(page.locator('.pill-closed').first()).toBeVisible();
    await expect(page.locator('.pill-open').first()).toBeVisible();
    await check('tree and a Change List Index');

    // A change-notification channel: not a document, only where to subscribe.
    await row(page.getByRole('treeitem', { name: 'Change Notification channel' })).click();
    await expect(page.getByRole('main', { name: 'Change Notification channel' }).getByText('Notifications are pushed by the hub')).toBeVisible();
    await check('a change-notification channel');

    // Entries and the document's metadata; the grid focused on its active row.
    await open(page, PATHS.dataset2.capabilityList, PATHS.dataset2.resourceListIndex, PATHS.dataset2.resourceListPart(1));
    await expect(dataRows(page).first()).toBeVisible();
    await check('entries and document metadata');
    await entriesTable(page).focus();
    await page.keyboard.press('ArrowDown');
    await expect(detail(page).getByRole('heading', { level: 2 })).toContainText('Entry');
    await check('a focused row and its entry metadata');
    await detail(page).getByRole('tab', { name: 'Raw XML' }).click();
    await expect(detail(page).locator('.raw-line').first()).toBeVisible();
    await check("an entry's raw XML");
    await detail(page).getByRole('tab', { name: 'Metadata' }).click();

    // A document's findings and raw XML (the Capability List of a Source without discovery routes).
    await addSource(page, `${bare.url}${PATHS.broken.capabilityListWithoutUp}`);
    // The light run adds it, the dark one finds it already saved.
    await expect(page.getByRole('button', { name: /(Added|Already saved:) 127\.0\.0\.1/ })).toBeVisible();
    const broken = treeItem(page, PATHS.broken.capabilityListWithoutUp);
    await row(broken).click();
    await detail(page).getByRole('tab', { name: /Findings/ }).click();
    await expect(detail(page).getByRole('table', { name: 'Findings' })).toBeVisible();
    await check("a document's findings");
    await detail(page).getByRole('tab', { name: 'Raw XML' }).click();
    await expect(detail(page).locator('.raw-line').first()).toBeVisible();
    await check("a document's raw XML");
    await detail(page).getByRole('tab', { name: 'Metadata' }).click();

    // Discovery that finds nothing.
    await addSource(page, `${bare.url}${PATHS.broken.notXml}`);
    await expect(page.getByRole('alert').filter({ hasText: 'Could not add' })).toBeVisible();
    await check('a failed discovery');

    // The Settings dialog.
    await page.getByRole('button', { name: 'Settings' }).click();
    await expect(page.getByRole('dialog', { name: 'Settings' })).toBeVisible();
    await check('the Settings dialog');
    // A value the engine refuses: the alert and the field's hint in their error colours.
    const settings = page.getByRole('dialog', { name: 'Settings' });
    await settings.getByLabel('Timeout (seconds)').fill('0');
    await settings.getByRole('button', { name: 'Save' }).click();
    await expect(settings.getByRole('alert')).toContainText('Timeout must be a whole number of seconds from 1 to 600.');
    await expect(settings.getByLabel('Timeout (seconds)')).toHaveAttribute('aria-invalid', 'true');
    await check('the Settings dialog refusing a timeout');
    await page.keyboard.press('Escape');
  });
}

test('columns resize with the mouse and the keyboard; datetimes are never cut; a long loc is cut in the middle', async ({ page }) => {
  await openApp(page);
  await open(page, PATHS.dataset2.capabilityList, PATHS.dataset2.resourceListIndex, PATHS.dataset2.resourceListPart(1));
  const header = (name: string) => headers(page).filter({ hasText: new RegExp(`^${name}`) });
  const width = async (name: string) => Math.round((await header(name).boundingBox())!.width);
  const separator = (name: string) => page.getByRole('separator', { name: `Resize column ${name}` });

  // Mouse: drag the type column's edge 60 px to the right.
  const before = await width('type');
  const edge = (await separator('type').boundingBox())!;
  await page.mouse.move(edge.x + edge.width / 2, edge.y + edge.height / 2);
  await page.mouse.down();
  await page.mouse.move(edge.x + edge.width / 2 + 30, edge.y + edge.height / 2, { steps: 3 });
  await page.mouse.move(edge.x + edge.width / 2 + 60, edge.y + edge.height / 2, { steps: 3 });
  await page.mouse.up();
  await expect.poll(() => width('type')).toBe(before + 60);
  await expect(separator('type')).toHaveAttribute('aria-valuenow', String(before + 60));

  // Keyboard: the separator is a focusable widget with its value.
  const length = separator('length');
  await length.focus();
  const start = Number(await length.getAttribute('aria-valuenow'));
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await expect(length).toHaveAttribute('aria-valuenow', String(start + 32));
  expect(await width('length')).toBe(start + 32);
  await page.keyboard.press('ArrowLeft');
  await expect(length).toHaveAttribute('aria-valuenow', String(start + 16));
  // Enter gives the default back.
  await page.keyboard.press('Enter');
  await expect(length).toHaveAttribute('aria-valuenow', String(start));

  // A datetime column cannot be made narrower than its values.
  const lastmod = separator('lastmod');
  await lastmod.focus();
  await page.keyboard.press('Home');
  for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowLeft');
  const cells = dataRows(page).locator('.c-lastmod');
  await expect(cells.first()).toHaveText(/^2024-12-31T\d\d:\d\d:\d\dZ$/);
  for (const cut of await cells.evaluateAll((els) => els.map((el) => el.scrollWidth > el.clientWidth))) expect(cut).toBe(false);

  // loc made narrow: each value is cut in the middle, the whole URI stays in the title and is read out.
  const loc = separator('loc');
  await loc.focus();
  await page.keyboard.press('Home');
  await page.getByLabel('Filter by URI').fill('res/1999');
  await expect(page.getByTestId('entry-count')).toHaveText('1 of 2,000 entries');
  const cell = dataRows(page).first().locator('.c-loc');
  await expect(cell).toHaveAttribute('title', `${fixture.url}/dataset2/res/1999`);
  // "1999" fits even the narrowest column: widen nothing, check the header's relative form instead.
  await expect(cell).toContainText('1999');
  await page.getByLabel('Filter by URI').fill('');

  // A document whose locs are long after their prefix (the Source Description's Capability Lists share only the
  // origin): a narrow loc column cuts them in the middle.
  await row(treeItem(page, PATHS.wellKnown)).click();
  await expect(page.locator('.entries-caption')).toHaveText(`loc relative to ${fixture.url}/`);
  await separator('loc').focus();
  await page.keyboard.press('Home');
  for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowRight');
  const first = dataRows(page).first().locator('.c-loc');
  await expect(first).toHaveAttribute('title', `${fixture.url}${PATHS.dataset1.capabilityList}`);
  await expect(first.locator('[aria-hidden=true]')).toHaveText(/^data.*….*\.xml$/);
  await expect(first.locator('.sr-only')).toHaveText(PATHS.dataset1.capabilityList.slice(1));
  await page.keyboard.press('Enter');
  await expect(first).toHaveText(PATHS.dataset1.capabilityList.slice(1));
});

test('the entries grid works from the keyboard: one Tab stop, arrows between cells, a visible focus ring', async ({ page }) => {
  await openApp(page);
  await open(page, PATHS.dataset2.capabilityList, PATHS.dataset2.resourceListIndex, PATHS.dataset2.resourceListPart(2));
  const grid = entriesTable(page);
  await expect(grid).toHaveAttribute('aria-rowcount', String(ENTRIES + 1));
  await expect(dataRows(page).first()).toHaveAttribute('aria-rowindex', '2');
  const selectedRow = grid.locator('[role=row][aria-selected=true]');
  const selectedNumber = async () => Number(await selectedRow.locator('.c-index').textContent());
  /** The focused cell: its row's aria-rowindex and its aria-colindex. */
  const focusedCell = () =>
    page.evaluate(() => {
      const cell = document.activeElement as HTMLElement;
      return { role: cell.getAttribute('role'), row: cell.closest('[role=row]')?.getAttribute('aria-rowindex') ?? null, col: cell.getAttribute('aria-colindex') };
    });
  const columns = await grid.getByRole('columnheader').count();
  expect(columns).toBe(6);

  // One Tab stop in the whole grid: once it had one per sortable column and one per column's resizer.
  await expect(grid.locator('[tabindex="0"]')).toHaveCount(1);
  await expect(grid.locator('button:not([tabindex="-1"]), [role=separator]:not([tabindex="-1"])')).toHaveCount(0);
  await page.getByLabel('Filter by URI').focus();
  const tabStops: string[] = [];
  for (let i = 0; i < 3; i++) {
    await page.keyboard.press('Tab');
    tabStops.push(await page.evaluate(() => (document.activeElement?.closest('[role=grid]') ? 'grid' : 'outside')));
  }
  expect(tabStops.filter((t) => t === 'grid')).toHaveLength(1);
  await expect(grid.locator('[tabindex="0"]')).toHaveCount(1);

  // Focus given to the grid (the skip link does so) goes on to its Tab stop: the first cell of the first row.
  await grid.focus();
  expect(await focusedCell()).toEqual({ role: 'gridcell', row: '2', col: '1' });
  await page.keyboard.press('ArrowDown');
  await expect(selectedRow).toHaveAttribute('aria-rowindex', '2');
  await expect(detail(page).getByRole('heading', { level: 2 })).toContainText('#1');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await expect(selectedRow).toHaveAttribute('aria-rowindex', '4');
  await expect.poll(focusedCell).toEqual({ role: 'gridcell', row: '4', col: '1' });
  // The ring is drawn on the active row, and on the focused cell.
  const outline = await selectedRow.evaluate((el) => getComputedStyle(el).outlineStyle + ' ' + getComputedStyle(el).outlineWidth);
  expect(outline).toBe('solid 2px');
  expect(await page.evaluate(() => getComputedStyle(document.activeElement!).boxShadow)).toMatch(/inset/);
  await page.keyboard.press('ArrowUp');
  await expect(selectedRow).toHaveAttribute('aria-rowindex', '3');

  // Left and Right go from cell to cell of the row, Home and End to its first and last; the selection stays.
  await page.keyboard.press('ArrowRight');
  await expect.poll(focusedCell).toEqual({ role: 'gridcell', row: '3', col: '2' });
  await page.keyboard.press('End');
  await expect.poll(focusedCell).toEqual({ role: 'gridcell', row: '3', col: String(columns) });
  await page.keyboard.press('ArrowRight');
  await expect.poll(focusedCell).toEqual({ role: 'gridcell', row: '3', col: String(columns) });
  await page.keyboard.press('Home');
  await expect.poll(focusedCell).toEqual({ role: 'gridcell', row: '3', col: '1' });
  await expect(selectedRow).toHaveAttribute('aria-rowindex', '3');
  await expectAccessible(page, 'the entries grid with a focused cell');
  await page.keyboard.press('ArrowRight');
  await page.screenshot({ path: test.info().outputPath('grid-cell-focus.png') });
  await page.keyboard.press('ArrowLeft');

  // PageDown moves by what the viewport shows, PageUp back; the column stays.
  await page.keyboard.press('ArrowRight');
  const rowsShown = await grid.evaluate((el) => Math.floor((el.clientHeight - 28) / 26) - 1);
  expect(rowsShown).toBeGreaterThan(3);
  await page.keyboard.press('PageDown');
  await expect.poll(selectedNumber).toBe(2 + rowsShown);
  await expect.poll(focusedCell).toEqual({ role: 'gridcell', row: String(3 + rowsShown), col: '2' });
  await page.keyboard.press('PageUp');
  await expect.poll(selectedNumber).toBe(2);

  // Ctrl+End goes to the last entry, whose page is fetched on the way; Ctrl+Home back to the first.
  await page.keyboard.press('Control+End');
  await expect.poll(selectedNumber).toBe(ENTRIES);
  await expect(selectedRow).toHaveAttribute('aria-rowindex', String(ENTRIES + 1));
  await expect(detail(page).getByRole('heading', { level: 2 })).toContainText(`#${ENTRIES.toLocaleString('en-US').replace(',', '')}`);
  await expect.poll(focusedCell).toEqual({ role: 'gridcell', row: String(ENTRIES + 1), col: '2' });
  await expect(page.locator(':focus')).toBeInViewport();
  await page.keyboard.press('Control+Home');
  await expect.poll(selectedNumber).toBe(1);
  await expect(page.locator(':focus')).toBeInViewport();

  // Up from the first row: the header. Enter sorts by the focused column; Down goes back to the selected row.
  await page.keyboard.press('ArrowUp');
  await expect.poll(focusedCell).toEqual({ role: 'columnheader', row: '1', col: '2' });
  await expect(page.locator(':focus')).toHaveAccessibleDescription('Enter sorts by this column; F2 resizes it.');
  await expect(page.locator(':focus')).toHaveAttribute('aria-sort', 'none');
  await page.keyboard.press('Enter');
  await expect(page.locator(':focus')).toHaveAttribute('aria-sort', 'ascending');
  await page.keyboard.press('Enter');
  await expect(page.locator(':focus')).toHaveAttribute('aria-sort', 'descending');
  await expect(grid.locator('[tabindex="0"]')).toHaveCount(1);
  // F2 reaches the column's resizer, Escape comes back to its header cell.
  await page.keyboard.press('F2');
  const separator = page.getByRole('separator', { name: 'Resize column loc' });
  await expect(separator).toBeFocused();
  const width = Number(await separator.getAttribute('aria-valuenow'));
  await page.keyboard.press('ArrowRight');
  await expect(separator).toHaveAttribute('aria-valuenow', String(width + 16));
  await page.keyboard.press('Enter');
  await page.keyboard.press('Escape');
  await expect.poll(focusedCell).toEqual({ role: 'columnheader', row: '1', col: '2' });
  // Back to the order by #; a new order drops the selection, so Down goes to the first row.
  await page.keyboard.press('Home');
  await page.keyboard.press('Enter');
  await expect(page.locator(':focus')).toHaveAttribute('aria-sort', 'ascending');
  await page.keyboard.press('ArrowDown');
  await expect.poll(focusedCell).toEqual({ role: 'gridcell', row: '2', col: '1' });

  // Enter opens the entry: its detail's title takes the focus.
  await page.keyboard.press('Enter');
  await expect(detail(page).locator('.detail-title')).toBeFocused();
  await expect(detail(page).getByRole('heading', { level: 2 })).toContainText('#1');
  await expect(selectedRow).toHaveAttribute('aria-rowindex', '2');

  // A click on a cell selects its row and makes that cell the Tab stop, focused; the keys go on from there.
  await dataRows(page).nth(2).locator('[role=gridcell]').nth(2).click();
  await expect(selectedRow).toHaveAttribute('aria-rowindex', '4');
  await expect.poll(focusedCell).toEqual({ role: 'gridcell', row: '4', col: '3' });
  await expect(grid.locator('[tabindex="0"]')).toHaveAttribute('aria-colindex', '3');
  await page.keyboard.press('ArrowDown');
  await expect.poll(focusedCell).toEqual({ role: 'gridcell', row: '5', col: '3' });
});

test('one h1, landmarks for the panes, and a skip link to the entries', async ({ page }) => {
  await openApp(page);
  await open(page, PATHS.dataset2.capabilityList, PATHS.dataset2.resourceListIndex, PATHS.dataset2.resourceListPart(1));
  await expect(page.locator('h1')).toHaveCount(1);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('ResourceSync Desktop');
  await expect(page.getByRole('complementary', { name: 'Sources' })).toBeVisible();
  await expect(page.getByRole('main')).toHaveCount(1);
  await expect(page.getByRole('region', { name: 'Entries' })).toBeVisible();
  await expect(page.getByRole('region', { name: 'Detail' })).toBeVisible();
  // The first Tab stop of a freshly loaded page is the skip link; it takes focus to the entries.
  const fresh = await page.context().newPage();
  await fresh.goto(app.url);
  await expect(dataRows(fresh).first()).toBeVisible();
  await fresh.keyboard.press('Tab');
  const skip = fresh.getByRole('link', { name: 'Skip to the entries and details' });
  await expect(skip).toBeFocused();
  await expect(skip).toBeInViewport();
  await fresh.keyboard.press('Enter');
  // The grid passes the focus on to its one Tab stop, a cell of its active row.
  await expect(entriesTable(fresh).locator('[role=gridcell]:focus')).toHaveCount(1);
  await fresh.close();
});

test('the UI remembers the expanded nodes, the selection, the pane sizes and the column widths', async ({ page }) => {
  await openApp(page);
  await open(page, PATHS.dataset2.capabilityList, PATHS.dataset2.resourceListIndex, PATHS.dataset2.resourceListPart(3));
  await entriesTable(page).focus();
  for (let i = 0; i < 40; i++) await page.keyboard.press('ArrowDown');
  await expect(detail(page).getByRole('heading', { level: 2 })).toContainText('#40');
  /** Presses `key` on a separator and gives its new value, once the page has shown it (a busy page may lag). */
  const moved = async (separator: Locator, key: string) => {
    const before = await separator.getAttribute('aria-valuenow');
    await separator.focus();
    await page.keyboard.press(key);
    await expect(separator).not.toHaveAttribute('aria-valuenow', before!);
    return separator.getAttribute('aria-valuenow');
  };
  const sidebarWidth = await moved(page.getByRole('separator', { name: 'Resize the sidebar' }), 'ArrowRight');
  const detailHeight = await moved(page.getByRole('separator', { name: 'Resize the detail pane' }), 'ArrowUp');
  const typeWidth = await moved(page.getByRole('separator', { name: 'Resize column type' }), 'ArrowRight');

  const expectSame = async () => {
    await expect(treeItem(page, PATHS.dataset2.resourceListIndex)).toHaveAttribute('aria-expanded', 'true');
    await expect(treeItem(page, PATHS.dataset2.resourceListPart(3))).toHaveAttribute('aria-selected', 'true');
    await expect(detail(page).getByRole('heading', { level: 2 })).toContainText('#40');
    const selected = entriesTable(page).locator('[role=row][aria-selected=true]');
    await expect(selected).toHaveAttribute('aria-rowindex', '41');
    await expect(selected).toBeInViewport();
    await expect(page.getByRole('separator', { name: 'Resize the sidebar' })).toHaveAttribute('aria-valuenow', sidebarWidth!);
    await expect(page.getByRole('separator', { name: 'Resize the detail pane' })).toHaveAttribute('aria-valuenow', detailHeight!);
    await expect(page.getByRole('separator', { name: 'Resize column type' })).toHaveAttribute('aria-valuenow', typeWidth!);
  };
  await page.reload();
  await expectSame();

  // A restart of the app (on the same address, so the same origin).
  await app.stop();
  app = await startAppServer(root, dataDir, 30_000, port);
  await page.goto(app.url);
  await expectSame();
});
