import type { Reporter, TestModule } from 'vitest/node';

/** Prints the plain `Tests: N passed, N failed, N skipped` line that CI reads. */
export default class ClosingLineReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, errors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const m of testModules) {
      for (const t of m.children.allTests()) {
        const s = t.result().state;
        if (s === 'passed') passed++;
        else if (s === 'failed') failed++;
        else if (s === 'skipped') skipped++;
      }
    }
    if (errors.length > 0 && failed === 0) failed = errors.length;
    process.stdout.write(`Tests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
