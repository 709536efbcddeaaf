// The notes the app gives beside its views, seen in Chromium over `rsdesk serve`: the tree's count of the children it
// leaves out past 10,000 of one node, and an audit's notes about a sloppy Source's list. Axe on both views.
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { PATHS, SLOPPY } from './fixture-source/index.ts';
import { mirrorSuite } from './mirror-suite.ts';
import { addSource, expand, expectAccessible, fillMirrorForm, mainView, treeItem } from './ui-helpers.ts';

// 10,050 parts of one entry each: the index names more children than a tree node carries (10,000).
const PARTS = 10_050;
// No discovery route: the Capability List a test adds is the root of its tree (the sloppy one is in no Source
// Description).
const suite = mirrorSuite('notes-ui', {
  resources: 12,
  bigListParts: PARTS,
  bigListEntries: 1,
  routes: { wellKnown: false, htmlLink: false, linkHeader: false, robots: false },
});

test.describe.configure({ mode: 'serial' });

// Playwright's trace, kept for a failure, copies the whole page at each step: over 10,000 tree items a CPU profile
// showed that DOM walk taking most of the page's time (4 s of a 9 s profile around two key presses), more than the
// app, and the test took minutes. The steps are still recorded, without the page's copies.
test.use({ trace: { mode: 'retain-on-failure', snapshots: false } });

async function accessible(page: Page, what: string): Promise<void> {
  await expectAccessible(page, `${what} (light)`);
  await page.emulateMedia({ colorScheme: 'dark' });
  await expectAccessible(page, `${what} (dark)`);
  await page.emulateMedia({ colorScheme: 'light' });
}

test('a node with more than 10,000 children says how many the tree leaves out, and where they are', async ({ page }) => {
  test.setTimeout(180_000);
  await page.goto(suite.app.url);
  await addSource(page, suite.fixture.url + PATHS.dataset2.capabilityList);
  const index = treeItem(page, PATHS.dataset2.resourceListIndex);
  await expand(index);
  // The group is the item's sibling, which it owns (aria-owns); found by its id, as filtering 10,000 tree items
  // on every look takes seconds.
  const group = page.locator(`[id="${await index.getAttribute('aria-owns')}"]`);
  await expect(group.locator(':scope > li > [role=treeitem][data-node-id]')).toHaveCount(500);
  // The slices' button counts only what the tree can show, and says the rest are in the entries table.
  // It is a tree item (a tree holds no buttons), reached with the arrows.
  // (By class: asking for roles and names among 10,000 items takes minutes.)
  const more = group.locator(':scope > li > .tree-more[role=treeitem]');
  await expect(more).toHaveText('Show 500 more of 9,500 (50 more only in the entries table)');
  await accessible(page, 'the tree with its first slice of children');
  // Counted and focused in the page: Playwright's own locators walk every node of a 10,000-item tree on each look,
  // seconds each, which made this test take minutes.
  const groupId = (await index.getAttribute('aria-owns'))!;
  const inGroup = (what: 'count' | 'focus-more' | 'focused-posinset') =>
    page.evaluate(
      ([id, w]) => {
        const g = document.getElementById(id!)!;
        if (w === 'count') return g.querySelectorAll(':scope > li > [role=treeitem][data-node-id]').length;
        if (w === 'focus-more') return void g.querySelector<HTMLElement>(':scope > li > .tree-more')?.focus();
        return document.activeElement?.getAttribute('aria-posinset') ?? null;
      },
      [groupId, what] as const,
    );
  for (let shown = 500; shown < 10_000; shown += 500) {
    if (shown === 500) {
      // From the last child shown, the arrow down reaches it.
      await group.locator(':scope > li > [role=treeitem]').nth(499).focus();
      await page.keyboard.press('ArrowDown');
      await expect(more).toBeFocused();
    } else await inGroup('focus-more');
    await page.keyboard.press('Enter');
    // The slice's own items, not the next "Show more" one.
    await expect.poll(() => inGroup('count')).toBe(shown + 500);
    // Focus is on the first child the slice shows.
    expect(await inGroup('focused-posinset')).toBe(String(shown + 1));
  }
  const note = group.locator('.tree-note');
  await expect(note).toHaveText('50 more not shown in the tree; the entries table lists them all');
  await expect(note).toBeVisible();
  await expect(more).toHaveCount(0);
  await note.scrollIntoViewIfNeeded();
  // Axe on a tree of 10,000 items takes minutes: the note alone.
  await expectAccessible(page, 'the note of the children left out', { include: ['.tree-note'] });
});

test("an audit of a sloppy Source's list shows its notes whole", async ({ page }) => {
  await page.goto(suite.app.url);
  await addSource(page, suite.fixture.url + SLOPPY.capabilityList);
  const list = treeItem(page, SLOPPY.resourceList);
  await list.locator(':scope > .tree-row').click();
  const detail = page.getByRole('region', { name: 'Detail' });
  // When the app fetched the list, in the app's date style, not as an ISO string to the millisecond.
  const fetched = detail.locator('dl.facts div').filter({ has: page.locator('dt', { hasText: /^fetched$/ }) }).locator('dd');
  await expect(fetched).toHaveText(/^\d{1,2} \w{3} \d{4}, \d\d:\d\d:\d\d$/);
  expect(await fetched.getAttribute('title')).toMatch(/^\d{4}-\d\d-\d\dT/);
  await detail.getByRole('button', { name: 'Mirror this…' }).click();
  await fillMirrorForm(page, join(suite.mirrors, 'sloppy'), 2);
  await mainView(page).getByRole('button', { name: 'Create mirror' }).click();
  await expect(mainView(page).getByRole('status').filter({ hasText: 'Baseline completed' })).toBeVisible({ timeout: 60_000 });
  await mainView(page).getByRole('tab', { name: 'Audit' }).click();
  await mainView(page).getByRole('button', { name: 'Audit now' }).click();
  await expect(mainView(page).locator('.audit-summary')).toContainText('In sync: 12 resources match the Source.');
  const notes = mainView(page).locator('.audit-note');
  await expect(notes.first()).toContainText(
    `${suite.fixture.url}${SLOPPY.resourceList} is written as a <urlset>, but 2 of its entries are Resource Lists themselves: read as the parts of a Resource List Index.`,
  );
  // Whole, not cut off by the pane's width, and set off from the pane's edge.
  const pane = await mainView(page).boundingBox();
  expect((await notes.first().boundingBox())!.x).toBeGreaterThanOrEqual(pane!.x + 8);
  for (const n of await notes.all()) {
    const box = await n.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
    expect(box.scroll).toBeLessThanOrEqual(box.client);
  }
  await accessible(page, 'the audit report with notes');
  // At 1024×700 too.
  await page.setViewportSize({ width: 1024, height: 700 });
  for (const n of await notes.all()) {
    const box = await n.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
    expect(box.scroll).toBeLessThanOrEqual(box.client);
  }
  // The sloppy Change List answers 500: the tree says why in full, not cut off at the sidebar's edge.
  const error = treeItem(page, /HTTP 500/).locator('.tree-line2');
  await expect(error).toContainText(`HTTP 500 Internal Server Error for ${suite.fixture.url}`);
  const box = await error.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
  expect(box.scroll).toBeLessThanOrEqual(box.client);
});
