// Adding a Source, in Chromium over `rsdesk serve` and the fixture Source, keyboard first: a bare host name, what
// discovery is fetching and for how long, Cancel, the tree unfolded after an add and the pasted document opened,
// "already saved", a pasted URL that was refused, errors in plain words shown whole, and remove with Undo.
// axe runs on each of these states.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Locator, type Page } from '@playwright/test';
import { PATHS, startFixtureSource, type FixtureSource } from './fixture-source/index.ts';
import { startAppServer, type AppServer } from './app-server.ts';
import { detail, expectAccessible, treeItem } from './ui-helpers.ts';

let fixture: FixtureSource;
let app: AppServer;
let dataDir: string;
let shots: string;
let host: string;

test.describe.configure({ mode: 'serial' });

test.beforeAll(async ({}, testInfo) => {
  const root = join(testInfo.project.testDir, '..');
  // Screenshots of each state, to look at (not part of the README).
  shots = join(root, 'test-results', 'add-source');
  mkdirSync(shots, { recursive: true });
  dataDir = mkdtempSync(join(tmpdir(), 'rsdesk-add-ui-'));
  fixture = await startFixtureSource({ bigListEntries: 300 });
  host = new URL(fixture.url).host;
  app = await startAppServer(root, dataDir);
});

test.afterAll(async () => {
  await app?.stop();
  await fixture?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/**
 * axe on what this spec is about: adding (the Add a Source section, whatever state it is in) and the saved
 * Sources. The tree's own items and pills are the tree's spec's to check.
 */
const SIDEBAR_PARTS = { include: ['.add-source', '.sources-box'] };

/** axe in the light and the dark theme. */
async function expectAccessibleBoth(page: Page, view: string): Promise<void> {
  await expectAccessible(page, `${view} (light)`, SIDEBAR_PARTS);
  await page.emulateMedia({ colorScheme: 'dark' });
  try {
    await expectAccessible(page, `${view} (dark)`, SIDEBAR_PARTS);
  } finally {
    await page.emulateMedia({ colorScheme: 'light' });
  }
}

const discovery = (page: Page) => page.getByRole('region', { name: 'Add a Source' }).locator('.discovery');
const title = (page: Page) => page.locator('.discovery-title');
const saved = (page: Page) => page.getByRole('list', { name: 'Saved Sources' });

/** The app's request timeout (its Settings), through the app's own API. */
async function setRequestTimeout(timeoutMs: number): Promise<void> {
  const token = new URL(app.url).hash.replace('#token=', '');
  const response = await fetch(`${app.origin}/api/invoke`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ command: 'settings.set', args: { timeoutMs } }),
  });
  expect(await response.json()).toMatchObject({ ok: true });
}

/** Types into the URL field and submits with Enter, as a keyboard user does. */
async function paste(page: Page, text: string): Promise<void> {
  const field = page.getByLabel('Source URL');
  await field.focus();
  await field.fill('');
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(shots, `${name}.png`) });
}

/** Nothing of the element is cut off: no scrolling inside it or any box around it up to the sidebar. */
async function expectWhole(locator: Locator): Promise<void> {
  const clipped = await locator.evaluate((el) => {
    const problems: string[] = [];
    for (let node: HTMLElement | null = el as HTMLElement; node && !node.matches('.sidebar'); node = node.parentElement) {
      if (node.scrollHeight > node.clientHeight + 1 && getComputedStyle(node).overflowY !== 'visible') {
        problems.push(`${node.className}: ${node.scrollHeight} > ${node.clientHeight}`);
      }
      if (node.scrollWidth > node.clientWidth + 1 && getComputedStyle(node).overflowX !== 'visible') {
        problems.push(`${node.className}: ${node.scrollWidth} wide > ${node.clientWidth}`);
      }
    }
    return problems;
  });
  expect(clipped).toEqual([]);
}

test('a bare host: while discovery runs it shows the URL being fetched, the time elapsed and a Cancel that stops it', async ({ page }) => {
  // The well-known URI never answers: discovery waits there until it is cancelled (with the longest timeout, so a
  // slow machine's axe runs and screenshots never outlast it and let discovery end on its own).
  fixture.setBroken(PATHS.wellKnown, 'hang');
  await setRequestTimeout(600_000);
  try {
    await page.goto(app.url);
    await paste(page, host);
    await expect(title(page)).toContainText(`Discovering http://${host}/`);
    const progress = discovery(page).locator('.discovery-progress');
    await expect(progress).toContainText(`Fetching ${fixture.url}${PATHS.wellKnown}`);
    const timer = progress.getByRole('timer', { name: 'Time elapsed' });
    await expect(timer).toHaveText(/^\d+ s elapsed$/);
    // It ticks, and says how long this one URL has been waiting.
    await expect(timer).toHaveText(/^([2-9]|\d\d) s elapsed$/, { timeout: 10_000 });
    await expect(progress).toContainText(/for \d+ s/);
    await expect(discovery(page).getByRole('list', { name: 'Discovery steps' }).locator('[data-route=html-link]')).toContainText('Capability List');
    await expectAccessibleBoth(page, 'discovery running');
    await shot(page, 'running');

    // Keyboard: from the field, Tab reaches Cancel (past the folded sign-in and the folded title); Enter cancels.
    const cancel = progress.getByRole('button', { name: 'Cancel' });
    await page.keyboard.press('Tab');
    await expect(page.getByText('This Source needs a sign-in', { exact: true })).toBeFocused();
    await page.keyboard.press('Tab');
    await expect(title(page)).toBeFocused();
    await page.keyboard.press('Tab');
    await expect(cancel).toBeFocused();
    const asked = Date.now();
    await page.keyboard.press('Enter');
    await expect(title(page)).toHaveText(/Discovery cancelled/);
    expect(Date.now() - asked).toBeLessThan(5_000);
    await expect(discovery(page).getByRole('status')).toHaveText('Cancelled. Nothing was saved.');
    // Focus went to the result, not to the page.
    await expect(title(page)).toBeFocused();
    await expect(page.getByText('No Sources yet.')).toBeVisible();
    await expectAccessible(page, 'discovery cancelled', SIDEBAR_PARTS);

    // Escape in the field cancels too.
    await paste(page, host);
    await expect(progress).toContainText(`Fetching ${fixture.url}${PATHS.wellKnown}`);
    await page.keyboard.press('Escape');
    await expect(title(page)).toHaveText(/Discovery cancelled/);
    // Cancelled from the field (where Enter started it), focus stays there, for the URL to be put right.
    await expect(page.getByLabel('Source URL')).toBeFocused();
  } finally {
    fixture.setBroken(PATHS.wellKnown, null);
    await setRequestTimeout(30_000);
  }
});

test('after an add the tree unfolds to the Capability Lists and their capabilities', async ({ page }) => {
  await page.goto(app.url);
  await paste(page, host);
  await expect(title(page)).toContainText(`Added ${host}`);
  await expect(title(page).locator('.discovery-ok')).toBeVisible();
  // What was tried and found, in words (before: "2/4 routes found"), whole.
  await expect(title(page)).toContainText(
    "Tried 4 ways: found a Capability List through a link in the page's HTML and a Source Description at /.well-known/resourcesync.",
  );
  await expectWhole(title(page));
  await expect(discovery(page).getByRole('status')).toHaveText(`Saved ${host}; its documents are shown below.`);
  await expect(saved(page).getByRole('button', { name: new RegExp(`^${host.replace(/\./g, '\\.')}`) })).toHaveAttribute('aria-current', 'true');
  // Saved under the URL the engine made of the bare host.
  await expect(saved(page)).toContainText(`http://${host}/`);
  for (const path of [PATHS.wellKnown, PATHS.dataset1.capabilityList, PATHS.dataset2.capabilityList]) {
    await expect(treeItem(page, path)).toHaveAttribute('aria-expanded', 'true');
  }
  await expect(treeItem(page, PATHS.dataset1.resourceList)).toContainText('Resource List');
  await expect(treeItem(page, PATHS.dataset2.resourceListIndex)).toContainText('Resource List Index');
  await expectAccessibleBoth(page, 'Source added, tree unfolded');
  await shot(page, 'added');
});

test('the same Source again is "already saved" and selected, never added twice (trailing slash, full URL)', async ({ page }) => {
  await page.goto(app.url);
  await expect(saved(page).getByRole('listitem')).toHaveCount(1);
  for (const text of [fixture.url, `${fixture.url}/`, `  ${host}  `]) {
    await paste(page, text);
    await expect(title(page)).toContainText(`Already saved: ${host}`);
  }
  await expect(discovery(page).getByRole('status')).toHaveText(`${host} was already saved, so nothing was added; it is selected below.`);
  await expect(saved(page).getByRole('listitem')).toHaveCount(1);
  await expect(saved(page).getByRole('button', { name: new RegExp(`^${host.replace(/\./g, '\\.')}`) })).toHaveAttribute('aria-current', 'true');
  await expectAccessibleBoth(page, 'already saved');
  await page.reload();
  await expect(saved(page).getByRole('listitem')).toHaveCount(1);
});

test('a pasted document is revealed in the tree, selected, and its entries shown', async ({ page }) => {
  await page.goto(app.url);
  // A part of the dataset2 Resource List Index: its Capability List and the index unfold to it.
  await paste(page, fixture.url + PATHS.dataset2.resourceListPart(2));
  await expect(title(page)).toContainText(`Already saved: ${host}`);
  const part = treeItem(page, PATHS.dataset2.resourceListPart(2));
  await expect(part).toHaveAttribute('aria-selected', 'true');
  await expect(treeItem(page, PATHS.dataset2.resourceListIndex)).toHaveAttribute('aria-expanded', 'true');
  await expect(page.getByTestId('entry-count')).toHaveText('300 of 300 entries');
  await expect(detail(page).getByRole('heading', { level: 2 })).toContainText('Resource List');
  await expectAccessible(page, 'pasted document revealed', SIDEBAR_PARTS);
  await shot(page, 'revealed');

  // A Change List inside the Change List Index of dataset1.
  await paste(page, fixture.url + PATHS.dataset1.changeList(1));
  await expect(treeItem(page, PATHS.dataset1.changeList(1))).toHaveAttribute('aria-selected', 'true');
  await expect(treeItem(page, PATHS.dataset1.changeListIndex)).toHaveAttribute('aria-expanded', 'true');
  await expect(detail(page).getByRole('heading', { level: 2 })).toContainText('Change List');
  // The tree's tab stop is the revealed node: the keyboard carries on from there.
  await expect(treeItem(page, PATHS.dataset1.changeList(1))).toHaveAttribute('tabindex', '0');
});

test('a pasted URL that was refused is a warning at the top, with the reason, even though the Source was found', async ({ page }) => {
  await page.goto(app.url);
  await paste(page, fixture.url + PATHS.broken.doctype);
  await expect(title(page)).toContainText(`Already saved: ${host}`);
  // Not a green tick.
  await expect(title(page).locator('.discovery-warned')).toBeVisible();
  await expect(title(page).locator('.discovery-ok')).toHaveCount(0);
  const warning = discovery(page).getByRole('alert');
  await expect(warning).toContainText('The pasted URL was refused');
  await expect(warning).toContainText(`${fixture.url}${PATHS.broken.doctype} has a DOCTYPE declaration`);
  await expect(warning).toContainText('The Source was found through its /.well-known/resourcesync instead.');
  await expectWhole(warning);
  await expectAccessibleBoth(page, 'refused warning');
  await shot(page, 'refused');

  await paste(page, fixture.url + PATHS.broken.junkNamespace);
  await expect(warning).toContainText('The pasted URL was refused');
  await expect(warning).toContainText('namespace');
});

test('errors are plain, whole and without codes', async ({ page }) => {
  await page.goto(app.url);
  const quiet = await startFixtureSource({ routes: { wellKnown: false, htmlLink: false, linkHeader: false, robots: false }, bigListEntries: 10 });
  try {
    await paste(page, quiet.url + PATHS.broken.notXml);
    await expect(title(page)).toHaveText(/Discovery failed/);
    await expect(title(page)).toContainText(/Tried [1-9] ways?: found nothing\./);
    const alert = discovery(page).getByRole('alert');
    await expect(alert).toContainText(`Could not add ${quiet.url}${PATHS.broken.notXml}`);
    await expect(alert).toContainText('No ResourceSync Source found');
    await expect(alert).not.toContainText(/not-found|sources\.add|\(\w+-\w+\)/);
    await expectWhole(alert);
    await expectAccessibleBoth(page, 'discovery error');
    await shot(page, 'error');

    await paste(page, 'mailto:someone@example.org');
    await expect(alert).toContainText('Not an http(s) URL or host name: mailto:someone@example.org');
    await expect(alert).not.toContainText(/invalid-arguments|Invalid arguments/);
  } finally {
    await quiet.close();
  }
});

test('removing a Source offers Undo, which brings it back as it was', async ({ page }) => {
  await page.goto(app.url);
  const item = saved(page).getByRole('listitem');
  await expect(item).toHaveCount(1);
  const id = await item.getAttribute('data-source-id');
  await saved(page).getByRole('button', { name: new RegExp(`^${host.replace(/\./g, '\\.')}`) }).click();
  await expect(treeItem(page, PATHS.wellKnown)).toBeVisible();

  // Keyboard only: the remove button, Enter; focus lands on Undo.
  await page.getByRole('button', { name: `Remove Source ${host}` }).focus();
  await page.keyboard.press('Enter');
  const notice = page.locator('.undo-bar');
  await expect(notice).toHaveText(new RegExp(`Removed ${host.replace(/\./g, '\\.')}\\.`));
  await expect(page.getByText('No Sources yet.')).toBeVisible();
  await expect(treeItem(page, PATHS.wellKnown)).toHaveCount(0);
  const undo = notice.getByRole('button', { name: 'Undo' });
  await expect(undo).toBeFocused();
  await expectAccessibleBoth(page, 'removed, with Undo');
  await shot(page, 'undo');
  await page.keyboard.press('Enter');

  await expect(item).toHaveCount(1);
  await expect(item).toHaveAttribute('data-source-id', id!);
  await expect(notice).toHaveCount(0);
  // It was selected, so it is again; focus is on it.
  await expect(saved(page).getByRole('button', { name: new RegExp(`^${host.replace(/\./g, '\\.')}`) })).toBeFocused();
  await expect(treeItem(page, PATHS.wellKnown)).toBeVisible();
  await page.reload();
  await expect(item).toHaveCount(1);
  await expect(item).toHaveAttribute('data-source-id', id!);

  // Removed and dismissed: gone for good.
  await page.getByRole('button', { name: `Remove Source ${host}` }).click();
  await notice.getByRole('button', { name: 'Dismiss' }).focus();
  await page.keyboard.press('Enter');
  await expect(notice).toHaveCount(0);
  // No Source left to take focus: the URL field, for the next one (focus was left on <body>).
  await expect(page.getByLabel('Source URL')).toBeFocused();
  await page.reload();
  await expect(page.getByText('No Sources yet.')).toBeVisible();
});
