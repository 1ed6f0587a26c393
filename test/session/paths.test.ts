/** Paths survive exactly, no shell ever runs, and every path is relative to projectRoot. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SnapshotManager } from '../../src/session/index.js';
import { commitAll, git, seedIterationDir, write, useTempCacheHome, trackedDirs } from './helpers.js';

useTempCacheHome();

const { repo, dir: tempDir } = trackedDirs();

const CANARY = 'CANARY_SHELL_RAN';

/** Names a shell would mangle or execute; none may create the canary or come back changed. */
const HOSTILE_NAMES = [
  'with space.txt',
  "single'quote.txt",
  'double"quote.txt',
  `$(touch ${CANARY}).txt`,
  `\`touch ${CANARY}\`.txt`,
  'semi;colon&amp.txt',
  'new\nline.txt',
  'tab\there.txt',
  'ünïcödé-日本.txt',
  '-leading-dash.txt',
  '*star?.txt',
];

function canaryAppeared(root: string): boolean {
  return fs.existsSync(path.join(root, CANARY)) || fs.existsSync(path.join(process.cwd(), CANARY));
}

describe('hostile path names', () => {
  it('come back exactly from git status, file diffs and commits, and no shell runs', () => {
    const root = repo();
    for (const name of HOSTILE_NAMES) write(root, `tracked/${name}`, 'v1\n');
    commitAll(root, `subject with $(touch ${CANARY}) and \`touch ${CANARY}\``);
    const manager = new SnapshotManager(root);
    const dir = seedIterationDir(root);
    const pre = manager.capturePreSnapshot(root, dir);

    for (const name of HOSTILE_NAMES) write(root, `tracked/${name}`, 'v2\n');
    commitAll(root, 'modify all');
    for (const name of HOSTILE_NAMES) write(root, `fresh/${name}`, 'new\n');
    git(root, 'add', '--', `fresh/${HOSTILE_NAMES[0] as string}`);
    for (const name of HOSTILE_NAMES) write(root, `tracked/${name}`, 'v3, not committed\n');

    const post = manager.capturePostSnapshot(root, dir);
    const expectedTracked = HOSTILE_NAMES.map((n) => `tracked/${n}`).sort();
    expect(post.fileDiffs.map((d) => d.path).sort()).toEqual(expectedTracked);
    for (const d of post.fileDiffs) {
      expect(d.status).toBe('modified');
      expect(d.diff).toContain('+v2');
    }
    expect(post.git.unstaged.slice().sort()).toEqual(expectedTracked);
    expect(post.git.staged).toEqual([`fresh/${HOSTILE_NAMES[0] as string}`]);
    expect(post.git.untracked.filter((p) => !p.startsWith('.aiwg/')).sort()).toEqual(HOSTILE_NAMES.slice(1).map((n) => `fresh/${n}`).sort());
    // The working-tree diff sees them too, also names the repo-snapshot engine cannot inventory.
    const diff = manager.calculateDiff(pre, post);
    expect(diff.filesAdded.slice().sort()).toEqual(HOSTILE_NAMES.map((n) => `fresh/${n}`).sort());
    expect(diff.filesModified.slice().sort()).toEqual(expectedTracked);
    expect(post.inventory?.skipped).toBe(0);
    expect(canaryAppeared(root)).toBe(false);
  });

  it('arbitrary names (quotes, $, backticks, non-ASCII) round-trip through captureGitStatus', () => {
    const root = repo();
    commitAll(root, 'init');
    const manager = new SnapshotManager(root);
    const nameChar = fc.constantFrom(...'ab Z09 \'"$`()!;&|<>*?[]{}#~=%ü日é\t'.split(''));
    fc.assert(
      fc.property(fc.uniqueArray(fc.array(nameChar, { minLength: 1, maxLength: 12 }).map((cs) => `f${cs.join('')}`), { minLength: 1, maxLength: 6 }), (names) => {
        const sandbox = path.join(root, 'p');
        fs.rmSync(sandbox, { recursive: true, force: true });
        for (const name of names) write(sandbox, name, 'x');
        const status = manager.captureGitStatus(root);
        expect(status.untracked.slice().sort()).toEqual(names.map((n) => `p/${n}`).sort());
        expect(canaryAppeared(root)).toBe(false);
      }),
      { numRuns: 30 },
    );
  });
});

describe('names the repo-snapshot engine skips', () => {
  it('are recovered for the diff unless git ignores them', () => {
    const root = repo();
    write(root, '.gitignore', 'ignored*\n');
    commitAll(root, 'init');
    const manager = new SnapshotManager(root);
    const dir = seedIterationDir(root);
    const pre = manager.capturePreSnapshot(root, dir);
    write(root, 'weird"dir/inner.txt', 'i');
    write(root, 'trailing-dot.', 't');
    write(root, 'ignored"file', 'x');
    const post = manager.capturePostSnapshot(root, dir);
    expect(manager.calculateDiff(pre, post).filesAdded).toEqual(['trailing-dot.', 'weird"dir/inner.txt']);
  });

  it('are recovered outside git by walking them', () => {
    const root = tempDir();
    const manager = new SnapshotManager(root);
    const dir = path.join(root, '.cairn', 'iterations', '001');
    const pre = manager.capturePreSnapshot(root, dir);
    write(root, 'new\nline/deep/file.txt', 'n');
    const post = manager.capturePostSnapshot(root, dir);
    expect(manager.calculateDiff(pre, post).filesAdded).toEqual(['new\nline/deep/file.txt']);
  });
});

describe('projectRoot inside a repository', () => {
  it('reports every git path relative to the subdirectory and only inside it', () => {
    const top = repo();
    write(top, 'outside.txt', 'o');
    write(top, 'pkg/inside.txt', 'i');
    write(top, 'pkg/package.json', '{}');
    commitAll(top, 'init');
    const root = path.join(top, 'pkg');
    const manager = new SnapshotManager(root);
    const dir = path.join(root, '.cairn', 'iterations', '001');
    const pre = manager.capturePreSnapshot(root, dir);
    expect(pre.keyFiles.map((f) => f.path)).toEqual(['package.json']);

    write(top, 'outside.txt', 'o2');
    write(top, 'pkg/inside.txt', 'i2');
    write(top, 'pkg/new-committed.txt', 'n');
    commitAll(top, 'change both');
    write(top, 'pkg/inside.txt', 'i3');
    write(top, 'pkg/staged.txt', 's');
    git(top, 'add', 'pkg/staged.txt');
    write(top, 'pkg/sub/untracked.txt', 'u');
    write(top, 'elsewhere-untracked.txt', 'e');

    const post = manager.capturePostSnapshot(root, dir);
    expect(post.fileDiffs.map((d) => [d.path, d.status])).toEqual([
      ['inside.txt', 'modified'],
      ['new-committed.txt', 'added'],
    ]);
    expect(post.git.unstaged).toEqual(['inside.txt']);
    expect(post.git.staged).toEqual(['staged.txt']);
    expect(post.git.untracked).toEqual(['sub/untracked.txt']);
    const diff = manager.calculateDiff(pre, post);
    expect(diff.filesAdded).toEqual(['new-committed.txt', 'staged.txt', 'sub/untracked.txt']);
    expect(diff.filesModified).toEqual(['inside.txt']);
  });
});

describe('renames', () => {
  it('report the old path as deleted and the new path as added', () => {
    const root = repo();
    write(root, 'old/name.ts', 'export const a = 1;\n'.repeat(20));
    commitAll(root, 'init');
    const manager = new SnapshotManager(root);
    const dir = seedIterationDir(root);
    const pre = manager.capturePreSnapshot(root, dir);
    fs.mkdirSync(path.join(root, 'new'));
    git(root, 'mv', 'old/name.ts', 'new/näme.ts');
    commitAll(root, 'rename');
    const post = manager.capturePostSnapshot(root, dir);
    expect(post.fileDiffs).toEqual([
      { path: 'new/näme.ts', status: 'added' },
      { path: 'old/name.ts', status: 'deleted' },
    ]);
    const diff = manager.calculateDiff(pre, post);
    expect(diff.filesAdded).toEqual(['new/näme.ts']);
    expect(diff.filesDeleted).toEqual(['old/name.ts']);
  });
});
