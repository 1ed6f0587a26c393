/**
 * `cairn session diff` and `session list` against real git: the same change, staged into git's
 * index, must give git's own name-status, diffstat, numstat and patch, and the patch must apply
 * to the pre tree and give exactly the post tree (compared as git tree ids: content, modes,
 * symlinks and the set of paths).
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorJson, runCli } from '../support/cli.js';
import { commitAll, git, trackedDirs, write } from '../session/helpers.js';
import { everyChangeIteration } from './fixture.js';

const { repo, dir: scratch } = trackedDirs();

function cli(args: string[], cwd: string) {
  return runCli(args, { cwd, env: { XDG_CACHE_HOME: scratch('cairn-cache-') } });
}

const iterationWithEveryChange = (): { root: string; preCommit: string } => everyChangeIteration(repo, cli);

describe('cairn session diff', () => {
  it("prints git's name-status, diffstat and patch for uncommitted, untracked and committed changes", () => {
    const { root, preCommit } = iterationWithEveryChange();
    const gitView = (...args: string[]) => git(root, 'diff', '--cached', '-M', ...args, preCommit);
    expect(cli(['session', 'diff', '--name-status'], root).stdout).toBe(gitView('--name-status'));
    expect(cli(['session', 'diff', '--stat'], root).stdout).toBe(gitView('--stat'));
    expect(cli(['session', 'diff'], root).stdout).toBe(gitView());
    expect(cli(['session', 'diff', '1', '--patch'], root).stdout).toBe(gitView());
  });

  it('answers from the review kept at post, and computes the same output without it', () => {
    const { root } = iterationWithEveryChange();
    const formats = [['--name-status'], ['--stat'], ['--patch'], ['--json']];
    const kept = formats.map((f) => cli(['session', 'diff', ...f], root));
    const html = (name: string): string => {
      const file = path.join(scratch('html-'), name);
      expect(cli(['session', 'report', '--html', file], root).status).toBe(0);
      return fs.readFileSync(file, 'utf8');
    };
    const keptPage = html('kept.html');
    const review = path.join(root, '.cairn', 'iterations', '001', 'review.json');
    const saved = JSON.parse(fs.readFileSync(review, 'utf8')) as { files: Array<{ path: string; oldSize?: number; newSize?: number }>; patch: { cut: boolean } };
    expect(saved.patch.cut).toBe(false);
    expect(saved.files.find((f) => f.path === 'data.bin')).toMatchObject({ oldSize: 4, newSize: 5 });
    // A review that says other counts is what is printed: the kept review is read, not recomputed.
    const edited = fs.readFileSync(review, 'utf8').replace('"path":"a.txt","status":"modified","additions":2', '"path":"a.txt","status":"modified","additions":7');
    fs.writeFileSync(review, edited);
    expect(cli(['session', 'diff', '--stat'], root).stdout).toMatch(/ a\.txt +\| +8 /);
    fs.rmSync(review);
    // The page built from the kept patch is the page built from the computed diff, byte for byte.
    expect(html('computed.html')).toBe(keptPage);
    const computed = formats.map((f) => cli(['session', 'diff', ...f], root));
    expect(computed.map((r) => r.stdout)).toEqual(kept.map((r) => r.stdout));
    expect(JSON.parse(kept[3]?.stdout ?? '{}')).not.toHaveProperty('files.0.oldSize');
  });

  it('writes the page into a FIFO named by --html, which stays a FIFO (never renamed over)', async () => {
    const { root } = iterationWithEveryChange();
    const dir = scratch('html-fifo-');
    const page = path.join(dir, 'page.html');
    expect(cli(['session', 'report', '--html', page], root).status).toBe(0);
    const fifo = path.join(dir, 'pipe');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const got = path.join(dir, 'got.html');
    const reader = spawn('sh', ['-c', 'cat "$1" > "$2"', 'sh', fifo, got], { stdio: 'ignore' });
    const readerDone = new Promise<void>((resolve) => reader.on('close', () => resolve()));
    const r = cli(['session', 'report', '--html', fifo], root);
    await readerDone;
    expect(r.status, r.stderr).toBe(0);
    expect(fs.readFileSync(got, 'utf8')).toBe(fs.readFileSync(page, 'utf8'));
    expect(fs.lstatSync(fifo).isFIFO()).toBe(true);
  });

  it('refuses a directory given as --html FILE before writing anything (ERR_USAGE, exit 2)', () => {
    const { root } = iterationWithEveryChange();
    const parent = scratch('html-dir-');
    const dir = path.join(parent, 'out');
    fs.mkdirSync(dir);
    const r = cli(['session', 'report', '--html', dir], root);
    expect(r.status).toBe(2);
    const error = errorJson(r.stderr);
    expect(error.code).toBe('ERR_USAGE');
    expect(error.message).toContain(`name the file to write, such as ${path.join(dir, 'report.html')}`);
    // Nothing written: no temp file beside the directory, nothing in it.
    expect(fs.readdirSync(parent)).toEqual(['out']);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('says in words, as ERR_IO, that --html FILE cannot be written where its directory is missing', () => {
    const { root } = iterationWithEveryChange();
    const missing = path.join(scratch('html-missing-'), 'no', 'such');
    for (const file of [path.join(missing, 'x.html'), path.join(root, 'a.txt', 'x.html')]) {
      const r = cli(['session', 'report', '--html', file], root);
      expect(r.status).toBe(1);
      const error = errorJson(r.stderr);
      expect(error).toMatchObject({ code: 'ERR_IO', path: file });
      expect(error.message).not.toContain('cairn-tmp');
    }
    expect(errorJson(cli(['session', 'report', '--html', path.join(missing, 'x.html')], root).stderr).message).toContain(`the directory ${missing} does not exist; create it first`);
    expect(fs.existsSync(path.dirname(missing))).toBe(false);
  });

  it('names renames with their similarity (R100 for a pure move), type changes and mode changes', () => {
    const { root } = iterationWithEveryChange();
    const lines = cli(['session', 'diff', '--name-status'], root).stdout.split('\n');
    expect(lines).toContain('R100\tsame/kept.txt\tsame/renamed.txt');
    expect(lines.find((l) => l.startsWith('R') && l.includes('new/moved.txt'))).toMatch(/^R0[5-9]\d\told\/moved\.txt\tnew\/moved\.txt$/);
    expect(lines).toContain('T\tlink');
    expect(lines).toContain('M\ttool.sh');
    const patch = cli(['session', 'diff'], root).stdout;
    expect(patch).toContain('diff --git a/tool.sh b/tool.sh\nold mode 100644\nnew mode 100755\n');
    expect(patch).toContain('Binary files a/data.bin and b/data.bin differ');
  });

  it('gives a patch that git apply turns from the pre tree into the post tree', () => {
    const { root, preCommit } = iterationWithEveryChange();
    const patch = cli(['session', 'diff', '--patch'], root).stdout;
    const postTree = git(root, 'write-tree').trim();
    const pre = scratch('cairn-pre-');
    git(root, 'worktree', 'add', '-q', '--detach', pre, preCommit);
    const patchFile = path.join(scratch('cairn-patch-'), 'it.patch');
    fs.writeFileSync(patchFile, patch);
    // "Binary files differ" carries no bytes (git's default too): the binary file is put in place by hand
    git(pre, 'apply', '--index', '--exclude=data.bin', patchFile);
    fs.copyFileSync(path.join(root, 'data.bin'), path.join(pre, 'data.bin'));
    git(pre, 'add', 'data.bin');
    expect(git(pre, 'write-tree').trim()).toBe(postTree);
  });

  it('prints the spec JSON: iteration and files with status, oldPath, additions, deletions and binary', () => {
    const { root, preCommit } = iterationWithEveryChange();
    const r = cli(['session', 'diff', '--json'], root);
    expect(r.status).toBe(0);
    const doc = JSON.parse(r.stdout) as { iteration: string; files: Array<{ path: string; status: string; oldPath?: string; additions: number; deletions: number; binary: boolean }> };
    expect(doc.iteration).toBe('001');
    const numstat = git(root, 'diff', '--cached', '-M', '--numstat', '-z', preCommit);
    // -z numstat: "a\td\tpath\0" or "a\td\t\0old\0new\0" for renames
    const fields = numstat.split('\0');
    const expected = new Map<string, [string, string]>();
    for (let i = 0; i < fields.length - 1; i++) {
      const [a, d, p] = (fields[i] as string).split('\t') as [string, string, string];
      if (p === '') {
        expected.set(fields[i + 2] as string, [a, d]);
        i += 2;
      } else expected.set(p, [a, d]);
    }
    for (const f of doc.files) {
      const [a, d] = expected.get(f.path) ?? ['?', '?'];
      if (f.status === 'typechange') continue; // git's numstat counts a type change as two entries
      expect([f.path, f.binary ? '-' : String(f.additions), f.binary ? '-' : String(f.deletions)]).toEqual([f.path, a, d]);
    }
    expect(doc.files.find((f) => f.path === 'same/renamed.txt')).toMatchObject({ status: 'renamed', oldPath: 'same/kept.txt', additions: 0, deletions: 0 });
    expect(doc.files.find((f) => f.path === 'link')).toMatchObject({ status: 'typechange' });
    expect(doc.files.find((f) => f.path === 'data.bin')).toMatchObject({ status: 'modified', binary: true });
  });

  it('addresses iterations by number, padded number and directory, and exits 2 for an unknown one', () => {
    const { root } = iterationWithEveryChange();
    const byNumber = cli(['session', 'diff', '1', '--name-status'], root).stdout;
    expect(cli(['session', 'diff', '001', '--name-status'], root).stdout).toBe(byNumber);
    expect(cli(['session', 'diff', path.join(root, '.cairn', 'iterations', '001'), '--name-status'], scratch()).stdout).toBe(byNumber);
    expect(cli(['session', 'diff', '--name-status', '--root', root], scratch()).stdout).toBe(byNumber);
    const unknown = cli(['session', 'diff', '7'], root);
    expect(unknown.status).toBe(2);
    expect(errorJson(unknown.stderr).code).toBe('ERR_USAGE');
    const twoFormats = cli(['session', 'diff', '--stat', '--patch'], root);
    expect(twoFormats.status).toBe(2);
  });

  it('report, diff and restore exit 2 (ERR_USAGE) alike for an unknown iteration, and when there is none', () => {
    const none = repo();
    commitAll(none, 'init');
    const { root } = iterationWithEveryChange();
    for (const command of ['report', 'diff', 'restore']) {
      for (const [args, at] of [[['9'], root], [['009'], root], [[], none]] as const) {
        const r = cli(['session', command, ...args], at);
        expect(r.status, `${command} ${args.join(' ')}: ${r.stderr}`).toBe(2);
        expect(errorJson(r.stderr).code).toBe('ERR_USAGE');
      }
    }
    // report names the iterations that exist, as before
    expect(errorJson(cli(['session', 'report', '9'], root).stderr).message).toContain('001');
  });

  it('takes an omitted iteration as the highest-numbered one; still open, it names the latest finished one to pass', () => {
    const { root } = iterationWithEveryChange();
    expect(cli(['session', 'pre'], root).status).toBe(0); // 002, open
    for (const command of ['diff', 'report']) {
      const r = cli(['session', command], root);
      expect(r.status, r.stderr).toBe(2);
      const error = errorJson(r.stderr);
      expect(error.code).toBe('ERR_NOT_FOUND');
      expect(error.message).toBe('iteration 002 is still open (no post-snapshot yet): finish it with `cairn session post`, or name 001, the latest finished iteration');
      expect(cli(['session', command, '001'], root).status).toBe(0);
      expect(cli(['session', command, '--help'], root).stdout.replace(/\s+/g, ' ')).toContain('(default: the latest, the one with the highest number)');
    }
  });

  it('finds the project root from a subdirectory, as git finds its work tree', () => {
    const { root } = iterationWithEveryChange();
    expect(cli(['session', 'diff', '--name-status'], path.join(root, 'new')).stdout).toContain('new/moved.txt');
  });

  it('shows uncommitted work that existed before pre from the content store, and names what the store lost', () => {
    const root = repo();
    write(root, 'kept.txt', 'a\n');
    commitAll(root, 'init');
    write(root, 'dirty.txt', 'uncommitted before pre\n'); // untracked at pre: only cairn's content store has it
    expect(cli(['session', 'pre'], root).status).toBe(0);
    write(root, 'dirty.txt', 'changed during the iteration\n');
    write(root, 'kept.txt', 'a\nb\n');
    expect(cli(['session', 'post', '--no-store'], root).status).toBe(0);
    const r = cli(['session', 'diff'], root);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('diff --git a/dirty.txt b/dirty.txt\nindex ');
    expect(r.stdout).toContain('-uncommitted before pre\n+changed during the iteration\n');

    fs.rmSync(path.join(root, '.cairn', 'content'), { recursive: true, force: true });
    // The review kept at post still has the patch; without it, the diff is computed and names what is lost.
    expect(cli(['session', 'diff'], root).stdout).toBe(r.stdout);
    fs.rmSync(path.join(root, '.cairn', 'iterations', '001', 'review.json'));
    const lost = cli(['session', 'diff'], root);
    expect(lost.status).toBe(0);
    expect(lost.stdout).toContain('diff --git a/kept.txt b/kept.txt');
    expect(lost.stdout).not.toContain('dirty.txt');
    expect(lost.stderr).toContain('dirty.txt (pre)');
  });
});

/** One finished iteration: pre, the agent's work, post (no store). */
function iterate(root: string, work: () => void): void {
  expect(cli(['session', 'pre'], root).status).toBe(0);
  work();
  expect(cli(['session', 'post', '--no-store'], root).status).toBe(0);
}

describe('cairn session list', () => {
  it('lists every iteration with its counts, and --json gives the spec keys', () => {
    const root = repo();
    write(root, 'a.txt', '1\n2\n3\n');
    commitAll(root, 'init');
    iterate(root, () => write(root, 'a.txt', '1\nTWO\n3\n4\n'));
    iterate(root, () => {
      write(root, 'b.txt', 'new\n');
      commitAll(root, 'add b');
      write(root, 'test-results.json', JSON.stringify({ numTotalTests: 3, numPassedTests: 2, numFailedTests: 1, numPendingTests: 0 }));
    });
    expect(cli(['session', 'pre'], root).status).toBe(0); // an open iteration

    const json = cli(['session', 'list', '--json'], root);
    expect(json.status).toBe(0);
    const doc = JSON.parse(json.stdout) as { iterations: Array<Record<string, unknown>> };
    expect(doc.iterations.map((i) => i.iteration)).toEqual(['001', '002', '003']);
    expect(doc.iterations[0]).toMatchObject({ filesChanged: 1, additions: 2, deletions: 1, commits: 0 });
    expect(doc.iterations[1]).toMatchObject({ filesChanged: 2, additions: 2, deletions: 0, commits: 1, tests: { passed: 2, failed: 1, skipped: 0 } });
    for (const row of doc.iterations) {
      expect(Object.keys(row).sort()).toEqual(expect.arrayContaining(['iteration', 'startedAt', 'durationMs', 'filesChanged', 'additions', 'deletions', 'commits']));
      expect(typeof row.startedAt).toBe('string');
    }
    const text = cli(['session', 'list'], root).stdout.split('\n');
    expect(text[1]).toMatch(/^001 .* 1 file +\+2 -1 +0 commits +no tests +-$/);
    expect(text[2]).toMatch(/^002 .* 2 files +\+2 -0 +1 commit +2 passed, 1 failed +-$/);
    expect(text[3]).toMatch(/^003 .* open /);
  });

  it('marks an iteration restored (list, --json, text and HTML report) until the restore is undone', () => {
    const root = repo();
    write(root, 'a.txt', '1\n2\n3\n');
    commitAll(root, 'init');
    iterate(root, () => write(root, 'a.txt', '1\nTWO\n3\n'));
    iterate(root, () => write(root, 'b.txt', 'b\n'));
    const before = JSON.parse(cli(['session', 'list', '--json'], root).stdout) as { iterations: Array<{ restored: unknown }> };
    expect(before.iterations.map((i) => i.restored)).toEqual([null, null]);
    expect(cli(['session', 'report', '1'], root).stdout).toContain('\n  restored: no\n');

    expect(cli(['session', 'restore', '2'], root).status).toBe(0);
    const after = JSON.parse(cli(['session', 'list', '--json'], root).stdout) as { iterations: Array<{ restored: { to: string; restore: string; at: string } | null }> };
    expect(after.iterations[0]?.restored).toBeNull();
    expect(after.iterations[1]?.restored).toMatchObject({ to: 'pre', restore: '000001' });
    expect(Number.isNaN(Date.parse(after.iterations[1]?.restored?.at ?? ''))).toBe(false);
    const text = cli(['session', 'list'], root).stdout.split('\n');
    expect(text[0]).toMatch(/ RESTORED$/);
    expect(text[1]).toMatch(/ -$/);
    expect(text[2]).toMatch(/ to pre$/);
    expect(cli(['session', 'report', '2'], root).stdout).toMatch(/\n {2}restored: to pre at \S+ \(restore 000001;/);
    const html = path.join(scratch('html-'), 'all.html');
    expect(cli(['session', 'report', '--all', '--html', html], root).status).toBe(0);
    const page = fs.readFileSync(html, 'utf8');
    expect(page).toContain('<th scope="col">Restored</th>');
    expect(page).toMatch(/<b>Restored<\/b><span><span title="restore 000001, [^"]+">to pre<\/span>/);

    expect(cli(['session', 'restore', '--undo'], root).status).toBe(0);
    const undone = JSON.parse(cli(['session', 'list', '--json'], root).stdout) as { iterations: Array<{ restored: unknown }> };
    expect(undone.iterations.map((i) => i.restored)).toEqual([null, null]);
  });

  it('says how to start when there are no iterations', () => {
    const root = repo();
    const r = cli(['session', 'list'], root);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('cairn session pre');
    expect(JSON.parse(cli(['session', 'list', '--json'], root).stdout)).toEqual({ iterations: [] });
  });
});

describe('cairn session report (text)', () => {
  it('names what could not be captured: content over the cap, with its side and reason', () => {
    const root = repo();
    write(root, 'small.txt', 'a\n');
    write(root, 'big.txt', 'x'.repeat(2000));
    commitAll(root, 'init');
    write(root, '.cairn/config.json', JSON.stringify({ contentCap: 1000 }));
    write(root, 'big.txt', 'y'.repeat(3000)); // dirty at pre: git does not hold it, and it is over the cap
    expect(cli(['session', 'pre'], root).status).toBe(0);
    write(root, 'small.txt', 'b\n');
    expect(cli(['session', 'post', '--no-store'], root).status).toBe(0);
    const r = cli(['session', 'report'], root);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/\nNot captured \(\d+\)\n {2}big\.txt \(pre\): over-size-cap\n/);
  });

  it('shows status letters and +/- counts per file, drops empty sections', () => {
    const { root } = iterationWithEveryChange();
    const r = cli(['session', 'report'], root);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/\n {2}M +a\.txt +\+2 -1\n/);
    expect(r.stdout).toMatch(/\n {2}R100 +same\/kept\.txt → same\/renamed\.txt +\+0\n/);
    expect(r.stdout).toMatch(/\n {2}D +gone\.txt +-1\n/);
    expect(r.stdout).toMatch(/\n {2}M +data\.bin +binary\n/);
    expect(r.stdout).not.toContain('State dir');
    expect(r.stdout).not.toContain('Tests:');
  });
});
