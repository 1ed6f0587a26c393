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
import { parseJsonBounded } from '../../core/bounded-json.js';
import { errnoCode } from '../../core/errors.js';
import { decodeUtf8Strict } from '../../core/utf8.js';
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
/** A run record is a few hundred bytes; anything near this is not one cairn wrote. */
const MAX_RECORD_BYTES = 1024 * 1024;

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
    for (let n = readRuns(dir).length + 1; n < 100_000; n++) {
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
/**
 * The run records of an iteration, oldest first. With `within` (the project root) the iteration
 * directory is opened from it with no link followed in any component (ContainedDir), and each
 * record is read no-follow, size- and depth-bounded: a planted or swapped-in link is never read.
 */
export function listRuns(iterationDir: string, within?: string): RunRecord[] {
  let dir: ContainedDir | null;
  try {
    const { root, parts } = rootedAt(iterationDir, within);
    dir = ContainedDir.open(root, parts);
  } catch {
    return [];
  }
  if (dir === null) return [];
  try {
    return readRuns(dir);
  } finally {
    dir.close();
  }
}

function readRuns(dir: ContainedDir): RunRecord[] {
  let names: string[];
  try {
    names = dir.entries().filter((d) => d.isFile() && RUN_NAME.test(d.name)).map((d) => d.name);
  } catch {
    return [];
  }
  names.sort((a, b) => Number(RUN_NAME.exec(a)![1]) - Number(RUN_NAME.exec(b)![1]));
  const out: RunRecord[] = [];
  for (const name of names) {
    try {
      const bytes = dir.readFile(name, { maxBytes: MAX_RECORD_BYTES });
      if (bytes === null) continue;
      const rec = parseJsonBounded(decodeUtf8Strict(bytes, dir.shown(name)), { file: dir.shown(name), what: 'run record' }) as RunRecord | null;
      if (rec !== null && typeof rec === 'object' && typeof rec.log === 'string' && Array.isArray(rec.command)) out.push(rec);
    } catch {
      // a record being written, damaged, or a link: its log is still found by the seed's search
    }
  }
  return out;
}

/** The last MAX_LOG_READ bytes of the regular file `name` in `dir` (no link followed), or null. */
function readTail(dir: ContainedDir, name: string): string | null {
  let fd: number | null;
  try {
    fd = dir.openFile(name);
  } catch {
    return null;
  }
  if (fd === null) return null;
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

/** The test results of the newest run whose output parses as a test report, or null (`within`: see listRuns). */
export function testResultsFromRuns(iterationDir: string, within?: string): TestResults | null {
  let dir: ContainedDir | null;
  try {
    const { root, parts } = rootedAt(iterationDir, within);
    dir = ContainedDir.open(root, parts);
  } catch {
    return null;
  }
  if (dir === null) return null;
  try {
    const runs = readRuns(dir);
    for (let i = runs.length - 1; i >= 0; i--) {
      const name = path.basename(runs[i]!.log);
      const text = readTail(dir, name);
      const summary = text === null ? null : parseTestOutput(text);
      if (summary) return { found: true, file: path.join(iterationDir, name), summary };
    }
    return null;
  } finally {
    dir.close();
  }
}
