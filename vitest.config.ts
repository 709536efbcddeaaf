import { configDefaults, defineConfig } from 'vitest/config';

// CI asks for a machine-readable report beside the console output to print its `N passed, N failed` line.
const reportDir = process.env.RSDESK_REPORT_DIR;
// Suites that read the shared folder (`*.shared.test.ts`) run only in `npm run test:corpus`: `npm test` on a fresh
// clone needs nothing outside the repository.
const corpus = process.env.RSDESK_TEST_CORPUS === '1';
const SHARED = '**/*.shared.test.ts';

export default defineConfig({
  test: {
    reporters: reportDir ? ['default', ['json', { outputFile: `${reportDir}/vitest.json` }]] : ['default'],
    include: corpus ? [`src-main/${SHARED}`, `e2e/${SHARED}`] : ['src-main/**/*.test.ts', 'src-renderer/**/*.test.ts', 'src-preload/**/*.test.ts', 'e2e/fixture-source/**/*.test.ts', 'bin/**/*.test.ts', 'e2e/*.test.ts'],
    exclude: corpus ? configDefaults.exclude : [...configDefaults.exclude, SHARED],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
