/**
 * Commands run through `cairn run` during an iteration: each keeps its output as
 * `<iterationDir>/run-NNN.log` and a record `run-NNN.json` (command, exit code, times). Post
 * reports the test results of the newest run whose output a parser recognises, ahead of the
 * seed's search (`findTestResults`), because a run cairn watched is the iteration's own evidence;
 * the logs also sit where that search looks (`{iterationDir}/*.log`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ContainedDir, rootedAt } from '../../core/contained-dir.js';
import { errnoCode } from '../../core/errors.js';
import { parseTestOutput, type TestResults } from './test-results.js';

export const RUN_PREFIX = 'run-';

export interface RunRecord {
  command: string[];
  /** The command's exit code; null when a signal ended it. */
  exitCode: number | null;
  signal?: string;
  startedAt: string;
  durationMs: number;
  /** The log's file name in the iteration directory. */
  log: string;
  /** Bytes of output the command wrote; the log keeps its head and tail when this is past the cap. */
  outputBytes: number;
  truncated?: boolean;
}

const RUN_NAME = /^run-(\d{3,})\.json$/;
/** The test summary is near the end of a log; reading more than this of one buys nothing. */
const MAX_LOG_READ = 8 * 1024 * 1024;

/**
 * The iteration directory, opened from `within` (the project root) with no link followed in any
 * component (ContainedDir): a directory swapped for a link after the iteration was listed cannot
 * redirect the log or the record outside the project.
 */
function openIterationDir(iterationDir: string, within: string): ContainedDir {
  const { root, parts } = rootedAt(iterationDir, within);
  return ContainedDir.require(root, parts);
}

/** Claims the next `run-NNN` name (an exclusive, no-follow create of the log), so concurrent runs never share one. */
export function claimRunLog(iterationDir: string, within: string): { name: string; fd: number } {
  const dir = openIterationDir(iterationDir, within);
  try {
    for (let n = listRuns(iterationDir).length + 1; n < 100_000; n++) {
      const name = `${RUN_PREFIX}${String(n).padStart(3, '0')}`;
      try {
        return { name, fd: dir.createFile(`${name}.log`, 0o644) };
      } catch (e) {
        if (errnoCode(e) !== 'EEXIST') throw e;
      }
    }
  } finally {
    dir.close();
  }
  throw new Error(`no free run name in ${iterationDir}`);
}

/** Writes `<name>.json` atomically (temp + rename inside the held iteration directory). */
export function writeRunRecord(iterationDir: string, name: string, record: RunRecord, within: string): void {
  const dir = openIterationDir(iterationDir, within);
  try {
    dir.writeFile(`${name}.json`, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o644 });
  } finally {
    dir.close();
  }
}

/** The runs of an iteration, oldest first; unreadable records are skipped. */
export function listRuns(iterationDir: string): RunRecord[] {
  let names: string[];
  try {
    names = fs.readdirSync(iterationDir).filter((n) => RUN_NAME.test(n));
  } catch {
    return [];
  }
  names.sort((a, b) => Number(RUN_NAME.exec(a)![1]) - Number(RUN_NAME.exec(b)![1]));
  const out: RunRecord[] = [];
  for (const name of names) {
    try {
      const rec = JSON.parse(fs.readFileSync(path.join(iterationDir, name), 'utf8')) as RunRecord;
      if (typeof rec.log === 'string' && Array.isArray(rec.command)) out.push(rec);
    } catch {
      // a record being written or damaged: its log is still found by the seed's search
    }
  }
  return out;
}

function readTail(file: string): string | null {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return null;
    const length = Math.min(st.size, MAX_LOG_READ);
    const buf = Buffer.alloc(length);
    const n = fs.readSync(fd, buf, 0, length, st.size - length);
    return buf.subarray(0, n).toString('utf8');
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

/** The test results of the newest run whose output parses as a test report, or null. */
export function testResultsFromRuns(iterationDir: string): TestResults | null {
  const runs = listRuns(iterationDir);
  for (let i = runs.length - 1; i >= 0; i--) {
    const run = runs[i]!;
    const file = path.join(iterationDir, path.basename(run.log));
    const text = readTail(file);
    const summary = text === null ? null : parseTestOutput(text);
    if (summary) return { found: true, file, summary };
  }
  return null;
}
