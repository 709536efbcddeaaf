// What a newcomer's walkthrough of the mirror views found: focus kept in place after actions whose button goes away,
// Escape on the new-mirror form, form errors, plain messages when the app server is gone, Remove from list with
// Undo, the audit's wording and export, the tree's selected document, the list a mirror is made from.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { PATHS } from './fixture-source/index.ts';
import { mirrorSuite } from './mirror-suite.ts';
import { readFolder } from '../src-main/engine/mirror/folder.ts';
import { addSource, detail, expectAccessible, fillMirrorForm, mainView, openMirrorForm, resourcesBar } from './ui-helpers.ts';

const RESOURCES = 20;

const suite = mirrorSuite('mirror-walk', { resources: RESOURCES, changeListSize: 10, resourceDelayMs: 0 });

test.describe.configure({ mode: 'serial' });

const view = mainView;
const runEnd = (page: Page, text: string | RegExp) => view(page).getByRole('status').filter({ hasText: text });

const openForm = (page: Page, list: string = PATHS.dataset1.capabilityList) => openMirrorForm(page, suite.app.url, suite.fixture.url + list);
const fillForm = (page: Page, folder: string, concurrency = 4) => fillMirrorForm(page, folder, concurrency);

const setBroken = (ids: number[], on: boolean) => suite.setBroken(ids, on);

test('focus stays in place after actions whose button goes away', async ({ page }) => {
  // Cancel on the form: back to what opened it.
  await openForm(page);
  await view(page).getByRole('button', { name: 'Cancel' }).click();
  await expect(detail(page).getByRole('button', { name: 'Mirror this…' })).toBeFocused();

  // Create mirror: the new mirror's heading.
  await page.keyboard.press('Enter');
  await fillForm(page, join(suite.mirrors, 'focus'), 1);
  setBroken([3, 5], true);
  suite.fixture.setResourceDelay(300);
  await view(page).getByRole('button', { name: 'Create mirror' }).click();
  const heading = view(page).getByRole('heading', { level: 2, name: /^Mirror focus/ });
  await expect(heading).toBeFocused();

  // Pause: how the run stopped.
  await expect.poll(async () => Number(await resourcesBar(page).getAttribute('aria-valuenow')), { timeout: 30_000 }).toBeGreaterThan(1);
  suite.fixture.setResourceDelay(3_000);
  await view(page).getByRole('button', { name: 'Pause' }).click();
  await expect(runEnd(page, 'Paused after')).toBeFocused();

  // Resume: Pause, while the run goes on; then how it ended.
  suite.fixture.setResourceDelay(1_000);
  await view(page).getByRole('button', { name: 'Resume' }).click();
  await expect(view(page).getByRole('button', { name: 'Pause' })).toBeFocused();
  suite.fixture.setResourceDelay(0);
  await expect(runEnd(page, /^Baseline ended with \d+ failure/)).toBeFocused({ timeout: 60_000 });
  await expectAccessible(page, 'a mirror whose run ended with failures');

  // Retry all failed: how the retry ended.
  setBroken([3, 5], false);
  await view(page).getByRole('tab', { name: /Failures/ }).click();
  await view(page).getByRole('button', { name: /^Retry all failed/ }).click();
  await expect(runEnd(page, /^Retry of \d+ resource/)).toBeFocused({ timeout: 30_000 });

  // The history's "N failed" link opens the Failures tab: its tab.
  await view(page).getByRole('tab', { name: /Runs/ }).click();
  await view(page).getByRole('button', { name: /^\d+ failed: show the failures of run \d+$/ }).click();
  await expect(view(page).getByRole('tab', { name: /Failures/ })).toBeFocused();

  // Audit now, Audit again: the verdict.
  await view(page).getByRole('tab', { name: 'Audit' }).click();
  await view(page).getByRole('button', { name: 'Audit now' }).click();
  await expect(view(page).locator('.audit-verdict')).toBeFocused({ timeout: 30_000 });
  await expect(view(page).locator('.audit-summary')).toContainText('In sync');
  await view(page).getByRole('button', { name: 'Audit again' }).click();
  await expect(view(page).locator('.audit-verdict')).toBeFocused({ timeout: 30_000 });
  await expectAccessible(page, 'the audit, its verdict focused');
});

test('Escape cancels the new-mirror form and returns focus to what opened it', async ({ page }) => {
  await openForm(page);
  await expect(view(page).getByLabel('Folder', { exact: true })).toBeFocused();
  await view(page).getByLabel('Folder', { exact: true }).fill('/somewhere');
  await page.keyboard.press('Escape');
  await expect(view(page).getByRole('heading', { level: 2, name: /^Mirror / })).toHaveCount(0);
  await expect(detail(page).getByRole('button', { name: 'Mirror this…' })).toBeFocused();
  // From deeper in the form too.
  await page.keyboard.press('Enter');
  await view(page).getByRole('radio', { name: /Delete them/ }).focus();
  await page.keyboard.press('Escape');
  await expect(detail(page).getByRole('button', { name: 'Mirror this…' })).toBeFocused();
});

test('form errors: the invalid field is marked, described by the message, in view and focused', async ({ page }) => {
  await openForm(page);
  const folder = view(page).getByLabel('Folder', { exact: true });
  const create = view(page).getByRole('button', { name: 'Create mirror' });

  // An empty folder and a relative one are marked alike.
  await create.click();
  await expect(folder).toHaveAttribute('aria-invalid', 'true');
  await expect(folder).toHaveAccessibleDescription(/Choose a folder for the mirror/);
  await expect(folder).toBeFocused();
  await folder.fill('relative/path');
  await create.focus();
  await page.keyboard.press('Enter');
  await expect(folder).toHaveAttribute('aria-invalid', 'true');
  await expect(folder).toHaveAccessibleDescription(/Give the folder's full path/);
  await expect(folder).toBeFocused();
  await expectAccessible(page, 'the new-mirror form, a folder error');

  // A mapping main cannot read, with the mappings open: the field, below the fold, is scrolled to and focused; the
  // hint uses the words of the message.
  await folder.fill(join(suite.mirrors, 'mapped'));
  await view(page).getByText('Folder mappings').click();
  const maps = view(page).getByLabel('Mappings, one per line');
  await maps.fill('no equals sign here');
  await create.click();
  await expect(maps).toBeFocused();
  await expect(maps).toBeInViewport();
  await expect(maps).toHaveAttribute('aria-invalid', 'true');
  await expect(maps).toHaveAccessibleDescription(/PREFIX=DIR.*Folder mapping: takes PREFIX=DIR/);
  await expect(folder).not.toHaveAttribute('aria-invalid', 'true');
  await expectAccessible(page, 'the new-mirror form, a mapping error');

  // The user name without its password: the alert at the end says so, and the field points at it.
  await maps.fill('');
  await view(page).getByText('User name and password').click();
  await view(page).getByLabel('User name').fill('someone');
  await create.click();
  const user = view(page).getByLabel('User name');
  await expect(view(page).getByRole('alert')).toContainText('Enter the password');
  await expect(view(page).getByLabel('Password', { exact: true })).toHaveAttribute('aria-invalid', 'true');
  await expect(view(page).getByLabel('Password', { exact: true })).toHaveAccessibleDescription(/Enter the password/);
  await expect(view(page).getByLabel('Password', { exact: true })).toBeFocused();
  await expect(user).not.toHaveAttribute('aria-invalid', 'true');
});

test('the app server out of reach is said plainly; a new address pasted into the tab is taken without a reload', async ({ page }) => {
  await openForm(page);
  await view(page).getByLabel('Folder', { exact: true }).fill(join(suite.mirrors, 'unreachable'));
  // As when rsdesk serve has stopped: the browser's fetch fails.
  await page.route('**/api/invoke', (route) => route.abort('connectionrefused'));
  await view(page).getByRole('button', { name: 'Create mirror' }).click();
  const alert = view(page).getByRole('alert');
  await expect(alert).toContainText('The app server cannot be reached: rsdesk serve may have stopped. Start rsdesk serve again');
  await expect(alert).not.toContainText(/TypeError|Failed to fetch/);
  await page.unroute('**/api/invoke');

  // A page whose token is not the server's, then the right address pasted into the same tab: only its hash changes.
  const origin = new URL(suite.app.url).origin;
  await page.goto(`${origin}/#token=not-the-token`);
  const sources = page.getByRole('complementary', { name: 'Sources' });
  await expect(sources.getByRole('alert').first()).toContainText('This page has no valid session token');
  await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
  await page.goto(suite.app.url);
  await expect(sources.getByRole('list', { name: 'Saved Sources' })).toBeVisible();
  await expect(page.getByText('no valid session token')).toHaveCount(0);
  expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
  // The token is no longer in the address bar, and commands and their events go through with it.
  expect(new URL(page.url()).hash).toBe('');
  await addSource(page, suite.fixture.url + PATHS.dataset1.capabilityList);
  await expect(detail(page).getByRole('button', { name: 'Mirror this…' })).toBeVisible();
});

test('Remove from list says the files stay and how to open the mirror again, and can be undone', async ({ page }) => {
  const folder = join(suite.mirrors, 'removed');
  await openForm(page);
  await fillForm(page, folder, 3);
  await view(page).getByRole('radio', { name: /Move them to quarantine/ }).check();
  await view(page).getByRole('checkbox', { name: 'Start it now' }).uncheck();
  await view(page).getByRole('button', { name: 'Create mirror' }).click();
  await expect(view(page).getByRole('heading', { level: 2, name: /^Mirror removed/ })).toBeFocused();
  const list = page.getByRole('list', { name: 'Mirrors' });
  await expect(list.getByRole('button', { name: /^removed/ })).toBeVisible();

  await view(page).getByRole('button', { name: 'Remove from list' }).click();
  const notice = page.getByRole('status').filter({ hasText: 'from the list' });
  await expect(notice).toContainText(`Removed removed from the list. Its folder and files stay in ${folder}.`);
  await expect(notice).toContainText('choose “Mirror this…” on the list it mirrors and give this folder');
  await expect(notice.getByRole('button', { name: 'Undo' })).toBeFocused();
  await expect(list.getByRole('button', { name: /^removed/ })).toHaveCount(0);
  await expectAccessible(page, 'a mirror just removed from the list');

  await page.keyboard.press('Enter');
  await expect(view(page).getByRole('heading', { level: 2, name: /^Mirror removed/ })).toBeFocused();
  await expect(notice).toHaveCount(0);
  await expect(list.getByRole('button', { name: /^removed/ })).toBeVisible();
  // Its options came back with it.
  const fact = (name: string) => view(page).locator('.mirror-facts div').filter({ has: page.locator('dt', { hasText: new RegExp(`^${name}$`) }) }).locator('dd');
  await expect(fact('deletions')).toHaveText('moved to quarantine');
  await expect(fact('connections')).toHaveText('3');
});

test("the audit's kept rows say what this mirror's deletion policy does", async ({ page }) => {
  await openForm(page);
  await fillForm(page, join(suite.mirrors, 'kept'));
  await view(page).getByRole('radio', { name: /Move them to quarantine/ }).check();
  await view(page).getByRole('button', { name: 'Create mirror' }).click();
  await expect(runEnd(page, 'Baseline completed')).toBeVisible({ timeout: 60_000 });
  // The Source deletes a resource the mirror holds; no sync has applied it yet.
  suite.fixture.state.change('delete', 1, 4);
  await view(page).getByRole('tab', { name: 'Audit' }).click();
  await view(page).getByRole('button', { name: 'Audit now' }).click();
  const table = view(page).getByRole('table', { name: 'Audit report' });
  const kept = table.locator('tbody tr').filter({ hasText: suite.fixture.state.locOf(4) });
  await expect(kept).toContainText('kept');
  await expect(kept).toContainText('the next sync moves it to quarantine');
  await expect(kept).not.toContainText('deletion policy keep');
  await expectAccessible(page, 'an audit with a kept row');
});

test("an audit's missing and changed copies are fetched again from its report, and the next audit is in sync", async ({ page }) => {
  const folder = join(suite.mirrors, 'mend');
  await openForm(page);
  await fillForm(page, folder);
  await view(page).getByRole('button', { name: 'Create mirror' }).click();
  await expect(runEnd(page, 'Baseline completed')).toBeVisible({ timeout: 60_000 });
  // One copy lost, one changed on disk (another length): no Change List says so, only an audit sees it.
  const host = new URL(suite.fixture.url).host.replace(':', '_');
  const local = (id: number) => join(folder, host, ...suite.fixture.state.pathOf(id).split('/').filter(Boolean));
  // Two resources the Source still lists (earlier tests in this file delete some of the shared fixture's).
  const [lost, changed] = suite.fixture.state.live().map((r) => r.id);
  rmSync(local(lost!));
  writeFileSync(local(changed!), 'changed on disk');
  await view(page).getByRole('tab', { name: 'Audit' }).click();
  await view(page).getByRole('button', { name: 'Audit now' }).click();
  await expect(view(page).locator('.audit-summary')).toContainText('Not in sync: 2 differences.');
  const mend = view(page).getByRole('button', { name: 'Fetch the 2 missing or changed' });
  await expect(mend).toHaveAccessibleDescription(/^A baseline run: it compares every resource the Source lists with the mirror and fetches only what is missing or differs/);
  await expectAccessible(page, 'an audit report with copies to fetch again');
  await mend.focus();
  await page.keyboard.press('Enter');
  await expect(runEnd(page, /^Baseline completed/)).toBeVisible({ timeout: 60_000 });
  expect(readFileSync(local(changed!), 'utf8')).not.toBe('changed on disk');
  expect(readFileSync(local(lost!)).length).toBeGreaterThan(0);
  await view(page).getByRole('tab', { name: 'Audit' }).click();
  await view(page).getByRole('button', { name: 'Audit again' }).click();
  await expect(view(page).locator('.audit-summary')).toContainText(`In sync: ${suite.fixture.state.live().length} resources match the Source.`);
  await expect(view(page).getByRole('button', { name: /missing or changed$/ })).toHaveCount(0);
});

test('choosing the document still selected in the tree shows it again over a mirror view', async ({ page }) => {
  await openForm(page);
  await fillForm(page, join(suite.mirrors, 'reselect'));
  await view(page).getByRole('checkbox', { name: 'Start it now' }).uncheck();
  await view(page).getByRole('button', { name: 'Create mirror' }).click();
  const heading = view(page).getByRole('heading', { level: 2, name: /^Mirror reselect/ });
  await expect(heading).toBeVisible();
  const selected = page.getByRole('treeitem', { selected: true });
  await expect(selected).toHaveCount(1);
  const mirrorItem = page.getByRole('list', { name: 'Mirrors' }).getByRole('button', { name: /^reselect/ });

  // A click on its row.
  await selected.locator(':scope > .tree-row').click();
  await expect(heading).toHaveCount(0);
  await expect(detail(page).getByRole('button', { name: 'Mirror this…' })).toBeVisible();

  // Enter and Space on it.
  for (const key of ['Enter', ' ']) {
    await mirrorItem.click();
    await expect(heading).toBeVisible();
    await selected.focus();
    await page.keyboard.press(key);
    await expect(heading).toHaveCount(0);
    await expect(detail(page).getByRole('button', { name: 'Mirror this…' })).toBeVisible();
    await expect(selected).toBeFocused();
  }
});

test('choosing the document still selected in the tree shows it again over the Check report and the Live view', async ({ page }) => {
  await page.goto(suite.app.url);
  await addSource(page, suite.fixture.url + PATHS.dataset1.capabilityList);
  await expect(detail(page).getByRole('button', { name: 'Mirror this…' })).toBeVisible();
  const selected = page.getByRole('treeitem', { selected: true });
  await expect(selected).toHaveCount(1);
  const sidebar = page.getByRole('complementary', { name: 'Sources' });
  const checkReport = page.getByRole('main', { name: 'Check report' });
  const liveView = page.getByRole('main', { name: 'Live' });

  const views: [string, () => Promise<void>, typeof checkReport][] = [
    ['the Check report', () => sidebar.getByRole('button', { name: 'Check Source' }).click(), checkReport],
    ['the Live view', () => page.getByRole('button', { name: /^Live/ }).click(), liveView],
  ];
  for (const [name, open, shown] of views) {
    // A click on its row.
    await open();
    await expect(shown).toBeVisible();
    await expectAccessible(page, name);
    await selected.locator(':scope > .tree-row').click();
    await expect(shown, `${name} gives way to the document clicked`).toHaveCount(0);
    await expect(detail(page).getByRole('button', { name: 'Mirror this…' })).toBeVisible();
    // Enter and Space on it.
    for (const key of ['Enter', ' ']) {
      await open();
      await expect(shown).toBeVisible();
      await selected.focus();
      await page.keyboard.press(key);
      await expect(shown, `${name} gives way to the document chosen with ${key === ' ' ? 'Space' : key}`).toHaveCount(0);
      await expect(detail(page).getByRole('button', { name: 'Mirror this…' })).toBeVisible();
      await expect(selected).toBeFocused();
    }
  }
  await expectAccessible(page, 'the document shown again');
});

test('a mirror made from a Resource List says it mirrors that list, not its Capability List', async ({ page }) => {
  await openForm(page, PATHS.dataset1.resourceList);
  await expect(view(page).getByRole('heading', { level: 2, name: /^Mirror Resource List/ })).toBeVisible();
  await fillForm(page, join(suite.mirrors, 'one-list'));
  await view(page).getByRole('checkbox', { name: 'Start it now' }).uncheck();
  await view(page).getByRole('button', { name: 'Create mirror' }).click();
  await expect(view(page).getByRole('heading', { level: 2, name: /^Mirror one-list/ })).toBeVisible();
  const mirrors_ = view(page).locator('.mirror-facts div').filter({ has: page.locator('dt', { hasText: /^mirrors$/ }) }).locator('dd');
  await expect(mirrors_).toHaveText(`${suite.fixture.url}${PATHS.dataset1.resourceList} (this Resource List alone)`);
  await expect(mirrors_).toHaveAttribute('title', `In the Capability List ${suite.fixture.url}${PATHS.dataset1.capabilityList}`);
  await expectAccessible(page, 'a mirror of a Resource List alone');
  // Its audit, exported, names that list as what the mirror follows.
  await view(page).getByRole('tab', { name: 'Audit' }).click();
  await view(page).getByRole('button', { name: 'Audit now' }).click();
  await expect(view(page).locator('.audit-summary')).toBeVisible({ timeout: 30_000 });
  // Never synced: every listed resource is missing, and the export holds them all.
  await view(page).getByRole('button', { name: /^Export all [\d,]+ rows as JSON$/ }).click();
  const json = join(suite.mirrors, 'one-list-audit.json');
  await view(page).getByRole('textbox', { name: 'Write the JSON file to' }).fill(json);
  await page.keyboard.press('Enter');
  await expect(view(page).locator('.audit-export-status')).toContainText(` rows to ${json}.`);
  expect(JSON.parse(readFileSync(json, 'utf8'))).toMatchObject({ source: `${suite.fixture.url}${PATHS.dataset1.resourceList}` });
});

test('a reload in the middle of a run shows the same mirror, its run and tab again', async ({ page }) => {
  await openForm(page);
  await fillForm(page, join(suite.mirrors, `reloaded-${test.info().repeatEachIndex}`), 1);
  suite.fixture.setResourceDelay(300);
  await view(page).getByRole('button', { name: 'Create mirror' }).click();
  await expect.poll(async () => Number(await resourcesBar(page).getAttribute('aria-valuenow')), { timeout: 30_000 }).toBeGreaterThan(1);
  // Slowed to a crawl: the run is still going on after the reload.
  suite.fixture.setResourceDelay(3_000);
  await view(page).getByRole('tab', { name: /Failures/ }).click();
  await page.reload();
  await expect(view(page).getByRole('heading', { level: 2, name: /^Mirror reloaded/ })).toBeVisible();
  await expect(resourcesBar(page)).toBeVisible();
  await expect(view(page).getByRole('tab', { name: /Failures/ })).toHaveAttribute('aria-selected', 'true');
  await expectAccessible(page, 'a mirror view shown again after a reload mid-run');
  // The skip link names what the main pane shows: the mirror, not "the entries and details".
  const skip = page.getByRole('link', { name: /^Skip to / });
  await expect(skip).toHaveText('Skip to the mirror');
  await skip.focus();
  await expect(skip).toBeInViewport();
  await page.keyboard.press('Enter');
  await expect(view(page)).toBeFocused();
  suite.fixture.setResourceDelay(0);
  await expect(runEnd(page, 'Baseline completed')).toBeVisible({ timeout: 60_000 });
  // Another document chosen, the reload shows that document, not the mirror.
  await page.getByRole('treeitem', { selected: true }).locator(':scope > .tree-row').click();
  await expect(detail(page).getByRole('button', { name: 'Mirror this…' })).toBeVisible();
  await page.reload();
  await expect(detail(page).getByRole('button', { name: 'Mirror this…' })).toBeVisible();
  await expect(view(page).getByRole('heading', { level: 2, name: /^Mirror reloaded/ })).toHaveCount(0);
});

test('the deletion policy and the connections can be changed after the mirror is made, and the next run uses them', async ({ page }) => {
  const folder = join(suite.mirrors, `options-${test.info().repeatEachIndex}`);
  await openForm(page);
  await fillForm(page, folder, 4);
  await view(page).getByRole('button', { name: 'Create mirror' }).click();
  await expect(runEnd(page, 'Baseline completed')).toBeVisible({ timeout: 60_000 });
  const fact = (name: string) => view(page).locator('.mirror-facts div').filter({ has: page.locator('dt', { hasText: new RegExp(`^${name}$`) }) }).locator('dd');
  // As the policy's words below: no run lists what the Source deleted, an audit does (it said "listed in each run").
  await expect(fact('deletions')).toHaveText('kept (an audit lists them)');
  await expect(fact('syncs by itself')).toHaveText('no: only when you click Sync now (Options sets a schedule)');
  // The list says nothing of a schedule the mirror does not have.
  const item = page.getByRole('list', { name: 'Mirrors' }).getByRole('button', { name: /^options-/ });
  await expect(item).toContainText('Baseline completed');
  await expect(item.locator('.mirror-next')).toHaveCount(0);

  await view(page).getByRole('tab', { name: 'Options' }).click();
  const options = view(page).getByRole('form', { name: 'Options of this mirror' });
  await expect(options.getByRole('radio', { name: /^Keep the files/ })).toBeChecked();
  // It promises what the app does: a run's end counts what the Source deleted, the audit lists them (it once said "each
  // run lists" them, which none does).
  await expect(options.locator('label').filter({ hasText: /^Keep the files/ })).toHaveText(
    'Keep the files — Nothing is deleted; each run says how many the Source deleted, and an audit lists them.',
  );
  await expect(options.getByLabel('Connections')).toHaveValue('4');
  // A number main refuses: said in plain words, the field marked and described by it.
  await options.getByLabel('Connections').fill('0');
  await options.getByRole('button', { name: 'Save options' }).click();
  await expect(options.getByRole('alert')).toContainText('Not saved.');
  await expect(options.getByLabel('Connections')).toHaveAttribute('aria-invalid', 'true');
  await expect(options.getByLabel('Connections')).toHaveAccessibleDescription(/1 to 256/);
  await expectAccessible(page, 'the Options tab with an error');
  await options.getByLabel('Connections').fill('2');
  await options.getByRole('radio', { name: /^Delete them/ }).check();
  // A schedule, chosen from the keyboard: the mirror says when it syncs next (six hours after its baseline ended).
  await expect(options.getByLabel('Sync by itself')).toHaveAccessibleDescription(/counted from the end of the last sync/);
  await options.getByLabel('Sync by itself').selectOption({ label: 'Every 6 hours' });
  await options.getByRole('button', { name: 'Save options' }).click();
  await expect(options.getByRole('status')).toHaveText('Saved. The next run uses them.');
  await expect(fact('deletions')).toHaveText('deleted');
  await expect(fact('connections')).toHaveText('2');
  await expect(fact('syncs by itself')).toHaveText(/^every 6 hours; next at \d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2}:\d{2}$/);
  // The list says it too, in words relative to now, the exact time in its title; whole at 1024 px.
  await expect(item.locator('.mirror-next')).toHaveText('Next sync in 6 hours');
  await expect(item.locator('.mirror-next')).toHaveAttribute('title', /^Next scheduled sync: \d{1,2} [A-Z][a-z]{2} \d{4}, /);
  await page.setViewportSize({ width: 1024, height: 768 });
  await expect(item.locator('.mirror-next')).toBeVisible();
  expect(await item.locator('.mirror-next').evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
  await page.screenshot({ path: test.info().outputPath('mirror-list-1024.png') });
  await page.setViewportSize({ width: 1400, height: 900 });
  await expectAccessible(page, 'the Options tab, saved');
  // Every night at a time: the time field is there only for whole days, and the mirror says the time it keeps.
  await expect(options.getByLabel('Time of day')).toHaveCount(0);
  await options.getByLabel('Sync by itself').selectOption({ label: 'Every day' });
  await expect(options.getByLabel('Time of day')).toHaveAccessibleDescription(/^By this computer's clock/);
  await options.getByLabel('Time of day').focus();
  await options.getByLabel('Time of day').selectOption({ label: '02:00' });
  await options.getByRole('button', { name: 'Save options' }).click();
  await expect(options.getByRole('status')).toHaveText('Saved. The next run uses them.');
  await expect(fact('syncs by itself')).toHaveText(/^every day at 02:00; next at \d{1,2} [A-Z][a-z]{2} \d{4}, 02:00:00$/);
  await expectAccessible(page, 'the Options tab with a time of day');

  // The pause after refusals, from the keyboard: kept in the mirror's folder (as rsdesk keeps it), read back from there.
  const refusals = options.getByLabel('Pause the run when the Source refuses everything for (seconds)');
  await expect(refusals).toHaveValue('');
  await expect(refusals).toHaveAccessibleDescription(/Empty: 1,800 \(30 minutes\); at most 604,800 \(a week\)/);
  await refusals.focus();
  await page.keyboard.type('0');
  await page.keyboard.press('Enter');
  await expect(options.getByRole('alert')).toContainText('The pause after refusals must be a whole number of seconds from 1 to 604,800 (a week)');
  await expect(refusals).toHaveAttribute('aria-invalid', 'true');
  await expectAccessible(page, 'the Options tab with a refused pause after refusals');
  await refusals.fill('');
  await page.keyboard.type('900');
  await page.keyboard.press('Enter');
  await expect(options.getByRole('status')).toHaveText('Saved. The next run uses them.');
  await view(page).getByRole('tab', { name: 'Audit' }).click();
  await view(page).getByRole('tab', { name: 'Options' }).click();
  await expect(refusals).toHaveValue('900');
  expect(JSON.stringify(readFolder(folder)?.binding?.settings)).toContain('"refusalLimitMs":900000');

  // The Source deletes a resource: the next sync deletes its file, by the new policy.
  suite.fixture.state.change('delete', 1, 6);
  await view(page).getByRole('button', { name: 'Sync now' }).click();
  await expect(runEnd(page, /^Incremental/)).toHaveText('Incremental sync completed: 1 deleted.', { timeout: 60_000 });
});

test('a paused run says how far it came in plain words: one resource in the singular, none as none', async ({ page }) => {
  await openForm(page);
  await fillForm(page, join(suite.mirrors, `how-far-${test.info().repeatEachIndex}`), 1);
  suite.fixture.setResourceDelay(3_000);
  await view(page).getByRole('button', { name: 'Create mirror' }).click();
  await expect(view(page).getByRole('button', { name: 'Pause' })).toBeEnabled();
  await view(page).getByRole('button', { name: 'Pause' }).click();
  await expect(runEnd(page, 'Paused after')).toBeVisible({ timeout: 30_000 });
  suite.fixture.setResourceDelay(0);
  // How many it recorded depends on when Pause came: the mirror's answer is made to say 1, then 0.
  let recorded = 1;
  await page.route('**/api/invoke', async (route) => {
    if ((route.request().postDataJSON() as { command: string }).command !== 'mirrors.get') return route.continue();
    const response = await route.fetch();
    const body = (await response.json()) as { result: { lastRun: { created: number; updated: number; unchanged: number } } };
    Object.assign(body.result.lastRun, { created: recorded, updated: 0, unchanged: 0 });
    await route.fulfill({ response, json: body });
  });
  const alert = view(page).getByRole('status').filter({ hasText: 'The last run was paused' });
  await page.reload();
  await expect(alert).toContainText('The last run was paused after 1 resource. Resume takes it up');
  recorded = 0;
  await page.reload();
  await expect(alert).toContainText('The last run was paused before any resource was recorded. Resume takes it up');
  await expectAccessible(page, 'a paused mirror that recorded nothing yet');
});
