/**
 * Hostile trees, the writes inside an iteration directory: `cairn run`'s log and record
 * (claimRunLog, writeRunRecord) and the review (saveReview). The iteration listing never enters
 * a link, but a directory swapped for a link after it was listed must not redirect these writes
 * either: the iteration is opened from the project root with no link followed. Canaries outside
 * must stay byte-identical and nothing may appear outside.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RACE_FREE } from '../../src/core/contained-dir.js';
import { REVIEW_KIND, readSavedReview, saveReview, type IterationReview } from '../../src/review/index.js';
import { PRE_SNAPSHOT_FILE, SnapshotManager, claimRunLog, createNextIterationDir, listRuns, testResultsFromRuns, writeRunRecord, type RunRecord } from '../../src/session/index.js';
import { runCli } from '../support/cli.js';
import { git } from '../support/git.js';
import { expectOutsideIntact, makeOutside, plantLink, printFigures, startSwapper, type Outside } from './support.js';

afterAll(() => printFigures('iteration-writes'));

let tmp: string;
let root: string;
let outside: Outside;
let iterationDir: string;
beforeEach(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-hostile-')));
  root = path.join(tmp, 'project');
  fs.mkdirSync(root);
  git(root, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(root, 'app.ts'), 'export {};\n');
  outside = makeOutside(path.join(tmp, 'outside'));
  iterationDir = createNextIterationDir(root);
  new SnapshotManager(root, { cacheDir: path.join(tmp, 'cache') }).capturePreSnapshot(root, iterationDir);
});
afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

const record = (): RunRecord => ({ command: ['true'], exitCode: 0, startedAt: new Date().toISOString(), durationMs: 1, log: 'run-001.log', outputBytes: 0 });
const review = (): IterationReview =>
  ({ kind: REVIEW_KIND, summary: { files: 0, additions: 0, deletions: 0 }, files: [], notCaptured: [], patch: { text: '', cut: false, chars: 0 } }) as unknown as IterationReview;

/** The three writes, each either done inside the project or refused with a coded error; how many were refused. */
function writeAll(): number {
  let refused = 0;
  const attempt = (write: () => void): void => {
    try {
      write();
    } catch (e) {
      expect((e as { code?: string }).code, String(e)).toBe('ERR_CONTAINMENT');
      refused++;
    }
  };
  attempt(() => {
    const { name, fd } = claimRunLog(iterationDir, root);
    fs.writeSync(fd, 'run output\n');
    fs.closeSync(fd);
    writeRunRecord(iterationDir, name, record(), root);
  });
  attempt(() => writeRunRecord(iterationDir, 'run-999', record(), root));
  attempt(() => saveReview(iterationDir, review(), root));
  return refused;
}

describe('writes inside an iteration directory never follow a link', () => {
  it('the run log, the run record and review.json are refused when the listed iteration directory was swapped for a link', () => {
    const real = `${iterationDir}.moved`;
    fs.renameSync(iterationDir, real);
    plantLink(iterationDir, 'outside-dir', outside);
    expect(writeAll()).toBe(3);
    expectOutsideIntact(outside);
    expect(fs.readdirSync(real).filter((n) => n.startsWith('run-') || n.startsWith('review'))).toEqual([]);
  });

  it('cairn run --iteration-dir naming a link to an outside iteration keeps no output there, and the command still runs', () => {
    // The outside directory looks like an iteration, so only containment stops the write.
    const pre = path.join(outside.dir, PRE_SNAPSHOT_FILE);
    fs.copyFileSync(path.join(iterationDir, PRE_SNAPSHOT_FILE), pre);
    outside.canaries.set(pre, fs.readFileSync(pre));
    fs.rmSync(iterationDir, { recursive: true });
    plantLink(iterationDir, 'outside-dir', outside);
    const r = runCli(['run', '--root', root, '--iteration-dir', iterationDir, '--', process.execPath, '-e', 'console.log("ran")'], { cwd: root, env: { CAIRN_SKIP_SERVERS: '1' } });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('ran');
    expect(r.stderr).toContain('cannot keep the output');
    expectOutsideIntact(outside);
  });

  it('under a swapper exchanging the iteration directory with a link, every write lands inside the project or is refused', async () => {
    const swapper = await startSwapper(iterationDir, `${iterationDir}.swap-link`, outside.dir);
    const ROUNDS = 300;
    let refused = 0;
    let rounds = 0;
    try {
      // Bounded by rounds, not time: on a loaded machine the swapper can win every write of the
      // first ROUNDS, so go on (at most ten times as many) until one write got through.
      for (; rounds < ROUNDS || (refused === rounds * 3 && rounds < 10 * ROUNDS); rounds++) refused += writeAll();
    } finally {
      expect(await swapper.stop()).toBeGreaterThan(0);
    }
    expect(refused).toBeLessThan(rounds * 3);
    if (RACE_FREE) expectOutsideIntact(outside);
  });
});

describe('reads inside an iteration directory never follow a link', () => {
  /** An outside directory that looks like a finished iteration with a run and a review: only containment stops the reads. */
  function outsideIteration(): void {
    const put = (name: string, content: string): void => {
      const p = path.join(outside.dir, name);
      fs.writeFileSync(p, content);
      outside.canaries.set(p, fs.readFileSync(p));
    };
    put('run-001.json', JSON.stringify(record()));
    put('run-001.log', 'Tests:       1 failed, 2 passed, 3 total\n');
    put('review.json', JSON.stringify(review()));
  }

  it('run records, the run log and review.json are not read through an iteration directory swapped for a link', () => {
    outsideIteration();
    // The readers would find all three through the link: the outside directory reads as an iteration.
    expect(listRuns(outside.dir)).toHaveLength(1);
    expect(testResultsFromRuns(outside.dir)?.found).toBe(true);
    expect(readSavedReview(outside.dir)).not.toBeNull();
    fs.rmSync(iterationDir, { recursive: true });
    plantLink(iterationDir, 'outside-dir', outside);
    expect(listRuns(iterationDir, root)).toEqual([]);
    expect(testResultsFromRuns(iterationDir, root)).toBeNull();
    expect(readSavedReview(iterationDir, root)).toBeNull();
    expectOutsideIntact(outside);
  });

  it('a run record planted as a link to an outside record is passed over, and post reports no results from it', () => {
    outsideIteration();
    plantLink(path.join(iterationDir, 'run-001.json'), 'outside-file', outside);
    fs.rmSync(path.join(iterationDir, 'run-001.json'));
    fs.symlinkSync(path.join(outside.dir, 'run-001.json'), path.join(iterationDir, 'run-001.json'));
    fs.symlinkSync(path.join(outside.dir, 'run-001.log'), path.join(iterationDir, 'run-001.log'));
    expect(listRuns(iterationDir, root)).toEqual([]);
    expect(testResultsFromRuns(iterationDir, root)).toBeNull();
    const post = new SnapshotManager(root, { cacheDir: path.join(tmp, 'cache') }).capturePostSnapshot(root, iterationDir);
    expect(JSON.stringify(post)).not.toContain('3 total');
    expectOutsideIntact(outside);
  });
});
