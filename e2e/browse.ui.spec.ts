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
    await expect(page.getByRole('button', { name: /Added 127\.0\.0\.1/ })).toBeVisible();
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
    await page.keyboard.press('Escape');
  });
}
