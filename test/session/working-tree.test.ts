/** Uncommitted and untracked work counts: filesAdded/Modified/Deleted come from the pre → post working trees. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { scanTreeSync } from '../../src/inventory/index.js';
import { SnapshotManager } from '../../src/session/index.js';
import { recoverInvalidNames } from '../../src/session/capture/supplement.js';
import { commitAll, git, seedIterationDir, write, useTempCacheHome, trackedDirs } from './helpers.js';

useTempCacheHome();

const { repo, dir: tempDir } = trackedDirs();

describe('calculateDiff on real snapshots', () => {
  it('finds uncommitted edits, untracked files made by a shell, deletions and commits alike', () => {
    const root = repo();
    write(root, 'src/edit-me.ts', 'let a = 1;\n');
    write(root, 'src/delete-me.ts', 'gone\n');
    write(root, 'src/commit-me.ts', 'v1\n');
    write(root, 'src/same-size.ts', 'aaaa\n');
    commitAll(root, 'init');
    const manager = new SnapshotManager(root);
    const dir = seedIterationDir(root);
    const pre = manager.capturePreSnapshot(root, dir);

    write(root, 'src/edit-me.ts', 'let a = 2;\n'); // a tool edit, never committed
    write(root, 'src/same-size.ts', 'bbbb\n'); // same size, different content
    fs.rmSync(path.join(root, 'src/delete-me.ts')); // deleted, not committed
    write(root, 'scripts/made-by-bash.sh', 'echo hi\n'); // untracked, created by a shell
    write(root, 'src/commit-me.ts', 'v2\n');
    git(root, 'add', 'src/commit-me.ts');
    git(root, '-c', 'user.name=a', '-c', 'user.email=a@b.c', 'commit', '-q', '-m', 'commit one file');

    const post = manager.capturePostSnapshot(root, dir);
    const diff = manager.calculateDiff(pre, post);
    expect(diff.filesSource).toBe('working-tree');
    expect(diff.filesAdded).toEqual(['scripts/made-by-bash.sh']);
    expect(diff.filesModified).toEqual(['src/commit-me.ts', 'src/edit-me.ts', 'src/same-size.ts']);
    expect(diff.filesDeleted).toEqual(['src/delete-me.ts']);
    // fileDiffs and commits keep their seed meaning: the commit range only.
    expect(post.fileDiffs.map((d) => d.path)).toEqual(['src/commit-me.ts']);
    expect(diff.commitCount).toBe(1);
  });

  it('does not count files under .cairn/, the state dir or the iteration dir as work', () => {
    const root = repo();
    commitAll(root, 'init');
    const manager = new SnapshotManager(root);
    const dir = path.join(root, 'iterations-here', '001');
    const pre = manager.capturePreSnapshot(root, dir);
    write(root, '.aiwg/notes.md', 'n');
    write(root, 'iterations-here/001/agent.log', 'log');
    write(root, 'real.txt', 'r');
    const post = manager.capturePostSnapshot(root, dir);
    const diff = manager.calculateDiff(pre, post);
    expect(diff.filesAdded).toEqual(['real.txt']);
    expect(diff.aiwgArtifactsCreated).toEqual(['.aiwg/notes.md']);
  });

  // `[`, `]`, `{`, `}` are literal in the scanner's globs; `*` and `?` are not (and no RelPath holds
  // them), so such a state dir, like any other invalid RelPath, is filtered after the scan.
  it.each(['st[1]', 'st{a,b}', 'st*', 'st?x', 'st:1'])('does not count files under a state dir named %s as work', (stateDir) => {
    const root = repo();
    commitAll(root, 'init');
    write(root, `${stateDir}/s.txt`, 's');
    write(root, 'kept.txt', 'k');
    const manager = new SnapshotManager(root, { stateDir });
    const dir = path.join(root, 'iterations-here', '001');
    const pre = manager.capturePreSnapshot(root, dir);
    expect(pre.inventory?.files).toBe(1);
    expect(pre.inventory?.skipped).toBe(0);
    write(root, `${stateDir}/new.txt`, 'n');
    fs.rmSync(path.join(root, stateDir, 's.txt'));
    write(root, 'real.txt', 'r');
    const post = manager.capturePostSnapshot(root, dir);
    expect(post.inventory?.files).toBe(2);
    expect(post.inventory?.skipped).toBe(0);
    expect(post.workingTree?.added).toEqual(['real.txt']);
    expect(post.workingTree?.modified).toEqual([]);
    expect(post.workingTree?.deleted).toEqual([]);
    expect(manager.calculateDiff(pre, post).filesAdded).toEqual(['real.txt']);
  });

  it('falls back to the commit range when inventories are turned off', () => {
    const root = repo();
    commitAll(root, 'init');
    const manager = new SnapshotManager(root, { inventory: false });
    const dir = seedIterationDir(root);
    const pre = manager.capturePreSnapshot(root, dir);
    write(root, 'committed.txt', 'c');
    commitAll(root, 'c');
    write(root, 'loose.txt', 'l');
    const post = manager.capturePostSnapshot(root, dir);
    expect(pre.inventory).toBeUndefined();
    const diff = manager.calculateDiff(pre, post);
    expect(diff.filesSource).toBe('commits');
    expect(diff.filesAdded).toEqual(['committed.txt']);
  });

  it('asks git for no log when the session made no commit, and lists the commits of one that did', () => {
    const root = repo();
    write(root, 'a.txt', '1\n');
    commitAll(root, 'init');
    const manager = new SnapshotManager(root);
    const gitLogs = (fn: () => void): number => {
      const trace = path.join(tempDir('cairn-trace-'), 'trace.log');
      process.env.GIT_TRACE = trace;
      try {
        fn();
      } finally {
        delete process.env.GIT_TRACE;
      }
      return (fs.existsSync(trace) ? fs.readFileSync(trace, 'utf8') : '').split('\n').filter((l) => l.includes('trace: built-in: git log ')).length;
    };
    const quiet = seedIterationDir(root);
    manager.capturePreSnapshot(root, quiet);
    write(root, 'a.txt', '2\n'); // uncommitted work only
    let post = manager.capturePostSnapshot(root, quiet);
    expect(gitLogs(() => (post = manager.capturePostSnapshot(root, quiet)))).toBe(0);
    expect(post.commits).toEqual([]);
    expect(post.workingTree?.modified).toEqual(['a.txt']);
    const busy = seedIterationDir(root);
    manager.capturePreSnapshot(root, busy);
    commitAll(root, 'the session commits');
    expect(gitLogs(() => (post = manager.capturePostSnapshot(root, busy)))).toBe(1);
    expect(post.commits).toHaveLength(1);
    expect(post.commits[0]).toContain('the session commits');
  });

  it('falls back to the commit range when the pre inventory was pruned away', () => {
    const root = repo();
    commitAll(root, 'init');
    const manager = new SnapshotManager(root);
    const dir = seedIterationDir(root);
    const pre = manager.capturePreSnapshot(root, dir);
    fs.rmSync(path.join(root, '.cairn', 'inventories'), { recursive: true });
    write(root, 'loose.txt', 'l');
    const post = manager.capturePostSnapshot(root, dir);
    expect(post.inventory).toBeDefined();
    expect(post.workingTree).toBeUndefined();
    expect(manager.calculateDiff(pre, post).filesSource).toBe('commits');
  });

  it('keeps snapshot files small: they reference the inventory by digest', () => {
    const root = repo();
    for (let i = 0; i < 500; i++) write(root, `src/m${i}.ts`, `export const v${i} = ${i};\n`);
    commitAll(root, 'init');
    const dir = seedIterationDir(root);
    const pre = new SnapshotManager(root).capturePreSnapshot(root, dir);
    expect(pre.inventory?.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(pre.inventory?.files).toBe(500);
    expect(fs.statSync(path.join(dir, 'pre-snapshot.json')).size).toBeLessThan(4096);
  });
});

describe('files recovered from invalid names', () => {
  it('get the scanner\'s mode: 0755 only with the owner execute bit', () => {
    const root = repo();
    const modes = { owner: 0o744, others: 0o655, none: 0o644 } as const;
    for (const [name, mode] of Object.entries(modes)) {
      fs.chmodSync(write(root, `${name}.sh`, 'x'), mode);
      fs.chmodSync(write(root, `${name}".sh`, 'x'), mode); // `"` breaks the RelPath rules
    }
    const scan = scanTreeSync(root, { withContentDigest: true, cache: false });
    const recovered = recoverInvalidNames(root, scan.skipped, () => false);
    const modeOf = (entries: readonly { path: string; mode: string }[]): Record<string, string> => Object.fromEntries(entries.map((e) => [e.path.replace('"', ''), e.mode]));
    const expected = { 'owner.sh': '0755', 'others.sh': '0644', 'none.sh': '0644' };
    expect(modeOf(scan.files)).toEqual(expected);
    expect(modeOf(recovered.entries)).toEqual(expected);
  });
});

describe('the stat cache', () => {
  it('is one cache reused by every iteration of a root (exclude list stable across iterations)', async () => {
    const root = repo();
    write(root, 'src/a.txt', 'a');
    fs.mkdirSync(path.join(root, '.cairn', 'iterations'), { recursive: true });
    fs.mkdirSync(path.join(root, 'elsewhere'));
    // Old timestamps, and ctimes out of the engine's racy window (2 s), so everything is cacheable.
    const past = new Date(Date.now() - 3_600_000);
    for (const p of ['src/a.txt', 'src', 'elsewhere', '.']) fs.utimesSync(path.join(root, p), past, past);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const cacheHome = tempDir('cairn-cache-');
    const previous = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = cacheHome;
    try {
      const manager = new SnapshotManager(root);
      for (const n of ['001', '002', '003']) manager.capturePreSnapshot(root, path.join(root, '.cairn', 'iterations', n));
      manager.capturePreSnapshot(root, seedIterationDir(root, '004'));
      manager.capturePreSnapshot(root, path.join(root, 'elsewhere', '005'));
    } finally {
      process.env.XDG_CACHE_HOME = previous;
    }
    const cacheFiles = fs.readdirSync(path.join(cacheHome, 'cairn', 'snapshots')).filter((n) => n.endsWith('.cache'));
    expect(cacheFiles).toHaveLength(1);
  });
});

describe('a 20,000-file repository', () => {
  it('completes pre and post and finds the one uncommitted change made between them', () => {
    const root = repo();
    for (let d = 0; d < 200; d++) {
      const dirPath = path.join(root, 'pkg', `d${d}`);
      fs.mkdirSync(dirPath, { recursive: true });
      for (let f = 0; f < 100; f++) fs.writeFileSync(path.join(dirPath, `f${f}.txt`), `file ${d}/${f}\n`);
    }
    commitAll(root, 'twenty thousand files');
    const manager = new SnapshotManager(root);
    const dir = seedIterationDir(root);
    const pre = manager.capturePreSnapshot(root, dir);
    expect(pre.inventory?.files).toBe(20_000);
    fs.writeFileSync(path.join(root, 'pkg', 'd123', 'f45.txt'), 'changed by sed -i\n');
    fs.writeFileSync(path.join(root, 'pkg', 'd7', 'brand-new.txt'), 'new\n');
    const post = manager.capturePostSnapshot(root, dir);
    expect(post.inventory?.files).toBe(20_001);
    const diff = manager.calculateDiff(pre, post);
    expect(diff.filesModified).toEqual(['pkg/d123/f45.txt']);
    expect(diff.filesAdded).toEqual(['pkg/d7/brand-new.txt']);
    expect(diff.filesDeleted).toEqual([]);
    expect(post.git.unstaged).toEqual(['pkg/d123/f45.txt']);
  });
});

describe('state outside the repo', () => {
  it('writes nothing outside the project root and the iteration dir', () => {
    const root = repo();
    const elsewhere = tempDir();
    commitAll(root, 'init');
    const manager = new SnapshotManager(root);
    const dir = path.join(elsewhere, 'iter');
    manager.capturePreSnapshot(root, dir);
    manager.capturePostSnapshot(root, dir);
    expect(fs.readdirSync(elsewhere)).toEqual(['iter']);
    expect(fs.readdirSync(dir).sort()).toEqual(['post-snapshot.json', 'pre-snapshot.json']);
    expect(fs.readdirSync(path.join(root, '.cairn')).sort()).toEqual(['.gitignore', 'inventories']);
  });
});
