import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseTestOutput } from '../../src/session/test-results/test-results.js';

// Output captured from the real runners; see test/fixtures/test-output/README.md for versions and commands.
const FIXTURES = fileURLToPath(new URL('../fixtures/test-output/', import.meta.url));

function parseFixture(name: string): ReturnType<typeof parseTestOutput> {
  return parseTestOutput(readFileSync(FIXTURES + name, 'utf8'));
}

interface Expected {
  fixture: string;
  summary: Record<string, unknown>;
  snippet?: string;
}

const cases: Expected[] = [
  // Jest: upstream returned null for a run with failures and for all-zero JSON.
  { fixture: 'jest/failing.log', summary: { type: 'text', runner: 'jest', total: 5, passed: 2, failed: 1, skipped: 1, todo: 1 }, snippet: 'Tests:       1 failed, 1 skipped, 1 todo, 2 passed, 5 total' },
  { fixture: 'jest/failing-color.log', summary: { type: 'text', runner: 'jest', total: 5, passed: 2, failed: 1, skipped: 1, todo: 1 }, snippet: 'Tests:       1 failed, 1 skipped, 1 todo, 2 passed, 5 total' },
  { fixture: 'jest/passing.log', summary: { type: 'text', runner: 'jest', total: 2, passed: 2, failed: 0, skipped: 0 }, snippet: 'Tests:       2 passed, 2 total' },
  { fixture: 'jest/passing-coverage.log', summary: { type: 'text', runner: 'jest', total: 1, passed: 1, failed: 0 } },
  { fixture: 'jest/failing.json', summary: { type: 'jest', total: 5, passed: 2, failed: 1, skipped: 1, todo: 1 } },
  { fixture: 'jest/passing.json', summary: { type: 'jest', total: 2, passed: 2, failed: 0, skipped: 0 } },
  { fixture: 'jest/no-tests.json', summary: { type: 'jest', total: 0, passed: 0, failed: 0, skipped: 0 } },
  // Vitest: JSON is Jest-style (type 'jest', as the seed documents); text needs ANSI stripping.
  { fixture: 'vitest/failing.json', summary: { type: 'jest', total: 5, passed: 2, failed: 1, skipped: 1, todo: 1 } },
  { fixture: 'vitest/failing-color.log', summary: { type: 'text', runner: 'vitest', total: 5, passed: 2, failed: 1, skipped: 1, todo: 1 }, snippet: 'Tests  1 failed | 2 passed | 1 skipped | 1 todo (5)' },
  { fixture: 'vitest/passing.log', summary: { type: 'text', runner: 'vitest', total: 3, passed: 2, failed: 0, skipped: 1 }, snippet: 'Tests  2 passed | 1 skipped (3)' },
  { fixture: 'vitest/junit.xml', summary: { type: 'junit', runner: 'vitest', total: 5, passed: 2, failed: 1, skipped: 2, errors: 0 } },
  // Mocha: its TAP `# tests` leaves out pending tests; the SKIP line is still counted.
  { fixture: 'mocha/failing.log', summary: { type: 'text', runner: 'mocha', total: 4, passed: 2, failed: 1, skipped: 1 }, snippet: '2 passing (3ms)\n1 pending\n1 failing' },
  { fixture: 'mocha/failing.tap', summary: { type: 'text', runner: 'tap', total: 4, passed: 2, failed: 1, skipped: 1 } },
  { fixture: 'mocha/failing.json', summary: { type: 'json', runner: 'mocha', total: 4, passed: 2, failed: 1, skipped: 1 } },
  // node:test
  { fixture: 'node-test/failing.tap', summary: { type: 'text', runner: 'node:test', total: 5, passed: 2, failed: 1, skipped: 1, todo: 1 } },
  { fixture: 'node-test/failing-spec.log', summary: { type: 'text', runner: 'node:test', total: 5, passed: 2, failed: 1, skipped: 1, todo: 1 } },
  { fixture: 'node-test/junit.xml', summary: { type: 'junit', total: 5, passed: 2, failed: 1, skipped: 2, errors: 0 } },
  // pytest: errors count as failed, xfailed as skipped (as pytest's own JUnit report does).
  { fixture: 'pytest/failing.log', summary: { type: 'text', runner: 'pytest', total: 6, passed: 2, failed: 2, skipped: 2, errors: 1, xfailed: 1 }, snippet: '1 failed, 2 passed, 1 skipped, 1 xfailed, 1 error in 0.52s' },
  { fixture: 'pytest/failing-quiet.log', summary: { type: 'text', runner: 'pytest', total: 6, passed: 2, failed: 2, skipped: 2, errors: 1 } },
  { fixture: 'pytest/deselected-quiet.log', summary: { type: 'text', runner: 'pytest', total: 2, passed: 2, failed: 0, skipped: 0, deselected: 4 } },
  { fixture: 'pytest/junit.xml', summary: { type: 'junit', runner: 'pytest', total: 6, passed: 2, failed: 2, skipped: 2, errors: 1 } },
  // cargo: results of every test binary are summed.
  { fixture: 'cargo/failing.log', summary: { type: 'text', runner: 'cargo', total: 4, passed: 2, failed: 1, skipped: 1 } },
  { fixture: 'cargo/no-fail-fast.log', summary: { type: 'text', runner: 'cargo', total: 5, passed: 3, failed: 1, skipped: 1 } },
  { fixture: 'cargo/passing.log', summary: { type: 'text', runner: 'cargo', total: 5, passed: 4, failed: 0, skipped: 1 } },
  // go: without -v only failures are printed, so passed/skipped/total are not stated.
  { fixture: 'go/failing.log', summary: { type: 'text', runner: 'go', failed: 1, packagesPassed: 1, packagesFailed: 1 } },
  { fixture: 'go/passing.log', summary: { type: 'text', runner: 'go', failed: 0, packagesPassed: 1, packagesFailed: 0 } },
  { fixture: 'go/verbose.log', summary: { type: 'text', runner: 'go', total: 8, passed: 6, failed: 1, skipped: 1, packagesPassed: 1, packagesFailed: 1 } },
  { fixture: 'go/json.log', summary: { type: 'json', runner: 'go', total: 8, passed: 6, failed: 1, skipped: 1 } },
];

describe('parseTestOutput on real runner output', () => {
  it.each(cases)('reads the exact counts of $fixture', ({ fixture, summary, snippet }) => {
    const parsed = parseFixture(fixture);
    expect(parsed).toMatchObject(summary);
    if (snippet !== undefined) expect(parsed?.snippet).toBe(snippet);
  });

  it('leaves counts absent that go test without -v does not print', () => {
    const parsed = parseFixture('go/failing.log');
    expect(parsed).not.toHaveProperty('passed');
    expect(parsed).not.toHaveProperty('total');
  });

  it('gives every text summary a snippet and every summary non-negative integer counts', () => {
    for (const { fixture } of cases) {
      const parsed = parseFixture(fixture);
      if (parsed?.type === 'text') expect(parsed.snippet, fixture).toMatch(/\S/);
      for (const key of ['total', 'passed', 'failed', 'skipped'] as const) {
        const value = parsed?.[key];
        if (value !== undefined) expect(Number.isSafeInteger(value) && value >= 0, `${fixture} ${key}`).toBe(true);
      }
    }
  });
});
