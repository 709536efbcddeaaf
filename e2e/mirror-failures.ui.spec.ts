// A run with more than a thousand failures, as when a Source loses a whole collection: the counts, the table of
// failures and what it says of those it does not show.
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { PATHS } from './fixture-source/index.ts';
import { mirrorSuite } from './mirror-suite.ts';
import { expectAccessible, fillMirrorForm, mainView, openMirrorForm } from './ui-helpers.ts';

const RESOURCES = 1_100;

const suite = mirrorSuite('mirror-failures', { resources: RESOURCES, changeListSize: 10, resourceDelayMs: 0 });

test.describe.configure({ mode: 'serial' });

/** Every resource of dataset1 answers 404, at its own address and at its copy. */
function breakAll(on: boolean): void {
  for (let id = 1; id <= RESOURCES; id++) {
    suite.fixture.setBroken(suite.fixture.state.pathOf(id), on ? { status: 404 } : null);
    suite.fixture.setBroken(`/mirror${suite.fixture.state.pathOf(id)}`, on ? { status: 404 } : null);
  }
}

test('a baseline whose 1,100 resources all fail: counts with thousands separators, the failures table', async ({ page }) => {
  const view = mainView(page);
  await page.setViewportSize({ width: 1024, height: 768 });
  breakAll(true);
  await openMirrorForm(page, suite.app.url, suite.fixture.url + PATHS.dataset1.capabilityList);
  const folder = join(suite.mirrors, `all-failed-${test.info().repeatEachIndex}`);
  await fillMirrorForm(page, folder, 8);
  await view.getByRole('button', { name: 'Create mirror' }).click();
  await expect(view.getByRole('status').filter({ hasText: /^Baseline ended with 1,100 failures/ })).toBeVisible({ timeout: 120_000 });
  breakAll(false);

  // The tab counts as the counters do.
  await expect(view.getByRole('tab', { name: /^Failures/ })).toHaveText('Failures 1,100');
  await view.getByRole('tab', { name: /^Failures/ }).click();
  const table = view.getByRole('table', { name: /^Failures of run \d+$/ });
  await expect(table.locator('tbody tr')).toHaveCount(1_000);
  await expect(view.getByRole('button', { name: 'Retry all failed (1,100)' })).toBeEnabled();
  await expectAccessible(page, 'a run with 1,100 failures');

  // What is not shown is said in one run of text, with the command that lists them all for this very folder.
  const note = view.locator('.mirror-failures p').filter({ hasText: 'Showing the first' });
  await expect(note).toHaveText(`Showing the first 1,000 of 1,100 failures; rsdesk runs --dest ${folder} --json lists them all.`);
  const sameLine = await note.evaluate((p) => {
    const range = document.createRange();
    range.selectNodeContents(p.querySelector('code')!.previousSibling ?? p);
    const before = [...range.getClientRects()].at(-1)!;
    const code = p.querySelector('code')!.getClientRects()[0]!;
    return Math.abs(code.top - before.top) < 4 && code.left >= before.right - 1;
  });
  expect(sameLine, 'the command follows the sentence on its line, not in a column of its own').toBe(true);

  // Scrolled down to the last rows, the column names are still in sight, above the rows, not over them.
  await table.locator('tbody tr').last().scrollIntoViewIfNeeded();
  const header = table.getByRole('columnheader', { name: 'resource' });
  await expect(header).toBeInViewport({ ratio: 1 });
  const box = view.locator('.mirror-failures .mirror-table-box');
  const [headerBox, boxBox] = [(await header.boundingBox())!, (await box.boundingBox())!];
  expect(headerBox.y).toBeGreaterThanOrEqual(boxBox.y - 1);
  expect(headerBox.y).toBeLessThanOrEqual(boxBox.y + 9);
  await expectAccessible(page, 'the failures table scrolled to its end');

  // One resource found among them by its URI, and the count says of what.
  const filter = view.getByRole('searchbox', { name: 'Filter the failures by text' });
  await filter.fill('/res/1001.');
  await expect(table.locator('tbody tr')).toHaveCount(1);
  await expect(table.locator('tbody tr')).toContainText(suite.fixture.state.locOf(1001));
  await expect(view.getByRole('search', { name: 'Filter the failures' }).locator('[aria-live=polite]')).toHaveText('1 of the first 1,000 of 1,100 failures');
  // By its reason too; and nothing found is said.
  await filter.fill('its copy at');
  await expect.poll(() => table.locator('tbody tr').count()).toBeGreaterThan(0);
  await filter.fill('no such failure');
  await expect(table.locator('tbody tr')).toHaveCount(0);
  await expect(view.locator('.mirror-failures')).toContainText('Nothing matches the filter.');
  await expectAccessible(page, 'the failures filtered to none');
  await filter.fill('');
  await expect(table.locator('tbody tr')).toHaveCount(1_000);
});
