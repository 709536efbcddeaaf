// The mirror views used from the keyboard alone, as an archivist would (a Capability List mirrored, its baseline
// with failures, the audit, the run history): what that walk found.
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { PATHS } from './fixture-source/index.ts';
import { mirrorSuite } from './mirror-suite.ts';
import { expectAccessible, fillMirrorForm, mainView, openMirrorForm, runEndSentence } from './ui-helpers.ts';

const suite = mirrorSuite('mirror-keys', { resources: 20, changeListSize: 10, resourceDelayMs: 0 });

test.describe.configure({ mode: 'serial' });

const view = mainView;
const runEnd = (page: Page, text: string | RegExp) => view(page).getByRole('status').filter({ hasText: text });

const setBroken = (ids: number[], on: boolean) => suite.setBroken(ids, on);

/** A new mirror (a folder per repetition), its baseline run: with `broken` resources failing, when given. */
async function createMirror(page: Page, name: string, options: { start?: boolean; broken?: number[] } = {}): Promise<void> {
  await openMirrorForm(page, suite.app.url, suite.fixture.url + PATHS.dataset1.capabilityList);
  await fillMirrorForm(page, join(suite.mirrors, `${name}-${test.info().repeatEachIndex}`), 4);
  if (options.start === false) await view(page).getByRole('checkbox', { name: 'Start it now' }).uncheck();
  setBroken(options.broken ?? [], true);
  await view(page).getByRole('button', { name: 'Create mirror' }).focus();
  await page.keyboard.press('Enter');
  await expect(view(page).getByRole('heading', { level: 2, name: new RegExp(`^Mirror ${name}`) })).toBeFocused();
  if (options.start === false) return;
  await expect(runEnd(page, /^Baseline (completed|ended)/)).toBeVisible({ timeout: 60_000 });
  setBroken(options.broken ?? [], false);
}

/** Chooses a tab of the mirror view with the arrow keys, from the selected one. */
async function chooseTab(page: Page, name: RegExp): Promise<void> {
  const tablist = view(page).getByRole('tablist', { name: 'Mirror' });
  await tablist.getByRole('tab', { selected: true }).focus();
  for (let i = 0; i < 4 && !(await tablist.getByRole('tab', { name, selected: true }).count()); i++) await page.keyboard.press('ArrowRight');
  await expect(tablist.getByRole('tab', { name, selected: true })).toBeFocused();
}

test("the run history shows an audit's differences as differences, not as failures to retry", async ({ page }) => {
  await createMirror(page, 'differences', { broken: [3, 5] });
  const [, n] = /^Baseline ended with (\d+) failures?/.exec((await runEnd(page, /^Baseline ended/).textContent())!)!;
  const differences = `${n} ${n === '1' ? 'difference' : 'differences'}`;

  // An audit finds the two resources missing.
  await chooseTab(page, /^Audit/);
  // Once the last report (none) is read, the button that starts one is next.
  await expect(view(page).getByRole('button', { name: 'Audit now' })).toBeVisible();
  await page.keyboard.press('Tab');
  await expect(view(page).getByRole('button', { name: 'Audit now' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(view(page).locator('.audit-summary')).toContainText(`Not in sync: ${n} difference`, { timeout: 30_000 });

  await chooseTab(page, /^Runs/);
  const history = view(page).getByRole('table', { name: 'Run history' });
  const audit = history.locator('tbody tr').filter({ hasText: /Audit/ });
  await expect(audit).toContainText(`not in sync: ${differences}`);
  // Nothing in it offers the Failures tab, which lists no audit (there is nothing to retry).
  await expect(audit.getByRole('button')).toHaveCount(0);
  await expect(audit).not.toContainText('failed');
  // The baseline's failures still do.
  const baseline = history.locator('tbody tr').filter({ hasText: /Baseline/ });
  await expect(baseline.getByRole('button', { name: new RegExp(`^${n} failed: show the failures of run \\d+$`) })).toBeVisible();
  await expectAccessible(page, 'a run history with an audit not in sync');

  // An audit that could not run says so, and why; it did not "complete with failures".
  suite.fixture.setBroken(PATHS.dataset1.resourceList, { status: 500 });
  await chooseTab(page, /^Audit/);
  await view(page).getByRole('button', { name: 'Audit again' }).focus();
  await page.keyboard.press('Enter');
  await expect(view(page).locator('.mirror-audit [role=alert]')).toBeVisible({ timeout: 30_000 });
  suite.fixture.setBroken(PATHS.dataset1.resourceList, null);
  await chooseTab(page, /^Runs/);
  const failedAudit = history.locator('tbody tr').first();
  await expect(failedAudit).toContainText(/Audit/);
  await expect(failedAudit).toContainText(/could not run · \S/);
  await expect(failedAudit).not.toContainText('completed with failures');
  await expectAccessible(page, 'a run history with an audit that could not run');
});

test('"Audit…" takes focus to the button that starts an audit', async ({ page }) => {
  await createMirror(page, 'audit-button', { start: false });
  const auditButton = view(page).getByRole('button', { name: 'Audit…' });
  await auditButton.focus();
  await page.keyboard.press('Enter');
  await expect(view(page).getByRole('tab', { name: 'Audit', selected: true })).toBeVisible();
  // Not left on "Audit…", which did nothing where it is: on "Audit now", which Enter then presses.
  await expect(view(page).getByRole('button', { name: 'Audit now' })).toBeFocused();
  await expectAccessible(page, 'the Audit tab opened by "Audit…"');
  await page.keyboard.press('Enter');
  await expect(view(page).locator('.audit-verdict')).toBeFocused({ timeout: 30_000 });

  // With a report already there (read before the tab shows): "Audit again".
  await chooseTab(page, /^Runs/);
  await auditButton.focus();
  await page.keyboard.press('Enter');
  await expect(view(page).getByRole('button', { name: 'Audit again' })).toBeFocused();
});

test("in a narrower window a run's outcome keeps whole words, not a few letters a line", async ({ page }) => {
  await page.setViewportSize({ width: 1024, height: 700 });
  await createMirror(page, 'narrow', { broken: [3, 5] });
  await chooseTab(page, /^Runs/);
  const outcome = view(page).getByRole('table', { name: 'Run history' }).locator('tbody tr').first().locator('td').nth(3);
  await expect(outcome).toContainText('completed with failures');
  const { lines, width, words } = await outcome.evaluate((cell) => {
    const style = getComputedStyle(cell);
    const line = parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.4;
    // How wide the longest word of the cell is, in the cell's font.
    const canvas = document.createElement('canvas').getContext('2d')!;
    canvas.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    const longest = Math.max(...(cell.textContent ?? '').split(/\s+/).map((w) => canvas.measureText(w).width));
    const padding = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
    return { lines: Math.round((cell.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom)) / line), width: cell.clientWidth - padding, words: longest };
  });
  // Before, "complet / ed with / failures · 2 / resource / s failed…": fifteen lines, words cut in two.
  expect(width, 'room for its longest word').toBeGreaterThanOrEqual(words);
  expect(lines).toBeLessThanOrEqual(6);
  await expectAccessible(page, 'the run history in a narrower window');
});

test("the audit's verdict says in plain words how the files were checked, and counts one difference as one", async ({ page }) => {
  await createMirror(page, 'verdict');
  // The Source updates one resource: the mirror's copy is now another than the one listed.
  suite.fixture.state.change('update', 1, 2);
  await chooseTab(page, /^Audit/);
  // Once the last report (none) is read, the button that starts one is next.
  await expect(view(page).getByRole('button', { name: 'Audit now' })).toBeVisible();
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  const summary = view(page).locator('.audit-summary');
  // Focus and the status region are on the verdict alone, one sentence (before, on the whole block: every count,
  // how the files were checked, the time and the export buttons were read out).
  await expect(summary.getByRole('status')).toBeFocused({ timeout: 30_000 });
  await expect(summary.getByRole('status')).toHaveText('Not in sync: 1 difference.');
  // Said once on the Audit tab (its end above the tabs too was read out twice); away from the tab, above them.
  await expect(view(page).getByRole('status').filter({ hasText: 'Not in sync: 1 difference.' })).toHaveCount(1);
  await chooseTab(page, /^Runs/);
  await expect(view(page).getByRole('region', { name: 'Current run' }).getByRole('status')).toContainText('Not in sync: 1 difference.');
  await chooseTab(page, /^Audit/);
  await expect(summary).toBeVisible();
  await expect(summary).toContainText('each file checked by its size and the hashes recorded when it was mirrored, not read again');
  await expect(summary).not.toContainText('from the inventory');
  await expect(view(page).getByRole('search', { name: 'Filter the audit' }).locator('[aria-live=polite]')).toHaveText('1 difference');
  await expectAccessible(page, 'an audit with one difference');

  // With every file read again, it says that.
  await view(page).getByRole('checkbox', { name: /Read every file again/ }).focus();
  await page.keyboard.press('Space');
  await page.keyboard.press('Shift+Tab');
  await expect(view(page).getByRole('button', { name: 'Audit again' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(summary).toContainText('every file read again', { timeout: 30_000 });
});

test('at 1024 px the run history fits without scrolling sideways; narrower still, it scrolls from the keyboard', async ({ page }) => {
  await page.setViewportSize({ width: 1024, height: 700 });
  await createMirror(page, 'sideways', { broken: [3, 5] });
  await chooseTab(page, /^Runs/);
  const table = view(page).getByRole('table', { name: 'Run history' });
  const row = table.locator('tbody tr').first();
  // Before, its last columns (failed, downloaded) were out of view: the numbers now share one column, each with its
  // word, and nothing is left out.
  await expect(row).toContainText('completed with failures');
  const counts = row.getByRole('cell').last();
  await expect(table.getByRole('columnheader').last()).toHaveText('resources');
  await expect(counts).toHaveText(/^\d+ created, 0 updated, 0 deleted, 0 unchanged, [1-9]\d* failed, [\d.]+ \w+ downloaded$/);
  await expect(counts).toBeInViewport({ ratio: 1 });
  const fits = await table.evaluate((t) => t.parentElement!.scrollWidth <= t.parentElement!.clientWidth);
  expect(fits, 'the table fits its box').toBe(true);
  // Not a scrolling region then: nothing to scroll.
  await expect(view(page).getByRole('region', { name: 'Run history' })).toHaveCount(0);
  // The failed count still opens the run's failures.
  await expect(counts.getByRole('button', { name: /^\d+ failed: show the failures of run \d+$/ })).toBeVisible();
  await expectAccessible(page, 'the run history at 1024 px');

  // Narrower than the app was made for, what does not fit scrolls, from the keyboard too.
  await page.setViewportSize({ width: 760, height: 700 });
  const box = view(page).getByRole('region', { name: 'Run history' });
  await expect(box).toBeVisible();
  await box.focus();
  for (let i = 0; i < 20; i++) await page.keyboard.press('ArrowRight');
  await expect(counts).toBeInViewport({ ratio: 1 });
  await expectAccessible(page, 'the run history scrolled sideways');
});

test('after "Sync now" focus stays on an element of the view until the run\'s end takes it, and that end is one short sentence', async ({ page }) => {
  await createMirror(page, 'focus-kept');
  const announced = runEndSentence(page);
  await expect(view(page).getByRole('region', { name: 'Current run' })).toContainText('Baseline completed');
  // Before, the status region read the whole message and then every counter ("Created 20 Updated 0 …").
  await expect(announced).toHaveText('Baseline completed: 20 created.');
  await expect(view(page).getByLabel('Counts of this run')).toContainText(/created\s*20/);

  suite.fixture.change('update', 2);
  // Where focus is at every frame from the key press to the run's end.
  await view(page).getByRole('button', { name: 'Sync now' }).focus();
  await page.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { focusSeen: string[] }).focusSeen = seen;
    const watch = () => {
      const active = document.activeElement;
      seen.push(active === null || active === document.body ? 'body' : active.className || active.tagName);
      if (!(active instanceof HTMLElement && active.matches('.run-end-sentence'))) requestAnimationFrame(watch);
    };
    requestAnimationFrame(watch);
  });
  await page.keyboard.press('Enter');
  await expect(announced).toHaveText('Incremental sync completed: 2 updated.', { timeout: 60_000 });
  await expect(announced).toBeFocused();
  const seen = await page.evaluate(() => (window as unknown as { focusSeen: string[] }).focusSeen);
  // Before, <body> for 100-300 ms: the button turned disabled while the request was under way.
  expect(seen.filter((s) => s === 'body'), seen.join(' → ')).toEqual([]);
  await expectAccessible(page, "a run's end");
});
