import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Each test file gets its own database, so files may run side by side.
    fileParallelism: true,
    maxWorkers: 2,
  },
});
