/**
 * Content capture in `session pre`/`post`: git repositories copy only what git does not hold at
 * pre and secure both sides of every changed path at post; plain directories copy once, then
 * what changed; the cap is reported; the pre state survives amend + gc.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { contentUsage, openIteration } from '../../src/content/index.js';
import { SnapshotManager, createNextIterationDir } from '../../src/session/index.js';
import { commitAll, git, trackedDirs, useTempCacheHome, write } from '../session/helpers.js';

useTempCacheHome();
const { repo, dir: tempDir } = trackedDirs();

function pre(root: string, options: ConstructorParameters<typeof SnapshotManager>[1] = {}): string {
  const dir = createNextIterationDir(root);
  new SnapshotManager(root, options).capturePreSnapshot(root, dir);
  return dir;
}
function post(root: string, dir: string, options: ConstructorParameters<typeof SnapshotManager>[1] = {}): void {
  new SnapshotManager(root, options).capturePostSnapshot(root, dir);
}
const text = (b: Buffer | undefined): string | undefined => b?.toString('utf8');
interface Rec {
  content: { objectsWritten: number; notRestorable?: unknown[] };
  git: { commit: string };
}
const readRec = (dir: string, side: 'pre' | 'post' = 'pre'): Rec => JSON.parse(fs.readFileSync(path.join(dir, `${side}-snapshot.json`), 'utf8')) as Rec;

describe('content capture', () => {
  it('copies nothing at pre on a clean repository, and both sides of changed paths at post', () => {
    const root = repo();
    write(root, 'keep.txt', 'keep\n');
    write(root, 'edit.txt', 'before\n');
    write(root, 'gone.txt', 'gone\n');
    commitAll(root, 'init');
    const dir = pre(root);
    const preRec = readRec(dir);
    expect(preRec.content).toMatchObject({ objectsWritten: 0, packBytes: 0 });
    expect(contentUsage(path.join(root, '.cairn')).objects).toBe(0);
    write(root, 'edit.txt', 'after\n');
    fs.rmSync(path.join(root, 'gone.txt'));
    write(root, 'new.txt', 'new\n');
    commitAll(root, 'agent');
    post(root, dir);
    // pre sides of edit/gone from git, post sides of edit/new from disk; keep.txt untouched
    expect(contentUsage(path.join(root, '.cairn')).objects).toBe(4);
    const it_ = openIteration(root, '1');
    expect(text(it_.read('pre', 'edit.txt')?.bytes)).toBe('before\n');
    expect(text(it_.read('post', 'edit.txt')?.bytes)).toBe('after\n');
    expect(text(it_.read('pre', 'gone.txt')?.bytes)).toBe('gone\n');
    expect(it_.read('post', 'gone.txt')).toBeNull();
    expect(it_.read('pre', 'new.txt')).toBeNull();
    expect(text(it_.read('post', 'new.txt')?.bytes)).toBe('new\n');
    expect(it_.changes().map((c) => c.path)).toEqual(['edit.txt', 'gone.txt', 'new.txt']);
  });

  it('takes the pre side from git when the root is a subdirectory of the repository', () => {
    const top = repo();
    write(top, 'outside.txt', 'outside\n');
    write(top, 'app/edit.txt', 'before\n');
    write(top, 'app/deep/gone.txt', 'gone\n');
    write(top, 'app/crlf.txt', 'one\ntwo\n');
    write(top, '.gitattributes', 'app/crlf.txt text eol=crlf\n');
    commitAll(top, 'init');
    const root = path.join(top, 'app');
    fs.rmSync(path.join(root, 'crlf.txt'));
    git(top, 'checkout', '--', 'app/crlf.txt'); // the working-tree form: CRLF, unlike the blob
    const dir = pre(root);
    write(root, 'edit.txt', 'after\n');
    fs.rmSync(path.join(root, 'deep/gone.txt'));
    write(root, 'crlf.txt', 'changed\n');
    post(root, dir);
    const it_ = openIteration(root, '1');
    expect(text(it_.read('pre', 'edit.txt')?.bytes)).toBe('before\n');
    expect(text(it_.read('pre', 'deep/gone.txt')?.bytes)).toBe('gone\n');
    expect(text(it_.read('pre', 'crlf.txt')?.bytes)).toBe('one\r\ntwo\r\n');
    expect((readRec(dir, 'post') as { content: { preNotRestorable?: unknown } }).content.preNotRestorable).toBeUndefined();
  });

  it('copies untracked and locally modified files at pre (git cannot give them back)', () => {
    const root = repo();
    write(root, 'tracked.txt', 'committed\n');
    commitAll(root, 'init');
    write(root, 'tracked.txt', 'local edit\n');
    write(root, 'scratch/untracked.txt', 'untracked\n');
    const dir = pre(root);
    const rec = readRec(dir);
    expect(rec.content.objectsWritten).toBe(2);
    // The agent throws both away (git checkout, rm), nothing committed.
    git(root, 'checkout', '--', 'tracked.txt');
    fs.rmSync(path.join(root, 'scratch'), { recursive: true });
    post(root, dir);
    const it_ = openIteration(root);
    expect(text(it_.read('pre', 'tracked.txt')?.bytes)).toBe('local edit\n');
    expect(text(it_.read('pre', 'scratch/untracked.txt')?.bytes)).toBe('untracked\n');
  });

  it('keeps the pre state through an agent\'s commit --amend and an aggressive gc', () => {
    const root = repo();
    write(root, 'a.txt', 'original\n');
    commitAll(root, 'init');
    const dir = pre(root);
    write(root, 'a.txt', 'rewritten\n');
    git(root, 'add', 'a.txt');
    git(root, 'commit', '-q', '--amend', '-m', 'init (amended)');
    git(root, 'gc', '-q', '--prune=now');
    post(root, dir);
    // After post the agent drops every trace of the old commit from git.
    git(root, 'reflog', 'expire', '--expire=now', '--all');
    git(root, 'gc', '-q', '--prune=now');
    expect(() => git(root, 'cat-file', '-e', `${readRec(dir).git.commit}^{commit}`)).toThrow();
    expect(text(openIteration(root).read('pre', 'a.txt')?.bytes)).toBe('original\n');
  });

  it('outside git copies every file once, then only what changed', () => {
    const root = tempDir();
    for (let i = 0; i < 20; i++) write(root, `d/f${i}.txt`, `file ${i}\n`);
    const first = pre(root);
    post(root, first);
    const before = contentUsage(path.join(root, '.cairn')).objects;
    expect(before).toBe(20);
    const second = pre(root);
    expect(readRec(second).content.objectsWritten).toBe(0);
    write(root, 'd/f3.txt', 'changed\n');
    post(root, second);
    expect(contentUsage(path.join(root, '.cairn')).objects).toBe(21);
    const it_ = openIteration(root, '002');
    expect(text(it_.read('pre', 'd/f3.txt')?.bytes)).toBe('file 3\n');
    expect(text(it_.read('post', 'd/f3.txt')?.bytes)).toBe('changed\n');
  });

  it('records files over the cap as not restorable, never silently', () => {
    const root = tempDir();
    write(root, 'big.bin', Buffer.alloc(4096, 7));
    write(root, 'small.txt', 'small\n');
    const dir = pre(root, { contentCapBytes: 1024 });
    const rec = readRec(dir);
    expect(rec.content.notRestorable).toEqual([{ path: 'big.bin', reason: 'over-size-cap' }]);
    write(root, 'big.bin', Buffer.alloc(4096, 8));
    const it_ = openIteration(root);
    expect(it_.notRestorable('pre')).toEqual([{ path: 'big.bin', reason: 'over-size-cap' }]);
    expect(() => it_.read('pre', 'big.bin')).toThrow(/not kept/);
    expect(text(it_.read('pre', 'small.txt')?.bytes)).toBe('small\n');
  });

  it('keeps symlink targets and exec bits', () => {
    const root = tempDir();
    write(root, 'run.sh', '#!/bin/sh\n');
    fs.chmodSync(path.join(root, 'run.sh'), 0o755);
    fs.symlinkSync('run.sh', path.join(root, 'link'));
    pre(root);
    const it_ = openIteration(root);
    expect(it_.read('pre', 'link')).toMatchObject({ kind: 'symlink', target: 'run.sh' });
    expect(it_.read('pre', 'run.sh')).toMatchObject({ kind: 'file', mode: '0755' });
  });

  it('refuses to write content through a symlink planted at .cairn/content', () => {
    const root = tempDir();
    const outside = tempDir();
    write(root, 'a.txt', 'a\n');
    fs.mkdirSync(path.join(root, '.cairn'), { recursive: true });
    fs.symlinkSync(outside, path.join(root, '.cairn', 'content'));
    expect(() => pre(root)).toThrow(/symlink/);
    expect(fs.readdirSync(outside)).toEqual([]);
  });

  it('session prune collects content of pruned iterations and keeps what live ones need', () => {
    const root = tempDir();
    write(root, 'a.txt', 'v1\n');
    const d1 = pre(root);
    write(root, 'a.txt', 'v2\n');
    post(root, d1);
    const d2 = pre(root);
    write(root, 'a.txt', 'v3\n');
    post(root, d2);
    // Age every pack past the grace period, then drop iteration 1.
    const packs = path.join(root, '.cairn', 'content', 'packs');
    const old = new Date(Date.now() - 3600_000);
    for (const p of fs.readdirSync(packs)) fs.utimesSync(path.join(packs, p), old, old);
    fs.rmSync(d1, { recursive: true });
    const m = new SnapshotManager(root);
    m.pruneInventories({ graceMs: 0 });
    return import('../../src/content/index.js').then(({ pruneContent }) => {
      const r = pruneContent(path.join(root, '.cairn'), { graceMs: 0 });
      expect(r.objectsDeleted).toBe(1); // v1
      const it_ = openIteration(root, '2');
      expect(text(it_.read('pre', 'a.txt')?.bytes)).toBe('v2\n');
      expect(text(it_.read('post', 'a.txt')?.bytes)).toBe('v3\n');
    });
  });
});
