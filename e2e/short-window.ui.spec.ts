// A 1400 × 900 window at 200 % zoom: 700 × 450 CSS px, wider than the stacked layout's 640 px. The sidebar, the
// tree, a mirror's tabs and tables and the document's title must each keep room enough to be read.
import { join } from 'node:path';
import { expect, test, type Locator } from '@playwright/test';
import { PATHS } from './fixture-source/index.ts';
import { mirrorSuite } from './mirror-suite.ts';
import { addSource, detail, entriesTable, expectAccessible, mainView, openResourceList, runEndSentence, treeItem } from './ui-helpers.ts';

const suite = mirrorSuite('short-window-ui', { resources: 20, changeListSize: 10 });

test.describe.configure({ mode: 'serial' });
test.use({ viewport: { width: 700, height: 450 } });

async function height(box: Locator): Promise<number> {
  return (await box.boundingBox())!.height;
}

test('at 200 % zoom of a 1400 × 900 window the tree, a mirror\'s tables, its tabs and the title keep their room', async ({ page }) => {
  await page.goto(suite.app.url);
  // The outcome of the discovery stays open above the Sources: the tree still gets a box of its own.
  await addSource(page, `${suite.fixture.url}/`);
  await expect(page.getByRole('button', { name: /Added 127\.0\.0\.1/ })).toBeVisible();
  const sidebar = page.getByRole('complementary', { name: 'Sources' });
  expect((await sidebar.boundingBox())!.width).toBeLessThanOrEqual(0.45 * 700 + 1);
  const list = treeItem(page, PATHS.dataset1.capabilityList);
  await expect(list).toBeVisible();
  expect(await height(page.locator('.tree-box'))).toBeGreaterThan(200);
  // The sidebar scrolls as a page, with no scroll bar sideways (it would take the height of one from the bottom).
  expect(await sidebar.evaluate((e) => (e as HTMLElement).offsetHeight - e.clientHeight)).toBe(0);

  await list.locator(':scope > .tree-row').click();
  await detail(page).getByRole('button', { name: 'Mirror this…' }).click();
  await mainView(page).getByLabel('Folder', { exact: true }).fill(join(suite.mirrors, 'short'));
  await mainView(page).getByRole('button', { name: 'Create mirror' }).click();
  await expect(runEndSentence(page)).toContainText('Baseline completed', { timeout: 60_000 });

  // The Runs table gets more than a strip of one row, and every tab is whole inside the pane.
  const panel = mainView(page).getByRole('tabpanel');
  expect(await height(panel)).toBeGreaterThan(200);
  await panel.scrollIntoViewIfNeeded();
  await expect(panel.getByRole('row').nth(1)).toBeInViewport();
  const tablist = mainView(page).getByRole('tablist', { name: 'Mirror' });
  const right = (await tablist.boundingBox())!;
  for (const tab of await tablist.getByRole('tab').all()) {
    const box = (await tab.boundingBox())!;
    expect(box.x + box.width, `the tab ${await tab.textContent()}`).toBeLessThanOrEqual(right.x + right.width + 0.5);
  }
  await expectAccessible(page, 'a mirror at 200 % zoom');

  // The document's title is not cut by its buttons.
  await treeItem(page, PATHS.dataset1.resourceList).locator(':scope > .tree-row').click();
  const title = detail(page).getByRole('heading', { level: 2 });
  await expect(title).toContainText('Resource List');
  expect(await title.evaluate((e) => e.scrollWidth <= e.clientWidth)).toBe(true);
  // The mirror's view scrolled the main pane; the document view does not scroll it, so nothing of it is cut above.
  await expect(page.getByPlaceholder('Filter by URI…')).toBeInViewport({ ratio: 1 });
  await expectAccessible(page, 'a Resource List at 200 % zoom');
});

test('zoomed in after the detail pane got its height, the entries still show more than a few rows', async ({ page }) => {
  await page.setViewportSize({ width: 1400, height: 900 });
  await openResourceList(page, suite.app.url, suite.fixture.url);
  // 150 % zoom: the same window is 600 CSS px high; the detail pane keeps its height in px.
  await page.setViewportSize({ width: 1400, height: 600 });
  await expect.poll(async () => (await entriesTable(page).boundingBox())!.height).toBeGreaterThan(28 + 5 * 26);
});

test("at 200 % zoom a document's detail stays inside the main pane, its tab's panel whole when scrolled to", async ({ page }) => {
  await openResourceList(page, suite.app.url, suite.fixture.url);
  const panel = detail(page).getByRole('tabpanel');
  await expect(panel).toBeVisible();
  // Before, the title, facts and tabs left the panel 7 px and its padding stuck 9 px out below the main pane.
  const main = mainView(page);
  expect(await main.evaluate((e) => e.scrollHeight - e.clientHeight)).toBe(0);
  expect(await page.evaluate(() => document.documentElement.scrollHeight - innerHeight)).toBe(0);
  expect(await height(panel)).toBeGreaterThan(150);
  // Scrolled to its end, the detail shows the panel down to its bottom, inside the window.
  await detail(page).locator('.detail').evaluate((e) => e.scrollTo({ top: e.scrollHeight }));
  const bottom = await panel.evaluate((e) => e.getBoundingClientRect().bottom);
  const paneBottom = (await detail(page).boundingBox())!;
  expect(bottom).toBeLessThanOrEqual(paneBottom.y + paneBottom.height + 0.5);
  expect(bottom).toBeLessThanOrEqual(450 + 0.5);
  await expectAccessible(page, "a Resource List's detail at 200 % zoom");
});
