// Mirroring from the UI, in Chromium over `rsdesk serve` and a slow fixture Source: "Mirror this…" on a Capability
// List, the form (a path field in the browser), a baseline whose progress bar is seen mid-run, the history, an audit
// in sync and one with a difference (filter, export), pause and resume, cancel, and axe on every view.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { MirrorState, stateDirOf, type NeedsSync } from '../src-main/engine/mirror/state.ts';
import { PATHS } from './fixture-source/index.ts';
import { mirrorSuite } from './mirror-suite.ts';
import { expectAccessible, fillMirrorForm, mainView, openMirrorForm, resourcesBar, runEndDetails, runEndSentence } from './ui-helpers.ts';

const RESOURCES = 60;

// Every resource takes a while to answer: the run's progress is really seen mid-run.
const suite = mirrorSuite('mirror-ui', { resources: RESOURCES, changeListSize: 20, resourceDelayMs: 300 });

test.describe.configure({ mode: 'serial' });

let screenshots: string;

test.beforeAll(() => {
  screenshots = join(suite.root, 'resources', 'screenshots');
  mkdirSync(screenshots, { recursive: true });
});

const view = mainView;

async function accessible(page: Page, what: string): Promise<void> {
  await expectAccessible(page, `${what} (light)`);
  await page.emulateMedia({ colorScheme: 'dark' });
  await expectAccessible(page, `${what} (dark)`);
  await page.emulateMedia({ colorScheme: 'light' });
}

/** Opens the dataset1 Capability List's new-mirror form (adding its Source) and fills it for `folder`. */
async function openForm(page: Page, folder: string, concurrency: number): Promise<void> {
  await openMirrorForm(page, suite.app.url, suite.fixture.url + PATHS.dataset1.capabilityList);
  await expect(view(page).getByRole('heading', { level: 2, name: /^Mirror Capability List of 127\.0\.0\.1/ })).toBeVisible();
  await fillMirrorForm(page, folder, concurrency);
}

test('creates a mirror from the tree, runs a baseline with a visible progress bar, audits it in sync', async ({ page }) => {
  const folder = join(suite.mirrors, 'dataset1');
  await openForm(page, folder, 2);
  await expect(page.locator('h1')).toHaveCount(1);
  await view(page).getByRole('radio', { name: /Move them to quarantine/ }).check();
  await accessible(page, 'the new-mirror form');

  await view(page).getByRole('button', { name: 'Create mirror' }).click();
  await expect(view(page).getByRole('heading', { level: 2, name: /Mirror dataset1/ })).toBeVisible();
  // Mid-run: the bar has values, some done and not all.
  const bar = resourcesBar(page);
  await expect(bar).toBeVisible();
  await expect.poll(async () => Number(await bar.getAttribute('aria-valuenow')), { timeout: 30_000 }).toBeGreaterThan(4);
  // The Source slows down to a crawl while the running view is looked at, then speeds up to let the run finish.
  suite.fixture.setResourceDelay(5_000);
  // The list is read ahead of the downloads: its total is known while they go on.
  const now = Number(await bar.getAttribute('aria-valuenow'));
  expect(now).toBeLessThan(RESOURCES);
  expect(Number(await bar.getAttribute('aria-valuemax'))).toBe(RESOURCES);
  await expect(bar).toHaveAttribute('aria-valuetext', new RegExp(`^\\d+ of ${RESOURCES} resources \\(\\d+ %\\)$`));
  // The mirror's size grows with the run.
  const size = view(page).locator('.mirror-facts div').filter({ has: page.locator('dt', { hasText: /^resources$/ }) }).locator('dd');
  expect(Number((await size.textContent())!.replace(/,/g, ''))).toBeGreaterThan(0);
  await expect(view(page).getByRole('progressbar', { name: 'Bytes' })).toBeVisible();
  await expect(page.getByRole('list', { name: 'Mirrors' })).toContainText(/Running \d+ %/);
  await expect(view(page).locator('.run-phase')).toContainText(/resources\/s|measuring the rate/);
  // A screen reader is told what the run does (Fetching), not the rate and times that change several times a second.
  const announced = view(page).getByRole('region', { name: 'Current run' }).locator('[aria-live]:not([aria-live=off])');
  await expect(announced).toHaveCount(1);
  await expect(announced).toHaveText(/^(Fetching|Reading the list and fetching)$/);
  await expect(view(page).getByRole('button', { name: 'Pause' })).toBeEnabled();
  // The history's row of the run under way counts with the progress, not with what batches recorded so far.
  const running = view(page).getByRole('table', { name: 'Run history' }).locator('tbody tr').first();
  await expect(running).toContainText('running');
  expect(Number(await running.locator('td').nth(4).textContent())).toBeGreaterThan(4);
  // How long it has run so far, not a dash.
  await expect(running.locator('td').nth(2)).toHaveText(/^\d+ s so far$/);
  await page.screenshot({ path: join(screenshots, 'mirror-run.png') });
  await accessible(page, 'the run view while running');
  await expect(bar).toBeVisible();
  suite.fixture.setResourceDelay(20);

  // One short sentence is announced (before, the status region read the whole message and every counter); the
  // counters are shown beside it.
  await expect(runEndSentence(page)).toHaveText(`Baseline completed: ${RESOURCES} created.`, {
    timeout: 60_000,
  });
  await expect(runEndDetails(page).getByRole('definition')).toHaveText([String(RESOURCES), '0', '0', '0', '0', '0']);
  await expect(bar).toHaveCount(0);
  // The checkpoint, to the second, in the app's date style; the Source's own value in its title.
  const checkpoint = view(page).locator('dd[title]').filter({ hasText: /^\d{1,2} \w{3} \d{4}, \d\d:\d\d:\d\d$/ });
  await expect(checkpoint).toHaveCount(1);
  expect(await checkpoint.getAttribute('title')).toMatch(/^\d{4}-\d\d-\d\dT/);
  const history = view(page).getByRole('table', { name: 'Run history' });
  await expect(history.locator('tbody tr')).toHaveCount(1);
  await expect(history.locator('tbody tr').first()).toContainText('Baseline');
  await expect(history.locator('tbody tr').first()).toContainText('completed');
  expect(existsSync(join(folder, '.resourcesync', 'state.sqlite'))).toBe(true);

  // The audit, from its tab with the keyboard.
  await view(page).getByRole('tab', { name: /Runs/ }).focus();
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await expect(view(page).getByRole('tab', { name: 'Audit' })).toHaveAttribute('aria-selected', 'true');
  await view(page).getByRole('button', { name: 'Audit now' }).click();
  await expect(view(page).locator('.audit-summary')).toContainText(`In sync: ${RESOURCES} resources match the Source.`);

  // A stray file and a missing one: the report lists both, filterable, exported whole.
  const host = new URL(suite.fixture.url).host.replace(':', '_');
  writeFileSync(join(folder, host, 'stray.txt'), 'not from the Source');
  rmSync(join(folder, host, ...suite.fixture.state.pathOf(7).split('/').filter(Boolean)));
  await view(page).getByRole('checkbox', { name: /Read every file again/ }).check();
  await view(page).getByRole('button', { name: 'Audit again' }).click();
  await expect(view(page).locator('.audit-summary')).toContainText('Not in sync: 2 differences.');
  const table = view(page).getByRole('table', { name: 'Audit report' });
  await expect(table.locator('tbody tr')).toHaveCount(2);
  await page.screenshot({ path: join(screenshots, 'mirror-audit.png') });
  await accessible(page, 'the audit report with differences');
  await view(page).getByRole('combobox').selectOption('extra');
  await expect(table.locator('tbody tr')).toHaveCount(1);
  await expect(table.locator('tbody tr')).toContainText('stray.txt');
  await view(page).getByRole('combobox').selectOption('all');
  await view(page).getByRole('searchbox', { name: 'Filter the audit by text' }).fill(suite.fixture.state.pathOf(7));
  await expect(table.locator('tbody tr')).toHaveCount(1);
  await expect(table.locator('tbody tr')).toContainText('missing');
  // Export writes the filtered rows when a filter is applied, and the buttons say which; main writes the file, to the
  // full path typed here (a browser cannot hand the app a file's path). The JSON names the mirror, its Source and the
  // audit's date.
  await view(page).getByRole('button', { name: 'Export the 1 row filtered as CSV' }).click();
  const fileField = view(page).getByRole('textbox', { name: 'Write the CSV file to' });
  await expect(fileField).toBeFocused();
  await expect(fileField).toHaveValue(new RegExp(`^~/audit-dataset1-\\d{4}-\\d\\d-\\d\\d\\.csv$`));
  await expect(view(page).getByRole('form', { name: 'Export the audit report as CSV' })).toContainText('Every row of the report that passes the filter is written');
  await accessible(page, 'the audit export asking for a file');
  const filteredCsv = join(suite.mirrors, 'filtered.csv');
  await fileField.fill(filteredCsv);
  await view(page).getByRole('button', { name: 'Write CSV file' }).click();
  await expect(view(page).locator('.audit-export-status')).toHaveText(`Wrote 1 row (those that pass the filter) to ${filteredCsv}.`);
  await expect(fileField).toHaveCount(0);
  // Focus is back on the button, not lost on the page.
  await expect(view(page).getByRole('button', { name: 'Export the 1 row filtered as CSV' })).toBeFocused();
  const csvText = readFileSync(filteredCsv, 'utf8');
  expect(csvText.startsWith('\ufeff')).toBe(true);
  let lines = csvText.slice(1).trimEnd().split('\r\n');
  expect(lines).toEqual(['status,item,reason', `missing,${suite.fixture.state.locOf(7)},"listed by the Source, not in the mirror"`]);
  await view(page).getByRole('button', { name: 'Export the 1 row filtered as JSON' }).click();
  const filteredJson = join(suite.mirrors, 'filtered.json');
  await view(page).getByRole('textbox', { name: 'Write the JSON file to' }).fill(filteredJson);
  await page.keyboard.press('Enter');
  await expect(view(page).locator('.audit-export-status')).toHaveText(`Wrote 1 row (those that pass the filter) to ${filteredJson}.`);
  expect(JSON.parse(readFileSync(filteredJson, 'utf8'))).toMatchObject({
    mirror: folder,
    source: suite.fixture.url + PATHS.dataset1.capabilityList,
    at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    filter: { status: 'all', text: suite.fixture.state.pathOf(7) },
    inSync: false,
    missing: [suite.fixture.state.locOf(7)],
    extra: [],
  });
  // With no filter, the whole report; a file that is there already is not written over, and the field stays for another.
  await view(page).getByRole('searchbox', { name: 'Filter the audit by text' }).fill('');
  await view(page).getByRole('button', { name: 'Export all 2 rows as CSV' }).click();
  await view(page).getByRole('textbox', { name: 'Write the CSV file to' }).fill(filteredCsv);
  await page.keyboard.press('Enter');
  await expect(view(page).getByRole('alert')).toHaveText(`The export failed: A file ${filteredCsv} is there already: give another name, or remove it first.`);
  await expect(view(page).getByRole('textbox', { name: 'Write the CSV file to' })).toHaveAttribute('aria-invalid', 'true');
  const wholeCsv = join(suite.mirrors, 'whole.csv');
  await view(page).getByRole('textbox', { name: 'Write the CSV file to' }).fill(wholeCsv);
  await page.keyboard.press('Enter');
  await expect(view(page).locator('.audit-export-status')).toHaveText(`Wrote 2 rows to ${wholeCsv}.`);
  await expect(view(page).getByRole('alert')).toHaveCount(0);
  lines = readFileSync(wholeCsv, 'utf8').trimEnd().split('\r\n');
  expect(lines).toHaveLength(3);
  await accessible(page, 'the audit report after an export');
  // Escape closes the path field without writing.
  await view(page).getByRole('button', { name: 'Export all 2 rows as JSON' }).click();
  await page.keyboard.press('Escape');
  await expect(view(page).getByRole('textbox', { name: 'Write the JSON file to' })).toHaveCount(0);
  await expect(view(page).getByRole('button', { name: 'Export all 2 rows as JSON' })).toBeFocused();
  const wholeJson = join(suite.mirrors, 'whole.json');
  await view(page).getByRole('button', { name: 'Export all 2 rows as JSON' }).click();
  await view(page).getByRole('textbox', { name: 'Write the JSON file to' }).fill(wholeJson);
  await page.keyboard.press('Enter');
  await expect(view(page).locator('.audit-export-status')).toHaveText(`Wrote 2 rows to ${wholeJson}.`);
  expect(JSON.parse(readFileSync(wholeJson, 'utf8'))).toMatchObject({ filter: null, inSync: false, extra: [`${host}/stray.txt`] });

  // A report far longer than the window holds (10,000 of each kind): the export writes every item of it.
  const big = bigAudit(folder, 25_000);
  await page.reload();
  await expect(view(page).locator('.audit-summary')).toContainText('Not in sync: 25,000 differences.');
  await expect(view(page).locator('.audit-summary')).toContainText('0 in sync, 25,000 missing, 0 changed');
  await expect(view(page).locator('.audit-note')).toContainText('the first 10,000 of 25,000 missing resources');
  await expect(view(page).getByRole('search', { name: 'Filter the audit' }).locator('[aria-live]')).toHaveText('10,000 of the 10,000 rows held here (the report has 25,000)');
  await view(page).getByRole('button', { name: 'Export all 25,000 rows as CSV' }).click();
  const bigCsv = join(suite.mirrors, 'big.csv');
  await view(page).getByRole('textbox', { name: 'Write the CSV file to' }).fill(bigCsv);
  await page.keyboard.press('Enter');
  await expect(view(page).locator('.audit-export-status')).toHaveText(`Wrote 25,000 rows to ${bigCsv}.`);
  lines = readFileSync(bigCsv, 'utf8').slice(1).trimEnd().split('\r\n');
  expect(lines.slice(1)).toEqual(big.map((uri) => `missing,${uri},"listed by the Source, not in the mirror"`));
  // Filtered by text, it finds what the window does not hold.
  await view(page).getByRole('searchbox', { name: 'Filter the audit by text' }).fill('/big/24999');
  await expect(view(page).locator('.mirror-table-box')).toContainText('Nothing among the 10,000 rows held here matches the filter. The export searches the whole report: it may find more.');
  await view(page).getByRole('button', { name: 'Export the filtered rows as JSON' }).click();
  const bigJson = join(suite.mirrors, 'big-filtered.json');
  await view(page).getByRole('textbox', { name: 'Write the JSON file to' }).fill(bigJson);
  await page.keyboard.press('Enter');
  await expect(view(page).locator('.audit-export-status')).toHaveText(`Wrote 1 row (those that pass the filter) to ${bigJson}.`);
  expect(JSON.parse(readFileSync(bigJson, 'utf8'))).toMatchObject({ missing: [big[24_999]] });

  // Newer audits (by rsdesk, say) replaced the report shown: the export says so, and the newest report shows.
  for (let i = 0; i < 5; i++) bigAudit(folder, 1);
  await view(page).getByRole('searchbox', { name: 'Filter the audit by text' }).fill('');
  await view(page).getByRole('button', { name: 'Export all 25,000 rows as CSV' }).click();
  const goneCsv = join(suite.mirrors, 'gone.csv');
  await view(page).getByRole('textbox', { name: 'Write the CSV file to' }).fill(goneCsv);
  await page.keyboard.press('Enter');
  await expect(view(page).getByRole('alert')).toHaveText(
    'The export failed: This audit report is no longer kept in the mirror: newer audits have replaced it (a mirror keeps its newest five). The newest report is shown now; export that one.',
  );
  await expect(view(page).locator('.audit-summary')).toContainText('Not in sync: 1 difference.');
  await expect(view(page).getByRole('button', { name: 'Export all 1 row as CSV' })).toBeVisible();
  expect(existsSync(goneCsv)).toBe(false);

  // An export under way is cancelled from the keyboard: no file, no partial file beside it, a plain message.
  bigAudit(folder, 1_500_000);
  await page.reload();
  await view(page).getByRole('button', { name: 'Export all 1,500,000 rows as CSV' }).click();
  const cancelledCsv = join(suite.mirrors, 'cancelled.csv');
  await view(page).getByRole('textbox', { name: 'Write the CSV file to' }).fill(cancelledCsv);
  await page.keyboard.press('Enter');
  // Pressed at once: 1,500,000 rows take seconds to write (an axe check first would let it end).
  await view(page).getByRole('button', { name: 'Cancel export' }).focus();
  await page.keyboard.press('Enter');
  await expect(view(page).locator('.audit-export-status')).toHaveText(`Export cancelled. Nothing was written to ${cancelledCsv}.`);
  await accessible(page, 'an audit export cancelled');
  await expect(view(page).getByRole('button', { name: 'Export all 1,500,000 rows as CSV' })).toBeFocused();
  expect(existsSync(cancelledCsv)).toBe(false);
  expect(readdirSync(suite.mirrors).filter((f) => f.includes('partial'))).toEqual([]);

  // Written whole, a CSV longer than a spreadsheet's sheet: the message says a spreadsheet program would cut it.
  await view(page).getByRole('button', { name: 'Export all 1,500,000 rows as CSV' }).click();
  const longCsv = join(suite.mirrors, 'long.csv');
  await view(page).getByRole('textbox', { name: 'Write the CSV file to' }).fill(longCsv);
  await page.keyboard.press('Enter');
  const wrote = view(page).locator('.audit-export-status');
  await expect(wrote).toContainText(`Wrote 1,500,000 rows to ${longCsv}.`, { timeout: 60_000 });
  await expect(wrote).toContainText('It has more rows than a spreadsheet program shows on one sheet (1,048,576 with the header');
  rmSync(longCsv);

  // An audit by rsdesk on the same folder while the view is open: it shows, with no reload (the mirror's status, read
  // again every few seconds, names a newer audit; the report is read then).
  bigAudit(folder, 3);
  await expect(view(page).locator('.audit-summary')).toContainText('Not in sync: 3 differences.', { timeout: 15_000 });

  // Live notifications showed changes missed that no Change List could give: the view says so until a sync.
  markNeedsSync(folder, { from: '2025-05-01T00:00:00.000Z', until: '2025-06-01T00:00:00.000Z', since: '2025-06-01T00:01:00.000Z', reason: 'a gap in the change notifications' });
  const notice = view(page).getByRole('status').filter({ hasText: 'Live notifications showed' });
  await expect(notice).toContainText('did not reach this mirror, and no Change List could give them', { timeout: 15_000 });
  await expect(notice).toContainText('Sync now brings the mirror up to date.');
  await accessible(page, 'a mirror that needs a sync');
  markNeedsSync(folder, null);
  await expect(notice).toHaveCount(0, { timeout: 15_000 });
});

/** Marks the mirror as a live gap with no Change List would (engine/live/feed.ts). */
function markNeedsSync(folder: string, needs: NeedsSync | null): void {
  const state = new MirrorState(stateDirOf(folder));
  try {
    state.setNeedsSync(needs);
  } finally {
    state.close();
  }
}

/**
 * Keeps a report of `missing` differences in the mirror's state, as an audit of a Source far out of step would (an
 * audit that finds as many would take far longer to set up).
 */
function bigAudit(folder: string, missing: number): string[] {
  const uris = Array.from({ length: missing }, (_, i) => `${suite.fixture.url}/big/${i}`);
  const state = new MirrorState(stateDirOf(folder));
  try {
    const run = state.startRun('audit', 'inventory', null);
    state.endRun(run.id, 'completed', { audit: 1 }, 'not in sync');
    const report = { inSync: false, inSyncCount: 0, missing: [], extra: [], changed: [], unverifiable: [], kept: [] };
    state.saveAudit({ runId: run.id, at: new Date().toISOString(), rehash: false, seconds: 1, report }, uris.map((item) => ({ status: 'missing', item, reason: null })));
  } finally {
    state.close();
  }
  return uris;
}

test('pauses a run and resumes it after a reload; cancels another', async ({ page }) => {
  const folder = join(suite.mirrors, 'paused');
  suite.fixture.setResourceDelay(300);
  await openForm(page, folder, 1);
  await view(page).getByRole('button', { name: 'Create mirror' }).click();
  const bar = resourcesBar(page);
  await expect.poll(async () => Number(await bar.getAttribute('aria-valuenow')), { timeout: 30_000 }).toBeGreaterThan(2);
  // Slowed to a crawl: the run cannot end by itself before Pause is pressed.
  suite.fixture.setResourceDelay(3_000);
  await view(page).getByRole('button', { name: 'Pause' }).click();
  await expect(view(page).getByRole('status').filter({ hasText: 'Paused after' })).toBeVisible();
  await expect(runEndDetails(page)).toContainText('Resume takes it up where it stopped.');
  await expect(view(page).getByRole('heading', { level: 2 })).toContainText('Paused');

  // After a reload the mirror is still listed as paused, and offers Resume.
  await page.reload();
  await page.getByRole('list', { name: 'Mirrors' }).getByRole('button', { name: /paused/ }).click();
  await expect(view(page).getByRole('heading', { level: 2, name: /Mirror paused/ })).toContainText('Paused');
  await expect(view(page).getByRole('status').filter({ hasText: 'The last run was paused' })).toContainText('nothing already verified is fetched again');
  // One way on: Resume (a "Sync now" beside it did the same).
  await expect(view(page).getByRole('button', { name: 'Resume' })).toBeVisible();
  await expect(view(page).getByRole('button', { name: 'Sync now' })).toHaveCount(0);
  await accessible(page, 'a paused mirror');
  suite.fixture.setResourceDelay(20);
  await view(page).getByRole('button', { name: 'Resume' }).click();
  await expect(view(page).getByRole('status').filter({ hasText: 'Baseline completed' })).toBeVisible({ timeout: 60_000 });
  const history = view(page).getByRole('table', { name: 'Run history' });
  await expect(history.locator('tbody tr')).toHaveCount(1);
  await expect(history.locator('tbody tr').first()).toContainText(String(RESOURCES));

  // Cancel a run that is going on (a new baseline of another folder).
  suite.fixture.setResourceDelay(3_000);
  await openForm(page, join(suite.mirrors, 'cancelled'), 1);
  await view(page).getByRole('button', { name: 'Create mirror' }).click();
  await expect(resourcesBar(page)).toBeVisible();
  await view(page).getByRole('button', { name: 'Cancel run' }).click();
  await expect(view(page).getByRole('status').filter({ hasText: 'Cancelled.' })).toBeVisible();
  await expect(view(page).getByRole('table', { name: 'Run history' }).locator('tbody tr').first()).toContainText('cancelled');
  suite.fixture.setResourceDelay(0);
  // Reopened after a reload, the run view says how its last run ended, not only what it counted.
  await page.reload();
  await page.getByRole('list', { name: 'Mirrors' }).getByRole('button', { name: /^cancelled/ }).click();
  await expect(view(page).locator('.run-last')).toContainText(/^Last run: Baseline cancelled · .+ · 0 created, 0 updated, 0 deleted, 0 unchanged, 0 failed/);
});

test('a run that stood paused says how long it ran, and how long it was paused, apart', async ({ page }) => {
  const folder = join(suite.mirrors, 'took');
  suite.fixture.setResourceDelay(300);
  await openForm(page, folder, 1);
  const started = Date.now();
  const wall = () => (Date.now() - started) / 1000;
  await view(page).getByRole('button', { name: 'Create mirror' }).click();
  const bar = resourcesBar(page);
  await expect.poll(async () => Number(await bar.getAttribute('aria-valuenow')), { timeout: 30_000 }).toBeGreaterThan(2);
  suite.fixture.setResourceDelay(3_000);
  await view(page).getByRole('button', { name: 'Pause' }).click();
  await expect(view(page).getByRole('status').filter({ hasText: 'Paused after' })).toBeVisible();
  // Paused for a while.
  const PAUSE_S = 10;
  await page.waitForTimeout(PAUSE_S * 1000);

  // Resumed: the run view counts the time it ran, not the pause, and says it was paused.
  suite.fixture.setResourceDelay(1_000);
  await view(page).getByRole('button', { name: 'Resume' }).click();
  const phase = view(page).locator('.run-phase');
  await expect(phase).toContainText(/ran \d+ s so far \(stopped \d+ s\)/);
  const [, ranSoFar, pausedSoFar] = /ran (\d+) s so far \(stopped (\d+) s\)/.exec((await phase.textContent())!)!;
  expect(Number(pausedSoFar)).toBeGreaterThanOrEqual(PAUSE_S);
  // Ran and paused make up the time since it started (a second's rounding either way), not more.
  expect(Number(ranSoFar) + Number(pausedSoFar)).toBeLessThanOrEqual(wall() + 2);
  await accessible(page, 'a run resumed after a pause');
  suite.fixture.setResourceDelay(0);
  await expect(view(page).getByRole('status').filter({ hasText: 'Baseline completed' })).toBeVisible({ timeout: 60_000 });

  // The history: "ran N s (stopped M s)", the pause apart.
  const took = view(page).getByRole('table', { name: 'Run history' }).locator('tbody tr').first().locator('td').nth(2);
  await expect(took).toHaveText(/^ran \d+ s \(stopped \d+ s\)$/);
  const [, ran, paused] = /^ran (\d+) s \(stopped (\d+) s\)$/.exec((await took.textContent())!)!;
  expect(Number(paused)).toBeGreaterThanOrEqual(PAUSE_S);
  expect(Number(paused)).toBeLessThan(PAUSE_S + 10);
  expect(Number(ran) + Number(paused)).toBeLessThanOrEqual(wall() + 2);
  expect(Number(ran)).toBeLessThanOrEqual(wall() - PAUSE_S + 2);
  await accessible(page, 'the history of a run that stood paused');
});

test('says in plain words what is wrong with a folder', async ({ page }) => {
  const full = join(suite.mirrors, 'full');
  mkdirSync(full, { recursive: true });
  writeFileSync(join(full, 'mine.txt'), 'x');
  await openForm(page, full, 4);
  await view(page).getByRole('button', { name: 'Create mirror' }).click();
  // Said beside the folder field, which is marked invalid, describes itself with the message, and takes focus.
  const field = view(page).getByLabel('Folder', { exact: true });
  await expect(field).toBeFocused();
  await expect(field).toHaveAttribute('aria-invalid', 'true');
  await expect(field).toHaveAccessibleDescription(new RegExp(`${full} is not empty\\. Choose a new or empty folder`));
  await field.fill('relative/path');
  await view(page).getByRole('button', { name: 'Create mirror' }).click();
  await expect(field).toHaveAccessibleDescription(/Give the folder's full path/);
  await expect(field).toHaveAttribute('aria-invalid', 'true');
  await accessible(page, 'the new-mirror form with an error');
});

test('the failures table retries one resource, then all the failed ones, each a run of its own', async ({ page }) => {
  suite.fixture.setResourceDelay(0);
  const broken = [3, 5, 7];
  const setBroken = (on: boolean) => {
    for (const id of broken) {
      suite.fixture.setBroken(suite.fixture.state.pathOf(id), on ? { status: 404 } : null);
      suite.fixture.setBroken(`/mirror${suite.fixture.state.pathOf(id)}`, on ? { status: 404 } : null);
    }
  };
  // Resources fetched since `mark` (a mirror location counts as the resource).
  const fetched = (mark: number) =>
    suite.fixture.requests
      .slice(mark)
      .map((r) => r.path.replace(/^\/mirror\//, '/'))
      .filter((p) => p.includes('/res/'));
  setBroken(true);
  // A folder per repetition: `--repeat-each` runs this test again against the same app server.
  await openForm(page, join(suite.mirrors, `failing-${test.info().repeatEachIndex}`), 4);
  await view(page).getByRole('button', { name: 'Create mirror' }).click();
  await expect(view(page).getByRole('status').filter({ hasText: 'Baseline ended with 3 failures' })).toBeVisible({ timeout: 60_000 });
  setBroken(false);

  // The tab counts the failures of the run, as its counters do (not the runs that had some).
  await expect(view(page).getByRole('tab', { name: /^Failures 3$/ })).toBeVisible();
  await view(page).getByRole('tab', { name: /Failures/ }).click();
  const table = view(page).getByRole('table', { name: /^Failures of run \d+$/ });
  await expect(table.locator('tbody tr')).toHaveCount(3);
  // Each says why in words, without the URI its row shows already (another location tried stays named).
  for (const id of broken) {
    const row = table.locator('tbody tr').filter({ has: page.locator('td:first-child', { hasText: new RegExp(`^${suite.fixture.state.locOf(id)}$`) }) });
    await expect(row.locator('td').nth(1)).toHaveText(/^(HTTP 404 Not Found|its copy at \S+\/mirror\/\S+: HTTP 404 Not Found; its own address: HTTP 404 Not Found)$/);
  }
  await accessible(page, 'the failures of a run, with Retry');

  // One resource: only it is fetched again.
  let mark = suite.fixture.requests.length;
  await table.getByRole('button', { name: `Retry ${suite.fixture.state.locOf(5)}` }).click();
  await expect(view(page).getByRole('status').filter({ hasText: 'Retry of 1 resource' })).toContainText(
    /^Retry of 1 resource of run \d+ completed: 1 created\.$/,
  );
  expect(fetched(mark)).toEqual([suite.fixture.state.pathOf(5)]);

  // The one retried is mirrored since: said in its row, and left out of "all failed".
  await expect(table.locator('tbody tr').filter({ hasText: suite.fixture.state.locOf(5) })).toContainText(/mirrored since, by run #\d+/);
  await expect(table.getByRole('button', { name: `Retry ${suite.fixture.state.locOf(5)}` })).toHaveCount(0);
  // The tab counts the failures that still stand, as "Retry all failed" does.
  await expect(view(page).getByRole('tab', { name: /^Failures/ })).toHaveText('Failures 2');
  // All the failed ones, from the keyboard: the two still missing are fetched.
  mark = suite.fixture.requests.length;
  const all = view(page).getByRole('button', { name: 'Retry all failed (2)' });
  await all.focus();
  await page.keyboard.press('Enter');
  await expect(view(page).getByRole('status').filter({ hasText: 'Retry of 2 resources' })).toContainText(
    /^Retry of 2 resources of run \d+ completed: 2 created\.$/,
  );
  expect(fetched(mark).sort()).toEqual([suite.fixture.state.pathOf(3), suite.fixture.state.pathOf(7)].sort());
  await view(page).getByRole('tab', { name: /Failures/ }).click();
  await view(page).getByRole('combobox', { name: 'Run' }).selectOption({ index: 0 });
  await expect(view(page).getByRole('button', { name: 'Retry all failed (0)' })).toBeDisabled();
  // Every failure mirrored since: nothing left to count in red.
  await expect(view(page).getByRole('tab', { name: /^Failures/ })).toHaveText('Failures 0');
  await expect(view(page).getByRole('tab', { name: /^Failures/ }).locator('.tab-count-error')).toHaveCount(0);
  const history = view(page).getByRole('tab', { name: /Runs/ });
  await history.click();
  const rows = view(page).getByRole('table', { name: 'Run history' }).locator('tbody tr');
  await expect(rows).toHaveCount(3);
  await expect(rows.nth(0)).toContainText('Retry');
  await expect(rows.nth(0)).toContainText('completed');
  await expect(rows.nth(2)).toContainText('Baseline');
});

test('a view whose first read was answered mid-run, and a command answered after its run ended, still show the end', async ({ page }) => {
  // The run's end reaches the page as events while an older answer is still on its way: the page must not keep it.
  // Each such answer is held (not delayed by a time) and let go once the page has shown the run's end elsewhere.
  const folder = join(suite.mirrors, `held-${test.info().repeatEachIndex}`);
  const name = folder.split('/').at(-1)!;
  const item = page.getByRole('list', { name: 'Mirrors' }).getByRole('button', { name: new RegExp(`^${name}`) });
  let hold: { command: string; answered(status: string): void; release: Promise<void> } | null = null;
  const heldStatus: string[] = [];
  await page.route('**/api/invoke', async (route) => {
    const { command } = route.request().postDataJSON() as { command: string };
    const held = hold;
    if (held?.command !== command) return route.continue();
    hold = null;
    const response = await route.fetch();
    const body = (await response.json()) as { result: { status: string } };
    heldStatus.push(body.result.status);
    held.answered(body.result.status);
    await held.release;
    await route.fulfill({ response });
  });
  function holdNext(command: string): () => void {
    let release!: () => void;
    hold = { command, answered: () => suite.fixture.setResourceDelay(0), release: new Promise<void>((resolve) => (release = resolve)) };
    return release;
  }

  // 1. The mirror's view opens while the baseline runs (the Source crawls until the view's first read is answered,
  // "running"); that answer is held until the list, from the events, says the baseline completed.
  suite.fixture.setResourceDelay(5_000);
  let release = holdNext('mirrors.get');
  await openForm(page, folder, 4);
  await view(page).getByRole('button', { name: 'Create mirror' }).click();
  await expect(item).toContainText('Baseline completed', { timeout: 60_000 });
  expect(heldStatus).toEqual(['running']);
  release();
  await expect(view(page).getByRole('status').filter({ hasText: 'Baseline completed' })).toContainText(
    `Baseline completed: ${RESOURCES} created`,
  );
  await expect(view(page).locator('.mirror-badge')).toHaveText('Ready');

  // 2. "Sync now": its answer (made as the run started: "running") is held until the run's end has reached the page.
  release = holdNext('runs.start');
  await view(page).getByRole('button', { name: 'Sync now' }).click();
  await expect(item).toContainText('Incremental completed', { timeout: 60_000 });
  await expect(view(page).getByRole('status').filter({ hasText: 'Incremental sync' })).toBeVisible();
  expect(heldStatus).toEqual(['running', 'running']);
  release();
  await expect(view(page).getByRole('button', { name: 'Sync now' })).toBeEnabled();
  await expect(item.locator('.mirror-status')).toHaveText('Ready');
  await expect(view(page).locator('.mirror-badge')).toHaveText('Ready');
});
