import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    reporters: ['default', './test/support/closing-line-reporter.ts'],
    // Starts Ceph RGW and PostgreSQL in the background for the store's backend tests.
    globalSetup: ['./test/support/global-setup.ts'],
    // Generous: tests are bounded by work (rounds, kills, processes), and a whole-process test on a
    // busy 2-core machine (CI's load step, a newcomer's laptop) can take minutes; these only catch a hang.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // Multi-process and server tests share the machine's 2 cores; keep files parallel but bounded.
    maxWorkers: 2,
    coverage: { provider: 'v8', include: ['src/**'] },
  },
});
