// Helpers shared by the Playwright specs (`*ui.spec.ts`): locators for the app's main parts, and axe.
import AxeBuilder from '@axe-core/playwright';
import { expect, type Locator, type Page } from '@playwright/test';
import { PATHS } from './fixture-source/index.ts';

/** The tree item whose own row (not a descendant's) shows `text`, e.g. its path. */
export function treeItem(page: Page, text: string | RegExp): Locator {
  return page.locator('[role=treeitem]').filter({ has: page.locator(':scope > .tree-row', { hasText: text }) });
}

/** Expands a tree item, unless it is expanded already (adding a Source unfolds its tree). */
export async function expand(item: Locator): Promise<void> {
  // The app may unfold the same node on its own meanwhile (after an add), and a click then folds it again: click
  // only while it is folded, until it stays open.
  await expect(async () => {
    if ((await item.getAttribute('aria-expanded')) !== 'true') await item.locator(':scope > .tree-row .twisty').click();
    await expect(item).toHaveAttribute('aria-expanded', 'true', { timeout: 2_000 });
  }).toPass({ timeout: 20_000 });
}

/** The entries of the selected document: a WAI-ARIA grid. */
export function entriesTable(page: Page): Locator {
  return page.getByRole('grid', { name: 'Entries' });
}

export function dataRows(page: Page): Locator {
  return entriesTable(page).locator('.tr:not(.th-row)');
}

export function detail(page: Page): Locator {
  return page.getByRole('region', { name: 'Detail' });
}

export async function addSource(page: Page, url: string): Promise<void> {
  await page.getByLabel('Source URL').fill(url);
  await page.getByRole('button', { name: 'Add Source' }).click();
}

/**
 * Opens the app on the fixture Source (added the first time; later the app opens it again itself) and selects
 * dataset1's Resource List, once its entries show.
 */
export async function openResourceList(page: Page, appUrl: string, fixtureUrl: string): Promise<void> {
  await page.goto(appUrl);
  const saved = page.getByRole('list', { name: 'Saved Sources' });
  await expect(saved.or(page.getByText('No Sources yet'))).toBeVisible();
  if (!(await saved.isVisible())) await addSource(page, `${fixtureUrl}/`);
  await expand(treeItem(page, PATHS.wellKnown));
  await expand(treeItem(page, PATHS.dataset1.capabilityList));
  await treeItem(page, PATHS.dataset1.resourceList).locator(':scope > .tree-row').click();
  await expect(entriesTable(page).getByRole('row')).not.toHaveCount(0);
}

/**
 * Opens the app on the fixture Source (added the first time, then chosen from Saved Sources) and unfolds it down to
 * dataset2's Resource List Index, once it has been read: its count shows `parts` parts.
 */
export async function openResourceListIndex(page: Page, appUrl: string, fixtureUrl: string, parts: number): Promise<Locator> {
  await page.goto(appUrl);
  const saved = page.getByRole('list', { name: 'Saved Sources' });
  await expect(saved.or(page.getByText('No Sources yet'))).toBeVisible();
  if (!(await saved.isVisible())) {
    await addSource(page, `${fixtureUrl}/`);
    await expect(page.getByRole('button', { name: /Added 127\.0\.0\.1/ })).toBeVisible();
  } else await saved.getByRole('button').first().click();
  await expand(treeItem(page, PATHS.wellKnown));
  await expand(treeItem(page, PATHS.dataset2.capabilityList));
  const index = treeItem(page, PATHS.dataset2.resourceListIndex);
  // The count is there once the index has been read (50,000 parts take a moment).
  await expect(index.locator('.tree-count')).toHaveText(parts.toLocaleString('en'), { timeout: 60_000 });
  return index;
}

/**
 * Runs axe-core on the page as it is now and fails on any serious or critical violation, naming each rule and the
 * elements it hit. `view` names what is on screen, for the failure message; `include` narrows the check to parts.
 */
export async function expectAccessible(page: Page, view: string, options: { include?: string[] } = {}): Promise<void> {
  let builder = new AxeBuilder({ page });
  // Only these parts of the page (CSS selectors), when a spec is about them alone.
  for (const selector of options.include ?? []) builder = builder.include(selector);
  const results = await builder.analyze();
  // Serious and critical ones, and content outside every landmark (moderate, but a screen reader's landmark
  // navigation skips it).
  const bad = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical' || v.id === 'region');
  const report = bad.map(
    (v) => `${v.id} (${v.impact}): ${v.help}\n${v.nodes.slice(0, 5).map((n) => `    ${n.target.join(' ')}: ${n.failureSummary ?? ''}`).join('\n')}`,
  );
  expect(report, `axe on ${view}`).toEqual([]);
}

/** The main pane, where a mirror's form and views show. */
export function mainView(page: Page): Locator {
  return page.getByRole('main');
}

/** The status region a run's end is said in: one short sentence (a spinner in the same region is a status too). */
export function runEndSentence(page: Page): Locator {
  return mainView(page).locator('.run-end-sentence[role=status]');
}

/** What a run's end says besides its one sentence (the status region): the rest of its message, counters, actions. */
export function runEndDetails(page: Page): Locator {
  return mainView(page).locator('.run-end');
}

export function resourcesBar(page: Page): Locator {
  return mainView(page).getByRole('progressbar', { name: 'Resources' });
}

/** Loads the app, adds the Source from `listUrl` (a document of it) and opens that document's new-mirror form. */
export async function openMirrorForm(page: Page, appUrl: string, listUrl: string): Promise<void> {
  await page.goto(appUrl);
  await addSource(page, listUrl);
  await expect(detail(page).getByRole('button', { name: 'Mirror this…' })).toBeVisible();
  await detail(page).getByRole('button', { name: 'Mirror this…' }).click();
  await expect(mainView(page).getByRole('heading', { level: 2, name: /^Mirror / })).toBeVisible();
}

export async function fillMirrorForm(page: Page, folder: string, concurrency: number): Promise<void> {
  await mainView(page).getByLabel('Folder', { exact: true }).fill(folder);
  await mainView(page).getByLabel('Connections').fill(String(concurrency));
}
