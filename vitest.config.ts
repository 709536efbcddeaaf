import { defineConfig } from 'vitest/config';

// CI asks for a machine-readable report beside the console output to print its `N passed, N failed` line.
const reportDir = process.env.RSDESK_REPORT_DIR;

export default defineConfig({
  test: {
    reporters: reportDir ? ['default', ['json', { outputFile: `${reportDir}/vitest.json` }]] : ['default'],
    include: ['src-main/**/*.test.ts', 'src-preload/**/*.test.ts', 'e2e/fixture-source/**/*.test.ts', 'bin/**/*.test.ts', 'e2e/*.test.ts'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
