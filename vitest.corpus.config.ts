import { configDefaults, defineConfig } from 'vitest/config';
import { SHARED_SUITES } from './vitest.config.ts';

// The suites that read the shared folder (the specs' examples, the corpus of others' documents), run by
// `npm run test:corpus` (scripts/test-corpus.mjs), which first checks that the folder exists.
const reportDir = process.env.RSDESK_REPORT_DIR;

export default defineConfig({
  test: {
    reporters: reportDir ? ['default', ['json', { outputFile: `${reportDir}/vitest-corpus.json` }]] : ['default'],
    include: [SHARED_SUITES],
    exclude: configDefaults.exclude,
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
