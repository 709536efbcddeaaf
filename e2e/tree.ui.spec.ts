// The capability tree over a Resource List Index of 50,000 parts (as many as a sitemap index may name), in Chromium
// over `rsdesk serve` and the fixture Source: only the rows near the viewport are in the DOM, and the keyboard of the
// WAI-ARIA tree pattern still reaches every item, with its real position and set size. Axe on the view.
import { expect, test, type Page } from '@playwright/test';
import { PATHS } from './fixture-source/index.ts';
import { mirrorSuite } from './mirror-suite.ts';
import { detail, expand, expectAccessible, openResourceListIndex, treeItem } from './ui-helpers.ts';

const PARTS = 50_000;
const suite = mirrorSuite('tree-ui', { resources: 12, bigListParts: PARTS, bigListEntries: 1 });

test.describe.configure({ mode: 'serial' });
// The page's copies in a trace are not needed to read a failure here, and cost time on a big page.
test.use({ trace: { mode: 'retain-on-failure', snapshots: false } });

/** The focused element as the tree describes it. */
function focusedItem(page: Page) {
  return page.evaluate(() => {
    const item = document.activeElement as HTMLElement | null;
    return {
      role: item?.getAttribute('role') ?? null,
      level: item?.getAttribute('aria-level') ?? null,
      posinset: item?.getAttribute('aria-posinset') ?? null,
      setsize: item?.getAttribute('aria-setsize') ?? null,
      text: item?.querySelector('.tree-row')?.textContent ?? '',
    };
  });
}

function renderedItems(page: Page): Promise<number> {
  return page.evaluate(() => document.querySelectorAll('[role=tree] [role=treeitem]').length);
}

async function openIndex(page: Page): Promise<void> {
  const index = await openResourceListIndex(page, suite.app.url, suite.fixture.url, PARTS);
  await expand(index);
  await expect(treeItem(page, PATHS.dataset2.resourceListPart(1))).toBeVisible();
}

test('End, Home and type-ahead reach items of a 50,000-part index that are not rendered, with their real position', async ({ page }) => {
  test.setTimeout(180_000);
  await openIndex(page);
  const first = treeItem(page, PATHS.dataset2.resourceListPart(1));
  await expect(first).toHaveAttribute('aria-posinset', '1');
  await expect(first).toHaveAttribute('aria-setsize', String(PARTS));
  await expect(first).toHaveAttribute('aria-level', '4');
  expect(await renderedItems(page)).toBeLessThan(80);

  await first.focus();
  await page.keyboard.press('End');
  // The last part, past the 10,000 children the index's view carries: its row is there at once, its entry is read
  // from the entries when it comes into view.
  await expect.poll(() => focusedItem(page)).toMatchObject({ role: 'treeitem', level: '4', posinset: String(PARTS), setsize: String(PARTS) });
  await expect(page.locator('[role=treeitem]:focus')).toContainText(PATHS.dataset2.resourceListPart(PARTS));
  expect(await renderedItems(page)).toBeLessThan(80);
  await page.keyboard.press('ArrowUp');
  await expect(page.locator('[role=treeitem]:focus')).toContainText(PATHS.dataset2.resourceListPart(PARTS - 1));
  await expect(page.locator('[role=treeitem]:focus')).toHaveAttribute('aria-posinset', String(PARTS - 1));

  // Type-ahead looks through every row, not only the rendered ones: from the last part round to the top.
  await page.waitForTimeout(800);
  await page.keyboard.press('s');
  await expect(page.locator('[role=treeitem]:focus')).toContainText(PATHS.wellKnown);
  await expect(page.locator('[role=treeitem]:focus')).toHaveAttribute('aria-level', '1');
  // And down through the 50,000 parts: the first part, then 'c' passes every part below it to the Capability List
  // of dataset1 (round past the end).
  await first.focus();
  await page.waitForTimeout(800);
  await page.keyboard.press('c');
  await expect(page.locator('[role=treeitem]:focus')).toContainText(PATHS.dataset1.capabilityList);

  await page.keyboard.press('End');
  await page.keyboard.press('Home');
  await expect(page.locator('[role=treeitem]:focus')).toContainText(PATHS.wellKnown);
  // Exactly one tab stop, on the focused item.
  await expect(page.locator('[role=tree] [role=treeitem][tabindex="0"]')).toHaveCount(1);
  await expect(page.locator('[role=treeitem]:focus')).toHaveAttribute('tabindex', '0');
});

test('PageDown moves by a screen; the focused item keeps the focus when scrolled out of view; Space selects', async ({ page }) => {
  test.setTimeout(180_000);
  await openIndex(page);
  const first = treeItem(page, PATHS.dataset2.resourceListPart(1));
  await first.focus();
  await page.keyboard.press('PageDown');
  const after = Number((await focusedItem(page)).posinset);
  expect(after).toBeGreaterThan(5);
  await expect(page.locator('[role=treeitem]:focus')).toContainText(PATHS.dataset2.resourceListPart(after));

  // Scrolled far away with the wheel, the focused item stays in the DOM and focused.
  await page.locator('.tree-box').evaluate((box) => (box.scrollTop = box.scrollHeight / 2));
  // (The window moved: items from the middle of the index are rendered now.)
  const farthest = () =>
    page.evaluate(() => Math.max(...Array.from(document.querySelectorAll('[role=tree] [role=treeitem]'), (e) => Number(e.getAttribute('aria-posinset')))));
  await expect.poll(farthest).toBeGreaterThan(10_000);
  expect((await focusedItem(page)).posinset).toBe(String(after));
  expect(await renderedItems(page)).toBeLessThan(80);
  // The next key brings it back into view and moves on from it.
  await page.keyboard.press('ArrowDown');
  await expect(page.locator('[role=treeitem]:focus')).toHaveAttribute('aria-posinset', String(after + 1));
  await expect(page.locator('[role=treeitem]:focus')).toBeInViewport();

  await page.keyboard.press(' ');
  await expect(page.locator('[role=treeitem]:focus')).toHaveAttribute('aria-selected', 'true');
  await expect(detail(page).getByRole('heading', { level: 2 })).toContainText('Resource List');
});

test('PageDown and PageUp move by the rows the viewport shows, measured, at a font twice as large', async ({ page }) => {
  test.setTimeout(180_000);
  await openIndex(page);
  // Text at 200 %: every row of the tree grows to twice its height or more (they once were taken to be 40 px each).
  await page.addStyleTag({ content: '[role=tree] * { font-size: 26px !important; line-height: 1.3 !important; }' });
  const first = treeItem(page, PATHS.dataset2.resourceListPart(1));
  await first.evaluate((el) => el.scrollIntoView({ block: 'start' }));
  await first.focus();
  const rowOf = (n: number) => treeItem(page, PATHS.dataset2.resourceListPart(n)).locator(':scope > .tree-row');
  const height = await page.locator('.tree-box').evaluate((box) => box.clientHeight);
  expect(await rowOf(1).evaluate((el) => el.getBoundingClientRect().height)).toBeGreaterThan(60);

  await page.keyboard.press('PageDown');
  await expect(page.locator('[role=treeitem]:focus')).not.toHaveAttribute('aria-posinset', '1');
  const after = Number((await focusedItem(page)).posinset);
  // From the first part's top to the focused part's bottom is one viewport at most; one part more would not fit.
  const top = await rowOf(1).evaluate((el) => el.getBoundingClientRect().top);
  expect((await rowOf(after).evaluate((el) => el.getBoundingClientRect().bottom)) - top).toBeLessThanOrEqual(height);
  expect((await rowOf(after + 1).evaluate((el) => el.getBoundingClientRect().bottom)) - top).toBeGreaterThan(height);
  await expect(page.locator('[role=treeitem]:focus > .tree-row')).toBeInViewport({ ratio: 1 });
  await page.screenshot({ path: test.info().outputPath('tree-large-font.png') });

  await page.keyboard.press('PageUp');
  await expect(page.locator('[role=treeitem]:focus')).toHaveAttribute('aria-posinset', '1');
});

test('axe finds nothing serious on the tree of a 50,000-part index, light and dark', async ({ page }) => {
  test.setTimeout(180_000);
  await openIndex(page);
  await treeItem(page, PATHS.dataset2.resourceListPart(1)).focus();
  await page.keyboard.press('End');
  await expect(page.locator('[role=treeitem]:focus')).toContainText(PATHS.dataset2.resourceListPart(PARTS));
  await expectAccessible(page, 'the tree at the end of a 50,000-part index (light)');
  await page.emulateMedia({ colorScheme: 'dark' });
  await expectAccessible(page, 'the tree at the end of a 50,000-part index (dark)');
});
