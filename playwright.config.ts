import { defineConfig } from '@playwright/test';

// Playwright cannot download its own browsers here: the Debian Chromium is used. Without the networking flags
// Chromium keeps trying to reach the outside; tests only ever talk to 127.0.0.1.
const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

// CI asks for a JSON report beside the console output to print its `N passed, N failed` line.
const reportDir = process.env.RSDESK_REPORT_DIR;

export default defineConfig({
  testDir: 'e2e',
  outputDir: 'test-results',
  // The specs share one app server and one fixture Source per file, and the machine has two cores.
  workers: 1,
  fullyParallel: false,
  timeout: 120_000,
  expect: { timeout: 20_000 },
  reporter: reportDir ? [['list'], ['json', { outputFile: `${reportDir}/playwright.json` }]] : [['list']],
  use: {
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
  projects: [
    {
      name: 'chromium',
      testMatch: /ui\.spec\.ts$/,
      use: {
        browserName: 'chromium',
        viewport: { width: 1400, height: 900 },
        launchOptions: { executablePath: '/usr/bin/chromium', args: chromiumArgs },
      },
    },
    {
      name: 'electron',
      testMatch: /electron\.spec\.ts$/,
    },
  ],
});
