/**
 * Machine-readable test reports in JSON: Jest-style reports (Jest `--json`, Vitest
 * `--reporter=json`), Mocha's JSON reporter and `go test -json` event streams.
 */
import { FAILURES_MAX, compact, failedTest, makeSnippet, sumCounts, toCount, type FailedTest, type TestSummary } from './test-results-summary.js';
import { isRecord } from '../../core/jcs.js';

const JEST_KEYS = ['numTotalTests', 'numPassedTests', 'numFailedTests', 'numPendingTests'] as const;

/**
 * A Jest-style report is any object carrying one of Jest's numeric count keys, whatever the
 * values: upstream required `numTotalTests || numPassedTests` to be truthy and so lost all-zero
 * runs and failure-only reports.
 */
export function jestStyleSummary(value: unknown): TestSummary | null {
  if (!isRecord(value) || !JEST_KEYS.some((k) => typeof value[k] === 'number')) return null;
  const passed = toCount(value.numPassedTests) ?? 0;
  const failed = toCount(value.numFailedTests) ?? 0;
  const skipped = toCount(value.numPendingTests) ?? 0;
  const todo = typeof value.numTodoTests === 'number' ? toCount(value.numTodoTests) : undefined;
  const total = toCount(value.numTotalTests) ?? sumCounts(passed, failed, skipped, todo);
  const failures = jestFailures(value);
  return compact({ type: 'jest', total, passed, failed, skipped, todo, failures: failures.length > 0 ? failures : undefined });
}

/** The failing tests of a Jest-style report: `testResults[].assertionResults[]` with status "failed". */
function jestFailures(value: Record<string, unknown>): FailedTest[] {
  const out: FailedTest[] = [];
  if (!Array.isArray(value.testResults)) return out;
  for (const file of value.testResults) {
    if (!isRecord(file) || !Array.isArray(file.assertionResults)) continue;
    for (const test of file.assertionResults) {
      if (out.length >= FAILURES_MAX) return out;
      if (!isRecord(test) || test.status !== 'failed') continue;
      const messages = Array.isArray(test.failureMessages) ? test.failureMessages : [];
      const f = failedTest(test.fullName ?? test.title, file.name, messages[0]);
      if (f !== null) out.push(f);
    }
  }
  return out;
}

/** Mocha `--reporter json`: `{ stats: { tests, passes, failures, pending } }`. */
export function mochaJsonSummary(value: unknown): TestSummary | null {
  if (!isRecord(value) || !isRecord(value.stats)) return null;
  const stats = value.stats;
  if (typeof stats.passes !== 'number' && typeof stats.failures !== 'number') return null;
  const passed = toCount(stats.passes) ?? 0;
  const failed = toCount(stats.failures) ?? 0;
  const skipped = toCount(stats.pending) ?? 0;
  const total = Math.max(toCount(stats.tests) ?? 0, sumCounts(passed, failed, skipped));
  return compact({ type: 'json', runner: 'mocha', total, passed, failed, skipped });
}

/**
 * `go test -json`: one event object per line. The last pass/fail/skip action of each test
 * (package + name) counts, so re-runs (`-count`) do not inflate totals beyond what finished.
 */
export function goJsonSummary(content: string): TestSummary | null {
  const outcomes = new Map<string, string>();
  const packageLines: string[] = [];
  let events = 0;
  for (const raw of content.split('\n')) {
    const line = raw.trim();
    if (!line.startsWith('{')) continue;
    let event: unknown;
    try {
      event = JSON.parse(line);
    } catch {
      continue;
    }
    if (!isRecord(event) || typeof event.Action !== 'string' || typeof event.Package !== 'string') continue;
    events++;
    const action = event.Action;
    if (action !== 'pass' && action !== 'fail' && action !== 'skip') continue;
    if (typeof event.Test === 'string') outcomes.set(`${event.Package}\u0000${event.Test}`, action);
    else packageLines.push(`${action === 'pass' ? 'ok' : action === 'fail' ? 'FAIL' : '?'} ${event.Package}`);
  }
  if (events === 0) return null;
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const action of outcomes.values()) {
    if (action === 'pass') passed++;
    else if (action === 'fail') failed++;
    else skipped++;
  }
  return compact({
    type: 'json',
    runner: 'go',
    snippet: packageLines.length > 0 ? makeSnippet(packageLines.slice(-10)) : undefined,
    total: sumCounts(passed, failed, skipped),
    passed,
    failed,
    skipped,
  });
}

/** Every string inside a JSON value, one per line, so text detection can see logs embedded in JSON. */
export function jsonStrings(value: unknown, limit = 10_000): string {
  const out: string[] = [];
  const stack: unknown[] = [value];
  while (stack.length > 0 && out.length < limit) {
    const item = stack.pop();
    if (typeof item === 'string') out.push(item);
    else if (Array.isArray(item)) for (let i = item.length - 1; i >= 0; i--) stack.push(item[i]);
    else if (isRecord(item)) {
      const values = Object.values(item);
      for (let i = values.length - 1; i >= 0; i--) stack.push(values[i]);
    }
  }
  return out.join('\n');
}
