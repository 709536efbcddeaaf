// The page's event stream breaks in the middle of a run (a proxy in front of `rsdesk serve` cuts it and refuses it
// for a while): the run ends on the server while the page cannot hear of it, and once the stream is back the page
// gets the events it missed and shows the run's end.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { PATHS, startFixtureSource, type FixtureSource } from './fixture-source/index.ts';
import { startAppServer, type AppServer } from './app-server.ts';
import { startStreamCutter, type StreamCutter } from './stream-cutter.ts';
import { addSource, detail, expectAccessible, fillMirrorForm, resourcesBar } from './ui-helpers.ts';

let fixture: FixtureSource;
let app: AppServer;
let cutter: StreamCutter;
let dataDir: string;

const RESOURCES = 12;

test.beforeAll(async ({}, testInfo) => {
  const root = join(testInfo.project.testDir, '..');
  dataDir = mkdtempSync(join(tmpdir(), 'rsdesk-stream-ui-'));
  fixture = await startFixtureSource({ resources: RESOURCES, changeListSize: 5 });
  app = await startAppServer(root, dataDir);
  cutter = await startStreamCutter(app.origin);
});

test.afterAll(async () => {
  await cutter?.close();
  await app?.stop();
  await fixture?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const view = (page: Page) => page.getByRole('main');

/** A command straight to the app server, not through the page (nor the cutter). */
async function invoke(command: string, args: unknown): Promise<{ status: string }> {
  const token = new URL(app.url).hash.replace('#token=', '');
  const res = await fetch(`${app.origin}/api/invoke`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: JSON.stringify({ command, args }),
  });
  const envelope = (await res.json()) as { ok: boolean; result: { status: string } };
  return envelope.result;
}

test('a run that ends while the event stream is cut still shows its end once the stream is back', async ({ page }) => {
  const folder = join(dataDir, `mirror-${test.info().repeatEachIndex}`);
  // The page talks to the app server through the cutter.
  await page.goto(`${cutter.origin}/${new URL(app.url).hash}`);
  await addSource(page, fixture.url + PATHS.dataset1.capabilityList);
  await expect(detail(page).getByRole('heading', { name: /Capability List/ })).toBeVisible();
  await detail(page).getByRole('button', { name: 'Mirror this…' }).click();
  await view(page).getByLabel('Folder', { exact: true }).fill(folder);
  await view(page).getByLabel('Connections').fill('1');

  // The Source crawls while the run is seen running.
  fixture.setResourceDelay(5_000);
  await view(page).getByRole('button', { name: 'Create mirror' }).click();
  const badge = view(page).locator('.mirror-badge');
  await expect(badge).toHaveText('Running');
  await expect(view(page).getByRole('progressbar', { name: 'Resources' })).toBeVisible();

  // The stream breaks and stays down; the run ends meanwhile.
  cutter.down = true;
  cutter.cut();
  const opened = cutter.streamsOpened;
  fixture.setResourceDelay(0);
  await expect.poll(async () => (await invoke('mirrors.get', { path: folder })).status, { timeout: 60_000 }).not.toBe('running');
  // The page heard nothing of it: it does not claim the run goes on, it says it cannot know.
  await expect(badge).toHaveText('State unknown');
  expect(cutter.streamsOpen).toBe(0);

  // Back up: the page's EventSource comes back by itself, gets what it missed, and shows the end.
  cutter.down = false;
  await expect(view(page).getByRole('status').filter({ hasText: 'Baseline completed' })).toContainText(`Baseline completed: ${RESOURCES} created`);
  await expect(badge).toHaveText('Ready');
  expect(cutter.streamsOpened).toBeGreaterThan(opened);
  await expectAccessible(page, 'a mirror whose run ended while the event stream was cut');
});

test('the app server out of reach during a run: the run view says the state is unknown, and recovers when it is back', async ({ page }) => {
  const folder = join(dataDir, `gone-${test.info().repeatEachIndex}`);
  await page.goto(`${cutter.origin}/${new URL(app.url).hash}`);
  await addSource(page, fixture.url + PATHS.dataset1.capabilityList);
  await detail(page).getByRole('button', { name: 'Mirror this…' }).click();
  await fillMirrorForm(page, folder, 1);
  fixture.setResourceDelay(4_000);
  await view(page).getByRole('button', { name: 'Create mirror' }).click();
  const badge = view(page).locator('.mirror-badge');
  await expect(badge).toHaveText('Running');
  await expect(resourcesBar(page)).toBeVisible();
  const sidebarStatus = page.getByRole('list', { name: 'Mirrors' }).getByRole('button', { name: /^gone-/ }).locator('.mirror-status');

  // The app server goes away: its event stream breaks and stays down, and commands are refused.
  await page.route('**/api/invoke', (route) => route.abort('connectionrefused'));
  cutter.down = true;
  cutter.cut();
  const run = view(page).getByRole('region', { name: 'Current run' });
  const alert = run.getByRole('alert');
  await expect(alert).toContainText('The app cannot be reached');
  await expect(alert).toContainText('the state of this run is unknown');
  await expect(badge).toHaveText('State unknown');
  await expect(sidebarStatus).toHaveText('State unknown');
  await expect(resourcesBar(page)).toHaveCount(0);
  await expect(view(page).getByRole('button', { name: 'Pause' })).toBeDisabled();
  await expectAccessible(page, 'a run whose app server is out of reach');

  // Back, the run still going: the view shows it running again, then its end.
  await page.unroute('**/api/invoke');
  cutter.down = false;
  await expect(alert).toHaveCount(0);
  await expect(badge).toHaveText('Running');
  await expect(sidebarStatus).toContainText('Running');
  await expect(view(page).getByRole('button', { name: 'Pause' })).toBeEnabled();
  fixture.setResourceDelay(0);
  await expect(view(page).getByRole('status').filter({ hasText: 'Baseline completed' })).toBeVisible({ timeout: 60_000 });
  await expect(badge).toHaveText('Ready');
  await expectAccessible(page, 'a run whose app server was reached again');
});
