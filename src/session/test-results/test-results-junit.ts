/**
 * JUnit XML reports (`<testsuites>`/`<testsuite>`), as written by Vitest, Jest (jest-junit),
 * pytest `--junitxml`, node:test's junit reporter, Maven Surefire and Gradle.
 *
 * Counting: when the report lists `<testcase>` elements, each one is classified by its child
 * (`<failure>`, `<error>`, `<skipped>`), which is exact even for nested suites. A report without
 * test cases falls back to the `tests/failures/errors/skipped` attributes of its innermost
 * suites. `failed` includes errors (both are tests that did not pass); `errors` is also given
 * on its own. Entities are never expanded (no entity-expansion blow-up), and a document the
 * parser rejects is read with a plain attribute scan, so a truncated report still counts.
 */
import { createRequire } from 'node:module';
import type { XMLParser } from 'fast-xml-parser';
import { FAILURES_MAX, compact, failedTest, sumCounts, toCount, type FailedTest, type TestSummary } from './test-results-summary.js';
import { isRecord } from '../../core/jcs.js';

type XmlNode = Record<string, unknown>;

interface Tally {
  cases: number;
  failures: number;
  errors: number;
  skipped: number;
}

const ARRAY_TAGS = new Set(['testsuite', 'testcase', 'failure', 'error', 'skipped']);

let parser: XMLParser | undefined;

/**
 * fast-xml-parser loads on the first report that looks like JUnit, through its one-file CommonJS
 * build: a `session pre` or `post` that finds no such report (most of them, on every agent turn)
 * never pays the ~15 ms its ES modules cost to load.
 */
function xmlParser(): XMLParser {
  if (parser === undefined) {
    const { XMLParser: Parser } = createRequire(import.meta.url)('fast-xml-parser') as typeof import('fast-xml-parser');
    parser = new Parser({
      ignoreAttributes: false,
      attributeNamePrefix: '@_',
      processEntities: false,
      htmlEntities: false,
      parseTagValue: false,
      parseAttributeValue: false,
      ignoreDeclaration: true,
      ignorePiTags: true,
      isArray: (name) => ARRAY_TAGS.has(name),
    });
  }
  return parser;
}

/** True when the text looks like a JUnit report at all (cheap check before parsing). */
export function looksLikeJUnit(content: string): boolean {
  return /<testsuites?[\s>/]/.test(content);
}

export function parseJUnitXml(content: string): TestSummary | null {
  if (!looksLikeJUnit(content)) return null;
  let doc: unknown;
  try {
    doc = xmlParser().parse(content);
  } catch {
    return scanAttributes(content);
  }
  if (!isRecord(doc)) return scanAttributes(content);
  const root = isRecord(doc.testsuites) ? doc.testsuites : doc;
  const suites = asNodes(root.testsuite);
  if (suites.length === 0) return isRecord(doc.testsuites) ? fromAttributes(doc.testsuites, runnerOf(doc.testsuites)) : null;
  const tally: Tally = { cases: 0, failures: 0, errors: 0, skipped: 0 };
  const failed: FailedTest[] = [];
  for (const suite of suites) countCases(suite, tally, 0, failed);
  const runner = isRecord(doc.testsuites) ? runnerOf(doc.testsuites) : undefined;
  if (tally.cases > 0) {
    const summary = summarise(tally, runner);
    if (failed.length > 0) summary.failures = failed;
    return summary;
  }
  return sumLeafSuites(suites, runner);
}

/** Elements as nodes; an empty element (`<testcase/>`) parses to '' and is still one element. */
function asNodes(value: unknown): XmlNode[] {
  if (value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((v) => (isRecord(v) ? v : {}));
}

/** Nesting is bounded by the parser; the depth guard keeps a hostile document from recursing far. */
function countCases(suite: XmlNode, tally: Tally, depth: number, failed: FailedTest[]): void {
  if (depth > 50) return;
  for (const testcase of asNodes(suite.testcase)) {
    tally.cases++;
    const problem = testcase.error ?? testcase.failure;
    if (testcase.error !== undefined) tally.errors++;
    else if (testcase.failure !== undefined) tally.failures++;
    else if (testcase.skipped !== undefined) tally.skipped++;
    if (problem !== undefined && failed.length < FAILURES_MAX) {
      const first = asNodes(problem)[0] ?? {};
      const message = first['@_message'] ?? first['#text'] ?? (typeof problem === 'string' ? problem : undefined);
      const f = failedTest(testcase['@_name'], testcase['@_file'] ?? testcase['@_classname'] ?? suite['@_file'] ?? suite['@_name'], message);
      if (f !== null) failed.push(f);
    }
  }
  for (const child of asNodes(suite.testsuite)) countCases(child, tally, depth + 1, failed);
}

function sumLeafSuites(suites: XmlNode[], runner: string | undefined): TestSummary | null {
  const tally: Tally = { cases: 0, failures: 0, errors: 0, skipped: 0 };
  let found = false;
  const visit = (suite: XmlNode, depth: number): void => {
    const children = asNodes(suite.testsuite);
    if (children.length > 0 && depth < 50) {
      for (const child of children) visit(child, depth + 1);
      return;
    }
    if (toCount(suite['@_tests']) === undefined) return;
    found = true;
    addAttributes(tally, suite);
  };
  for (const suite of suites) visit(suite, 0);
  return found ? summarise(tally, runner) : null;
}

function addAttributes(tally: Tally, node: Record<string, unknown>): void {
  tally.cases = sumCounts(tally.cases, toCount(node['@_tests']));
  tally.failures = sumCounts(tally.failures, toCount(node['@_failures']));
  tally.errors = sumCounts(tally.errors, toCount(node['@_errors']));
  tally.skipped = sumCounts(tally.skipped, toCount(node['@_skipped'] ?? node['@_disabled']));
}

function fromAttributes(node: XmlNode, runner: string | undefined): TestSummary | null {
  if (toCount(node['@_tests']) === undefined) return null;
  const tally: Tally = { cases: 0, failures: 0, errors: 0, skipped: 0 };
  addAttributes(tally, node);
  return summarise(tally, runner);
}

/** `<testsuites name="vitest tests">`, `"pytest tests"`, `"jest tests"` name their runner. */
function runnerOf(node: XmlNode): string | undefined {
  const name = node['@_name'];
  if (typeof name !== 'string') return undefined;
  return /^([a-z][\w:.-]*) tests$/i.exec(name)?.[1]?.toLowerCase();
}

function summarise(tally: Tally, runner: string | undefined): TestSummary {
  const failed = sumCounts(tally.failures, tally.errors);
  // Attribute counts can disagree with each other; passed never goes below zero.
  const passed = Math.max(0, tally.cases - failed - tally.skipped);
  const total = Math.max(tally.cases, sumCounts(passed, failed, tally.skipped));
  return compact({ type: 'junit', runner, total, passed, failed, skipped: tally.skipped, errors: tally.errors });
}

/** Fallback for documents the parser rejects: sum the `<testsuite …>` start tags' attributes. */
function scanAttributes(content: string): TestSummary | null {
  const tally: Tally = { cases: 0, failures: 0, errors: 0, skipped: 0 };
  let found = false;
  for (const tag of content.matchAll(/<testsuite\s([^<>]{0,4000})>/g)) {
    const attributes: Record<string, unknown> = {};
    for (const attr of (tag[1] ?? '').matchAll(/([\w:-]+)\s*=\s*"([^"]*)"|([\w:-]+)\s*=\s*'([^']*)'/g)) {
      attributes[`@_${attr[1] ?? attr[3] ?? ''}`] = attr[2] ?? attr[4];
    }
    if (toCount(attributes['@_tests']) === undefined) continue;
    found = true;
    addAttributes(tally, attributes);
  }
  return found ? summarise(tally, undefined) : null;
}

/** One summary for several reports of the same run (one `TEST-<class>.xml` per test class). */
export function mergeJUnitSummaries(summaries: readonly TestSummary[]): TestSummary | null {
  if (summaries.length === 0) return null;
  const sum = (key: 'total' | 'passed' | 'failed' | 'skipped' | 'errors'): number =>
    sumCounts(...summaries.map((s) => toCount(s[key])));
  const runners = new Set(summaries.map((s) => s.runner));
  const runner = runners.size === 1 ? summaries[0]?.runner : undefined;
  return compact({
    type: 'junit',
    runner,
    total: sum('total'),
    passed: sum('passed'),
    failed: sum('failed'),
    skipped: sum('skipped'),
    errors: sum('errors'),
    reports: summaries.length,
  });
}
