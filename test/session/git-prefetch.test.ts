/** The CLI's git status started early (session/capture/git-prefetch.ts) is exactly captureGitStatus's. */
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { captureGitStatus } from '../../src/session/capture/git.js';
import { prefetchGitStatus } from '../../src/session/capture/git-prefetch.js';
import { commitAll, git, trackedDirs, write } from './helpers.js';

const { repo, dir: tempDir } = trackedDirs();

function prefetched(root: string) {
  const p = prefetchGitStatus(root);
  try {
    return p.take(root);
  } finally {
    p.dispose();
  }
}

describe('prefetchGitStatus', () => {
  it('reads the status captureGitStatus reads: staged, unstaged, untracked, names with spaces and newlines', () => {
    const root = repo();
    write(root, 'a.txt', '1');
    write(root, 'dir/b c.txt', '2');
    commitAll(root, 'init');
    write(root, 'a.txt', 'changed');
    write(root, 'dir/b c.txt', 'staged');
    git(root, 'add', 'dir/b c.txt');
    write(root, 'new\nline.txt', 'untracked');
    const expected = captureGitStatus(root);
    expect(expected.untracked).toEqual(['new\nline.txt']);
    expect(prefetched(root)).toEqual(expected);
  });

  it('matches in a subdirectory root, on an unborn branch and outside any repository', () => {
    const root = repo();
    write(root, 'sub/x.txt', 'x');
    write(root, 'top.txt', 't');
    expect(prefetched(root)).toEqual(captureGitStatus(root)); // no commit yet
    commitAll(root, 'init');
    write(root, 'sub/y.txt', 'y');
    const sub = path.join(root, 'sub');
    expect(prefetched(sub)).toEqual(captureGitStatus(sub));
    expect(captureGitStatus(sub).untracked).toEqual(['y.txt']);
    const plain = tempDir();
    expect(prefetched(plain)).toEqual(captureGitStatus(plain));
    expect(captureGitStatus(plain).branch).toBe('unknown');
  });

  it('gives its status once, to the root it was started for; otherwise null, and the caller runs git', () => {
    const root = repo();
    write(root, 'a.txt', '1');
    commitAll(root, 'init');
    const p = prefetchGitStatus(root);
    try {
      expect(p.take(tempDir())).toBeNull();
      expect(p.take(root)?.branch).toBe('main');
      expect(p.take(root)).toBeNull();
    } finally {
      p.dispose();
    }
  });

  it('returns null when sh cannot be started (no PATH), never a wrong status', () => {
    const root = repo();
    const saved = process.env.PATH;
    process.env.PATH = '';
    try {
      expect(prefetched(root)).toBeNull();
    } finally {
      process.env.PATH = saved;
    }
  });
});
