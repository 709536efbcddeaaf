// A row shown before its page of entries has been read (a tree item past an index's first 10,000 parts, a row of
// the entries grid scrolled to) is chosen with a click or Enter: it is selected and shown once its page arrives.
// The page's answers are held (not delayed by a time) until the row was chosen, then let go.
import { expect, test, type Page } from '@playwright/test';
import { PATHS } from './fixture-source/index.ts';
import { mirrorSuite } from './mirror-suite.ts';
import { dataRows, detail, entriesTable, expand, openResourceListIndex, treeItem } from './ui-helpers.ts';

// Past 10,000: a view carries that many children, the tree reads the rest a page at a time.
const PARTS = 10_300;
const suite = mirrorSuite('pending-rows-ui', { resources: 4, bigListParts: PARTS, bigListEntries: 1 });

test.describe.configure({ mode: 'serial' });
test.use({ trace: { mode: 'retain-on-failure', snapshots: false } });

/** Holds the page's answers to `documents.entries` at offsets from `from` on, until `release()`. */
async function holdEntries(page: Page, from: number) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let held = 0;
  await page.route('**/api/invoke', async (route) => {
    const body = route.request().postDataJSON() as { command: string; args: { offset?: number } };
    if (body.command !== 'documents.entries' || (body.args.offset ?? 0) < from) return route.continue();
    held++;
    const response = await route.fetch();
    await released;
    await route.fulfill({ response });
  });
  return { release, held: () => held };
}

function openIndex(page: Page) {
  return openResourceListIndex(page, suite.app.url, suite.fixture.url, PARTS);
}

for (const how of ['a click', 'Enter'] as const) {
  test(`a tree item whose page is still loading is selected once it is read, chosen by ${how}`, async ({ page }) => {
    test.setTimeout(120_000);
    const index = await openIndex(page);
    const hold = await holdEntries(page, 10_000);
    await expand(index);
    await treeItem(page, PATHS.dataset2.resourceListPart(1)).focus();
    // End: the last part, past the first 10,000, its page held.
    await page.keyboard.press('End');
    const last = page.locator('[role=treeitem]:focus');
    await expect(last).toHaveAttribute('aria-posinset', String(PARTS));
    await expect(last).toHaveAttribute('aria-busy', 'true');
    await expect.poll(hold.held).toBeGreaterThan(0);

    if (how === 'Enter') await page.keyboard.press('Enter');
    else await last.locator(':scope > .tree-row').click();
    await expect(last).not.toHaveAttribute('aria-selected', 'true');
    // Meanwhile the row says it was taken and what happens next.
    await expect(last).toContainText('Loading… it opens once read');

    hold.release();
    await expect(last).toHaveAttribute('aria-selected', 'true');
    await expect(last).toContainText(PATHS.dataset2.resourceListPart(PARTS));
    await expect(detail(page).getByRole('heading', { level: 2 })).toContainText('Resource List');
    await expect(detail(page)).toContainText(PATHS.dataset2.resourceListPart(PARTS));
  });
}

test('a row of the entries grid whose page is still loading is selected once it arrives', async ({ page }) => {
  test.setTimeout(120_000);
  const index = await openIndex(page);
  await index.locator(':scope > .tree-row').click();
  await expect(index).toHaveAttribute('aria-selected', 'true');
  await expect(dataRows(page).first()).toContainText('resourcelist-1.xml');

  // Scrolled to the middle, whose pages are held: its rows show their number only.
  const hold = await holdEntries(page, 200);
  await entriesTable(page).evaluate((grid) => (grid.scrollTop = grid.scrollHeight / 2));
  await expect.poll(hold.held).toBeGreaterThan(0);
  const some = dataRows(page).filter({ has: page.locator('[role=gridcell]', { hasText: '…' }) }).nth(3);
  const rowIndex = await some.getAttribute('aria-rowindex');
  // The row, by its place (not by what it shows, which changes when its page arrives).
  const row = dataRows(page).and(page.locator(`[aria-rowindex="${rowIndex}"]`));
  const number = Number(rowIndex) - 1;
  expect(number).toBeGreaterThan(200);
  await expect(row.locator('[role=gridcell]').first()).toHaveText(String(number));

  // In its middle, past its last cell: the row, not a cell, is what the mouse presses.
  await row.click();
  await expect(row).toHaveAttribute('aria-busy', 'true');
  hold.release();
  await expect(row).toHaveAttribute('aria-selected', 'true');
  await expect(row).toContainText(`resourcelist-${number}.xml`);
  await expect(detail(page)).toContainText(PATHS.dataset2.resourceListPart(number));
  // The focus stays on the row clicked.
  await expect(row.locator('[role=gridcell]:focus')).toHaveCount(1);
});
