import { describe, expect, it } from 'vitest';
import { parseTestOutput, TEST_PATTERNS } from '../../src/session/test-results/test-results.js';

describe('TEST_PATTERNS', () => {
  it('is the seed list, in the documented order', () => {
    expect(TEST_PATTERNS).toEqual([
      '.aiwg/ralph-external/outputs/*.log',
      'test-results.json',
      'coverage/lcov-report/index.html',
      '.aiwg/testing/*.md',
    ]);
  });
});

describe('parseTestOutput: upstream tests', () => {
  it('parses Jest JSON as type jest with total and passed (upstream test 18)', () => {
    const summary = parseTestOutput(JSON.stringify({ numTotalTests: 15, numPassedTests: 13, numFailedTests: 2, numPendingTests: 0 }));
    expect(summary).toEqual({ type: 'jest', total: 15, passed: 13, failed: 2, skipped: 0 });
  });

  it('parses "Tests: 10 passed, 10 total" as text with a snippet (upstream test 19)', () => {
    const summary = parseTestOutput('Tests: 10 passed, 10 total\nTime: 5.2s');
    expect(summary?.type).toBe('text');
    expect(summary?.snippet).toContain('10 passed');
    expect(summary).toMatchObject({ passed: 10, total: 10, failed: 0 });
  });

  it('returns null for random text (upstream test 20)', () => {
    expect(parseTestOutput('This is just some random text without test results')).toBeNull();
    expect(parseTestOutput('')).toBeNull();
    expect(parseTestOutput('3 apples passed the bridge; all okay')).toBeNull();
  });
});

describe('parseTestOutput: Jest-style JSON, upstream defects fixed', () => {
  it('recognises an all-zero run (upstream returned null)', () => {
    expect(parseTestOutput('{"numTotalTests":0,"numPassedTests":0,"numFailedTests":0,"numPendingTests":0}')).toEqual({
      type: 'jest', total: 0, passed: 0, failed: 0, skipped: 0,
    });
  });

  it('recognises a failure-only report and derives the total', () => {
    expect(parseTestOutput('{"numFailedTests":3}')).toEqual({ type: 'jest', total: 3, passed: 0, failed: 3, skipped: 0 });
  });

  it('ignores count values that are not non-negative integers', () => {
    expect(parseTestOutput('{"numTotalTests":-4,"numPassedTests":2.5,"numFailedTests":1}')).toEqual({
      type: 'jest', total: 1, passed: 0, failed: 1, skipped: 0,
    });
  });

  it('falls through to text detection for JSON null, numbers, strings and arrays', () => {
    expect(parseTestOutput('null')).toBeNull();
    expect(parseTestOutput('42')).toBeNull();
    expect(parseTestOutput('"Tests: 3 passed, 3 total"')).toMatchObject({ type: 'text', passed: 3, total: 3 });
    expect(parseTestOutput('[1, 2, 3]')).toBeNull();
  });

  it('finds a runner summary embedded in a JSON string value', () => {
    const summary = parseTestOutput(JSON.stringify({ log: 'running...\n  4 passing (12ms)\n  1 failing\n' }));
    expect(summary).toMatchObject({ type: 'text', runner: 'mocha', passed: 4, failed: 1, total: 5 });
  });

  it('reads a byte-order mark and surrounding whitespace as JSON', () => {
    expect(parseTestOutput('\uFEFF\n {"numTotalTests":2,"numPassedTests":2}\n')).toMatchObject({ type: 'jest', total: 2 });
  });
});

describe('parseTestOutput: runner text', () => {
  it('reads Jest text with failures (upstream returned null)', () => {
    expect(parseTestOutput('Tests: 1 failed, 5 passed, 6 total')).toMatchObject({
      type: 'text', runner: 'jest', failed: 1, passed: 5, total: 6, skipped: 0,
    });
  });

  it('reads Vitest text (upstream returned null)', () => {
    expect(parseTestOutput(' Test Files  1 passed (1)\n      Tests  5 passed (5)\n')).toMatchObject({
      type: 'text', runner: 'vitest', passed: 5, failed: 0, total: 5,
    });
    expect(parseTestOutput('      Tests  1 failed | 2 passed (3)')).toMatchObject({ failed: 1, passed: 2, total: 3 });
  });

  it('reads Mocha passing/failing/pending', () => {
    expect(parseTestOutput('\n  7 passing (20ms)\n  2 pending\n  1 failing\n')).toMatchObject({
      runner: 'mocha', passed: 7, skipped: 2, failed: 1, total: 10,
    });
  });

  it('reads TAP counters and plain TAP test points', () => {
    expect(parseTestOutput('TAP version 13\nok 1 a\n# tests 1\n# pass 1\n# fail 0\n')).toMatchObject({
      runner: 'tap', total: 1, passed: 1, failed: 0,
    });
    const plain = 'TAP version 13\n1..4\nok 1 - a\nnot ok 2 - b\nok 3 - c # SKIP no db\nnot ok 4 - d # TODO later\n';
    expect(parseTestOutput(plain)).toMatchObject({ runner: 'tap', total: 4, passed: 1, failed: 1, skipped: 1, todo: 1, planned: 4 });
  });

  it('does not read "ok" lines as TAP without a plan', () => {
    expect(parseTestOutput('ok 1 thing\nnot ok 2 other\n')).toBeNull();
  });

  it('reads pytest summaries, including "no tests ran"', () => {
    expect(parseTestOutput('==== 1 failed, 2 passed, 1 skipped in 0.12s ====')).toMatchObject({
      runner: 'pytest', failed: 1, passed: 2, skipped: 1, total: 4,
    });
    expect(parseTestOutput('=== 3 passed, 1 warning in 65.20s (0:01:05) ===')).toMatchObject({ passed: 3, total: 3, warnings: 1 });
    expect(parseTestOutput('============ no tests ran in 0.01s =============')).toMatchObject({ runner: 'pytest', total: 0 });
  });

  it('reads cargo results and sums several binaries', () => {
    const out = 'test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s\n' +
      'test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out\n';
    expect(parseTestOutput(out)).toMatchObject({ runner: 'cargo', passed: 4, failed: 2, skipped: 1, total: 7 });
  });

  it('reads go test package lines', () => {
    expect(parseTestOutput('ok  \texample.com/a\t0.010s\nok  \texample.com/b\t(cached)\n?   \texample.com/c\t[no test files]\n')).toMatchObject({
      runner: 'go', failed: 0, packagesPassed: 2, packagesFailed: 0,
    });
  });

  it('strips ANSI colour codes before matching', () => {
    const coloured = '\u001b[1mTests:       \u001b[22m\u001b[1m\u001b[31m2 failed\u001b[39m\u001b[22m, \u001b[1m\u001b[32m8 passed\u001b[39m\u001b[22m, 10 total';
    expect(parseTestOutput(coloured)).toMatchObject({ runner: 'jest', failed: 2, passed: 8, total: 10, snippet: 'Tests:       2 failed, 8 passed, 10 total' });
  });

  it('handles CRLF and carriage-return progress lines', () => {
    expect(parseTestOutput('running\r\n  3 passing (1s)\r\n')).toMatchObject({ runner: 'mocha', passed: 3 });
    expect(parseTestOutput('progress 10%\rprogress 100%\r=== 2 passed in 0.1s ===')).toMatchObject({ runner: 'pytest', passed: 2 });
  });

  it('falls back to a generic "N passed, N failed" line', () => {
    expect(parseTestOutput('Summary: 12 passed, 3 failed, 1 skipped')).toMatchObject({
      type: 'text', runner: 'unknown', passed: 12, failed: 3, skipped: 1, total: 16,
    });
  });

  it('prefers the summary printed last when several runners appear', () => {
    const log = 'Tests: 1 failed, 5 passed, 6 total\n...\n=== 9 passed in 0.5s ===\n';
    expect(parseTestOutput(log)).toMatchObject({ runner: 'pytest', passed: 9 });
    const reversed = '=== 9 passed in 0.5s ===\n...\nTests: 1 failed, 5 passed, 6 total\n';
    expect(parseTestOutput(reversed)).toMatchObject({ runner: 'jest', passed: 5, failed: 1 });
  });

  it('takes the last summary of a runner that ran twice', () => {
    const log = 'Tests: 2 failed, 4 passed, 6 total\nrerun\nTests: 6 passed, 6 total\n';
    expect(parseTestOutput(log)).toMatchObject({ runner: 'jest', passed: 6, failed: 0 });
  });

  it('prefers a runner summary over an earlier stray generic line', () => {
    expect(parseTestOutput('note: 3 passed, 1 failed last week\n  5 passing (2ms)\n')).toMatchObject({ runner: 'mocha', passed: 5 });
  });
});

describe('parseTestOutput: JUnit XML', () => {
  it('counts test cases by their failure, error and skipped children', () => {
    const xml = `<?xml version="1.0"?>
<testsuites name="jest tests">
  <testsuite name="a" tests="4"><testcase name="x &amp; y"/><testcase name="f"><failure message="boom"/></testcase>
    <testcase name="e"><error/></testcase><testcase name="s"><skipped/></testcase></testsuite>
</testsuites>`;
    expect(parseTestOutput(xml)).toEqual({
      type: 'junit',
      runner: 'jest',
      total: 4,
      passed: 1,
      failed: 2,
      skipped: 1,
      errors: 1,
      failures: [
        { name: 'f', file: 'a', message: 'boom' },
        { name: 'e', file: 'a' },
      ],
    });
  });

  it('names failing tests with their file and first message line, entities decoded, at most 50', () => {
    const cases = Array.from({ length: 60 }, (_, i) => `<testcase name="t &lt;${i}&gt;" classname="suite" file="src/t.test.ts"><failure message="expected 1 &amp; 2&#10;second line">trace</failure></testcase>`).join('');
    const summary = parseTestOutput(`<testsuites><testsuite name="s" tests="60">${cases}</testsuite></testsuites>`) as unknown as { failed: number; failures: unknown[] };
    expect(summary.failed).toBe(60);
    expect(summary.failures).toHaveLength(50);
    expect(summary.failures[0]).toEqual({ name: 't <0>', file: 'src/t.test.ts', message: 'expected 1 & 2' });
  });

  it('names the failing tests of a Jest-style JSON report with their file and message', () => {
    const report = {
      numTotalTests: 2,
      numPassedTests: 1,
      numFailedTests: 1,
      numPendingTests: 0,
      testResults: [
        {
          name: '/p/src/math.test.ts',
          assertionResults: [
            { fullName: 'math adds', status: 'passed', failureMessages: [] },
            { fullName: 'math divides', status: 'failed', failureMessages: ['\u001b[31mError: expected 2 to be 3\u001b[39m\n    at x'] },
          ],
        },
      ],
    };
    expect(parseTestOutput(JSON.stringify(report))).toMatchObject({ failed: 1, failures: [{ name: 'math divides', file: '/p/src/math.test.ts', message: 'Error: expected 2 to be 3' }] });
  });

  it('sums the attributes of suites that list no test cases', () => {
    const xml = '<testsuites><testsuite tests="5" failures="1" errors="0" skipped="2"/><testsuite tests="3" failures="0" errors="1"/></testsuites>';
    expect(parseTestOutput(xml)).toMatchObject({ type: 'junit', total: 8, failed: 2, skipped: 2, passed: 4, errors: 1 });
  });

  it('counts nested suites once', () => {
    const xml = '<testsuites><testsuite name="outer"><testsuite name="inner"><testcase/><testcase><failure/></testcase></testsuite></testsuite></testsuites>';
    expect(parseTestOutput(xml)).toMatchObject({ type: 'junit', total: 2, passed: 1, failed: 1 });
  });

  it('never expands DOCTYPE entities (billion laughs)', () => {
    const bomb = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<testsuite name="&lol3;" tests="1"><testcase name="&lol3;"/></testsuite>`;
    expect(parseTestOutput(bomb)).toMatchObject({ type: 'junit', total: 1, passed: 1 });
  });

  it('still counts a report the XML parser rejects, from its testsuite attributes', () => {
    const deep = `<testsuite tests="2" failures="1">${'<a>'.repeat(500)}${'</a>'.repeat(500)}</testsuite>`;
    expect(parseTestOutput(deep)).toMatchObject({ type: 'junit', total: 2, failed: 1, passed: 1 });
  });

  it('reads a text log that merely quotes a <testsuite> tag as text', () => {
    const log = 'writing report <testsuite tests="99" failures="9"> to disk\n  3 passing (4ms)\n';
    expect(parseTestOutput(log)).toMatchObject({ type: 'text', runner: 'mocha', passed: 3 });
  });

  it('returns null for XML that is not a test report', () => {
    expect(parseTestOutput('<?xml version="1.0"?><project><name>x</name></project>')).toBeNull();
    expect(parseTestOutput('<testsuite>')).toBeNull();
  });
});
