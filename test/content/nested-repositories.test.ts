/**
 * Files inside a repository nested in the tree (an untracked one holding its own `.git`, a
 * submodule, a repository `git add` took in as a gitlink) are held by no blob of the outer
 * repository: pre copies them, so diff shows their changes and restore puts them back, while
 * the files the outer repository holds are still left to git.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openIteration } from '../../src/content/index.js';
import { gitlinksInIndex } from '../../src/content/git-index.js';
import { restoreIteration } from '../../src/rewind/index.js';
import { SnapshotManager, createNextIterationDir } from '../../src/session/index.js';
import { commitAll, git, trackedDirs, useTempCacheHome, write } from '../session/helpers.js';

useTempCacheHome();
const { repo } = trackedDirs();

function pre(root: string): string {
  const dir = createNextIterationDir(root);
  new SnapshotManager(root).capturePreSnapshot(root, dir);
  return dir;
}
function post(root: string, dir: string): void {
  new SnapshotManager(root).capturePostSnapshot(root, dir);
}
const preRecord = (dir: string): { objectsWritten: number; notRestorable?: unknown[] } =>
  (JSON.parse(fs.readFileSync(path.join(dir, 'pre-snapshot.json'), 'utf8')) as { content: { objectsWritten: number } }).content;
const postRecord = (dir: string): { preNotRestorable?: unknown[]; notRestorable?: unknown[] } =>
  (JSON.parse(fs.readFileSync(path.join(dir, 'post-snapshot.json'), 'utf8')) as { content: { preNotRestorable?: unknown[] } }).content;
const read = (root: string, rel: string): string => fs.readFileSync(path.join(root, rel), 'utf8');

/** An outer repository with two committed files of its own. */
function outer(): string {
  const root = repo();
  write(root, 'a.txt', 'a\n');
  write(root, 'src/b.txt', 'b\n');
  commitAll(root, 'outer');
  return root;
}

/** A repository with `files` committed, at `root/rel` or in a new directory of its own. */
function inner(at: string, files: Record<string, string>): string {
  fs.mkdirSync(at, { recursive: true });
  git(at, 'init', '-q', '-b', 'main');
  for (const [rel, text] of Object.entries(files)) write(at, rel, text);
  commitAll(at, 'inner');
  return at;
}

/** The agent edits one nested file and deletes another; pre → post → diff → restore. */
async function editedAndRestored(root: string, nested: string): Promise<void> {
  const dir = pre(root);
  write(root, `${nested}/l.txt`, 'l2\n');
  fs.rmSync(path.join(root, nested, 'deep/m.txt'));
  post(root, dir);
  expect(postRecord(dir).preNotRestorable).toBeUndefined();
  const it_ = openIteration(root);
  expect(it_.changes().map((c) => c.path)).toEqual([`${nested}/deep/m.txt`, `${nested}/l.txt`]);
  expect(it_.read('pre', `${nested}/l.txt`)?.bytes?.toString('utf8')).toBe('l\n');
  expect(it_.read('pre', `${nested}/deep/m.txt`)?.bytes?.toString('utf8')).toBe('m\n');
  const r = await restoreIteration({ root });
  expect(r.notRestorable).toEqual([]);
  expect(read(root, `${nested}/l.txt`)).toBe('l\n');
  expect(read(root, `${nested}/deep/m.txt`)).toBe('m\n');
}

describe('content of nested repositories', () => {
  it('copies the files of an untracked repository inside the tree at pre, so diff and restore have them', async () => {
    const root = outer();
    inner(path.join(root, 'vendor/lib'), { 'l.txt': 'l\n', 'deep/m.txt': 'm\n' });
    expect(git(root, 'status', '--porcelain', '-uall')).toBe('?? vendor/lib/\n');
    const dir = pre(root);
    // The two nested files, nothing of the outer repository's clean tree.
    expect(preRecord(dir).objectsWritten).toBe(2);
    await editedAndRestored(root, 'vendor/lib');
  });

  it('copies the files of a clean submodule at pre, which the outer commit holds only as a commit id', async () => {
    const root = outer();
    const origin = inner(repo(), { 'l.txt': 'l\n', 'deep/m.txt': 'm\n' });
    git(root, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', origin, 'mods/lib');
    commitAll(root, 'add the submodule');
    expect(git(root, 'status', '--porcelain', '-uall')).toBe('');
    const dir = pre(root);
    // Its two files and its `.git` file (`gitdir: …`), nothing of the outer repository's tree.
    expect(preRecord(dir).objectsWritten).toBe(3);
    await editedAndRestored(root, 'mods/lib');
  });

  it('copies the files of a repository git add took in as a gitlink, without .gitmodules', async () => {
    const root = outer();
    inner(path.join(root, 'vendor/lib'), { 'l.txt': 'l\n', 'deep/m.txt': 'm\n' });
    git(root, '-c', 'advice.addEmbeddedRepo=false', 'add', 'vendor/lib');
    commitAll(root, 'embed');
    expect(git(root, 'ls-files', '--stage', 'vendor/lib')).toMatch(/^160000 /);
    expect(fs.existsSync(path.join(root, '.gitmodules'))).toBe(false);
    await editedAndRestored(root, 'vendor/lib');
  });

  it('asks git for the gitlinks of an index it does not read itself (version 4)', async () => {
    const root = outer();
    const origin = inner(repo(), { 'l.txt': 'l\n', 'deep/m.txt': 'm\n' });
    git(root, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', origin, 'mods/lib');
    commitAll(root, 'add the submodule');
    expect(gitlinksInIndex(root)).toEqual(['mods/lib']);
    expect(gitlinksInIndex(path.join(root, 'mods'))).toEqual(['lib']);
    expect(gitlinksInIndex(path.join(root, 'src'))).toEqual([]);
    git(root, 'update-index', '--index-version', '4');
    expect(gitlinksInIndex(root)).toBeNull();
    await editedAndRestored(root, 'mods/lib');
  });

  it('reads the gitlinks of the part of the repository a subdirectory root covers', async () => {
    const top = outer();
    const origin = inner(repo(), { 'l.txt': 'l\n', 'deep/m.txt': 'm\n' });
    git(top, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', origin, 'app/lib');
    write(top, 'app/own.txt', 'own\n');
    commitAll(top, 'add the submodule');
    const root = path.join(top, 'app');
    const dir = pre(root);
    expect(preRecord(dir).objectsWritten).toBe(3); // as above: app/own.txt is left to git
    await editedAndRestored(root, 'lib');
  });
});
