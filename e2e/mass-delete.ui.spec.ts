// A baseline that would delete more than the Source lists (a Resource List served nearly empty): the run's end says why nothing
// was deleted, shows the run's notes, and offers to delete them anyway, which a second baseline then does.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { PATHS } from './fixture-source/index.ts';
import { mirrorSuite } from './mirror-suite.ts';
import { expectAccessible, fillMirrorForm, mainView, openMirrorForm, runEndDetails } from './ui-helpers.ts';

const suite = mirrorSuite('mass-delete', { resources: 12, resourceDelayMs: 0 });

/** Files of the mirror's visible tree. */
function files(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && !d.parentPath.includes('.resourcesync'))
    .map((d) => d.name);
}

test('a baseline that would delete more than the Source lists deletes nothing, says why, and deletes them when asked', async ({ page }) => {
  const view = mainView(page);
  const folder = join(suite.mirrors, `list-${test.info().repeatEachIndex}`);
  // A mirror of the Resource List alone: every run is a baseline compared with what the mirror holds.
  await openMirrorForm(page, suite.app.url, suite.fixture.url + PATHS.dataset1.resourceList);
  await fillMirrorForm(page, folder, 4);
  await view.getByRole('radio', { name: /^Delete them/ }).check();
  await view.getByRole('button', { name: 'Create mirror' }).click();
  await expect(view.getByRole('status').filter({ hasText: /^Baseline completed: 12 created/ })).toBeVisible({ timeout: 60_000 });
  expect(files(folder)).toHaveLength(12);

  suite.fixture.change('delete', 10);
  await view.getByRole('button', { name: 'Sync now' }).click();
  await expect(view.getByRole('status').filter({ hasText: /^Baseline completed: nothing changed\.$/ })).toBeVisible({ timeout: 60_000 });
  const end = runEndDetails(page);
  await expect(end).toContainText('10 resources the Source no longer lists were not deleted: more than the Source lists now.', { timeout: 60_000 });
  const notes = end.locator('details.run-notes');
  await expect(notes).toHaveAttribute('open', '');
  await expect(notes).toContainText('The Source no longer lists 10 resources this mirror holds, more than the 2 it lists now: none was deleted');
  expect(files(folder)).toHaveLength(12);
  await expectAccessible(page, 'a run end that held deletions back');
  await page.screenshot({ path: test.info().outputPath('held-back.png') });

  const anyway = view.getByRole('button', { name: 'Delete the 10 anyway' });
  await anyway.focus();
  await page.keyboard.press('Enter');
  await expect(view.getByRole('status').filter({ hasText: /^Baseline completed: 10 deleted\.$/ })).toBeVisible({ timeout: 60_000 });
  await expect(view.getByRole('button', { name: /anyway$/ })).toHaveCount(0);
  expect(files(folder)).toHaveLength(2);
});
