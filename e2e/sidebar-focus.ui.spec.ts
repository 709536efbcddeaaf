// Keyboard focus after the sidebar's actions that open something elsewhere (the Live view, the Check report, an added
// Source's outcome), and the sidebar's resize handle in a window too narrow for the saved width.
import { expect, test, type Page } from '@playwright/test';
import { mirrorSuite } from './mirror-suite.ts';
import { expectAccessible } from './ui-helpers.ts';

const suite = mirrorSuite('sidebar-focus', { resources: 5, changeListSize: 3, bigListEntries: 50 });

test.describe.configure({ mode: 'serial' });

/** Adds the fixture Source from the keyboard alone, unless it is saved already (serial tests share the app). */
async function ensureSource(page: Page): Promise<void> {
  const saved = page.getByRole('list', { name: 'Saved Sources' });
  await expect(saved.or(page.getByText('No Sources yet'))).toBeVisible();
  if (await saved.isVisible()) return;
  await page.getByLabel('Source URL').fill(`${suite.fixture.url}/`);
  await page.keyboard.press('Enter');
  await expect(page.getByRole('button', { name: /Added 127\.0\.0\.1/ })).toBeVisible({ timeout: 30_000 });
}

test('Enter in the URL field takes focus to the outcome, as the Add Source button does', async ({ page }) => {
  await page.goto(suite.app.url);
  await expect(page.getByText('No Sources yet')).toBeVisible();
  // No tree to select in yet: the main pane says the first step (it said to select a document in the tree).
  await expect(page.getByRole('main')).toHaveText(/^Paste the URL of a ResourceSync Source in the sidebar and choose Add Source/);
  const field = page.getByLabel('Source URL');
  await field.fill(`${suite.fixture.url}/`);
  await field.press('Enter');
  // Before, focus stayed in the field, ten stops above the result it had led to.
  await expect(page.getByRole('button', { name: /Added 127\.0\.0\.1/ })).toBeFocused({ timeout: 30_000 });
  await expectAccessible(page, 'the sidebar after a Source was added');
  // Dismissing the outcome takes focus back to the field (the outcome went away with the button, and focus to <body>).
  await page.keyboard.press('Tab');
  await expect(page.getByRole('button', { name: 'Dismiss discovery' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.getByRole('button', { name: /Added 127\.0\.0\.1/ })).toHaveCount(0);
  await expect(field).toBeFocused();
});

test('the Live button takes focus to the Live view, and closing it leaves focus on the button', async ({ page }) => {
  await page.goto(suite.app.url);
  const button = page.getByRole('button', { name: /^Live/ });
  await button.focus();
  await page.keyboard.press('Enter');
  const live = page.getByRole('main', { name: 'Live' });
  await expect(live.getByRole('heading', { level: 2, name: 'Live' })).toBeFocused();
  await expect(button).toHaveAttribute('aria-pressed', 'true');
  await expectAccessible(page, 'the Live view opened from the keyboard');

  // The toggle still closes the view, and focus stays on it, now not pressed.
  await button.focus();
  await page.keyboard.press('Enter');
  await expect(live).toHaveCount(0);
  await expect(button).toHaveAttribute('aria-pressed', 'false');
  await expect(button).toBeFocused();
});

test('Check Source and Show last check take focus to the report', async ({ page }) => {
  await page.goto(suite.app.url);
  await ensureSource(page);
  await page.getByRole('button', { name: 'Check Source' }).focus();
  await page.keyboard.press('Enter');
  const report = page.getByRole('region', { name: 'Check report' });
  await expect(report.getByRole('heading', { level: 2, name: /^Check of / })).toBeFocused();
  await expect(report.getByRole('button', { name: 'Check again' })).toBeVisible({ timeout: 60_000 });
  await expectAccessible(page, 'the Check report opened from the keyboard');

  // Close goes away with the report: focus goes back to the button that opened it (it was left on <body>).
  await report.getByRole('button', { name: 'Close' }).focus();
  await page.keyboard.press('Enter');
  await expect(report).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Check Source' })).toBeFocused();
  await page.keyboard.press('Tab');
  await expect(page.getByRole('button', { name: 'Show last check' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(report.getByRole('heading', { level: 2, name: /^Check of / })).toBeFocused();
  await report.getByRole('button', { name: 'Close' }).focus();
  await page.keyboard.press('Enter');
  await expect(page.getByRole('button', { name: 'Show last check' })).toBeFocused();
});

test('in a window too narrow for the saved width, the resize handle reports and moves from the width shown', async ({ page }) => {
  // 45 % of 700 px is 315, less than the default 370.
  await page.setViewportSize({ width: 700, height: 800 });
  await page.goto(suite.app.url);
  const sidebar = page.getByRole('complementary', { name: 'Sources' });
  const handle = page.getByRole('separator', { name: 'Resize the sidebar' });
  const shown = async () => Math.round((await sidebar.boundingBox())!.width);
  expect(await shown()).toBe(315);
  await expect(handle).toHaveAttribute('aria-valuenow', '315');
  await handle.focus();
  await page.keyboard.press('ArrowLeft');
  // One step (24 px) narrower at once; before, the saved 370 became 346, still capped at 315.
  await expect.poll(shown).toBe(291);
  await expect(handle).toHaveAttribute('aria-valuenow', '291');
  await page.keyboard.press('ArrowRight');
  await expect.poll(shown).toBe(315);
  await expect(handle).toHaveAttribute('aria-valuenow', '315');
  await expectAccessible(page, 'the sidebar in a narrow window');
});
