// What the live side says beyond each change, in Chromium over `rsdesk serve` and the fixture Source's WebSub hub: a
// short lease noted whole in the feed and said politely to a screen reader; a notification of more changes than its
// event lists says how many more; a failed resource holding the mirror's checkpoint is said in the mirror view,
// with the way to its failures, until a retry mends it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { startFixtureSource, type FixtureSource } from './fixture-source/index.ts';
import { startAppServer, type AppServer } from './app-server.ts';
import { addSource, expectAccessible } from './ui-helpers.ts';

let fixture: FixtureSource;
let app: AppServer;
let dataDir: string;
let screenshots: string;

test.describe.configure({ mode: 'serial' });

test.beforeAll(async ({}, testInfo) => {
  const root = join(testInfo.project.testDir, '..');
  screenshots = join(root, 'resources', 'screenshots');
  dataDir = mkdtempSync(join(tmpdir(), 'rsdesk-live-notes-'));
  // 12 s: renewed every 10 s (the least), so the lease holds; short enough for the feed to note it.
  fixture = await startFixtureSource({ resources: 20, hub: { maxLeaseSeconds: 12, defaultLeaseSeconds: 12 } });
  app = await startAppServer(root, dataDir);
});

test.afterAll(async () => {
  await app?.stop();
  await fixture?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Whether the element shows all of its text (nothing cut off by its box or its row). */
function shownWhole(page: Page, text: string): Promise<boolean> {
  return page.evaluate((text) => {
    const el = [...document.querySelectorAll<HTMLElement>('.live-text')].find((e) => e.textContent?.includes(text));
    if (!el) return false;
    const row = el.closest('li')!.getBoundingClientRect();
    const box = el.getBoundingClientRect();
    // Nor laid over by the row after it.
    const next = el.closest('li')!.nextElementSibling?.getBoundingClientRect();
    const clear = next === undefined || next.top >= row.bottom - 1;
    return el.scrollWidth <= el.clientWidth + 1 && el.scrollHeight <= el.clientHeight + 1 && box.bottom <= row.bottom + 1 && box.top >= row.top - 1 && clear;
  }, text);
}

test('notes in the feed are whole and announced; a held checkpoint is said, and lets go once retried', async ({ page }) => {
  test.setTimeout(120_000);
  await page.goto(app.url);
  await addSource(page, `${fixture.url}/`);
  await expect(page.getByRole('button', { name: /Added 127\.0\.0\.1/ })).toBeVisible();
  const list = page.getByRole('treeitem', { name: /Capability List/ }).first();
  const channel = page.getByRole('treeitem', { name: 'Change Notification channel' });
  await channel.click();
  const detail = page.getByRole('main', { name: 'Change Notification channel' });

  // A mirror with its baseline, fed by the channel.
  await detail.getByRole('button', { name: 'Create a mirror of this Capability List…' }).click();
  const folder = join(dataDir, 'held');
  await page.getByRole('main', { name: 'New mirror' }).getByLabel('Folder', { exact: true }).fill(folder);
  await page.getByRole('main', { name: 'New mirror' }).getByRole('button', { name: 'Create mirror' }).click();
  const mirror = page.getByRole('main');
  await expect(mirror.getByRole('status').filter({ hasText: 'Baseline completed' })).toBeVisible({ timeout: 60_000 });
  await list.click();
  await channel.click();
  await expect(detail.getByRole('radio', { name: /^held — mirrors this Capability List/ })).toBeChecked();
  // The hub confirms in a few seconds: by then the Live view is open, and its feed hears the note as it comes.
  fixture.hub.faults = { verifyDelayMs: 3_000 };
  await detail.getByRole('button', { name: 'Subscribe' }).click();
  await expect(detail.getByRole('status')).toContainText('Asked the hub to subscribe');
  await page.getByRole('button', { name: /^Live/ }).click();
  const live = page.getByRole('main', { name: 'Live' });
  await expect(live.getByRole('region', { name: 'Subscriptions' }).getByRole('row').nth(1)).toContainText('active', { timeout: 15_000 });
  fixture.hub.faults = {};
  await fixture.hub.settled();

  // The short lease: one note, read whole, and said to a screen reader politely, once.
  const feed = live.getByRole('region', { name: 'Live feed' });
  const lease = 'granted a lease of 12 seconds (WebSub recommends at least 300)';
  const note = feed.getByRole('listitem').filter({ hasText: lease });
  await expect(note).toHaveCount(1);
  // A note, not an error: nothing failed.
  await expect(note.locator('.live-marker')).toHaveText('Note');
  await expect(note).not.toContainText('Error');
  await expect(note).toContainText('notifications the hub drops while the lease has run out leave a gap, filled from the Change List.');
  expect(await shownWhole(page, lease)).toBe(true);
  // The one live region of the feed: the count of items, which changes with every batch, is not read out.
  await expect(feed.locator('[aria-live]:not([aria-live="off"]), [role=status], [role=log], [role=alert]')).toHaveCount(1);
  const announcer = feed.locator('[aria-live="polite"]');
  await expect(announcer).toHaveAttribute('aria-atomic', 'true');
  await expect(announcer).toContainText(lease, { timeout: 15_000 });

  // 600 changes in one notification: the feed lists 500 and says how many more, exactly.
  fixture.change('create', 600);
  await feed.getByLabel('Show').selectOption('other');
  const more = feed.getByRole('listitem').filter({ hasText: '…and 100 more changes in this notification' });
  await expect(more).toContainText('(600 in all; the feed lists the first 500)', { timeout: 30_000 });
  expect(await shownWhole(page, '…and 100 more changes')).toBe(true);
  // Every change is counted per minute, not only those listed.
  await expect(feed.getByRole('img', { name: /Changes per minute\. 600 changes in the last 30 minutes/ })).toBeVisible();
  // Filtered, another row takes each place: the lease note is still whole and nothing lies over it.
  expect(await shownWhole(page, lease)).toBe(true);
  // The changes themselves are not said one by one.
  await expect(announcer).not.toContainText('created');
  await page.screenshot({ path: join(screenshots, 'live-notes.png') });
  await expectAccessible(page, 'the Live feed with its notes (light)');
  await page.emulateMedia({ colorScheme: 'dark' });
  await expectAccessible(page, 'the Live feed with its notes (dark)');
  await page.emulateMedia({ colorScheme: 'light' });
  await feed.getByLabel('Show').selectOption('all');

  // A resource the Source refuses: its change fails, and the checkpoint is held at it.
  const id = 3;
  fixture.setBroken(fixture.state.pathOf(id), { status: 403 });
  const [broken] = fixture.change('update', 1, id);
  await expect(feed.getByRole('listitem').filter({ hasText: broken.loc })).toContainText('failed', { timeout: 30_000 });

  await page.getByRole('list', { name: 'Mirrors' }).getByText('held').click();
  const hold = mirror.getByRole('status').filter({ hasText: 'Live notifications have kept this mirror' });
  await expect(hold).toContainText(/checkpoint at .+ since .+: 1 resource they changed could not be fetched \(run #\d+\)/);
  await expect(hold).toContainText('Retrying it lets the checkpoint move on');
  await expect(mirror.locator('dd').filter({ hasText: 'held by live failures' })).toBeVisible();
  await page.screenshot({ path: join(screenshots, 'mirror-live-hold.png') });
  await expectAccessible(page, 'a mirror held by live failures (light)');
  await page.emulateMedia({ colorScheme: 'dark' });
  await expectAccessible(page, 'a mirror held by live failures (dark)');
  await page.emulateMedia({ colorScheme: 'light' });

  // Its way leads to the failures of that run; the note's own Retry all failed (every failure still standing, of
  // whatever run) mends it: the note goes.
  await hold.getByRole('button', { name: /^Show the failures/ }).click();
  await expect(mirror.getByRole('tab', { name: /Failures/ })).toHaveAttribute('aria-selected', 'true');
  await expect(mirror.getByRole('table', { name: /Failures of run/ })).toContainText(broken.loc);
  await expect(mirror.locator('.failures-retry-all')).toBeFocused();
  fixture.setBroken(fixture.state.pathOf(id), null);
  await hold.getByRole('button', { name: 'Retry all failed' }).click();
  await expect(mirror.getByRole('status').filter({ hasText: /^Retry of 1 resource of run \d+ completed/ })).toBeVisible({ timeout: 30_000 });
  await expect(hold).toHaveCount(0, { timeout: 30_000 });
});
