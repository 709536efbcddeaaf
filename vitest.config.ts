import { configDefaults, defineConfig } from 'vitest/config';

// CI asks for a machine-readable report beside the console output to print its `N passed, N failed` line.
const reportDir = process.env.RSDESK_REPORT_DIR;

/** Suites that read the shared folder (specs, corpus): only `npm run test:corpus` runs them (vitest.corpus.config.ts). */
export const SHARED_SUITES = '**/*.shared.test.ts';

// `npm test` on a fresh clone needs nothing outside the repository: the shared suites are left out here.
export default defineConfig({
  test: {
    reporters: reportDir ? ['default', ['json', { outputFile: `${reportDir}/vitest.json` }]] : ['default'],
    include: ['src-main/**/*.test.ts', 'src-renderer/**/*.test.ts', 'src-preload/**/*.test.ts', 'e2e/fixture-source/**/*.test.ts', 'bin/**/*.test.ts', 'e2e/*.test.ts', 'scripts/**/*.test.ts'],
    exclude: [...configDefaults.exclude, SHARED_SUITES],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
