import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src-main/**/*.test.ts', 'src-preload/**/*.test.ts', 'e2e/fixture-source/**/*.test.ts', 'bin/**/*.test.ts'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
