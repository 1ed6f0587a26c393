import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    reporters: ['default', './test/support/closing-line-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Multi-process and server tests share the machine's 2 cores; keep files parallel but bounded.
    maxWorkers: 2,
    coverage: { provider: 'v8', include: ['src/**'] },
  },
});
