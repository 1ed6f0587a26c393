/**
 * The git status read on another thread while the inventory is taken (big repositories): it must
 * be exactly the status read in line, and a subclass's own captureGitStatus must still be used.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SnapshotManager } from '../../src/session/index.js';
import { captureGitStatus, captureGitStatusInBackground, keptStatusThreadId } from '../../src/session/capture/git.js';
import type { GitStatus } from '../../src/session/types.js';
import { commitAll, git, seedIterationDir, trackedDirs, useTempCacheHome, write, writeFiles } from './helpers.js';

useTempCacheHome();

const { repo, dir } = trackedDirs();

describe('git status read in the background', () => {
  // Every repository counts as big here: the status is always read on a worker thread.
  beforeEach(() => {
    process.env.CAIRN_GIT_STATUS_THREAD = 'always';
  });
  afterEach(() => {
    delete process.env.CAIRN_GIT_STATUS_THREAD;
  });

  it('equals the status read in line: branch, HEAD, staged, unstaged, untracked, and names with spaces, quotes and newlines', () => {
    const root = repo();
    writeFiles(root, { 'kept.txt': '1', 'edited.txt': '1', 'sub/dir/deep.txt': '1' });
    commitAll(root, 'init');
    writeFiles(root, { 'edited.txt': '2', 'new staged.txt': 's', 'sub/dir/deep.txt': '2' });
    git(root, 'add', 'new staged.txt', 'sub/dir/deep.txt');
    writeFiles(root, { 'sub/dir/deep.txt': '3', 'odd "name"\nwith a newline.txt': 'u', 'loose/é.txt': 'u' });
    const inLine = captureGitStatus(root);
    const background = captureGitStatusInBackground(root);
    const status = background();
    expect(status).toEqual(inLine);
    expect(status.staged).toEqual(['new staged.txt', 'sub/dir/deep.txt']);
    expect(status.unstaged).toEqual(['edited.txt', 'sub/dir/deep.txt']);
    expect(status.untracked).toEqual(['loose/é.txt', 'odd "name"\nwith a newline.txt']);
    expect(status.commit).toBe(git(root, 'rev-parse', 'HEAD').trim());
    expect(background()).toBe(status); // read once
    expect(background.via).toBe('thread');
  });

  it('one thread, kept between requests, answers each with the status read in line: two at once, limited ones and an unread one included', () => {
    const root = repo();
    writeFiles(root, { 'a.txt': '1', 'sub/b.txt': '1' });
    commitAll(root, 'init');
    const kept = new Set<number | null>();
    for (let i = 0; i < 8; i++) {
      writeFiles(root, { [`new${i}.txt`]: 'n', 'a.txt': String(i) });
      if (i % 2 === 1) git(root, 'add', `new${i}.txt`);
      if (i % 3 === 2) writeFiles(root, { 'sub/b.txt': `edit ${i}` });
      const whole = captureGitStatusInBackground(root);
      // Asked while the first may still run: another thread answers, or the kept one once free.
      const limited = captureGitStatusInBackground(root, ['sub', `new${i}.txt`]);
      if (i === 4) captureGitStatusInBackground(root); // never read: the next request must not get its answer
      expect(limited()).toEqual(captureGitStatus(root, ['sub', `new${i}.txt`]));
      expect(whole()).toEqual(captureGitStatus(root));
      expect([whole.via, limited.via]).toEqual(['thread', 'thread']);
      kept.add(keptStatusThreadId());
    }
    expect(kept.size).toBe(1);
    expect([...kept][0]).not.toBeNull();
  });

  it('from a subdirectory root, paths are relative to it as in line', () => {
    const root = repo();
    writeFiles(root, { 'top.txt': '1', 'pkg/a.txt': '1' });
    commitAll(root, 'init');
    writeFiles(root, { 'pkg/a.txt': '2', 'pkg/new.txt': 'n', 'top.txt': '2' });
    const sub = `${root}/pkg`;
    const background = captureGitStatusInBackground(sub);
    const status = background();
    expect(background.via).toBe('thread');
    expect(status).toEqual(captureGitStatus(sub));
    expect(status.unstaged).toEqual(['a.txt']);
    expect(status.untracked).toEqual(['new.txt']);
  });

  it('outside a repository, gives the not-a-repository status', () => {
    const plain = dir();
    write(plain, 'a.txt', 'a');
    const background = captureGitStatusInBackground(plain);
    expect(background()).toEqual({ branch: 'unknown', commit: 'unknown', staged: [], unstaged: [], untracked: [] });
    expect(background.via).toBe('thread'); // git's own answer, not a worker's failure
  });

  it('CAIRN_GIT_STATUS_THREAD=never reads in line, and a small repository is read in line by default', () => {
    const root = repo();
    write(root, 'a.txt', 'a');
    commitAll(root, 'init');
    process.env.CAIRN_GIT_STATUS_THREAD = 'never';
    const never = captureGitStatusInBackground(root);
    expect(never.via).toBe('inline');
    delete process.env.CAIRN_GIT_STATUS_THREAD;
    const small = captureGitStatusInBackground(root);
    expect(small.via).toBe('inline');
    expect(small()).toEqual(never());
  });

  it('a process that stays reads even a small repository on its kept thread, with the same answer', () => {
    const root = repo();
    write(root, 'a.txt', 'a');
    commitAll(root, 'init');
    write(root, 'b.txt', 'b');
    const staying = captureGitStatusInBackground(root, undefined, undefined, { staying: true });
    expect(staying()).toEqual(captureGitStatusInBackground(root)());
    expect(staying.via).toBe('thread');
    expect(keptStatusThreadId()).not.toBeNull();
    process.env.CAIRN_GIT_STATUS_THREAD = 'never';
    try {
      expect(captureGitStatusInBackground(root, undefined, undefined, { staying: true }).via).toBe('inline');
    } finally {
      delete process.env.CAIRN_GIT_STATUS_THREAD;
    }
  });

  it('pre and post record the status git gives, with the commits and diffs of the session', () => {
    const root = repo();
    write(root, 'a.txt', 'a');
    write(root, 'b.txt', 'b');
    commitAll(root, 'init');
    const manager = new SnapshotManager(root);
    const iterationDir = seedIterationDir(root);
    write(root, 'loose.txt', 'l');
    // Read in line just before: the snapshot files each capture writes come after its status.
    const before = captureGitStatus(root);
    const pre = manager.capturePreSnapshot(root, iterationDir);
    expect(pre.git).toEqual(before);
    expect(pre.git.untracked).toContain('loose.txt');
    write(root, 'a.txt', 'changed');
    commitAll(root, 'the session commits');
    write(root, 'b.txt', 'edited, not committed');
    const beforePost = captureGitStatus(root);
    const post = manager.capturePostSnapshot(root, iterationDir);
    expect(post.git).toEqual(beforePost);
    expect(post.git.unstaged).toEqual(['b.txt']);
    expect(post.commits).toHaveLength(1);
    expect(post.commits[0]).toMatch(/ the session commits$/);
    expect(post.fileDiffs.map((d) => [d.path, d.status])).toEqual([
      ['a.txt', 'modified'],
      ['loose.txt', 'added'],
    ]);
  });

  it("a subclass's own captureGitStatus is what pre and post snapshots record", () => {
    const root = repo();
    write(root, 'a.txt', 'a');
    commitAll(root, 'init');
    const calls: string[] = [];
    class Custom extends SnapshotManager {
      override captureGitStatus(projectRoot: string): GitStatus {
        calls.push(projectRoot);
        return { ...super.captureGitStatus(projectRoot), branch: 'from-the-subclass' };
      }
    }
    const manager = new Custom(root);
    const iterationDir = seedIterationDir(root);
    expect(manager.capturePreSnapshot(root, iterationDir).git.branch).toBe('from-the-subclass');
    expect(manager.capturePostSnapshot(root, iterationDir).git.branch).toBe('from-the-subclass');
    expect(calls).toEqual([root, root]);
  });
});
