/**
 * Restore compares the disk as it is now (read through the inventory's stat cache) with what
 * cairn last recorded: an edit made after the last record is a conflict, an open iteration's
 * changes are all conflicts, and a forced restore either reaches every path it had to change or
 * names the ones it left and fails. Also: a path is listed once, and the current directory and
 * its ancestors are never removed. Real git repositories, real files, the built CLI.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { restoreIteration } from '../../src/rewind/index.js';
import { SnapshotManager, createNextIterationDir } from '../../src/session/index.js';
import { commitAll, trackedDirs, useTempCacheHome, write } from '../session/helpers.js';
import { CLI, cairn, post, pre, shapeOf } from './helpers.js';

useTempCacheHome();
const { repo } = trackedDirs();

interface Doc {
  changes: Array<{ path: string; action: string }>;
  conflicts: Array<{ path: string; reason?: string }>;
  notRestorable: Array<{ path: string; reason: string }>;
  unrestored: Array<{ path: string; reason: string }>;
  leftAlone?: { total: number; paths: string[] };
}

function read(root: string, rel: string): string {
  return fs.readFileSync(path.join(root, rel), 'utf8');
}

/** A repository with `files` committed and one finished iteration in which `agent` changed the tree; its root. */
function finishedIteration(files: Record<string, string>, agent: (root: string) => void): string {
  const root = repo();
  for (const [rel, text] of Object.entries(files)) write(root, rel, text);
  commitAll(root, 'c0');
  const dir = pre(root);
  agent(root);
  post(root, dir);
  return root;
}

describe('restore reads the live tree', () => {
  it('an open iteration: every path changed since pre is a conflict, --force puts them back and leaves new files, --undo returns the edits', () => {
    const root = repo();
    write(root, 'f.txt', 'keep\n');
    write(root, 'g.txt', 'precious\n');
    commitAll(root, 'c0');
    pre(root); // the agent dies before post
    write(root, 'f.txt', 'AGENT\n');
    fs.rmSync(path.join(root, 'g.txt'));
    write(root, 'new.txt', 'junk\n');
    const agentShape = shapeOf(root);

    const refused = cairn(root, ['session', 'restore', '--json']);
    expect(refused.status).toBe(3);
    const doc = JSON.parse(refused.stdout) as Doc;
    expect(doc.conflicts.map((c) => c.path)).toEqual(['f.txt', 'g.txt']);
    expect(doc.changes).toEqual([]);
    expect(shapeOf(root)).toEqual(agentShape);
    expect(cairn(root, ['session', 'restore']).stdout).toContain('nothing was changed');

    const forced = cairn(root, ['session', 'restore', '--force', '--json']);
    expect(forced.status).toBe(0);
    const done = JSON.parse(forced.stdout) as Doc;
    expect(done.unrestored).toEqual([]);
    expect(done.leftAlone).toEqual({ total: 1, paths: ['new.txt'] });
    expect(read(root, 'f.txt')).toBe('keep\n');
    expect(read(root, 'g.txt')).toBe('precious\n');
    expect(read(root, 'new.txt')).toBe('junk\n'); // in no inventory: left alone

    expect(cairn(root, ['session', 'restore', '--undo']).status).toBe(0);
    expect(shapeOf(root)).toEqual(agentShape);
  });

  it('an edit made after post is a conflict for restore --to post; --force restores it and --undo brings the edit back', () => {
    const root = finishedIteration({ 'f.txt': 'v0\n' }, (r) => write(r, 'f.txt', 'v1\n'));
    write(root, 'f.txt', 'v2-after-post\n');

    const refused = cairn(root, ['session', 'restore', '--to', 'post', '--json']);
    expect(refused.status).toBe(3);
    expect((JSON.parse(refused.stdout) as Doc).conflicts.map((c) => c.path)).toEqual(['f.txt']);
    expect(read(root, 'f.txt')).toBe('v2-after-post\n');
    // To pre as well: the disk differs from both pre and post.
    expect(cairn(root, ['session', 'restore']).status).toBe(3);

    expect(cairn(root, ['session', 'restore', '--to', 'post', '--force']).status).toBe(0);
    expect(read(root, 'f.txt')).toBe('v1\n');
    expect(cairn(root, ['session', 'restore', '--undo']).status).toBe(0);
    expect(read(root, 'f.txt')).toBe('v2-after-post\n');
  });

  it('a path deleted after post comes back only when forced, and a path made after post is left alone', async () => {
    const root = finishedIteration({ 'a.txt': 'a0\n', 'b.txt': 'b0\n' }, (r) => write(r, 'a.txt', 'a1\n'));
    fs.rmSync(path.join(root, 'b.txt'));
    write(root, 'later.txt', 'made after post\n');
    const refused = await restoreIteration({ root });
    expect(refused.conflicts.map((c) => c.path)).toEqual(['b.txt']);
    expect(read(root, 'a.txt')).toBe('a1\n');
    const forced = await restoreIteration({ root, force: true });
    expect(forced.changes.map((c) => c.path).sort()).toEqual(['a.txt', 'b.txt']);
    expect(read(root, 'a.txt')).toBe('a0\n');
    expect(read(root, 'b.txt')).toBe('b0\n');
    expect(read(root, 'later.txt')).toBe('made after post\n');
  });
});

describe('a forced restore reaches every path or says which it left', () => {
  it('a directory the iteration replaced by a link to a moved copy is restored: the link goes, the directory and its file come back', () => {
    const root = repo();
    write(root, 'src/f.txt', 'orig\n');
    commitAll(root, 'c0');
    const dir = pre(root);
    const before = shapeOf(root);
    fs.renameSync(path.join(root, 'src'), path.join(root, 'lib'));
    fs.symlinkSync('lib', path.join(root, 'src'));
    post(root, dir);
    const after = shapeOf(root);

    const r = cairn(root, ['session', 'restore', '--json']);
    expect(r.status).toBe(0);
    const doc = JSON.parse(r.stdout) as Doc;
    expect(doc.conflicts).toEqual([]);
    expect(doc.unrestored).toEqual([]);
    expect(fs.lstatSync(path.join(root, 'src')).isDirectory()).toBe(true);
    expect(shapeOf(root)).toEqual(before);
    expect(fs.existsSync(path.join(root, 'lib'))).toBe(false);

    expect(cairn(root, ['session', 'restore', '--undo']).status).toBe(0);
    expect(shapeOf(root)).toEqual(after);
  });

  it('a directory holding an ignored file cannot become a file again: named in text and JSON, the ignored file kept, exit 1', () => {
    const root = finishedIteration({ '.gitignore': '*.log\n', out: 'a file\n' }, (r) => {
      fs.rmSync(path.join(r, 'out'));
      write(r, 'out/x.txt', 'x\n');
      write(r, 'out/debug.log', 'log\n');
    });

    const refused = cairn(root, ['session', 'restore']);
    expect(refused.status).toBe(3);
    expect(refused.stdout).toContain('out (');

    const json = cairn(root, ['session', 'restore', '--force', '--json']);
    expect(json.status).toBe(1);
    const doc = JSON.parse(json.stdout) as Doc;
    expect(doc.unrestored.map((u) => u.path)).toEqual(['out']);
    expect(read(root, 'out/debug.log')).toBe('log\n');

    const text = cairn(root, ['session', 'restore', '--force']);
    expect(text.status).toBe(1);
    expect(text.stdout).toMatch(/unrestored:\n {2}out \(/);
  });
});

describe('notRestorable', () => {
  it('lists each path once, when the capture and the plan both name it', async () => {
    const root = repo();
    write(root, 'small.txt', 's\n');
    write(root, 'big.bin', 'more than the cap of eight bytes\n');
    const manager = new SnapshotManager(root, { contentCapBytes: 8 });
    const dir = createNextIterationDir(root);
    manager.capturePreSnapshot(root, dir);
    write(root, 'big.bin', 'the agent rewrote this big file\n');
    manager.capturePostSnapshot(root, dir);
    const r = await restoreIteration({ root });
    expect(r.notRestorable.map((n) => n.path)).toEqual(['big.bin']);
    expect(r.unrestored.map((n) => n.path)).toEqual(['big.bin']);
  });
});

describe('directories', () => {
  it('restore never removes the current directory or its ancestors, even when it empties them', () => {
    const root = repo();
    write(root, 'a.txt', 'a\n');
    commitAll(root, 'c0');
    fs.mkdirSync(path.join(root, 'cache/tmp'), { recursive: true });
    const dir = pre(root);
    write(root, 'cache/tmp/c.bin', 'c\n');
    write(root, 'logs/run.log', 'l\n');
    post(root, dir);
    const cwd = path.join(root, 'cache/tmp');
    const r = spawnSync(process.execPath, [CLI, 'session', 'restore', '--root', root], { cwd, encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(fs.existsSync(path.join(root, 'cache/tmp/c.bin'))).toBe(false);
    expect(fs.statSync(cwd).isDirectory()).toBe(true);
    expect(fs.existsSync(path.join(root, 'logs'))).toBe(false); // emptied by the restore, as git's checkout does
  });
});

describe('a dry run beside an interrupted restore', () => {
  it('names the interrupted restore a real run finishes first, and finishes nothing itself', () => {
    const root = finishedIteration({ 'f.txt': 'v0\n' }, (r) => write(r, 'f.txt', 'v1\n'));
    expect(cairn(root, ['session', 'restore']).status).toBe(0);
    // As a kill between the record and its last change leaves it: still `pending`, one change undone by hand.
    const record = path.join(root, '.cairn', 'restores', '000001.json');
    fs.writeFileSync(record, JSON.stringify({ ...(JSON.parse(fs.readFileSync(record, 'utf8')) as object), state: 'pending' }));
    write(root, 'f.txt', 'v1\n');
    const dry = cairn(root, ['session', 'restore', '--undo', '--dry-run', '--json']);
    expect(dry.status, dry.stderr).toBe(0);
    expect((JSON.parse(dry.stdout) as { interrupted?: string[] }).interrupted).toEqual(['000001']);
    expect(cairn(root, ['session', 'restore', '--undo', '--dry-run']).stderr).toContain('restore 000001 was interrupted; a real run finishes it first');
    expect(read(root, 'f.txt')).toBe('v1\n'); // the dry runs finished nothing
    expect((JSON.parse(fs.readFileSync(record, 'utf8')) as { state: string }).state).toBe('pending');
    const real = cairn(root, ['session', 'restore', '--undo']);
    expect(real.stderr).toContain('restore 000001 had been interrupted; it is now finished');
  });
});

describe('a forced undo', () => {
  it('can itself be undone: the edits it was forced over come back, and nothing is left to undo', () => {
    const root = finishedIteration({ 'f.txt': 'v0\n' }, (r) => {
      write(r, 'f.txt', 'v1\n');
      write(r, 'mv.txt', 'n\n');
    });
    expect(cairn(root, ['session', 'restore']).status).toBe(0); // f.txt v0, mv.txt gone
    write(root, 'mv.txt', 'user edit\n'); // made after the restore, where the undo would write post's mv.txt
    const afterRestore = shapeOf(root);
    expect(cairn(root, ['session', 'restore', '--undo']).status).toBe(3);
    const forced = cairn(root, ['session', 'restore', '--undo', '--force']);
    expect(forced.status, forced.stderr).toBe(0);
    expect(read(root, 'mv.txt')).toBe('n\n');
    expect(forced.stderr).toContain('puts back the edits this undo was forced over');

    const back = cairn(root, ['session', 'restore', '--undo', '--json']);
    expect(back.status, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout)).toMatchObject({ undo: true, undidForcedUndo: true });
    expect(shapeOf(root)).toEqual(afterRestore); // the user's edit, and the restore's f.txt
    expect(read(root, 'mv.txt')).toBe('user edit\n');
    // Undoing the restore again would replace the user's edit with nothing to bring it back: not offered.
    const again = cairn(root, ['session', 'restore', '--undo']);
    expect(again.status).toBe(2);
    expect(again.stderr).toContain('there is no restore to undo');
    expect(shapeOf(root)).toEqual(afterRestore);
  });

  it('an undo that forced nothing is not undoable: --undo goes on to the restore before it', () => {
    const root = finishedIteration({ 'a.txt': 'a0\n' }, (r) => write(r, 'a.txt', 'a1\n'));
    expect(cairn(root, ['session', 'restore']).status).toBe(0);
    expect(cairn(root, ['session', 'restore', '--undo']).status).toBe(0);
    const none = cairn(root, ['session', 'restore', '--undo']);
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('there is no restore to undo');
    expect(read(root, 'a.txt')).toBe('a1\n');
  });
});
