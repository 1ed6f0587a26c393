/** What upstream's suite left out: non-git and unborn repos, unknown ids, deletions, edge inputs. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KEY_FILES, SnapshotManager, formatDuration } from '../../src/session/index.js';
import type { PostSnapshot, PreSnapshot } from '../../src/session/index.js';
import { CairnError } from '../../src/core/errors.js';
import { commitAll, git, seedIterationDir, write, useTempCacheHome, trackedDirs } from './helpers.js';
import { mkfifo } from '../support/mkfifo.js';

useTempCacheHome();

const { repo, dir: plainDir } = trackedDirs();

describe('outside a git repository', () => {
  it('reports unknown git fields and empty lists, and still snapshots files', () => {
    const root = plainDir();
    write(root, 'package.json', '{}');
    write(root, 'src/a.ts', 'a');
    const manager = new SnapshotManager(root);
    const pre = manager.capturePreSnapshot(root, seedIterationDir(root));
    expect(pre.git).toEqual({ branch: 'unknown', commit: 'unknown', staged: [], unstaged: [], untracked: [] });
    expect(pre.keyFiles.map((f) => f.path)).toEqual(['package.json']);
    write(root, 'src/b.ts', 'b');
    const post = manager.capturePostSnapshot(root, seedIterationDir(root));
    expect(post.fileDiffs).toEqual([]);
    expect(post.commits).toEqual([]);
    // Without git the working-tree inventory still sees the new file.
    expect(manager.calculateDiff(pre, post).filesAdded).toEqual(['src/b.ts']);
  });
});

describe('a repository with no commits yet', () => {
  it('names the unborn branch, commit unknown, and fills staged and untracked', () => {
    const root = repo();
    write(root, 'staged.txt', 's');
    write(root, 'loose.txt', 'l');
    git(root, 'add', 'staged.txt');
    const status = new SnapshotManager(root).captureGitStatus(root);
    expect(status.branch).toBe('main');
    expect(status.commit).toBe('unknown');
    expect(status.staged).toEqual(['staged.txt']);
    expect(status.untracked).toEqual(['loose.txt']);
  });

  it('attributes every commit to a session that started before the first commit', () => {
    const root = repo();
    const manager = new SnapshotManager(root);
    const iterationDir = seedIterationDir(root);
    manager.capturePreSnapshot(root, iterationDir);
    write(root, 'first.txt', '1');
    commitAll(root, 'the very first commit');
    const post = manager.capturePostSnapshot(root, iterationDir);
    expect(post.commits).toHaveLength(1);
    expect(post.commits[0]).toMatch(/^[0-9a-f]{40} the very first commit$/);
    expect(post.fileDiffs).toContainEqual({ path: 'first.txt', status: 'added' });
  });
});

describe('git edge cases', () => {
  it('lists a file staged and then edited again as both staged and unstaged, and a conflict as both', () => {
    const root = repo();
    write(root, 'both.txt', '1');
    write(root, 'conflict.txt', 'base\n');
    commitAll(root, 'init');
    git(root, 'checkout', '-q', '-b', 'other');
    write(root, 'conflict.txt', 'other\n');
    commitAll(root, 'other side');
    git(root, 'checkout', '-q', 'main');
    write(root, 'conflict.txt', 'main\n');
    commitAll(root, 'main side');
    try {
      git(root, 'merge', '-q', 'other');
    } catch {
      // the conflict is the point
    }
    write(root, 'both.txt', '2');
    git(root, 'add', 'both.txt');
    write(root, 'both.txt', '3');
    const status = new SnapshotManager(root).captureGitStatus(root);
    expect(status.staged).toEqual(['both.txt', 'conflict.txt']);
    expect(status.unstaged).toEqual(['both.txt', 'conflict.txt']);
  });

  it('reports HEAD as the branch when detached', () => {
    const root = repo();
    commitAll(root, 'one');
    commitAll(root, 'two');
    git(root, 'checkout', '-q', '--detach', 'HEAD~1');
    const status = new SnapshotManager(root).captureGitStatus(root);
    expect(status.branch).toBe('HEAD');
    expect(status.commit).toBe(git(root, 'rev-parse', 'HEAD').trim());
  });

  it("returns [] from calculateFileDiffs and getCommitsSince for 'unknown'", () => {
    const root = repo();
    commitAll(root, 'one');
    const head = git(root, 'rev-parse', 'HEAD').trim();
    const manager = new SnapshotManager(root);
    expect(manager.calculateFileDiffs(root, 'unknown', head)).toEqual([]);
    expect(manager.calculateFileDiffs(root, head, 'unknown')).toEqual([]);
    expect(manager.getCommitsSince(root, 'unknown')).toEqual([]);
  });

  it('returns [] for commit ids git does not know, and refuses option-like ids', () => {
    const root = repo();
    commitAll(root, 'one');
    const head = git(root, 'rev-parse', 'HEAD').trim();
    const manager = new SnapshotManager(root);
    expect(manager.calculateFileDiffs(root, 'f'.repeat(40), head)).toEqual([]);
    expect(manager.getCommitsSince(root, 'f'.repeat(40))).toEqual([]);
    const outFile = path.join(root, 'injected.txt');
    expect(manager.calculateFileDiffs(root, `--output=${outFile}`, head)).toEqual([]);
    expect(manager.getCommitsSince(root, `--output=${outFile}`)).toEqual([]);
    expect(fs.existsSync(outFile)).toBe(false);
  });

  it('reports a deleted committed file as deleted', () => {
    const root = repo();
    write(root, 'gone.txt', 'bye');
    commitAll(root, 'add');
    const manager = new SnapshotManager(root);
    const dir = seedIterationDir(root);
    const pre = manager.capturePreSnapshot(root, dir);
    git(root, 'rm', '-q', 'gone.txt');
    git(root, 'commit', '-q', '-m', 'remove');
    const post = manager.capturePostSnapshot(root, dir);
    expect(post.fileDiffs).toEqual([{ path: 'gone.txt', status: 'deleted' }]);
    expect(manager.calculateDiff(pre, post).filesDeleted).toEqual(['gone.txt']);
  });

  it('caps a huge per-file diff and says so', () => {
    const root = repo();
    write(root, 'big.txt', 'a\n'.repeat(200_000));
    commitAll(root, 'big');
    const from = git(root, 'rev-parse', 'HEAD').trim();
    write(root, 'big.txt', 'b\n'.repeat(200_000));
    commitAll(root, 'rewrite');
    const [entry] = new SnapshotManager(root).calculateFileDiffs(root, from, git(root, 'rev-parse', 'HEAD').trim());
    expect(entry?.status).toBe('modified');
    expect(entry?.diff?.length).toBeLessThan(300 * 1024);
    expect(entry?.diff).toContain('[cairn: diff truncated');
  });

  it("does not leak git's stderr outside a repository", async () => {
    const root = plainDir();
    // A child process runs captureGitStatus; whatever git prints on stderr would show up in its stderr.
    const { spawnSync } = await import('node:child_process');
    const script = `import { SnapshotManager } from ${JSON.stringify(path.resolve('src/session/index.ts'))};
      const s = new SnapshotManager(process.argv[1]).captureGitStatus(process.argv[1]);
      process.stdout.write(JSON.stringify(s));`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, root], { encoding: 'utf8', cwd: path.resolve('.') });
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ commit: 'unknown' });
    expect(r.stderr).not.toMatch(/fatal|not a git repository/i);
  });
});

describe('key files and state directory', () => {
  it('skips missing key files and key-file names that are directories', () => {
    const root = plainDir();
    fs.mkdirSync(path.join(root, 'package.json'));
    write(root, 'tsconfig.json', '{}');
    const files = new SnapshotManager(root).captureKeyFiles(root);
    expect(files.map((f) => f.path)).toEqual(['tsconfig.json']);
    expect(KEY_FILES).toEqual(['package.json', 'package-lock.json', 'CLAUDE.md', 'CHANGELOG.md', '.gitignore', 'tsconfig.json']);
  });

  it('skips a key file that is a FIFO without blocking on it', () => {
    const root = plainDir();
    mkfifo(path.join(root, 'CLAUDE.md'));
    write(root, '.gitignore', 'x\n');
    expect(new SnapshotManager(root).captureKeyFiles(root).map((f) => f.path)).toEqual(['.gitignore']);
  });

  it('returns an empty list when no key file exists', () => {
    expect(new SnapshotManager('.').captureKeyFiles(plainDir())).toEqual([]);
  });

  it('gives ralphState null for invalid JSON and for a missing file', () => {
    const root = plainDir();
    const manager = new SnapshotManager(root);
    expect(manager.captureAiwgState(root).ralphState).toBeNull();
    write(root, '.aiwg/ralph/current-loop.json', '{not json');
    expect(manager.captureAiwgState(root).ralphState).toBeNull();
  });

  it('does not follow symlinks inside the state directory', () => {
    const root = plainDir();
    const outside = plainDir();
    write(outside, 'secret.txt', 'do not hash me');
    write(root, '.aiwg/real.md', 'r');
    fs.symlinkSync(outside, path.join(root, '.aiwg', 'linked-dir'));
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, '.aiwg', 'linked-file'));
    expect(new SnapshotManager(root).captureAiwgState(root).files.map((f) => f.path)).toEqual(['.aiwg/real.md']);
  });

  it('honours a configured state directory, also for ralphState', () => {
    const root = plainDir();
    write(root, '.agent/notes.md', 'n');
    write(root, '.agent/ralph/current-loop.json', '{"currentPhase":"construction"}');
    write(root, '.aiwg/ignored.md', 'i');
    const state = new SnapshotManager(root, { stateDir: '.agent' }).captureAiwgState(root);
    expect(state.files.map((f) => f.path)).toEqual(['.agent/notes.md', '.agent/ralph/current-loop.json']);
    expect(state.ralphState).toEqual({ currentPhase: 'construction' });
  });

  it("never counts the iteration's own pre/post snapshot files as artifacts", () => {
    const root = repo();
    commitAll(root, 'init');
    const manager = new SnapshotManager(root);
    const dir = seedIterationDir(root);
    const pre = manager.capturePreSnapshot(root, dir);
    write(root, '.aiwg/requirements/new.md', 'n');
    const post = manager.capturePostSnapshot(root, dir);
    const diff = manager.calculateDiff(pre, post);
    expect(diff.aiwgArtifactsCreated).toEqual(['.aiwg/requirements/new.md']);
    expect(post.aiwg.files.map((f) => f.path)).not.toContain('.aiwg/ralph-external/iterations/001/pre-snapshot.json');
  });

  it('reports deleted state-dir artifacts and key-file changes', () => {
    const root = repo();
    write(root, 'package.json', '{"v":1}');
    write(root, 'CLAUDE.md', '# c');
    write(root, '.aiwg/old.md', 'o');
    commitAll(root, 'init');
    const manager = new SnapshotManager(root);
    const dir = seedIterationDir(root);
    const pre = manager.capturePreSnapshot(root, dir);
    fs.rmSync(path.join(root, '.aiwg/old.md'));
    write(root, 'package.json', '{"v":2}');
    fs.rmSync(path.join(root, 'CLAUDE.md'));
    write(root, 'CHANGELOG.md', '# changes');
    const post = manager.capturePostSnapshot(root, dir);
    const diff = manager.calculateDiff(pre, post);
    expect(diff.aiwgArtifactsDeleted).toEqual(['.aiwg/old.md']);
    expect(diff.keyFilesChanged).toEqual([
      { path: 'CHANGELOG.md', status: 'added' },
      { path: 'package.json', status: 'modified' },
      { path: 'CLAUDE.md', status: 'deleted' },
    ]);
  });
});

describe('argument checks', () => {
  it('rejects the object-style capture call of upstream\'s README with a clear error', () => {
    const manager = new SnapshotManager('.');
    const objectCall = () => (manager.capturePreSnapshot as unknown as (o: object) => unknown)({ sessionId: 's', iteration: 1 });
    expect(objectCall).toThrow(CairnError);
    expect(objectCall).toThrow(/takes two non-empty paths/);
  });

  it('accepts new SnapshotManager({projectRoot}) as upstream\'s README writes it', () => {
    const manager = new SnapshotManager({ projectRoot: '/some/where' } as unknown as string);
    expect(manager.projectRoot).toBe('/some/where');
  });
});

describe('createFileSnapshot', () => {
  it('gives a POSIX path relative to the root, sha256, size and ISO mtime', () => {
    const root = plainDir();
    const file = write(root, 'src/deep/mod.ts', 'hello');
    const snap = new SnapshotManager(root).createFileSnapshot(root, file);
    expect(snap.path).toBe('src/deep/mod.ts');
    expect(snap.hash).toBe('2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824');
    expect(snap.size).toBe(5);
    expect(new Date(snap.mtime).toISOString()).toBe(snap.mtime);
  });
});

describe('snapshot files', () => {
  it('gives a clear error naming a corrupt pre-snapshot.json, not a raw SyntaxError', () => {
    const root = plainDir();
    const dir = seedIterationDir(root);
    write(dir, 'pre-snapshot.json', '{"timestamp": "2026-01-01T00:00:00Z", "git": ');
    let error: unknown;
    try {
      new SnapshotManager(root).capturePostSnapshot(root, dir);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CairnError);
    expect((error as CairnError).code).toBe('ERR_CORRUPT');
    expect((error as CairnError).message).toContain(path.join(dir, 'pre-snapshot.json'));
    expect(fs.existsSync(path.join(dir, 'post-snapshot.json'))).toBe(false);
  });

  it('throws the exact seed message when the pre-snapshot is missing', () => {
    const root = plainDir();
    let error: unknown;
    try {
      new SnapshotManager(root).capturePostSnapshot(root, path.join(root, 'nope'));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('Pre-snapshot not found - cannot capture post-snapshot');
  });

  it('replaces an existing pre-snapshot whole and leaves no temp files behind', () => {
    const root = plainDir();
    const dir = seedIterationDir(root);
    const manager = new SnapshotManager(root);
    manager.capturePreSnapshot(root, dir);
    const second = manager.capturePreSnapshot(root, dir);
    expect(fs.readdirSync(dir)).toEqual(['pre-snapshot.json']);
    expect((JSON.parse(fs.readFileSync(path.join(dir, 'pre-snapshot.json'), 'utf8')) as PreSnapshot).timestamp).toBe(second.timestamp);
  });
});

describe('findTestResults through the manager', () => {
  it('finds a log in the parent of the iteration directory', () => {
    const root = plainDir();
    const dir = seedIterationDir(root);
    fs.mkdirSync(dir, { recursive: true });
    write(path.dirname(dir), 'iteration-001.log', 'running...\n  12 passing (40ms)\n');
    const found = new SnapshotManager(root).findTestResults(root, dir);
    expect(found.found).toBe(true);
    expect(found.file).toBe(path.join(path.dirname(dir), 'iteration-001.log'));
  });

  it('recognises the Mocha and TAP patterns the seed documents', () => {
    const manager = new SnapshotManager('.');
    expect(manager.parseTestOutput('\n  14 passing (52ms)\n')).not.toBeNull();
    expect(manager.parseTestOutput('TAP version 13\nok 1 - a\n1..1\n# tests 1\n# pass 1\n# fail 0\n')).not.toBeNull();
  });

  it('reports found: false when nothing is there', () => {
    const root = plainDir();
    const dir = seedIterationDir(root);
    fs.mkdirSync(dir, { recursive: true });
    expect(new SnapshotManager(root).findTestResults(root, dir).found).toBe(false);
  });
});

describe('formatDuration and durations', () => {
  it.each([
    [0, '0s'],
    [999, '0s'],
    [5000, '5s'],
    [45000, '45s'],
    [59999, '59s'],
    [60000, '1m 0s'],
    [125000, '2m 5s'],
    [135000, '2m 15s'],
    [3599999, '59m 59s'],
    [3600000, '1h 0m'],
    [7380000, '2h 3m'],
    [21600000, '6h 0m'],
  ])('formats %d ms as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it.each([[-5000], [Number.NaN], [Number.POSITIVE_INFINITY], [Number.NEGATIVE_INFINITY]])('prints 0s, never NaN or a negative, for %d', (ms) => {
    expect(formatDuration(ms)).toBe('0s');
  });

  it('never prints NaN, a negative or an empty string for any number (property)', () => {
    fc.assert(
      fc.property(fc.double(), (ms) => {
        expect(formatDuration(ms)).toMatch(/^(\d+s|\d+m \d+s|\d+h \d+m)$/);
      }),
      { numRuns: 2000 },
    );
  });

  it('gives durationMs 0 and "0s" for invalid or reversed timestamps', () => {
    const manager = new SnapshotManager('.');
    const base: PostSnapshot = { timestamp: 'not a date', git: { branch: 'x', commit: 'y', staged: [], unstaged: [], untracked: [] }, fileDiffs: [], commits: [], aiwg: { files: [], ralphState: null }, tests: { found: false } };
    const pre: PreSnapshot = { timestamp: '2026-01-01T10:00:00Z', git: base.git, keyFiles: [], aiwg: base.aiwg };
    for (const timestamp of ['not a date', '2026-01-01T09:00:00Z']) {
      const diff = manager.calculateDiff(pre, { ...base, timestamp });
      expect(diff.durationMs).toBe(0);
      expect(diff.duration).toBe('0s');
    }
  });
});
