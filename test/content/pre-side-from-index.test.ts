/**
 * Post reads the pre side of each changed path from git by the blob id git's index holds for it
 * (content/git-index.ts), falling back to `<commit>:<path>`. The id is only a hint: whatever the
 * index says (another blob staged, a commit since, a version 4 or split index, a blob gone from
 * git, filters that make the working tree differ from the blob), the bytes kept are the pre
 * inventory's, or the path is recorded as not restorable; and a file changed between the scan
 * and the copy is still recorded as such.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { blobIdsInIndex } from '../../src/content/git-index.js';
import { openIteration } from '../../src/content/index.js';
import { SnapshotManager, createNextIterationDir } from '../../src/session/index.js';
import type { GitStatus, PostSnapshot } from '../../src/session/types.js';
import { commitAll, git, trackedDirs, useTempCacheHome, write } from '../session/helpers.js';

useTempCacheHome();
const { repo } = trackedDirs();

/** path → blob id at stage 0, as git itself lists the index. */
function gitIndexIds(top: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of git(top, 'ls-files', '-s', '-z').split('\0')) {
    if (line === '') continue;
    const [meta, p] = line.split('\t') as [string, string];
    const [, id, stage] = meta.split(' ');
    if (stage === '0') out.set(p, id!);
  }
  return out;
}

const sizeOf = (root: string, rel: string): number => fs.statSync(path.join(root, rel)).size;

function iteration(root: string, change: () => void, manager: SnapshotManager = new SnapshotManager(root)): { dir: string; post: PostSnapshot } {
  const dir = createNextIterationDir(root);
  new SnapshotManager(root).capturePreSnapshot(root, dir);
  change();
  return { dir, post: manager.capturePostSnapshot(root, dir) };
}

const pre = (root: string, dir: string, rel: string): string | undefined => openIteration(root, path.basename(dir)).read('pre', rel)?.bytes?.toString('utf8');

describe('blob ids from the index', () => {
  it('are the ids git lists for the wanted paths whose recorded size matches, from a subdirectory root too', () => {
    const top = repo();
    const files: Record<string, string> = { 'a.txt': 'a\n', 'app/b.txt': 'bee\n', 'app/deep/c.txt': 'sea sea\n', 'app/é ü.txt': 'umlaut\n', 'app-x/d.txt': 'd\n', 'app/x-y': 'xy\n' };
    for (const [rel, text] of Object.entries(files)) write(top, rel, text);
    for (let i = 0; i < 40; i++) write(top, `app/many/f${i}.txt`, `file ${i}\n`);
    commitAll(top, 'init');
    const ids = gitIndexIds(top);
    const wanted = [...ids.keys()].map((p) => ({ path: p, bytes: sizeOf(top, p) }));
    expect(blobIdsInIndex(top, wanted)).toEqual(ids);
    const app = path.join(top, 'app');
    const inApp = [...ids.keys()].filter((p) => p.startsWith('app/')).map((p) => ({ path: p.slice(4), bytes: sizeOf(top, p) }));
    expect(blobIdsInIndex(app, inApp)).toEqual(new Map(inApp.map((w) => [w.path, ids.get(`app/${w.path}`)!])));
    // Another size than the index recorded (a staged or committed change): no id.
    expect(blobIdsInIndex(top, [{ path: 'a.txt', bytes: 99 }, { path: 'missing.txt', bytes: 1 }, { path: 'app/b.txt', bytes: 4 }])).toEqual(new Map([['app/b.txt', ids.get('app/b.txt')!]]));
  });

  it('give nothing for a version 4 index, and the ids of a linked work tree\'s own index', () => {
    const top = repo();
    write(top, 'a.txt', 'a\n');
    write(top, 'b/c.txt', 'c\n');
    commitAll(top, 'init');
    const wanted = [{ path: 'a.txt', bytes: 2 }, { path: 'b/c.txt', bytes: 2 }];
    const linked = `${top}-linked`;
    git(top, 'worktree', 'add', '-q', linked);
    expect(blobIdsInIndex(linked, wanted)).toEqual(gitIndexIds(linked));
    git(top, 'update-index', '--index-version', '4');
    expect(blobIdsInIndex(top, wanted).size).toBe(0);
    fs.rmSync(linked, { recursive: true, force: true });
  });
});

describe('post\'s pre side', () => {
  it('comes back for every changed path whether the index holds the pre blob, a staged one, a commit\'s, or a split or version 4 index', () => {
    for (const setup of ['plain', 'split', 'v4'] as const) {
      const root = repo();
      for (let i = 0; i < 30; i++) write(root, `d${i % 3}/f${i}.txt`, `original ${i}\n`);
      commitAll(root, 'init');
      if (setup === 'split') git(root, 'update-index', '--split-index');
      if (setup === 'v4') git(root, 'update-index', '--index-version', '4');
      const { dir, post } = iteration(root, () => {
        for (let i = 0; i < 10; i++) fs.appendFileSync(path.join(root, `d${i % 3}/f${i}.txt`), 'appended\n'); // unstaged
        for (let i = 10; i < 15; i++) write(root, `d${i % 3}/f${i}.txt`, `Original ${i}\n`); // same size, staged
        git(root, 'add', ...Array.from({ length: 5 }, (_, k) => `d${(10 + k) % 3}/f${10 + k}.txt`));
        fs.rmSync(path.join(root, 'd0/f15.txt')); // deleted
      });
      expect(post.content?.preNotRestorable, setup).toBeUndefined();
      for (let i = 0; i < 16; i++) expect(pre(root, dir, `d${i % 3}/f${i}.txt`), `${setup} f${i}`).toBe(`original ${i}\n`);
      // The next iteration commits: the index then holds the new blobs.
      const next = iteration(root, () => {
        for (let i = 20; i < 25; i++) fs.appendFileSync(path.join(root, `d${i % 3}/f${i}.txt`), 'more\n');
        commitAll(root, 'agent');
      });
      expect(next.post.content?.preNotRestorable, setup).toBeUndefined();
      for (let i = 20; i < 25; i++) expect(pre(root, next.dir, `d${i % 3}/f${i}.txt`), `${setup} f${i}`).toBe(`original ${i}\n`);
    }
  });

  it('is recorded not-in-git when its blob is gone from git, though the index still names it', () => {
    const root = repo();
    write(root, 'kept.txt', 'kept\n');
    write(root, 'lost.txt', 'lost\n');
    commitAll(root, 'init');
    const id = gitIndexIds(root).get('lost.txt')!;
    const { dir, post } = iteration(root, () => {
      fs.appendFileSync(path.join(root, 'kept.txt'), 'more\n');
      fs.appendFileSync(path.join(root, 'lost.txt'), 'more\n');
      fs.rmSync(path.join(root, '.git', 'objects', id.slice(0, 2), id.slice(2))); // loose in a fresh repository
    });
    expect(post.content?.preNotRestorable).toEqual([{ path: 'lost.txt', reason: 'not-in-git' }]);
    expect(pre(root, dir, 'kept.txt')).toBe('kept\n');
  });

  it('is the working tree\'s form where .gitattributes filters make it differ from the blob (eol, smudge)', () => {
    const root = repo();
    git(root, 'config', 'filter.rot.smudge', 'tr a-z b-za');
    git(root, 'config', 'filter.rot.clean', 'tr b-za a-z');
    write(root, '.gitattributes', '*.crlf text eol=crlf\n*.rot filter=rot\n');
    write(root, 'a.crlf', 'one\ntwo\n');
    write(root, 'b.rot', 'hello\n');
    commitAll(root, 'init');
    for (const f of ['a.crlf', 'b.rot']) fs.rmSync(path.join(root, f));
    git(root, 'checkout', '--', 'a.crlf', 'b.rot'); // the working-tree forms: CRLF; the blob's letters shifted back
    expect(git(root, 'cat-file', 'blob', 'HEAD:b.rot')).toBe('gdkkn\n');
    expect(fs.readFileSync(path.join(root, 'b.rot'), 'utf8')).toBe('hello\n');
    const { dir, post } = iteration(root, () => {
      fs.appendFileSync(path.join(root, 'a.crlf'), 'three\r\n');
      fs.appendFileSync(path.join(root, 'b.rot'), 'world\n');
    });
    expect(post.content?.preNotRestorable).toBeUndefined();
    expect(pre(root, dir, 'a.crlf')).toBe('one\r\ntwo\r\n');
    expect(pre(root, dir, 'b.rot')).toBe('hello\n');
  });

  it('keeps a post side changed between the scan and the copy out, as changed-while-captured', () => {
    const root = repo();
    write(root, 'a.txt', 'a\n');
    write(root, 'b.txt', 'b\n');
    commitAll(root, 'init');
    /** Changes b.txt once the post scan is done, before its bytes are copied (the status is asked for in between). */
    class Racing extends SnapshotManager {
      override captureGitStatus(projectRoot: string): GitStatus {
        const status = super.captureGitStatus(projectRoot);
        if (fs.readFileSync(path.join(root, 'b.txt'), 'utf8') === 'b\nagent\n') fs.appendFileSync(path.join(root, 'b.txt'), 'racing\n');
        return status;
      }
    }
    const { dir, post } = iteration(
      root,
      () => {
        fs.appendFileSync(path.join(root, 'a.txt'), 'agent\n');
        fs.appendFileSync(path.join(root, 'b.txt'), 'agent\n');
      },
      new Racing(root),
    );
    expect(post.content?.notRestorable).toEqual([{ path: 'b.txt', reason: 'changed-while-captured' }]);
    expect(pre(root, dir, 'b.txt')).toBe('b\n');
    expect(openIteration(root, path.basename(dir)).read('post', 'a.txt')?.bytes?.toString('utf8')).toBe('a\nagent\n');
  });
});
