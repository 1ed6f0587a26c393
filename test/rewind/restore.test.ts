/**
 * `session restore`: to pre and to post rebuild the recorded trees byte for byte (contents, exec
 * bits, symlinks, the set of paths) in real git repositories and plain directories; ignored
 * files, untouched files and their mtimes stay; conflicts exit 3 with nothing changed; --force
 * then --undo brings the person's edit back; older iterations undo newer ones.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { restoreIteration, undoLastRestore } from '../../src/rewind/index.js';
import { commitAll, trackedDirs, useTempCacheHome, write } from '../session/helpers.js';
import { cairn, mtimesOf, post, pre, shapeOf, gitIn } from './helpers.js';

useTempCacheHome();
const { repo, dir: tempDir } = trackedDirs();

/** The agent's iteration: edits, deletes, creates (nested), an exec bit, a symlink, a type change. */
function agentWork(root: string): void {
  write(root, 'src/app.ts', 'export const app = 2;\nexport const more = true;\n');
  fs.rmSync(path.join(root, 'docs/old.md'));
  write(root, 'gen/deep/tree/new.ts', 'export {};\n');
  fs.chmodSync(path.join(root, 'run.sh'), 0o755);
  fs.symlinkSync('src/app.ts', path.join(root, 'app-link'));
  fs.rmSync(path.join(root, 'swap'));
  write(root, 'swap/inside.txt', 'was a file, now a dir\n');
  write(root, 'bin.dat', Buffer.from([0, 1, 2, 3, 255, 0]));
}

function seed(root: string): void {
  write(root, 'src/app.ts', 'export const app = 1;\n');
  write(root, 'src/untouched.ts', 'export const same = 1;\n');
  write(root, 'docs/old.md', '# old\n');
  write(root, 'run.sh', '#!/bin/sh\necho hi\n');
  write(root, 'swap', 'a file\n');
  write(root, '.gitignore', 'ignored.log\nbuild/\n');
  write(root, 'ignored.log', 'ignored before\n');
}

const kinds = [
  ['a git repository', (): string => {
    const root = repo();
    seed(root);
    commitAll(root, 'init');
    return root;
  }],
  ['a plain directory', (): string => {
    const root = tempDir();
    seed(root);
    return root;
  }],
] as const;

describe.each(kinds)('restore in %s', (_label, make) => {
  it('to pre equals the pre tree, to post the post tree, --undo the state before; ignored files and untouched mtimes stay', async () => {
    const root = make();
    const dir = pre(root);
    const preShape = shapeOf(root, (r) => r === 'ignored.log');
    agentWork(root);
    write(root, 'ignored.log', 'ignored after\n');
    fs.mkdirSync(path.join(root, 'build'));
    write(root, 'build/out.js', 'built\n');
    post(root, dir);
    const postShape = shapeOf(root, (r) => r === 'ignored.log' || r.startsWith('build'));
    const mtimes = mtimesOf(root);

    const toPre = await restoreIteration({ root });
    expect(toPre.conflicts).toEqual([]);
    expect(shapeOf(root, (r) => r === 'ignored.log' || r.startsWith('build'))).toEqual(preShape);
    expect(fs.readFileSync(path.join(root, 'ignored.log'), 'utf8')).toBe('ignored after\n');
    expect(fs.readFileSync(path.join(root, 'build/out.js'), 'utf8')).toBe('built\n');
    expect(fs.existsSync(path.join(root, 'gen'))).toBe(false); // emptied directories go too
    const after = mtimesOf(root);
    expect(after['src/untouched.ts']).toBe(mtimes['src/untouched.ts']);
    expect(after['ignored.log']).toBe(mtimes['ignored.log']);

    const undo = await undoLastRestore({ root });
    expect(undo.conflicts).toEqual([]);
    expect(shapeOf(root, (r) => r === 'ignored.log' || r.startsWith('build'))).toEqual(postShape);

    await restoreIteration({ root });
    const toPost = await restoreIteration({ root, to: 'post' });
    expect(toPost.conflicts).toEqual([]);
    expect(shapeOf(root, (r) => r === 'ignored.log' || r.startsWith('build'))).toEqual(postShape);
  });

  it('a person\'s edit since post is a conflict: exit 3 and nothing changed; --force then --undo brings the edit back', () => {
    const root = make();
    const dir = pre(root);
    agentWork(root);
    post(root, dir);
    write(root, 'src/app.ts', 'a person edited this\n');
    const before = shapeOf(root);
    const mtimes = mtimesOf(root);
    const refused = cairn(root, ['session', 'restore', '--json']);
    expect(refused.status).toBe(3);
    const doc = JSON.parse(refused.stdout) as { conflicts: Array<{ path: string }>; dryRun: boolean };
    expect(doc.conflicts.map((c) => c.path)).toEqual(['src/app.ts']);
    expect(shapeOf(root)).toEqual(before);
    expect(mtimesOf(root)).toEqual(mtimes);

    const forced = cairn(root, ['session', 'restore', '--force']);
    expect(forced.status).toBe(0);
    expect(fs.readFileSync(path.join(root, 'src/app.ts'), 'utf8')).toBe('export const app = 1;\n');
    const undone = cairn(root, ['session', 'restore', '--undo']);
    expect(undone.status).toBe(0);
    expect(shapeOf(root)).toEqual(before);
  });

  it('--dry-run reports each change with +/- line counts and changes nothing', () => {
    const root = make();
    const dir = pre(root);
    agentWork(root);
    post(root, dir);
    const before = shapeOf(root);
    const r = cairn(root, ['session', 'restore', '1', '--dry-run', '--json']);
    expect(r.status).toBe(0);
    const doc = JSON.parse(r.stdout) as { iteration: string; to: string; dryRun: boolean; changes: Array<{ path: string; action: string; additions?: number; deletions?: number }>; conflicts: unknown[]; notRestorable: unknown[]; commits: unknown[] };
    expect(Object.keys(doc).slice(0, 8)).toEqual(['iteration', 'to', 'dryRun', 'changes', 'conflicts', 'notRestorable', 'commits', 'alsoUndoes']);
    expect(doc).toMatchObject({ iteration: '001', to: 'pre', dryRun: true, conflicts: [] });
    const byPath = Object.fromEntries(doc.changes.map((c) => [c.path, c]));
    expect(byPath['src/app.ts']).toEqual({ path: 'src/app.ts', action: 'write', additions: 1, deletions: 2 });
    expect(byPath['docs/old.md']).toEqual({ path: 'docs/old.md', action: 'write', additions: 1, deletions: 0 });
    expect(byPath['gen/deep/tree/new.ts']).toEqual({ path: 'gen/deep/tree/new.ts', action: 'delete', additions: 0, deletions: 1 });
    expect(byPath['run.sh']).toEqual({ path: 'run.sh', action: 'mode' });
    expect(byPath['app-link']).toEqual({ path: 'app-link', action: 'delete' });
    expect(byPath['bin.dat']).toEqual({ path: 'bin.dat', action: 'delete' });
    expect(shapeOf(root)).toEqual(before);
  });

  it('restoring an older iteration undoes the newer ones too, and says so', async () => {
    const root = make();
    const d1 = pre(root);
    const first = shapeOf(root, (r) => r === 'ignored.log');
    write(root, 'src/app.ts', 'iteration 1\n');
    post(root, d1);
    const d2 = pre(root);
    write(root, 'src/app.ts', 'iteration 2\n');
    write(root, 'two.txt', '2\n');
    post(root, d2);
    const d3 = pre(root);
    fs.rmSync(path.join(root, 'src/untouched.ts'));
    post(root, d3);
    const r = await restoreIteration({ root, iteration: '001' });
    expect(r.alsoUndoes).toEqual(['002', '003']);
    expect(shapeOf(root, (x) => x === 'ignored.log')).toEqual(first);
    const cli = cairn(root, ['session', 'restore', '--undo']);
    expect(cli.status).toBe(0);
    const again = cairn(root, ['session', 'restore', '2', '--to', 'post']);
    expect(again.stdout).toContain('This also undoes the later iteration(s) 003.');
    expect(fs.readFileSync(path.join(root, 'src/untouched.ts'), 'utf8')).toBe('export const same = 1;\n');
  });
});

describe('restore and git', () => {
  it('leaves commits and HEAD in place and prints the git command that would move the branch', () => {
    const root = repo();
    seed(root);
    commitAll(root, 'init');
    const head = gitIn(root, 'rev-parse', 'HEAD').trim();
    const dir = pre(root);
    agentWork(root);
    commitAll(root, 'agent work');
    const agentHead = gitIn(root, 'rev-parse', 'HEAD').trim();
    post(root, dir);
    const index = fs.readFileSync(path.join(root, '.git', 'index'));
    const r = cairn(root, ['session', 'restore', '--json']);
    expect(r.status).toBe(0);
    const doc = JSON.parse(r.stdout) as { commits: Array<{ id: string; subject: string }>; gitCommand: string };
    expect(doc.commits).toEqual([{ id: agentHead, subject: 'agent work' }]);
    expect(doc.gitCommand).toBe(`git reset ${head}`);
    expect(gitIn(root, 'rev-parse', 'HEAD').trim()).toBe(agentHead);
    expect(fs.readFileSync(path.join(root, '.git', 'index')).equals(index)).toBe(true);
  });

  it('usage errors exit 2: unknown iteration, bad --to, --undo with nothing to undo', () => {
    const root = repo();
    seed(root);
    commitAll(root, 'init');
    const dir = pre(root);
    post(root, dir);
    expect(cairn(root, ['session', 'restore', '7']).status).toBe(2);
    expect(cairn(root, ['session', 'restore', '--to', 'middle']).status).toBe(2);
    expect(cairn(root, ['session', 'restore', '--undo']).status).toBe(2);
    expect(cairn(root, ['session', 'restore', '001']).status).toBe(0);
  });
});
