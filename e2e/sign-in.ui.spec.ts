// Signing in to a protected Source from the UI, with the keyboard alone, in Chromium over `rsdesk serve`: adding a
// Source that answers 401 shows the refusal and a sign-in form, a wrong password is refused in plain words, the
// right one adds the Source by itself; documents of a protected area that were refused are read again by themselves
// once signed in (no Retry). Axe on each sign-in view in light and dark.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Locator, type Page } from '@playwright/test';
import { PATHS, startFixtureSource, type FixtureSource } from './fixture-source/index.ts';
import { startAppServer, type AppServer } from './app-server.ts';
import { detail, expectAccessible, treeItem } from './ui-helpers.ts';

let whole: FixtureSource;
let area: FixtureSource;
let tokenOnly: FixtureSource;
let app: AppServer;
let dataDir: string;
let screenshots: string;

const USER = 'archivist';
const PASSWORD = 'right-Passw0rd';
const TOKEN = 'archive-token.7';
const basic = (password: string) => `Basic ${Buffer.from(`${USER}:${password}`).toString('base64')}`;

test.beforeAll(async ({}, testInfo) => {
  const root = join(testInfo.project.testDir, '..');
  screenshots = join(root, 'resources', 'screenshots');
  mkdirSync(screenshots, { recursive: true });
  dataDir = mkdtempSync(join(tmpdir(), 'rsdesk-sign-in-ui-'));
  // One Source protected whole, one with only its /dataset1/ area protected (its Source Description is open).
  whole = await startFixtureSource({ resources: 8, auth: basic(PASSWORD) });
  area = await startFixtureSource({ resources: 8, auth: basic(PASSWORD), authOnly: ['/dataset1/'] });
  tokenOnly = await startFixtureSource({ resources: 8, auth: `Bearer ${TOKEN}` });
  app = await startAppServer(root, dataDir);
});

test.afterAll(async () => {
  await app?.stop();
  await whole?.close();
  await area?.close();
  await tokenOnly?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Presses `key` until `target` has the focus (as a person tabbing through the page would), at most `max` times. */
async function pressUntilFocused(page: Page, key: string, target: Locator, max = 40): Promise<void> {
  for (let i = 0; i < max; i++) {
    if (await target.evaluate((el) => el === document.activeElement).catch(() => false)) return;
    await page.keyboard.press(key);
  }
  await expect(target).toBeFocused();
}

const sidebarForm = (page: Page) => page.getByRole('region', { name: 'Add a Source' });

test('a Source that asks for a sign-in is added once signed in, from the keyboard', async ({ page }) => {
  await page.goto(app.url);
  await pressUntilFocused(page, 'Tab', page.getByLabel('Source URL'));
  await page.keyboard.type(whole.url);
  await page.keyboard.press('Enter');

  const add = sidebarForm(page);
  await expect(add.getByRole('alert').filter({ hasText: 'This Source asks for a sign-in' })).toContainText(
    `${whole.url} asks for a sign-in to read ${whole.url}/`,
  );
  await expect(add.getByRole('alert').filter({ hasText: 'This Source asks for a sign-in' })).toContainText('Nothing was saved. Sign in below and it is tried again.');
  const form = add.getByRole('form', { name: `Sign in to ${whole.url}` });

  // A wrong password: refused by the Source, said in plain words, on the password field; nothing kept.
  await pressUntilFocused(page, 'Tab', form.getByRole('textbox', { name: 'User name' }));
  await page.keyboard.type(USER);
  await page.keyboard.press('Tab');
  await expect(form.getByLabel('Password', { exact: true })).toBeFocused();
  await page.keyboard.type('wrong-password');
  await page.keyboard.press('Enter');
  await expect(form.getByRole('alert')).toHaveText(
    `Not signed in. ${whole.url} refused the user name "${USER}" and its password (HTTP 401 Unauthorized). Check them and try again; they were not kept.`,
  );
  await expect(form.getByLabel('Password', { exact: true })).toHaveAttribute('aria-invalid', 'true');
  await page.screenshot({ path: join(screenshots, 'sign-in-refused.png') });
  await expectAccessible(page, 'Add Source asking for a sign-in (light)');
  await page.emulateMedia({ colorScheme: 'dark' });
  await expectAccessible(page, 'Add Source asking for a sign-in (dark)');
  await page.emulateMedia({ colorScheme: 'light' });

  // The right one: kept, and the Source is added by itself, its documents read with it.
  await expect(form.getByLabel('Password', { exact: true })).toBeFocused();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.type(PASSWORD);
  await page.keyboard.press('Enter');
  await expect(add.getByRole('status').filter({ hasText: 'Saved' })).toHaveText(`Saved 127.0.0.1:${new URL(whole.url).port}; its documents are shown below.`);
  const capabilityList = treeItem(page, PATHS.dataset1.capabilityList);
  await expect(capabilityList.locator(':scope > .tree-row')).toContainText('Capability List');
  await expect(page.getByRole('tree').locator('.error-text')).toHaveCount(0);
  expect(whole.requests.filter((r) => r.path === PATHS.dataset1.capabilityList).at(-1)?.headers.authorization).toBe(basic(PASSWORD));
  // Kept outside the page, never shown again.
  expect(await page.content()).not.toContain(PASSWORD);
  expect(readFileSync(join(dataDir, 'mirror-secrets.json'), 'utf8')).toContain(`source:${whole.url}`);
});

test('documents of a protected area are read again by themselves once signed in', async ({ page }) => {
  await page.goto(app.url);
  await pressUntilFocused(page, 'Tab', page.getByLabel('Source URL'));
  await page.keyboard.type(area.url);
  await page.keyboard.press('Enter');
  const add = sidebarForm(page);
  await expect(add.getByRole('status').filter({ hasText: 'Saved' })).toBeVisible();

  // The open part loads; the protected Capability List says it asks for a sign-in.
  const locked = treeItem(page, PATHS.dataset1.capabilityList);
  await expect(locked.locator(':scope > .tree-row .error-text')).toContainText('asks for a sign-in');
  await expect(treeItem(page, PATHS.dataset2.capabilityList).locator(':scope > .tree-row .error-text')).toHaveCount(0);

  // To it through the tree with the arrow keys, opened with Enter: the refusal and a sign-in form.
  await pressUntilFocused(page, 'Tab', page.getByRole('tree').locator('[role=treeitem][tabindex="0"]'));
  await pressUntilFocused(page, 'ArrowDown', locked);
  await page.keyboard.press('Enter');
  const pane = detail(page);
  await expect(pane.getByRole('alert').filter({ hasText: 'This Source asks for a sign-in.' })).toContainText(
    `${area.url} asks for a sign-in to read ${area.url}${PATHS.dataset1.capabilityList} (HTTP 401 Unauthorized).`,
  );
  const form = pane.getByRole('form', { name: `Sign in to ${area.url}` });
  await pressUntilFocused(page, 'Tab', form.getByRole('textbox', { name: 'User name' }));
  await page.keyboard.type(USER);
  await page.keyboard.press('Tab');
  await page.keyboard.type(PASSWORD);
  await page.screenshot({ path: join(screenshots, 'sign-in-document.png') });
  await expectAccessible(page, 'a refused document with its sign-in form (light)');
  await page.emulateMedia({ colorScheme: 'dark' });
  await expectAccessible(page, 'a refused document with its sign-in form (dark)');
  await page.emulateMedia({ colorScheme: 'light' });
  await page.keyboard.press('Enter');

  // No Retry: the document and the tree row read again by themselves; focus lands on the document's title.
  await expect(pane.getByRole('heading', { name: /Capability List/ })).toBeFocused();
  await expect(locked.locator(':scope > .tree-row .error-text')).toHaveCount(0);
  await expect(locked.locator(':scope > .tree-row')).toContainText('Capability List');
  await page.screenshot({ path: join(screenshots, 'sign-in-loaded.png') });
  expect(area.requests.filter((r) => r.path === PATHS.dataset1.capabilityList).at(-1)?.headers.authorization).toBe(basic(PASSWORD));
});

test('a token given up front, in the folded sign-in under Add Source', async ({ page }) => {
  await page.goto(app.url);
  await pressUntilFocused(page, 'Tab', page.getByLabel('Source URL'));
  await page.keyboard.type(tokenOnly.url);
  // Unfold "This Source needs a sign-in", choose a token with the arrow keys, type it.
  const ahead = page.getByText('This Source needs a sign-in', { exact: true });
  await pressUntilFocused(page, 'Tab', ahead);
  await page.keyboard.press('Enter');
  const add = sidebarForm(page);
  await pressUntilFocused(page, 'Tab', add.getByRole('radio', { name: 'A user name and password' }));
  await page.keyboard.press('ArrowDown');
  await expect(add.getByRole('radio', { name: 'A token' })).toBeChecked();
  await pressUntilFocused(page, 'Tab', add.getByLabel('Token', { exact: true }));
  await page.keyboard.type(TOKEN);
  await page.screenshot({ path: join(screenshots, 'sign-in-ahead.png') });
  await expectAccessible(page, 'the folded sign-in, open (light)');
  await page.emulateMedia({ colorScheme: 'dark' });
  await expectAccessible(page, 'the folded sign-in, open (dark)');
  await page.emulateMedia({ colorScheme: 'light' });
  // Back to the field and Enter: the Source is added at the first try, signed in from its first request.
  await pressUntilFocused(page, 'Shift+Tab', page.getByLabel('Source URL'));
  await page.keyboard.press('Enter');
  await expect(add.getByRole('status').filter({ hasText: 'Saved' })).toHaveText(`Saved 127.0.0.1:${new URL(tokenOnly.url).port}; its documents are shown below.`);
  expect(new Set(tokenOnly.requests.map((r) => r.headers.authorization))).toEqual(new Set([`Bearer ${TOKEN}`]));
  await expect(page.getByRole('tree').locator('.error-text')).toHaveCount(0);
  // Folded again and emptied once used.
  await expect(add.getByLabel('Token', { exact: true })).toBeHidden();
  expect(await page.content()).not.toContain(TOKEN);
});

test('Settings lists the Sources signed in to, never a secret, and signs out of one', async ({ page }) => {
  await page.goto(app.url);
  await pressUntilFocused(page, 'Tab', page.getByRole('button', { name: 'Settings' }));
  await page.keyboard.press('Enter');
  const dialog = page.getByRole('dialog', { name: 'Settings' });
  const section = dialog.getByRole('region', { name: 'Sources signed in to' });
  await expect(section.getByRole('listitem')).toHaveText([
    new RegExp(`^${whole.url} as ${USER}`),
    new RegExp(`^${area.url} as ${USER}`),
    new RegExp(`^${tokenOnly.url} with a token`),
  ]);
  expect(await page.content()).not.toContain(PASSWORD);
  expect(await page.content()).not.toContain(TOKEN);
  await page.screenshot({ path: join(screenshots, 'sign-in-settings.png') });
  await expectAccessible(page, 'Settings with the Sources signed in to (light)');
  await page.emulateMedia({ colorScheme: 'dark' });
  await expectAccessible(page, 'Settings with the Sources signed in to (dark)');
  await page.emulateMedia({ colorScheme: 'light' });

  await pressUntilFocused(page, 'Tab', section.getByRole('button', { name: `Sign out of ${whole.url}` }));
  await page.keyboard.press('Enter');
  await expect(section.getByRole('status')).toHaveText(
    `Signed out of ${whole.url}. Its documents are asked for without a sign-in from now on; its mirrors keep their own.`,
  );
  await expect(section.getByRole('heading', { name: 'Sources signed in to' })).toBeFocused();
  await expect(section.getByRole('listitem')).toHaveCount(2);
  expect(readFileSync(join(dataDir, 'mirror-secrets.json'), 'utf8')).not.toContain(`source:${whole.url}`);
});
