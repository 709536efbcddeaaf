// The answer-after-event race in the Sources and Live views (the mirror views' is in mirror.ui.spec.ts): a read's
// answer, made before a change, is held (not delayed by a time) until the page has taken the change from its event,
// then let go. The page must keep what the event said, not the older answer.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { startFixtureSource, type FixtureSource } from './fixture-source/index.ts';
import { PATHS } from './fixture-source/paths.ts';
import { startAppServer, type AppServer } from './app-server.ts';
import { expectAccessible } from './ui-helpers.ts';

let fixture: FixtureSource;
let app: AppServer;
let dataDir: string;
let root: string;

test.describe.configure({ mode: 'serial' });

test.beforeAll(async ({}, testInfo) => {
  root = join(testInfo.project.testDir, '..');
  dataDir = mkdtempSync(join(tmpdir(), 'rsdesk-held-ui-'));
  fixture = await startFixtureSource({ resources: 4, bigListEntries: 100 });
  app = await startAppServer(root, dataDir);
});

test.afterAll(async () => {
  await app?.stop();
  await fixture?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A command run by someone else than the page (another window, `rsdesk`): straight to the app server. */
async function invokeElsewhere(command: string, args: unknown): Promise<unknown> {
  const token = new URL(app.url).hash.replace('#token=', '');
  const res = await fetch(`${app.origin}/api/invoke`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: JSON.stringify({ command, args }),
  });
  const envelope = (await res.json()) as { ok: boolean; result?: unknown; error?: { message: string } };
  if (!envelope.ok) throw new Error(`${command}: ${envelope.error?.message}`);
  return envelope.result;
}

/**
 * Holds the page's next answer to `command` until `release()`; `delivered` settles once the page has read it and
 * every task queued by it (react-query's notification, React's render) has run.
 */
async function holdNext(page: Page, command: string) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let answered!: () => void;
  const answer = new Promise<void>((resolve) => (answered = resolve));
  let holding = true;
  await page.route('**/api/invoke', async (route) => {
    const body = route.request().postDataJSON() as { command: string };
    if (!holding || body.command !== command) return route.continue();
    holding = false;
    const response = await route.fetch();
    answered();
    await released;
    await route.fulfill({ response });
  });
  return {
    /** The held answer is made (the engine answered): anything after this is newer than it. */
    answer,
    release,
    async delivered(): Promise<void> {
      await page.waitForEvent('requestfinished', (r) => r.url().endsWith('/api/invoke') && (r.postDataJSON() as { command: string }).command === command);
      // The answer's body is parsed, handed to react-query, which notifies on a later task, and React renders on
      // another: a few rounds of tasks and a frame, in order after those, not a length of time.
      await page.evaluate(async () => {
        for (let i = 0; i < 5; i++) {
          await new Promise((resolve) => setTimeout(resolve, 0));
          await new Promise((resolve) => requestAnimationFrame(resolve));
        }
      });
    },
  };
}

test('the Sources list keeps a Source added while its first read was on its way', async ({ page }) => {
  const held = await holdNext(page, 'sources.list');
  await page.goto(app.url);
  await held.answer;
  // Added elsewhere after the page's read was answered (no Sources then): the page hears of it by its event.
  await invokeElsewhere('sources.add', { url: `${fixture.url}${PATHS.dataset1.capabilityList}`, runId: 'held-answers' });
  const list = page.getByRole('list', { name: 'Saved Sources' });
  await expect(list).toContainText('127.0.0.1');
  held.release();
  await held.delivered();
  await expect(list).toContainText('127.0.0.1');
  await expect(page.locator('.source')).toHaveCount(1);
  await expectAccessible(page, 'the Sources list after a held answer');
});

test('the Live view shows a subscription made while its first read was on its way', async ({ page }) => {
  await page.goto(app.url);
  await expect(page.getByRole('button', { name: /^Live/ })).toBeVisible();
  const held = await holdNext(page, 'live.subscriptions');
  await page.getByRole('button', { name: /^Live/ }).click();
  const live = page.getByRole('main', { name: 'Live' });
  await held.answer;
  // Subscribed elsewhere after the page's read was answered (no subscriptions then); the hub confirms it and the
  // page hears of it in the feed.
  await invokeElsewhere('live.subscribe', {
    topic: `${fixture.url}${PATHS.dataset1.notifications}`,
    hub: `${fixture.url}${PATHS.hub}`,
    folder: join(dataDir, 'mirror'),
  });
  await fixture.hub.settled();
  const feed = live.getByRole('region', { name: 'Live feed' });
  await expect(feed).toContainText('Subscribed to ');
  held.release();
  await held.delivered();
  const subs = live.getByRole('region', { name: 'Subscriptions' });
  await expect(subs.getByRole('row').nth(1)).toContainText('active');
  await expectAccessible(page, 'the Live view after a held answer');
});
