// Live change notifications from the UI, in Chromium over `rsdesk serve` and the fixture Source's WebSub hub:
// subscribe from a channel in the tree, see the hub's notifications arrive in the feed, the mirror updated on disk,
// a ping in the feed, pause, filters, unsubscribe; axe on the views in light and dark.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { startFixtureSource, type FixtureSource } from './fixture-source/index.ts';
import { startAppServer, type AppServer } from './app-server.ts';
import { addSource, expectAccessible } from './ui-helpers.ts';

let fixture: FixtureSource;
let app: AppServer;
let dataDir: string;
let mirrorDir: string;
let root: string;
let screenshots: string;

test.describe.configure({ mode: 'serial' });

test.beforeAll(async ({}, testInfo) => {
  root = join(testInfo.project.testDir, '..');
  screenshots = join(root, 'resources', 'screenshots');
  mkdirSync(screenshots, { recursive: true });
  dataDir = mkdtempSync(join(tmpdir(), 'rsdesk-live-ui-'));
  mirrorDir = join(dataDir, 'mirror');
  fixture = await startFixtureSource({ resources: 20, bigListEntries: 100 });
  app = await startAppServer(root, dataDir);
});

test.afterAll(async () => {
  await app?.stop();
  await fixture?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function mirrored(id: number): Buffer | null {
  const host = new URL(fixture.url).host.replace(':', '_');
  try {
    return readFileSync(join(mirrorDir, host, ...fixture.state.pathOf(id).split('/').filter(Boolean)));
  } catch {
    return null;
  }
}

function main(page: Page) {
  return page.getByRole('main', { name: 'Live' });
}

test('subscribes from the tree, sees notifications arrive and the mirror updated', async ({ page }) => {
  await page.goto(app.url);
  await addSource(page, `${fixture.url}/`);
  await expect(page.getByRole('button', { name: /Added 127\.0\.0\.1/ })).toBeVisible();
  const channel = page.getByRole('treeitem', { name: 'Change Notification channel' });
  await channel.click();

  const detail = (p: Page) => p.getByRole('main', { name: 'Change Notification channel' });
  // The channel's detail offers Subscribe, with a folder for the mirror it feeds.
  const folder = detail(page).getByLabel('Mirror folder the notifications are applied to');
  await expect(folder).not.toHaveValue('');
  await expectAccessible(page, 'a channel with its Subscribe form (light)');
  await page.emulateMedia({ colorScheme: 'dark' });
  await expectAccessible(page, 'a channel with its Subscribe form (dark)');
  await page.emulateMedia({ colorScheme: 'light' });
  await folder.fill(mirrorDir);
  await detail(page).getByRole('button', { name: 'Subscribe' }).focus();
  await page.keyboard.press('Enter');
  await expect(detail(page).getByRole('status')).toContainText('Asked the hub to subscribe');
  await expect(detail(page)).toContainText(/Subscribed: feeds .* \(active\)/);
  await fixture.hub.settled();

  // Live: the subscription, active, with its lease counting down.
  await page.getByRole('button', { name: /^Live/ }).click();
  const subs = main(page).getByRole('region', { name: 'Subscriptions' });
  await expect(subs.getByRole('row').nth(1)).toContainText('active');
  await expect(subs.getByRole('row').nth(1)).toContainText(/renews before it ends in \d/);
  await expect(subs).toContainText(fixture.url);

  // The Source changes; its hub delivers; the feed shows each change and, once applied, says so.
  const [updated] = fixture.change('update');
  const created = fixture.change('create', 2);
  const feed = main(page).getByRole('region', { name: 'Live feed' });
  const rows = feed.getByRole('listitem');
  await expect(rows.filter({ hasText: updated.loc })).toContainText('applied (updated)');
  for (const c of created) await expect(rows.filter({ hasText: c.loc })).toContainText('applied (created)');
  // Newest first: the last created comes before the update.
  const texts = await rows.allTextContents();
  expect(texts.findIndex((t) => t.includes(created[1].loc))).toBeLessThan(texts.findIndex((t) => t.includes(updated.loc)));
  // The mirror on disk holds what the Source holds.
  const source = (id: number) => {
    const r = fixture.state.resources.get(id)!;
    return fixture.state.representation(r.id, r.version).body;
  };
  expect(mirrored(updated.id)?.equals(source(updated.id))).toBe(true);
  for (const c of created) expect(mirrored(c.id)?.equals(source(c.id))).toBe(true);
  await expect(feed.getByRole('img', { name: /Changes per minute\. [3-9] changes in the last 30 minutes/ })).toBeVisible();
  await expect(subs.getByRole('row').nth(1)).not.toContainText('none yet');

  // A ping to the same callback server shows in the feed.
  const status = await page.evaluate(() => document.querySelector('.live-header p')?.textContent ?? '');
  const address = /listens on (http:\/\/127\.0\.0\.1:\d+)/.exec(status)![1];
  const ping = await fetch(`${address}/ping?site_name=Fixture&site_uri=${encodeURIComponent(fixture.url + '/')}`);
  expect(ping.status).toBe(200);
  await expect(rows.filter({ hasText: 'Ping (RSS Ping 1.0) from Fixture' })).toBeVisible();

  await page.screenshot({ path: join(screenshots, 'live.png') });
  await expectAccessible(page, 'the Live view (light)');
  await page.emulateMedia({ colorScheme: 'dark' });
  await expectAccessible(page, 'the Live view (dark)');
  await page.emulateMedia({ colorScheme: 'light' });

  // Settings: the callback server's address, and whether hubs can reach it.
  await page.getByRole('button', { name: 'Settings' }).click();
  const dialog = page.getByRole('dialog', { name: 'Settings' });
  const server = dialog.getByRole('form', { name: 'Callback server (live notifications)' });
  await expect(server).toContainText(`Listening on ${address}`);
  await expect(server.getByLabel('Public callback URL')).toHaveValue('');
  await server.getByRole('button', { name: 'Test reachability' }).click();
  await expect(server.getByRole('status')).toHaveText(`✓ Reachable: ${address} leads to this callback server.`);
  await page.screenshot({ path: join(screenshots, 'live-settings.png') });
  await expectAccessible(page, 'Settings with the callback server (light)');
  await page.emulateMedia({ colorScheme: 'dark' });
  await expectAccessible(page, 'Settings with the callback server (dark)');
  await page.emulateMedia({ colorScheme: 'light' });
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();

  // Filters: only created changes.
  await feed.getByLabel('Show').selectOption('created');
  await expect(rows.filter({ hasText: updated.loc })).toHaveCount(0);
  await expect(rows.filter({ hasText: created[0].loc })).toHaveCount(1);
  await feed.getByLabel('Show').selectOption('all');

  // Failed changes and errors: a change whose resource answers 404 is found among the others, with why.
  fixture.setBroken(fixture.state.pathOf(created[0].id), { status: 404 });
  const [gone] = fixture.change('update', 1, created[0].id);
  await expect(rows.filter({ hasText: gone.loc }).filter({ hasText: 'failed' })).toContainText('404');
  await feed.getByLabel('Show').selectOption('failed');
  await expect(rows.filter({ hasText: gone.loc })).toHaveCount(1);
  await expect(rows.filter({ hasText: updated.loc })).toHaveCount(0);
  await expect(rows.filter({ hasText: 'applied (' })).toHaveCount(0);
  await feed.getByLabel('Show').selectOption('all');
  fixture.setBroken(fixture.state.pathOf(created[0].id), null);

  // Pause holds what arrives; Resume shows it.
  await feed.getByRole('button', { name: 'Pause' }).click();
  const [later] = fixture.change('create');
  await expect(feed.locator('.live-count')).toContainText(/Paused: [1-9]\d* new events? waiting/);
  await expect(rows.filter({ hasText: later.loc })).toHaveCount(0);
  await feed.getByRole('button', { name: 'Resume' }).click();
  await expect(rows.filter({ hasText: later.loc }).first()).toBeVisible();

  // Unsubscribe: the hub is asked, and the subscription leaves the list.
  // Its button goes away with the row: focus goes to the view's heading (it was left on <body>).
  await subs.getByRole('button', { name: /^Unsubscribe from/ }).focus();
  await page.keyboard.press('Enter');
  await expect(subs).toContainText('No subscriptions yet');
  await expect(rows.filter({ hasText: 'Unsubscribed from' })).toBeVisible();
  await expect(main(page).getByRole('heading', { level: 2, name: 'Live' })).toBeFocused();

  // Clear empties the feed and keeps the focus (a disabled Clear dropped it to <body>).
  const clear = feed.getByRole('button', { name: 'Clear' });
  await clear.focus();
  await page.keyboard.press('Enter');
  await expect(rows).toHaveCount(0);
  await expect(clear).toBeFocused();
  await expect(clear).toHaveAttribute('aria-disabled', 'true');
  await expectAccessible(page, 'the Live view with an empty feed');
});

test('offers the mirrors of the channel\'s Capability List, makes one from the form, and feeds the one chosen', async ({ page }) => {
  await page.goto(app.url);
  // A new page remembers nothing: down the tree to the channel with the keyboard.
  const sd = page.getByRole('treeitem', { name: /Source Description/ });
  await sd.focus();
  await page.keyboard.press('ArrowRight');
  const list = page.getByRole('treeitem', { name: /Capability List/ }).first();
  await expect(list).toBeVisible();
  await page.keyboard.press('ArrowRight');
  await expect(list).toBeFocused();
  await page.keyboard.press('ArrowRight');
  const channel = page.getByRole('treeitem', { name: 'Change Notification channel' });
  await channel.click();
  const detail = page.getByRole('main', { name: 'Change Notification channel' });
  // No mirror yet: a folder, and the way to make a mirror with all its options.
  await expect(detail.getByRole('radio', { name: 'A folder' })).toBeChecked();
  await detail.getByRole('button', { name: 'Create a mirror of this Capability List…' }).click();
  const form = page.getByRole('main', { name: 'New mirror' });
  await expect(form.getByRole('heading', { level: 2, name: /^Mirror Capability List of 127\.0\.0\.1/ })).toBeVisible();
  const chosenDir = join(dataDir, 'chosen');
  await form.getByLabel('Folder', { exact: true }).fill(chosenDir);
  await form.getByRole('checkbox', { name: 'Start it now' }).uncheck();
  await form.getByRole('button', { name: 'Create mirror' }).click();
  await expect(page.getByRole('list', { name: 'Mirrors' })).toContainText('chosen');

  // Back at the channel: the new mirror is offered first and chosen; another folder stays possible.
  await list.click();
  await channel.click();
  const mine = detail.getByRole('radio', { name: /^chosen — mirrors this Capability List/ });
  await expect(mine).toBeChecked();
  await expect(detail.getByLabel('Mirror folder the notifications are applied to')).toHaveCount(0);
  await page.screenshot({ path: join(screenshots, 'live-subscribe.png') });
  await expectAccessible(page, 'the Subscribe form with a mirror to choose (light)');
  await page.emulateMedia({ colorScheme: 'dark' });
  await expectAccessible(page, 'the Subscribe form with a mirror to choose (dark)');
  await page.emulateMedia({ colorScheme: 'light' });

  // The keyboard alone: Down to "Another folder" shows the folder field, Up comes back to the mirror.
  await mine.focus();
  await page.keyboard.press('ArrowDown');
  await expect(detail.getByRole('radio', { name: 'Another folder' })).toBeChecked();
  await expect(detail.getByLabel('Mirror folder the notifications are applied to')).toBeVisible();
  await page.keyboard.press('ArrowUp');
  await expect(mine).toBeChecked();
  await expect(detail.getByLabel('Mirror folder the notifications are applied to')).toHaveCount(0);
  await page.keyboard.press('Tab');
  await expect(detail.getByRole('button', { name: 'Subscribe' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(detail.getByRole('status')).toHaveText(`Asked the hub to subscribe ${chosenDir}; it confirms in a moment. Open Live`);
  await expect(detail).toContainText(`Subscribed: feeds ${chosenDir} (active)`);
  // Subscribe was disabled while the hub was asked, which dropped focus to <body>.
  await expect(detail.getByRole('button', { name: 'Subscribe' })).toBeFocused();
  // Open Live goes away with the channel's pane: focus goes to the Live view's heading (it was left on <body>).
  await detail.getByRole('status').getByRole('button', { name: 'Open Live' }).focus();
  await page.keyboard.press('Enter');
  await expect(main(page).getByRole('heading', { level: 2, name: 'Live' })).toBeFocused();
  await fixture.hub.settled();

  // A change of the Source lands in the chosen mirror.
  const [changed] = fixture.change('update');
  const host = new URL(fixture.url).host.replace(':', '_');
  const file = join(chosenDir, host, ...fixture.state.pathOf(changed.id).split('/').filter(Boolean));
  const r = fixture.state.resources.get(changed.id)!;
  await expect.poll(() => {
    try {
      return readFileSync(file).equals(fixture.state.representation(r.id, r.version).body);
    } catch {
      return false;
    }
  }, { timeout: 20_000 }).toBe(true);
});
