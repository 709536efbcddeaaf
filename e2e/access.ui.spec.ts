// A mirror's own user name and password (HTTP basic) from the UI, in Chromium over `rsdesk serve`, against the fixture
// Source once it asks for them: given in the new-mirror form, changed in the mirror's Access tab with the keyboard,
// refused in plain words when wrong, never shown again; axe on the Access tab in light and dark.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { PATHS, startFixtureSource, type FixtureSource } from './fixture-source/index.ts';
import { startAppServer, type AppServer } from './app-server.ts';
import { addSource, detail, expectAccessible } from './ui-helpers.ts';

let fixture: FixtureSource;
let app: AppServer;
let dataDir: string;
let screenshots: string;

const USER = 'archivist';
const FIRST = 'first-Passw0rd';
const SECOND = 'second-Passw0rd';
const TOKEN = 'own-token.42';
const basic = (password: string) => `Basic ${Buffer.from(`${USER}:${password}`).toString('base64')}`;

test.beforeAll(async ({}, testInfo) => {
  const root = join(testInfo.project.testDir, '..');
  screenshots = join(root, 'resources', 'screenshots');
  mkdirSync(screenshots, { recursive: true });
  dataDir = mkdtempSync(join(tmpdir(), 'rsdesk-access-ui-'));
  fixture = await startFixtureSource({ resources: 12 });
  app = await startAppServer(root, dataDir);
});

test.afterAll(async () => {
  await app?.stop();
  await fixture?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const view = (page: Page) => page.getByRole('main');

test('a user name and password given in the new-mirror form and changed in the Access tab, from the keyboard', async ({ page }) => {
  await page.goto(app.url);
  await addSource(page, fixture.url + PATHS.dataset1.capabilityList);
  await expect(detail(page).getByRole('heading', { name: /Capability List/ })).toBeVisible();
  // From now on the Source asks for them.
  fixture.setAuth(basic(FIRST));
  await detail(page).getByRole('button', { name: 'Mirror this…' }).click();
  const folder = join(dataDir, 'mirror');
  await view(page).getByLabel('Folder', { exact: true }).fill(folder);
  await view(page).getByText('User name and password', { exact: true }).click();
  await view(page).getByRole('textbox', { name: 'User name' }).fill(USER);
  await view(page).getByLabel('Password', { exact: true }).fill(FIRST);
  await view(page).getByRole('button', { name: 'Create mirror' }).click();
  await expect(view(page).getByRole('status').filter({ hasText: 'Baseline completed' })).toContainText('Baseline completed: 12 created', { timeout: 60_000 });
  expect(new Set(fixture.requests.filter((r) => r.path.includes('/res/')).map((r) => r.headers.authorization))).toEqual(new Set([basic(FIRST)]));

  // The Access tab, reached with the arrow keys: it names the user and the Source, never the password.
  await view(page).getByRole('tab', { name: /Runs/ }).focus();
  await page.keyboard.press('ArrowLeft');
  const tab = view(page).getByRole('tab', { name: 'Access' });
  await expect(tab).toHaveAttribute('aria-selected', 'true');
  const panel = view(page).getByRole('tabpanel');
  await expect(panel).toContainText(`Signs in to ${fixture.url} as ${USER} with a password kept on this computer.`);
  await expect(panel.getByRole('textbox', { name: 'User name' })).toHaveValue(USER);
  await expect(panel.getByLabel('Password', { exact: true })).toHaveValue('');
  expect(await page.content()).not.toContain(FIRST);

  // A user name HTTP basic cannot carry: refused by main, in plain words, on the field that is wrong.
  await panel.getByRole('textbox', { name: 'User name' }).fill('archi:vist');
  await panel.getByLabel('Password', { exact: true }).fill(SECOND);
  await panel.getByLabel('Password', { exact: true }).press('Enter');
  await expect(panel.getByRole('alert')).toHaveText('Not saved. A user name cannot contain a colon (HTTP basic authentication does not allow one).');
  await expect(panel.getByRole('textbox', { name: 'User name' })).toHaveAttribute('aria-invalid', 'true');

  // The Source's password changed: the new one, typed and saved with the keyboard alone.
  fixture.setAuth(basic(SECOND));
  await panel.getByRole('textbox', { name: 'User name' }).focus();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.type(USER);
  await page.keyboard.press('Tab');
  await expect(panel.getByLabel('Password', { exact: true })).toBeFocused();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.type(SECOND);
  await page.keyboard.press('Tab');
  await expect(panel.getByRole('button', { name: 'Show password' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(panel.getByLabel('Password', { exact: true })).toHaveAttribute('type', 'text');
  await page.keyboard.press('Enter');
  await expect(panel.getByLabel('Password', { exact: true })).toHaveAttribute('type', 'password');
  await page.keyboard.press('Tab');
  await expect(panel.getByRole('button', { name: 'Save new password' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(panel.getByRole('status').filter({ hasText: 'Saved.' })).toHaveText('Saved. The next run and the next live notifications sign in with them.');
  await expect(panel.getByLabel('Password', { exact: true })).toHaveValue('');
  expect(await page.content()).not.toContain(SECOND);
  await page.screenshot({ path: join(screenshots, 'mirror-access.png') });
  await expectAccessible(page, 'the Access tab (light)');
  await page.emulateMedia({ colorScheme: 'dark' });
  await expectAccessible(page, 'the Access tab (dark)');
  await page.emulateMedia({ colorScheme: 'light' });

  // The next run signs in with it.
  fixture.change('update', 2);
  const mark = fixture.requests.length;
  await view(page).getByRole('button', { name: 'Sync now' }).click();
  await expect(view(page).getByRole('status').filter({ hasText: 'Incremental sync' })).toContainText('Incremental sync completed: 2 updated', { timeout: 60_000 });
  expect(new Set(fixture.requests.slice(mark).map((r) => r.headers.authorization))).toEqual(new Set([basic(SECOND)]));
  // Kept outside the mirror folder, and not in the app's own files in clear where a keychain seals them (here none).
  expect(readFileSync(join(folder, '.resourcesync', 'state.sqlite')).includes(SECOND)).toBe(false);

  // Removed: the mirror has no credentials of its own any more.
  await panel.getByRole('button', { name: 'Remove user name and password' }).click();
  await expect(panel.getByRole('status').filter({ hasText: 'Removed.' })).toBeVisible();
  await expect(panel).toContainText(`Sends the bearer token of Settings (if one is set) to ${fixture.url}.`);
});

test("a token of the mirror's own and extra headers, in the Access tab", async ({ page }) => {
  // The mirror of the test above, which has no credentials of its own any more; the Source now wants a token.
  fixture.setAuth(`Bearer ${TOKEN}`);
  await page.goto(app.url);
  await page.getByRole('list', { name: 'Mirrors' }).getByRole('button', { name: /^mirror/ }).click();
  await view(page).getByRole('tab', { name: 'Access' }).click();
  const panel = view(page).getByRole('tabpanel');
  const tokenForm = panel.getByRole('form', { name: 'A token of its own (bearer)' });
  await tokenForm.getByLabel('Token', { exact: true }).fill(TOKEN);
  await tokenForm.getByLabel('Token', { exact: true }).press('Enter');
  await expect(tokenForm.getByRole('status')).toHaveText('Saved. The next run and the next live notifications send this token.');
  await expect(panel).toContainText(`Signs in to ${fixture.url} with a token of its own kept on this computer.`);
  await expect(tokenForm.getByLabel('Token', { exact: true })).toHaveValue('');
  expect(await page.content()).not.toContain(TOKEN);

  // Headers: a name the connection decides is refused before saving; a good one is saved by main, lower-cased.
  const headers = panel.getByRole('form', { name: 'Extra request headers' });
  await headers.getByRole('button', { name: 'Add a header' }).click();
  await expect(headers.getByRole('textbox', { name: 'Name of header 1' })).toBeFocused();
  await page.keyboard.type('Host');
  await page.keyboard.press('Tab');
  await page.keyboard.type('elsewhere.example');
  await page.keyboard.press('Enter');
  await expect(headers.getByRole('alert')).toHaveText('The host header cannot be set here.');
  await expect(headers.getByRole('textbox', { name: 'Name of header 1' })).toHaveAttribute('aria-invalid', 'true');
  await expect(headers.getByRole('textbox', { name: 'Name of header 1' })).toBeFocused();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.type('X-Archive-Id');
  await headers.getByRole('textbox', { name: 'Value of header 1' }).fill('42 a');
  await headers.getByRole('button', { name: 'Save headers' }).click();
  await expect(headers.getByRole('status')).toHaveText('Saved. The next run and the next live notifications send them.');
  await expect(headers.getByRole('textbox', { name: 'Name of header 1' })).toHaveValue('x-archive-id');
  await page.screenshot({ path: join(screenshots, 'mirror-access-token-headers.png'), fullPage: true });
  await expectAccessible(page, 'the Access tab with a token and headers (light)');
  await page.emulateMedia({ colorScheme: 'dark' });
  await expectAccessible(page, 'the Access tab with a token and headers (dark)');
  await page.emulateMedia({ colorScheme: 'light' });

  // The next run sends both, to the Source.
  fixture.change('update', 1);
  const mark = fixture.requests.length;
  await view(page).getByRole('button', { name: 'Sync now' }).click();
  await expect(view(page).getByRole('status').filter({ hasText: 'Incremental sync' })).toContainText('Incremental sync completed: 1 updated', { timeout: 60_000 });
  const sent = fixture.requests.slice(mark);
  expect(new Set(sent.map((r) => r.headers.authorization))).toEqual(new Set([`Bearer ${TOKEN}`]));
  expect(new Set(sent.map((r) => r.headers['x-archive-id']))).toEqual(new Set(['42 a']));
});
