// The notes the app gives beside its views, seen in Chromium over `rsdesk serve`: an audit's notes about a sloppy
// Source's list. Axe on the view. (A node's children past 10,000 are no longer left out: tree.ui.spec.ts.)
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { SLOPPY } from './fixture-source/index.ts';
import { mirrorSuite } from './mirror-suite.ts';
import { addSource, expectAccessible, fillMirrorForm, mainView, treeItem } from './ui-helpers.ts';

// No discovery route: the Capability List a test adds is the root of its tree (the sloppy one is in no Source
// Description).
const suite = mirrorSuite('notes-ui', {
  resources: 12,
  routes: { wellKnown: false, htmlLink: false, linkHeader: false, robots: false },
});

test.describe.configure({ mode: 'serial' });

async function accessible(page: Page, what: string): Promise<void> {
  await expectAccessible(page, `${what} (light)`);
  await page.emulateMedia({ colorScheme: 'dark' });
  await expectAccessible(page, `${what} (dark)`);
  await page.emulateMedia({ colorScheme: 'light' });
}

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
