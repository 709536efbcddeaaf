// What an archivist new to the app met using it from the keyboard alone (helper ui16's walk through it in Chromium):
// where focus went after an action, what was announced, what did not fit a 1024 px window or a 200 % zoom.
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { PATHS } from './fixture-source/index.ts';
import { mirrorSuite } from './mirror-suite.ts';
import { addSource, detail, expectAccessible, fillMirrorForm, mainView, openMirrorForm, runEndDetails, treeItem } from './ui-helpers.ts';

const suite = mirrorSuite('archivist-keys', { resources: 20, changeListSize: 10, resourceDelayMs: 0 });

test.describe.configure({ mode: 'serial' });

const view = mainView;
const runEnd = (page: Page, text: string | RegExp) => view(page).getByRole('status').filter({ hasText: text });

test('following a link inside the app, and Back, leave focus on the title of the document shown', async ({ page }) => {
  await page.goto(suite.app.url);
  await addSource(page, suite.fixture.url + PATHS.dataset1.capabilityList);
  await expect(detail(page).getByRole('heading', { level: 2 })).toContainText('Capability List');
  // The Capability List's `up` link, pressed with Enter: the Source Description opens inside the app.
  const up = detail(page).getByRole('region', { name: 'rs:ln' }).getByRole('link', { name: /\.well-known\/resourcesync/ });
  await up.focus();
  await page.keyboard.press('Enter');
  await expect(treeItem(page, '/.well-known/resourcesync')).toHaveAttribute('aria-selected', 'true');
  const title = detail(page).getByRole('heading', { level: 2 });
  await expect(title).toContainText('Source Description');
  // Before, focus fell to <body> with the link: the next Tab started again from the top of the page.
  await expect(title).toBeFocused();

  // Back, from the keyboard: the button goes with the last place to go back to.
  await detail(page).getByRole('button', { name: /Back/ }).focus();
  await page.keyboard.press('Enter');
  await expect(title).toContainText('Capability List');
  await expect(detail(page).getByRole('button', { name: /Back/ })).toHaveCount(0);
  await expect(title).toBeFocused();
});

/** A new mirror of dataset1's Capability List (a folder per test and repetition), made from the keyboard. */
async function createMirror(page: Page, name: string, options: { start?: boolean } = {}): Promise<void> {
  await openMirrorForm(page, suite.app.url, suite.fixture.url + PATHS.dataset1.capabilityList);
  await fillMirrorForm(page, join(suite.mirrors, `${name}-${test.info().repeatEachIndex}`), 4);
  if (options.start === false) await view(page).getByRole('checkbox', { name: 'Start it now' }).uncheck();
  await view(page).getByRole('button', { name: 'Create mirror' }).focus();
  await page.keyboard.press('Enter');
  await expect(view(page).getByRole('heading', { level: 2, name: new RegExp(`^Mirror ${name}`) })).toBeFocused();
}

test('while a run pauses, focus stays on Pause, then goes to how the run ended', async ({ page }) => {
  suite.fixture.setResourceDelay(1_500);
  try {
    await createMirror(page, 'pausing');
    const pause = view(page).getByRole('button', { name: /^Paus/ });
    await expect(pause).toBeEnabled();
    await pause.focus();
    await page.keyboard.press('Enter');
    // The downloads under way finish first, a second and a half here: before, the button was disabled at once and
    // focus fell to <body> meanwhile.
    await expect(pause).toHaveText('Pausing…');
    await expect(pause).toBeFocused();
    await expect(pause).toBeDisabled();
    await expect(runEnd(page, 'Paused after')).toBeFocused({ timeout: 30_000 });

    await view(page).getByRole('button', { name: 'Resume' }).focus();
    await page.keyboard.press('Enter');
    const cancel = view(page).getByRole('button', { name: /^Cancel/ });
    await expect(view(page).getByRole('button', { name: 'Pause' })).toBeFocused();
    await cancel.focus();
    await page.keyboard.press('Enter');
    // Cancelling stops the downloads at once: its button goes, and focus to how the run ended.
    await expect(runEnd(page, /cancel/i)).toBeFocused({ timeout: 30_000 });
    await expectAccessible(page, 'a cancelled run');
  } finally {
    suite.fixture.setResourceDelay(0);
  }
});

test("a running check announces what it does, not its counts at every document read", async ({ page }) => {
  // The dataset2 index never answers: the check stays running until it is cancelled.
  suite.fixture.setBroken(PATHS.dataset2.resourceListIndex, 'hang');
  try {
    await page.goto(suite.app.url);
    await addSource(page, `${suite.fixture.url}/`);
    // Saved already by an earlier test of this file, when run with them.
    await expect(page.getByRole('button', { name: /(Added|Already saved:) 127\.0\.0\.1/ })).toBeVisible();
    await page.getByRole('button', { name: 'Check Source' }).focus();
    await page.keyboard.press('Enter');
    const report = page.getByRole('region', { name: 'Check report' });
    const bar = report.getByRole('progressbar', { name: 'Documents checked' });
    await expect.poll(async () => Number(await bar.getAttribute('aria-valuenow'))).toBeGreaterThan(3);
    // The counts are on screen, and in the progress bar for whoever asks.
    await expect(report).toContainText(/\d+ documents? checked of \d+ documents known so far/);
    await expect(bar).toHaveAttribute('aria-valuetext', /^\d+ of \d+ documents known so far$/);
    // What is read out as it changes says what the check does; before, it was the counts, changing at every document.
    const announced = report.locator('[aria-live]');
    await expect(announced).toHaveText(['Checking the documents:']);
    await report.getByRole('button', { name: 'Cancel' }).click();
    await expect(report.getByRole('status')).toContainText('Cancelled');
  } finally {
    suite.fixture.setBroken(PATHS.dataset2.resourceListIndex, null);
  }
});

test('a run that ended with failures leads to them: "Show the failures", then Retry all failed', async ({ page }) => {
  suite.setBroken([2, 3, 5], true);
  await createMirror(page, 'failures');
  const end = runEnd(page, /^Baseline ended with \d+ failures?\.$/);
  await expect(end).toBeVisible({ timeout: 60_000 });
  await expect(runEndDetails(page)).toContainText('Retry fetches what failed again.');
  suite.setBroken([2, 3, 5], false);
  await end.focus();
  const [, n] = /^Baseline ended with (\d+) failures?/.exec((await end.textContent())!)!;
  // The Retry the message speaks of is on the Failures tab: before, nothing near the message led there.
  await page.keyboard.press('Tab');
  await expect(runEndDetails(page).getByRole('button', { name: 'Show the failures' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(view(page).getByRole('tab', { name: /^Failures/, selected: true })).toBeVisible();
  const retryAll = view(page).getByRole('button', { name: `Retry all failed (${n})` });
  await expect(retryAll).toBeFocused();
  await expectAccessible(page, 'the failures of a run, shown from its end');
  await page.keyboard.press('Enter');
  const retried = runEnd(page, /^Retry of \d+ resources? of run \d+ completed/);
  await expect(retried).toBeFocused({ timeout: 30_000 });
  // Nothing failed again: nothing to show.
  await expect(runEndDetails(page).getByRole('button', { name: 'Show the failures' })).toHaveCount(0);
});

test("at 1024 px the run history of a run that was paused fits: its time takes two lines, not the counts' room", async ({ page }) => {
  await page.setViewportSize({ width: 1024, height: 768 });
  suite.setBroken([4], true);
  suite.fixture.setResourceDelay(1_500);
  try {
    await createMirror(page, 'paused-fits');
    await expect.poll(async () => Number(await view(page).getByRole('progressbar', { name: 'Resources' }).getAttribute('aria-valuenow')), { timeout: 30_000 }).toBeGreaterThan(1);
    await view(page).getByRole('button', { name: 'Pause' }).focus();
    await page.keyboard.press('Enter');
    await expect(runEnd(page, 'Paused after')).toBeFocused({ timeout: 30_000 });
    suite.fixture.setResourceDelay(0);
    // Paused for a second at least: the history says how long it stood.
    await page.waitForTimeout(1_100);
    await view(page).getByRole('button', { name: 'Resume' }).focus();
    await page.keyboard.press('Enter');
    await expect(runEnd(page, /^Baseline ended with/)).toBeFocused({ timeout: 60_000 });
  } finally {
    suite.setBroken([4], false);
    suite.fixture.setResourceDelay(0);
  }
  const table = view(page).getByRole('table', { name: 'Run history' });
  const row = table.locator('tbody tr').first();
  await expect(row.getByRole('cell').nth(2)).toHaveText(/^ran \d+ s \(stopped \d+ s\)$/);
  await expect(row).toContainText('completed with failures');
  // Before, "ran 3 s (stopped 2 s)" kept to one line and the counts' column went out of the box, to be scrolled to.
  const fits = await table.evaluate((t) => t.parentElement!.scrollWidth <= t.parentElement!.clientWidth);
  expect(fits, 'the table fits its box').toBe(true);
  await expect(row.getByRole('cell').last()).toBeInViewport({ ratio: 1 });
  await expectAccessible(page, 'the run history of a paused run at 1024 px');
});

test('at 200 % zoom (a 1024 × 768 window is 512 × 384 CSS px) the panes stack and nothing is cut off sideways', async ({ page }) => {
  await page.setViewportSize({ width: 512, height: 384 });
  await createMirror(page, 'zoomed', { start: false });
  const sizes = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    window: document.documentElement.clientWidth,
    main: document.querySelector('main')!.getBoundingClientRect().width,
  }));
  // Before, the sidebar kept its 370 px and the main pane had the rest, 140 px: its buttons lay past the window's
  // edge, and the page (overflow: hidden) could not be scrolled to them.
  expect(sizes.page, 'the page is no wider than the window').toBeLessThanOrEqual(sizes.window);
  expect(sizes.main, 'the main pane has the width of the window').toBeGreaterThanOrEqual(sizes.window - 2);
  for (const name of ['Sync now', 'Audit…', 'Remove from list']) {
    const button = view(page).getByRole('button', { name });
    await button.scrollIntoViewIfNeeded();
    await expect(button).toBeInViewport({ ratio: 1 });
  }
  // The sidebar above it, whole too, and the page scrolls to it.
  const add = page.getByRole('button', { name: 'Add Source' });
  await add.scrollIntoViewIfNeeded();
  await expect(add).toBeInViewport({ ratio: 1 });
  await expectAccessible(page, 'the mirror view at 200 % zoom');
});

test("the audit's count, read out as the filter is typed, says of what", async ({ page }) => {
  suite.setBroken([2, 3], true);
  try {
    await createMirror(page, 'audit-count');
    await expect(runEnd(page, /^Baseline ended with/)).toBeVisible({ timeout: 60_000 });
  } finally {
    suite.setBroken([2, 3], false);
  }
  await view(page).getByRole('button', { name: 'Audit…' }).focus();
  await page.keyboard.press('Enter');
  await expect(view(page).getByRole('button', { name: 'Audit now' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(view(page).locator('.audit-verdict')).toBeFocused({ timeout: 30_000 });
  const search = view(page).getByRole('search', { name: 'Filter the audit' });
  const count = search.locator('[aria-live=polite]');
  const total = (await count.textContent())!;
  expect(total).toMatch(/^\d+ differences$/);
  await search.getByRole('searchbox').focus();
  await page.keyboard.type(`/res/${suite.fixture.state.pathOf(2).split('/res/')[1]}`);
  // Before, "1 of 2": of what, a screen reader did not say.
  await expect(count).toHaveText(`1 of ${total}`);
});

test('zoomed to 200 % with a Resource List open, the entries keep several rows in view', async ({ page }) => {
  // The app opened at 100 % in a 1024 × 768 window; the person then zooms in (the window is 512 × 384 CSS px).
  await page.setViewportSize({ width: 1024, height: 768 });
  await page.goto(suite.app.url);
  await addSource(page, suite.fixture.url + PATHS.dataset1.resourceList);
  await expect(page.getByTestId('entry-count')).toHaveText('20 of 20 entries');
  await page.setViewportSize({ width: 512, height: 384 });
  const grid = page.getByRole('grid', { name: 'Entries' });
  // Rows wholly in view below the grid's header. Before, the detail pane kept its 361 px and the entries had their
  // least height: a single row under their filter, caption and header.
  await expect
    .poll(() =>
      grid.evaluate((box) => {
        const header = box.querySelector('.th-row')!.getBoundingClientRect();
        const bottom = box.getBoundingClientRect().bottom;
        return [...box.querySelectorAll('.tr:not(.th-row)')].filter((row) => {
          const r = row.getBoundingClientRect();
          return r.top >= header.bottom - 1 && r.bottom <= bottom + 1;
        }).length;
      }),
    )
    .toBeGreaterThanOrEqual(3);
  await expectAccessible(page, 'a Resource List at 200 % zoom');
});

test('at 1024 px no words are cut off in the sidebar or the detail: the tree, the discovery and the facts are whole', async ({ page }) => {
  await page.setViewportSize({ width: 1024, height: 768 });
  await page.goto(suite.app.url);
  await addSource(page, suite.fixture.url + PATHS.dataset1.resourceList);
  await expect(page.getByTestId('entry-count')).toHaveText('20 of 20 entries');
  await expect(treeItem(page, PATHS.dataset1.resourceDump)).toContainText('completed');
  // Every box that hides what overflows it, and holds more than it shows (the entries grid's cells aside: their
  // columns are resized, and the detail shows an entry whole).
  const cut = await page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>('.sidebar *, .detail-pane *')]
      .filter((el) => {
        const style = getComputedStyle(el);
        const hides = style.overflowX === 'hidden' || style.overflowX === 'clip' || style.textOverflow === 'ellipsis';
        return hides && el.getClientRects().length > 0 && (el.textContent ?? '').trim() !== '' && el.scrollWidth > el.clientWidth + 1;
      })
      .map((el) => `${el.className}: ${el.textContent}`),
  );
  // Before, each list's dates in the tree ended in "00:…", and the discovery's outcome and URLs too.
  expect(cut).toEqual([]);
  await expectAccessible(page, 'the tree and a document at 1024 px');
});
