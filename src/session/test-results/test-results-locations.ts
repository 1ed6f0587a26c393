/**
 * Where `findTestResults` looks, in order. Every listing is sorted (UTF-8 byte order) so the
 * result never depends on `readdir` order, and every search is bounded: fixed directories, a
 * small depth, a cap on entries, and never `node_modules` or `.git`.
 */
import { readdirSync, type Dirent } from 'node:fs';
import path from 'node:path';
import { compareUtf8 } from '../../core/utf8.js';

/** How a candidate file is read: as test output, or as one of the two coverage report formats. */
export type CandidateKind = 'output' | 'coverage-json' | 'lcov-html' | 'junit-dir';

export interface Candidate {
  /** The file to read; for `junit-dir`, the directory whose `members` are summed. */
  file: string;
  kind: CandidateKind;
  members?: string[];
}

/** The seed's `TEST_PATTERNS`, relative to the project root, in the documented order. */
export const TEST_PATTERNS: readonly string[] = Object.freeze([
  '.aiwg/ralph-external/outputs/*.log',
  'test-results.json',
  'coverage/lcov-report/index.html',
  '.aiwg/testing/*.md',
]);

/** Conventional JUnit report paths (relative to the root; `*` only in the last segment). */
const JUNIT_FILES = ['junit.xml', 'test-results.xml', 'reports/junit*.xml', 'test-results/*.xml', 'test-reports/*.xml'];

/** Directories where build tools write one `TEST-<class>.xml` per test class (Surefire, Gradle, Ant). */
const JUNIT_TEST_DIRS = ['target/surefire-reports', 'target/failsafe-reports', 'build/test-results', 'test-results', 'reports'];

const MAX_DEPTH = 3;
const MAX_ENTRIES_PER_DIR = 5000;
const MAX_MATCHES = 200;
const SKIPPED_DIRS = new Set(['node_modules', '.git']);

/** Directory entries sorted by name; an unreadable or missing directory is simply empty. */
function listDir(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .slice(0, MAX_ENTRIES_PER_DIR)
      .sort((a, b) => compareUtf8(a.name, b.name));
  } catch {
    return [];
  }
}

/** A `*` wildcard in a file name, as a whole-name regex. */
function nameMatcher(glob: string): RegExp {
  const body = glob.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*');
  return new RegExp(`^${body}$`);
}

/**
 * Expands a pattern whose wildcard is only in its last segment (all of ours and the seed's).
 * Non-regular entries are returned too: the reader skips anything that is not a regular file.
 */
export function expandPattern(root: string, pattern: string): string[] {
  const dir = path.join(root, path.posix.dirname(pattern));
  const base = path.posix.basename(pattern);
  if (!base.includes('*')) return [path.join(root, pattern)];
  const matcher = nameMatcher(base);
  return listDir(dir)
    .filter((e) => matcher.test(e.name))
    .map((e) => path.join(dir, e.name));
}

/** `TEST-*.xml` files under `dir`, depth-first in sorted order, bounded in depth and count. */
function findTestXml(dir: string, depth: number, out: string[]): void {
  if (depth > MAX_DEPTH || out.length >= MAX_MATCHES) return;
  for (const entry of listDir(dir)) {
    if (out.length >= MAX_MATCHES) return;
    const full = path.join(dir, entry.name);
    // Symlinked directories are not followed: they could loop or leave the project.
    if (entry.isDirectory() && !SKIPPED_DIRS.has(entry.name)) findTestXml(full, depth + 1, out);
    else if (/^TEST-.*\.xml$/.test(entry.name)) out.push(full);
  }
}

/**
 * All candidates in search order:
 * 1. `{iterationDir}/../*.log`, 2. `test-results.json`, 3. `.aiwg/testing/test-results.md`,
 * 4. `coverage/coverage-summary.json` (the seed's documented list, in its order); then
 * 5. `{iterationDir}/*.log`, 6. JUnit XML reports (a directory of `TEST-*.xml` reports is one
 * candidate, its reports summed), 7. TAP files (`*.tap` in the root,
 * `{iterationDir}/..` and `test-results/`), 8. the `TEST_PATTERNS` globs.
 * A file reached twice is tried once, at its first position.
 */
export function candidateFiles(projectRoot: string, iterationDir: string): Candidate[] {
  const root = path.resolve(projectRoot);
  const iteration = path.resolve(iterationDir);
  const parent = path.join(iteration, '..');
  const out: Candidate[] = [];
  const seen = new Set<string>();
  const add = (file: string, kind: CandidateKind = 'output', members?: string[]): void => {
    if (seen.has(file)) return;
    seen.add(file);
    out.push(members ? { file, kind, members } : { file, kind });
  };

  for (const file of expandPattern(parent, '*.log')) add(file);
  add(path.join(root, 'test-results.json'));
  add(path.join(root, '.aiwg', 'testing', 'test-results.md'));
  add(path.join(root, 'coverage', 'coverage-summary.json'), 'coverage-json');

  for (const file of expandPattern(iteration, '*.log')) add(file);
  for (const pattern of JUNIT_FILES) for (const file of expandPattern(root, pattern)) add(file);
  // Surefire and Gradle write one report per test class: a directory's reports are one run.
  for (const dir of JUNIT_TEST_DIRS) {
    const found: string[] = [];
    findTestXml(path.join(root, dir), 1, found);
    const byDir = new Map<string, string[]>();
    for (const file of found) byDir.set(path.dirname(file), [...(byDir.get(path.dirname(file)) ?? []), file]);
    for (const [reportDir, members] of byDir) add(reportDir, 'junit-dir', members);
  }
  for (const dir of [root, parent, path.join(root, 'test-results')]) {
    for (const file of expandPattern(dir, '*.tap')) add(file);
  }
  for (const pattern of TEST_PATTERNS) {
    const kind: CandidateKind = pattern.endsWith('.html') ? 'lcov-html' : 'output';
    for (const file of expandPattern(root, pattern)) add(file, kind);
  }
  return out;
}
