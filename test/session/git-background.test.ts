/**
 * The git status read on another thread while the inventory is taken (big repositories): it must
 * be exactly the status read in line, and a subclass's own captureGitStatus must still be used.
 */
import { describe, expect, it } from 'vitest';
import { SnapshotManager } from '../../src/session/index.js';
import { captureGitStatus, captureGitStatusInBackground } from '../../src/session/git.js';
import type { GitStatus } from '../../src/session/types.js';
import { commitAll, git, seedIterationDir, trackedDirs, useTempCacheHome, write } from './helpers.js';

useTempCacheHome();

const { repo, dir } = trackedDirs();

/** Every index size counts as big: the status is always read on a worker thread. */
const ALWAYS = 0;

describe('git status read in the background', () => {
  it('equals the status read in line: branch, HEAD, staged, unstaged, untracked, and names with spaces, quotes and newlines', () => {
    const root = repo();
    write(root, 'kept.txt', '1');
    write(root, 'edited.txt', '1');
    write(root, 'sub/dir/deep.txt', '1');
    commitAll(root, 'init');
    write(root, 'edited.txt', '2');
    write(root, 'new staged.txt', 's');
    git(root, 'add', 'new staged.txt');
    write(root, 'sub/dir/deep.txt', '2');
    git(root, 'add', 'sub/dir/deep.txt');
    write(root, 'sub/dir/deep.txt', '3');
    write(root, 'odd "name"\nwith a newline.txt', 'u');
    write(root, 'loose/é.txt', 'u');
    const inLine = captureGitStatus(root);
    const background = captureGitStatusInBackground(root, ALWAYS);
    const status = background();
    expect(status).toEqual(inLine);
    expect(status.staged).toEqual(['new staged.txt', 'sub/dir/deep.txt']);
    expect(status.unstaged).toEqual(['edited.txt', 'sub/dir/deep.txt']);
    expect(status.untracked).toEqual(['loose/é.txt', 'odd "name"\nwith a newline.txt']);
    expect(status.commit).toBe(git(root, 'rev-parse', 'HEAD').trim());
    expect(background()).toBe(status); // read once
  });

  it('from a subdirectory root, paths are relative to it as in line', () => {
    const root = repo();
    write(root, 'top.txt', '1');
    write(root, 'pkg/a.txt', '1');
    commitAll(root, 'init');
    write(root, 'pkg/a.txt', '2');
    write(root, 'pkg/new.txt', 'n');
    write(root, 'top.txt', '2');
    const sub = `${root}/pkg`;
    const status = captureGitStatusInBackground(sub, ALWAYS)();
    expect(status).toEqual(captureGitStatus(sub));
    expect(status.unstaged).toEqual(['a.txt']);
    expect(status.untracked).toEqual(['new.txt']);
  });

  it('outside a repository, gives the not-a-repository status', () => {
    const plain = dir();
    write(plain, 'a.txt', 'a');
    expect(captureGitStatusInBackground(plain, ALWAYS)()).toEqual({ branch: 'unknown', commit: 'unknown', staged: [], unstaged: [], untracked: [] });
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
