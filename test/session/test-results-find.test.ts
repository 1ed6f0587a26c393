import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findTestResults } from '../../src/session/test-results/test-results.js';
import { mkfifo } from '../support/mkfifo.js';
import { withoutPermissionOverride } from '../support/unprivileged.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/test-output/', import.meta.url));

let root: string;
let iterationDir: string;

/** Writes `content` at `rel` under the project root, creating parent directories. */
function put(rel: string, content: string): string {
  const file = path.join(root, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
  return file;
}

function putFixture(rel: string, fixture: string): string {
  const file = path.join(root, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  copyFileSync(path.join(FIXTURES, fixture), file);
  return file;
}

function listTree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const MODULE = fileURLToPath(new URL('../../src/session/test-results/test-results.ts', import.meta.url));

/**
 * Runs findTestResults where file permissions apply: in this process for a normal user, and in a
 * child process without the permission-override capabilities when the suite runs as root.
 */
function findAsUnprivilegedUser(projectRoot: string, iteration: string): unknown {
  if (process.getuid?.() !== 0) return findTestResults(projectRoot, iteration);
  const script = `import { findTestResults } from ${JSON.stringify(MODULE)};\n` +
    `process.stdout.write(JSON.stringify(findTestResults(${JSON.stringify(projectRoot)}, ${JSON.stringify(iteration)})));\n`;
  const [cmd, args] = withoutPermissionOverride(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
  const out = execFileSync(cmd, args, { cwd: REPO, encoding: 'utf8' });
  return JSON.parse(out) as unknown;
}

const JEST_JSON = JSON.stringify({ numTotalTests: 10, numPassedTests: 8, numFailedTests: 2, numPendingTests: 0 });

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'cairn-test-results-'));
  iterationDir = path.join(root, '.aiwg', 'ralph-external', 'iterations', '001');
  mkdirSync(iterationDir, { recursive: true });
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('findTestResults: the documented locations, in order', () => {
  it('finds test-results.json with its counts (upstream test 12)', () => {
    const file = put('test-results.json', JEST_JSON);
    const result = findTestResults(root, iterationDir);
    expect(result.found).toBe(true);
    expect(result.file).toBe(file);
    expect(result.summary).toMatchObject({ type: 'jest', total: 10, passed: 8, failed: 2 });
  });

  it('returns {found:false} when nothing is there, and for a missing project root', () => {
    expect(findTestResults(root, iterationDir)).toEqual({ found: false });
    expect(findTestResults(path.join(root, 'missing'), path.join(root, 'missing', 'it', '001'))).toEqual({ found: false });
  });

  it('searches the *.log files of the iteration directory\'s parent first', () => {
    put('test-results.json', JEST_JSON);
    const log = path.join(iterationDir, '..', 'iteration-001.log');
    writeFileSync(log, 'Tests: 1 failed, 5 passed, 6 total\n');
    const result = findTestResults(root, iterationDir);
    expect(result.file).toBe(path.resolve(log));
    expect(result.summary).toMatchObject({ type: 'text', runner: 'jest', failed: 1, passed: 5, total: 6 });
  });

  it('reads parent logs in name order, skipping ones without test results', () => {
    const parent = path.join(iterationDir, '..');
    writeFileSync(path.join(parent, 'c.log'), '  3 passing (1ms)\n');
    writeFileSync(path.join(parent, 'b.log'), '=== 2 passed in 0.01s ===\n');
    writeFileSync(path.join(parent, 'a.log'), 'agent chatter, no tests here\n');
    const result = findTestResults(root, iterationDir);
    expect(result.file).toBe(path.join(parent, 'b.log'));
    expect(result.summary).toMatchObject({ runner: 'pytest', passed: 2 });
  });

  it('skips a directory named x.log, dangling and looping symlinks and a FIFO instead of throwing or hanging', () => {
    const parent = path.join(iterationDir, '..');
    mkdirSync(path.join(parent, 'a-dir.log'));
    symlinkSync(path.join(root, 'nowhere'), path.join(parent, 'b-dangling.log'));
    mkfifo(path.join(parent, 'c-fifo.log'));
    symlinkSync(path.join(parent, 'c-loop-b.log'), path.join(parent, 'c-loop-a.log'));
    symlinkSync(path.join(parent, 'c-loop-a.log'), path.join(parent, 'c-loop-b.log'));
    writeFileSync(path.join(parent, 'd.log'), 'Tests: 4 passed, 4 total\n');
    const result = findTestResults(root, iterationDir);
    expect(result.file).toBe(path.join(parent, 'd.log'));
    expect(result.summary).toMatchObject({ passed: 4, total: 4 });
  });

  it('skips a file it may not read (EACCES)', () => {
    const parent = path.join(iterationDir, '..');
    const secret = path.join(parent, 'a.log');
    writeFileSync(secret, 'Tests: 9 passed, 9 total\n');
    chmodSync(secret, 0o000);
    put('test-results.json', JEST_JSON);
    expect(findAsUnprivilegedUser(root, iterationDir)).toMatchObject({ found: true, summary: { type: 'jest', total: 10 } });
  });

  it('falls back to .aiwg/testing/test-results.md, then coverage/coverage-summary.json', () => {
    putFixture('coverage/coverage-summary.json', 'coverage/coverage-summary.json');
    expect(findTestResults(root, iterationDir)).toMatchObject({
      found: true,
      file: path.join(root, 'coverage', 'coverage-summary.json'),
      summary: { type: 'coverage', lines: 50, statements: 40, functions: 50, branches: 0 },
    });
    const md = put('.aiwg/testing/test-results.md', '# Test run\n\n```\n Tests  12 passed | 1 skipped (13)\n```\n');
    expect(findTestResults(root, iterationDir)).toMatchObject({ file: md, summary: { runner: 'vitest', passed: 12, total: 13 } });
    const json = put('test-results.json', JEST_JSON);
    expect(findTestResults(root, iterationDir).file).toBe(json);
  });

  it('skips an unparseable test-results.json and keeps searching', () => {
    put('test-results.json', '{ "truncated": ');
    const md = put('.aiwg/testing/test-results.md', '  1 passing (3ms)\n');
    expect(findTestResults(root, iterationDir).file).toBe(md);
  });

  it('writes nothing anywhere', () => {
    put('test-results.json', JEST_JSON);
    const before = listTree(root);
    findTestResults(root, iterationDir);
    expect(listTree(root)).toEqual(before);
  });
});

describe('findTestResults: beyond the documented locations', () => {
  it('prefers every documented location over a JUnit report', () => {
    putFixture('junit.xml', 'vitest/junit.xml');
    const json = put('test-results.json', JEST_JSON);
    expect(findTestResults(root, iterationDir).file).toBe(json);
  });

  it('finds junit.xml in the project root', () => {
    const file = putFixture('junit.xml', 'vitest/junit.xml');
    expect(findTestResults(root, iterationDir)).toEqual({
      found: true,
      file,
      summary: {
        type: 'junit',
        runner: 'vitest',
        total: 5,
        passed: 2,
        failed: 1,
        skipped: 2,
        errors: 0,
        failures: [{ name: 'math > is wrong on purpose', file: 'math.test.js', message: 'expected 4 to be 5 // Object.is equality' }],
      },
    });
  });

  it('finds reports/junit*.xml', () => {
    const file = putFixture('reports/junit-pytest.xml', 'pytest/junit.xml');
    expect(findTestResults(root, iterationDir)).toMatchObject({ file, summary: { runner: 'pytest', total: 6, failed: 2 } });
  });

  it('finds Surefire and Gradle TEST-*.xml reports and sums the reports of one directory', () => {
    // Hand-written in Surefire's shape: Maven could not resolve its plugins offline here.
    const report = (cls: string, body: string, tests: number): string =>
      `<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="${cls}" tests="${tests}">${body}</testsuite>\n`;
    put('build/test-results/test/TEST-fx.MathFxTest.xml', report('fx.MathFxTest', '<testcase name="adds"/><testcase name="wrong"><failure/></testcase><testcase name="later"><skipped/></testcase>', 3));
    put('build/test-results/test/TEST-fx.StrsTest.xml', report('fx.StrsTest', '<testcase name="twice"/><testcase name="boom"><error/></testcase>', 2));
    put('build/test-results/test/TEST-broken.xml', 'not xml at all');
    expect(findTestResults(root, iterationDir)).toEqual({
      found: true,
      file: path.join(root, 'build', 'test-results', 'test'),
      summary: { type: 'junit', total: 5, passed: 2, failed: 2, skipped: 1, errors: 1, reports: 2 },
    });
    put('target/surefire-reports/TEST-fx.MathFxTest.xml', report('fx.MathFxTest', '<testcase name="adds"/>', 1));
    expect(findTestResults(root, iterationDir)).toMatchObject({ file: path.join(root, 'target', 'surefire-reports'), summary: { total: 1, reports: 1 } });
  });

  it('never searches node_modules or directories deeper than the bound', () => {
    const xml = '<testsuite tests="1"><testcase/></testsuite>';
    put('test-results/node_modules/pkg/TEST-dep.xml', xml);
    put('build/test-results/a/b/c/d/TEST-deep.xml', xml);
    expect(findTestResults(root, iterationDir)).toEqual({ found: false });
  });

  it('finds TAP files', () => {
    const file = putFixture('results.tap', 'node-test/failing.tap');
    expect(findTestResults(root, iterationDir)).toMatchObject({ file, summary: { runner: 'node:test', total: 5, failed: 1 } });
  });

  it('uses the TEST_PATTERNS globs: ralph outputs, lcov report and .aiwg/testing/*.md', () => {
    const md = put('.aiwg/testing/unit-run.md', 'Tests: 3 passed, 3 total\n');
    expect(findTestResults(root, iterationDir).file).toBe(md);
    const lcov = putFixture('coverage/lcov-report/index.html', 'coverage/lcov-report/index.html');
    expect(findTestResults(root, iterationDir)).toMatchObject({
      file: lcov,
      summary: { type: 'coverage', statements: 40, branches: 0, functions: 50, lines: 50 },
    });
    const output = put('.aiwg/ralph-external/outputs/run-7.log', 'test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n');
    expect(findTestResults(root, iterationDir)).toMatchObject({ file: output, summary: { runner: 'cargo', passed: 2 } });
  });

  it('reads only the tail of a very large log, where runners print their summary', () => {
    const line = 'x'.repeat(99) + '\n';
    const file = put('results.tap', `${line.repeat(170_000)}# tests 2\n# pass 2\n# fail 0\n`);
    expect(findTestResults(root, iterationDir)).toMatchObject({ file, summary: { passed: 2, total: 2 } });
  });
});
