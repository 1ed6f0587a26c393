/**
 * Test-result detection for iteration snapshots: the seed's `findTestResults` and
 * `parseTestOutput`, recognising what real runners print (see `test-results-text.ts`,
 * `-json.ts`, `-junit.ts` and `-coverage.ts` for each format and its counting rules).
 */
import { closeSync, constants, fstatSync, openSync, readlinkSync, readSync, realpathSync } from 'node:fs';
import * as path from 'node:path';
import { parseCoverageSummaryJson, parseLcovHtmlReport } from './test-results-coverage.js';
import { goJsonSummary, jestStyleSummary, jsonStrings, mochaJsonSummary } from './test-results-json.js';
import { looksLikeJUnit, mergeJUnitSummaries, parseJUnitXml } from './test-results-junit.js';
import { candidateFiles, TEST_PATTERNS, type Candidate } from './test-results-locations.js';
import type { TestSummary } from './test-results-summary.js';
import { recogniseText } from './test-results-text.js';

export { TEST_PATTERNS };
export type { TestSummary };

export interface TestResults {
  found: boolean;
  file?: string;
  summary?: TestSummary;
}

/** Files up to this size are read whole; JSON reports of big suites run to a few MB. */
const READ_WHOLE_MAX = 16 * 1024 * 1024;
/** Of a bigger file only the tail is read: runners print their summary last. */
const READ_TAIL = 1024 * 1024;

/**
 * Parses test output (JSON, XML or text) into a summary, or returns null when no runner's
 * summary is recognised. Order: a JSON document (Jest-style, then Mocha JSON), a `go test -json`
 * stream, a JUnit XML report, then runner summary lines in the text; JSON that is none of those
 * is searched as text, through its string values and then raw. Never throws.
 */
export function parseTestOutput(content: string): TestSummary | null {
  if (typeof content !== 'string' || content.length === 0) return null;
  try {
    return parseString(content);
  } catch {
    // Every parser is written not to throw; this guard keeps the documented contract even if
    // one meets an input nobody foresaw (a snapshot must never fail over a log file).
    return null;
  }
}

function parseString(content: string): TestSummary | null {
  const trimmed = content.trim().replace(/^\uFEFF/, '');
  let json: unknown;
  let isJson = false;
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      json = JSON.parse(trimmed);
      isJson = true;
    } catch {
      // Not one JSON document: maybe a `go test -json` stream, maybe text that starts with a brace.
    }
  }
  if (isJson) {
    const structured = jestStyleSummary(json) ?? mochaJsonSummary(json);
    if (structured) return structured;
  }
  if (trimmed.startsWith('{')) {
    const goJson = goJsonSummary(trimmed);
    if (goJson) return goJson;
  }
  // Only a document that IS XML is read as a report; a text log quoting `<testsuite` is text.
  if (!isJson && trimmed.startsWith('<') && looksLikeJUnit(trimmed)) {
    const junit = parseJUnitXml(trimmed);
    if (junit) return junit;
  }
  // In JSON, a log's line breaks are `\n` escapes: read its string values as text first.
  if (isJson) return recogniseText(jsonStrings(json)) ?? recogniseText(content);
  return recogniseText(content);
}

/**
 * Where a candidate may really be: below the project root or the iteration's parent (both
 * resolved once). A candidate reached through a planted link — at its name, or any directory on
 * the way, swapped in at any moment — is elsewhere, and is not read (docs/containment.md).
 */
type Within = readonly string[];

function realDirs(dirs: readonly string[]): Within {
  const out: string[] = [];
  for (const dir of dirs) {
    try {
      out.push(realpathSync(dir));
    } catch {
      // missing: nothing below it to read
    }
  }
  return out;
}

/** The real path of what `fd` holds: the descriptor's own link on Linux (race-free), else the path's. */
function openedPath(fd: number, file: string): string {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return realpathSync(file);
  }
}

function isBelow(file: string, within: Within): boolean {
  return within.some((dir) => {
    const rel = path.relative(dir, file);
    return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
  });
}

/** A regular file's text (whole, or its tail when large); null when it is not readable or not within. */
function readCandidate(file: string, within: Within): string | null {
  let fd: number | undefined;
  try {
    // O_NONBLOCK: opening a FIFO named like a log must not hang the snapshot. O_NOFOLLOW: a link
    // at the name is not followed; the opened file's real path catches one on the way.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOFOLLOW ?? 0));
    if (!isBelow(openedPath(fd, file), within)) return null;
    const stat = fstatSync(fd);
    // Directories named `x.log`, FIFOs and devices are skipped, never read (upstream threw EISDIR).
    if (!stat.isFile()) return null;
    const length = stat.size <= READ_WHOLE_MAX ? stat.size : READ_TAIL;
    const buffer = Buffer.alloc(length);
    let read = 0;
    while (read < length) {
      const n = readSync(fd, buffer, read, length - read, stat.size - length + read);
      if (n === 0) break;
      read += n;
    }
    return buffer.subarray(0, read).toString('utf8');
  } catch {
    return null;
  } finally {
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch {
        // Closing a read-only descriptor cannot lose data; nothing to report.
      }
    }
  }
}

function parseCandidate(candidate: Candidate, within: Within): TestSummary | null {
  if (candidate.kind === 'junit-dir') {
    const summaries: TestSummary[] = [];
    for (const member of candidate.members ?? []) {
      const content = readCandidate(member, within);
      const summary = content === null ? null : parseJUnitXml(content);
      if (summary) summaries.push(summary);
    }
    return mergeJUnitSummaries(summaries);
  }
  const content = readCandidate(candidate.file, within);
  if (content === null) return null;
  if (candidate.kind === 'coverage-json') return parseCoverageSummaryJson(content) ?? parseTestOutput(content);
  if (candidate.kind === 'lcov-html') return parseLcovHtmlReport(content);
  return parseTestOutput(content);
}

/**
 * Searches the seed's documented locations in the documented order, then JUnit XML reports,
 * TAP files and the `TEST_PATTERNS` globs (see `candidateFiles`). The first file that parses
 * wins. Unreadable files are skipped; this never throws. `file` is the absolute path of the
 * file that gave the summary, or of the directory whose `TEST-*.xml` reports were summed.
 */
export function findTestResults(projectRoot: string, iterationDir: string): TestResults {
  let candidates: Candidate[];
  try {
    candidates = candidateFiles(projectRoot, iterationDir);
  } catch {
    return { found: false };
  }
  // The iteration's parent counts only when the caller put the iteration outside the project:
  // below the root, the root already covers it (and resolving it could follow a planted link).
  const parent = path.resolve(iterationDir, '..');
  const within = realDirs(isBelow(parent, [path.resolve(projectRoot)]) || parent === path.resolve(projectRoot) ? [projectRoot] : [projectRoot, parent]);
  for (const candidate of candidates) {
    const summary = parseCandidate(candidate, within);
    if (summary) return { found: true, file: candidate.file, summary };
  }
  return { found: false };
}
