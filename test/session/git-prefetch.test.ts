/** The CLI's git status started early (session/capture/git-prefetch.ts) is exactly captureGitStatus's. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { captureGitStatus } from '../../src/session/capture/git.js';
import { prefetchGitStatus, withPrefetchedGitStatus } from '../../src/session/capture/git-prefetch.js';
import { SnapshotManager } from '../../src/session/capture/snapshot-manager.js';
import { WHOLE_PROCESS_BUDGET_MS } from '../support/budget.js';
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

  it('leaves no temp directory behind when disposed before git is done, nor after it', async () => {
    const root = repo();
    for (let i = 0; i < 300; i++) write(root, `d${i % 17}/f${i}.txt`, String(i));
    commitAll(root, 'init');
    write(root, 'untracked.txt', 'u');
    const tmp = tempDir();
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = tmp; // os.tmpdir() reads it on each call: the prefetches' dirs land here
    try {
      // Ten refused commands (dispose at once, git still running), ten that took the status first.
      for (let i = 0; i < 10; i++) prefetchGitStatus(root).dispose();
      for (let i = 0; i < 10; i++) prefetched(root);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
    // The children finish on their own; the bound is only the net for a hang.
    const since = Date.now();
    while (fs.readdirSync(tmp).length > 0 && Date.now() - since < WHOLE_PROCESS_BUDGET_MS) await new Promise((r) => setTimeout(r, 20));
    expect(fs.readdirSync(tmp)).toEqual([]);
  }, WHOLE_PROCESS_BUDGET_MS + 10_000);

  it("keeps cairn's own files out of the record when the prefetch ran before .cairn/.gitignore existed", () => {
    const root = repo();
    write(root, 'a.txt', '1');
    commitAll(root, 'init');
    write(root, 'b.txt', 'untracked');
    // A first run: cairn's directory holds a temp file of its own, and no .gitignore yet, when git runs.
    write(root, '.cairn/inventories/tmp-123.partial', 'x');
    // The prefetch read git while that was so (taken first here, so no race decides it).
    const early = prefetched(root);
    expect(early?.untracked).toContain('.cairn/inventories/tmp-123.partial');
    const asPrefetched = (status: typeof early) => ({ take: () => status, dispose: () => undefined });
    const first = new (withPrefetchedGitStatus(SnapshotManager, asPrefetched(early)))(root).capturePreSnapshot(root, path.join(tempDir(), 'it-1'));
    expect(fs.existsSync(path.join(root, '.cairn', '.gitignore'))).toBe(true);
    const second = new (withPrefetchedGitStatus(SnapshotManager, asPrefetched(prefetched(root))))(root).capturePreSnapshot(root, path.join(tempDir(), 'it-2'));
    expect(second.git.untracked).toEqual(['b.txt']);
    expect(first.git).toEqual(second.git);
  });
});
