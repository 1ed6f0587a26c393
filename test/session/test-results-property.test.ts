import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTestOutput, type TestSummary } from '../../src/session/test-results/test-results.js';

function expectWellFormed(summary: TestSummary | null): void {
  if (summary === null) return;
  expect(typeof summary.type).toBe('string');
  for (const [key, value] of Object.entries(summary)) {
    expect(value, key).not.toBeUndefined();
    if (typeof value === 'number') {
      expect(Number.isFinite(value), key).toBe(true);
      expect(value, key).toBeGreaterThanOrEqual(0);
      if (key !== 'lines' && key !== 'statements' && key !== 'functions' && key !== 'branches') {
        expect(Number.isSafeInteger(value), key).toBe(true);
      }
    }
  }
}

// Fragments of real summary lines, so generated inputs reach deep into every recogniser.
const fragment = fc.constantFrom(
  'Tests:', ' passed', ' failed', ' total', ', ', ' | ', '(', ')', ' passing', ' failing', ' pending',
  '# tests ', '# pass ', '# fail ', '# skip ', 'ℹ pass ', 'ok ', 'not ok ', '1..', ' # SKIP', '# TODO',
  '=== ', ' in 0.1s', 'test result: ok. ', ' passed; ', ' failed; ', ' ignored; ', '--- FAIL: ', '=== RUN ',
  'ok  \tpkg\t0.1s', '<testsuite tests="', '" failures="', '">', '<testcase>', '<failure/>', '</testsuite>',
  '{"numTotalTests":', '{"numFailedTests":', '}', '"', '\n', '\r', '\u001b[31m', '\u001b[0m', '-1', '99999999999999999999',
);
const digits = fc.integer({ min: 0, max: 1_000_000 }).map(String);
const runnerish = fc.array(fc.oneof(fragment, digits, fc.string({ maxLength: 5 })), { maxLength: 40 }).map((parts) => parts.join(''));

describe('parseTestOutput never throws', () => {
  it('on arbitrary strings, including full Unicode', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' })), (s) => {
        expectWellFormed(parseTestOutput(s));
      }),
      { numRuns: 500 },
    );
  });

  it('on strings built from runner summary fragments, with well-formed counts', () => {
    fc.assert(
      fc.property(runnerish, (s) => {
        expectWellFormed(parseTestOutput(s));
      }),
      { numRuns: 2000 },
    );
  });

  it('on arbitrary JSON values, with well-formed counts', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expectWellFormed(parseTestOutput(JSON.stringify(value)));
      }),
      { numRuns: 500 },
    );
  });

  it('on Jest-style objects with arbitrary values, always recognised as type jest', () => {
    const anyValue = fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(null), fc.boolean());
    fc.assert(
      fc.property(fc.record({ numTotalTests: anyValue, numPassedTests: anyValue, numFailedTests: fc.nat(), numPendingTests: anyValue }), (report) => {
        const summary = parseTestOutput(JSON.stringify(report));
        expect(summary?.type).toBe('jest');
        expectWellFormed(summary);
      }),
      { numRuns: 300 },
    );
  });

  it('on non-string input passed by a JavaScript caller', () => {
    const values: unknown[] = [undefined, null, 42, {}, [], Symbol('x')];
    for (const value of values) {
      expect(parseTestOutput(value as string)).toBeNull();
    }
  });
});

describe('parseTestOutput reads back what a runner would print', () => {
  it('Jest text: any counts round-trip', () => {
    fc.assert(
      fc.property(fc.nat(10_000), fc.nat(10_000), fc.nat(10_000), (failed, skipped, passed) => {
        const total = failed + skipped + passed;
        const line = `Tests:       ${failed} failed, ${skipped} skipped, ${passed} passed, ${total} total`;
        expect(parseTestOutput(`noise\n${line}\nTime: 1 s`)).toMatchObject({ runner: 'jest', failed, skipped, passed, total });
      }),
    );
  });

  it('pytest: any counts round-trip', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), fc.nat(10_000), (passed, failed) => {
        const line = `===== ${failed} failed, ${passed} passed in 0.42s =====`;
        expect(parseTestOutput(line)).toMatchObject({ runner: 'pytest', failed, passed, total: failed + passed });
      }),
    );
  });
});
