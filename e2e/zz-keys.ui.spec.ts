import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { PATHS } from './fixture-source/index.ts';
import { mirrorSuite } from './mirror-suite.ts';
import { fillMirrorForm, mainView, openMirrorForm } from './ui-helpers.ts';

const suite = mirrorSuite('zzkeys', { resources: 30, changeListSize: 10, resourceDelayMs: 0 });
test('keys', async ({ page }) => {
  test.setTimeout(200_000);
  page.setDefaultTimeout(15_000);
  await page.setViewportSize({ width: 1024, height: 768 });
  const view = mainView(page);
  await openMirrorForm(page, suite.app.url, suite.fixture.url + PATHS.dataset1.capabilityList);
  await fillMirrorForm(page, join(suite.mirrors, 'k'), 4);
  suite.setBroken([3, 4], true);
  await view.getByRole('button', { name: 'Create mirror' }).focus();
  await page.keyboard.press('Enter');
  await expect(view.getByRole('status').filter({ hasText: /^Baseline/ })).toBeVisible({ timeout: 60_000 });
  suite.setBroken([3, 4], false);
  const out: string[] = [];
  for (let i = 0; i < 30; i++) {
    await page.keyboard.press('Tab');
    const d = await page.evaluate(() => {
      const e = document.activeElement as HTMLElement;
      const cs = getComputedStyle(e);
      return `${e.tagName} role=${e.getAttribute('role')} name=${(e.getAttribute('aria-label') ?? e.textContent ?? '').slice(0, 60)} outline=${cs.outlineStyle}/${cs.outlineWidth} shadow=${cs.boxShadow.slice(0, 40)}`;
    });
    out.push(`${i}: ${d}`);
    if ([2, 5, 8, 11].includes(i)) await page.screenshot({ path: `/tmp/shots/k${i}.png` });
  }
  console.log(out.join('\n'));
  await view.getByRole('tab', { name: /Failures/ }).focus();
  await page.keyboard.press('Enter');
  for (let i = 0; i < 4; i++) await page.keyboard.press('Tab');
  await page.screenshot({ path: `/tmp/shots/k-fail.png` });
  console.log(await page.evaluate(() => (document.activeElement as HTMLElement).outerHTML.slice(0, 200)));
});
