/**
 * The snapshot dir stays inside the root on the write side and the read side alike, through one
 * containment check (core/paths.ts): a name that merely starts with `..` is inside, a `datarim`
 * link that leads out or dangles is ERR_CONTAINMENT for the writer, the reader and the validator,
 * and the note itself is opened without following a link (stage/load.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readStageSnapshot, readStageSnapshotBytes, stageSnapshotPath, validateStageSnapshot, writeStageSnapshot } from '../../src/stage/index.js';
import { loadNote } from '../../src/stage/load.js';
import { ensureSnapshotDir, snapshotDirPath } from '../../src/stage/paths.js';
import { containedPath, isStrictlyInside } from '../../src/core/paths.js';
import { mkfifo } from '../support/mkfifo.js';
import { cleanup, notePath, tempDir } from './support.js';

const task = 'TUNE-0254';
const SECRET = 'outside secret: must never be read';
const OUTSIDE_NOTE = ['---', `task_id: ${task}`, 'stage: plan', 'command: /dr-plan', 'captured_at: 2026-05-21T13:45:00Z', 'captured_by: agent', 'recommended_next: /dr-do', '---', '', SECRET, ''].join('\n');

let scratch: string;
let root: string;
let outside: string;

const fields = { task, stage: 'plan', command: '/dr-plan', capturedBy: 'agent', recommendedNext: '/dr-do', body: 'inside body\n', env: {} };

beforeEach(() => {
  scratch = fs.realpathSync(tempDir());
  root = path.join(scratch, 'root');
  outside = path.join(scratch, 'outside');
  fs.mkdirSync(root);
  fs.mkdirSync(path.join(outside, 'snapshots'), { recursive: true });
  fs.writeFileSync(path.join(outside, 'snapshots', `${task}.snapshot.md`), OUTSIDE_NOTE);
});
afterEach(() => cleanup(scratch));

function outsideTree(): string[] {
  return fs.readdirSync(outside, { recursive: true, encoding: 'utf8' }).sort();
}

describe('a snapshot dir whose name starts with ".." (review finding 1)', () => {
  it('is inside the root: written, read and validated there', async () => {
    for (const dir of ['..notes', '..notes/stage', 'a/..b', '...']) {
      const r = await writeStageSnapshot({ ...fields, root, dir });
      expect(r.path, dir).toBe(path.join(root, dir, `${task}.snapshot.md`));
      expect(fs.readFileSync(r.path, 'utf8')).toContain('inside body');
      expect(readStageSnapshot(root, task, { dir }).body).toBe('inside body\n');
      expect(validateStageSnapshot(root, task, { dir, validateFrontmatter: true })).toMatchObject({ status: 'valid', exitCode: 0 });
    }
    expect(fs.readdirSync(scratch).sort()).toEqual(['outside', 'root']);
  });

  it('while .., ../x, the root itself and an absolute path elsewhere are still refused (ERR_CONTAINMENT, nothing created)', async () => {
    for (const dir of ['..', '../x', '.', '', 'a/../..', '..notes/../../y', outside, path.join(root, '..', 'z')]) {
      await expect(writeStageSnapshot({ ...fields, root, dir }), dir).rejects.toMatchObject({ code: 'ERR_CONTAINMENT', exitCode: 1 });
      expect(() => readStageSnapshot(root, task, { dir }), dir).toThrow(expect.objectContaining({ code: 'ERR_CONTAINMENT', exitCode: 2 }) as Error);
      expect(validateStageSnapshot(root, task, { dir }), dir).toMatchObject({ status: 'invalid', exitCode: 2, path: '' });
    }
    expect(fs.readdirSync(scratch).sort()).toEqual(['outside', 'root']);
    expect(fs.readdirSync(root)).toEqual([]);
  });
});

describe('a dangling datarim link (review finding 2)', () => {
  it('is ERR_CONTAINMENT for the writer (not ERR_IO), and nothing is created at its target', async () => {
    const target = path.join(outside, 'datarim-target');
    fs.symlinkSync(target, path.join(root, 'datarim'));
    await expect(writeStageSnapshot({ ...fields, root })).rejects.toMatchObject({ code: 'ERR_CONTAINMENT', exitCode: 1 });
    expect(() => ensureSnapshotDir(root)).toThrow(expect.objectContaining({ code: 'ERR_CONTAINMENT' }) as Error);
    expect(fs.existsSync(target)).toBe(false);
    expect(fs.readdirSync(scratch).sort()).toEqual(['outside', 'root']);
  });

  it('is ERR_CONTAINMENT for the reader and invalid (exit 2) for the validator, not "missing"', () => {
    fs.symlinkSync(path.join(root, 'nowhere'), path.join(root, 'datarim'));
    expect(() => readStageSnapshot(root, task)).toThrow(expect.objectContaining({ code: 'ERR_CONTAINMENT', exitCode: 2 }) as Error);
    const check = validateStageSnapshot(root, task);
    expect(check).toMatchObject({ status: 'invalid', exitCode: 2 });
    expect(check.problems.join('\n')).toContain('does not resolve');
  });

  it('a link loop is refused the same way', async () => {
    fs.symlinkSync('loop-b', path.join(root, 'loop-a'));
    fs.symlinkSync('loop-a', path.join(root, 'loop-b'));
    await expect(writeStageSnapshot({ ...fields, root, dir: 'loop-a/snapshots' })).rejects.toMatchObject({ code: 'ERR_CONTAINMENT', exitCode: 1 });
    expect(() => readStageSnapshot(root, task, { dir: 'loop-a/snapshots' })).toThrow(expect.objectContaining({ code: 'ERR_CONTAINMENT' }) as Error);
  });
});

describe('a datarim link that leads outside the root (review finding 3)', () => {
  beforeEach(() => fs.symlinkSync(outside, path.join(root, 'datarim')));

  it('readStageSnapshot and readStageSnapshotBytes refuse it with ERR_CONTAINMENT and never return the outside note', () => {
    for (const read of [readStageSnapshot, readStageSnapshotBytes]) {
      let thrown: unknown;
      try {
        read(root, task);
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toMatchObject({ code: 'ERR_CONTAINMENT', exitCode: 2 });
      expect(String((thrown as Error).message)).not.toContain(SECRET);
    }
    expect(() => stageSnapshotPath(root, task)).toThrow(expect.objectContaining({ code: 'ERR_CONTAINMENT' }) as Error);
  });

  it('validateStageSnapshot reports it invalid (exit 2) in both modes, without reading the outside note', () => {
    for (const validateFrontmatter of [false, true]) {
      const check = validateStageSnapshot(root, task, { validateFrontmatter });
      expect(check).toMatchObject({ status: 'invalid', exitCode: 2, path: '' });
      expect(check.problems.join('\n')).toContain('resolves outside');
    }
  });

  it('the writer refuses it too and writes nothing outside', async () => {
    const before = outsideTree();
    await expect(writeStageSnapshot({ ...fields, root })).rejects.toMatchObject({ code: 'ERR_CONTAINMENT', exitCode: 1 });
    expect(outsideTree()).toEqual(before);
    expect(fs.readFileSync(path.join(outside, 'snapshots', `${task}.snapshot.md`), 'utf8')).toBe(OUTSIDE_NOTE);
  });
});

describe('links that stay inside the root', () => {
  it('a datarim link to a directory inside the root is followed, on both sides, to the real path', async () => {
    fs.mkdirSync(path.join(root, 'real-datarim'));
    fs.symlinkSync('real-datarim', path.join(root, 'datarim'));
    const r = await writeStageSnapshot({ ...fields, root });
    expect(r.path).toBe(path.join(root, 'real-datarim', 'snapshots', `${task}.snapshot.md`));
    expect(readStageSnapshot(root, task)).toMatchObject({ path: r.path, body: 'inside body\n' });
    expect(validateStageSnapshot(root, task, { validateFrontmatter: true })).toMatchObject({ status: 'valid', path: r.path });
  });

  it('a dir that resolves to the root itself is refused', () => {
    fs.symlinkSync('.', path.join(root, 'self'));
    expect(() => snapshotDirPath(root, 'self')).toThrow(expect.objectContaining({ code: 'ERR_CONTAINMENT' }) as Error);
  });
});

describe('the note itself (loadNote: O_NOFOLLOW, then fstat)', () => {
  beforeEach(async () => {
    await writeStageSnapshot({ ...fields, root });
  });

  it('loads a regular note', () => {
    const loaded = loadNote(notePath(root));
    expect(loaded.ok).toBe(true);
    if (loaded.ok) expect(loaded.bytes.length).toBe(fs.statSync(notePath(root)).size);
  });

  it('refuses a symlink at the note, even to a valid note inside the root (ERR_SYMLINK)', () => {
    const real = path.join(root, 'real.md');
    fs.renameSync(notePath(root), real);
    fs.symlinkSync(real, notePath(root));
    expect(loadNote(notePath(root))).toMatchObject({ ok: false, failure: 'symlink' });
    expect(() => readStageSnapshot(root, task)).toThrow(expect.objectContaining({ code: 'ERR_SYMLINK', exitCode: 2 }) as Error);
    expect(validateStageSnapshot(root, task)).toMatchObject({ status: 'invalid', exitCode: 2 });
  });

  it('a missing note is ERR_NOT_FOUND / missing (exit 1)', () => {
    fs.unlinkSync(notePath(root));
    expect(loadNote(notePath(root))).toMatchObject({ ok: false, failure: 'missing' });
    expect(() => readStageSnapshot(root, task)).toThrow(expect.objectContaining({ code: 'ERR_NOT_FOUND', exitCode: 1 }) as Error);
    expect(validateStageSnapshot(root, task)).toMatchObject({ status: 'missing', exitCode: 1 });
  });

  it('a directory or a FIFO at the note is not a regular file (and the FIFO does not hang the reader)', () => {
    fs.unlinkSync(notePath(root));
    fs.mkdirSync(notePath(root));
    expect(loadNote(notePath(root))).toMatchObject({ ok: false, failure: 'not-a-file' });
    fs.rmdirSync(notePath(root));
    mkfifo(notePath(root));
    expect(loadNote(notePath(root))).toMatchObject({ ok: false, failure: 'not-a-file' });
    expect(() => readStageSnapshot(root, task)).toThrow(expect.objectContaining({ code: 'ERR_CORRUPT', exitCode: 2 }) as Error);
    expect(validateStageSnapshot(root, task)).toMatchObject({ status: 'invalid', exitCode: 2, problems: ['the snapshot is not a regular file'] });
  });

  it('a malformed note is ERR_CORRUPT (exit 2)', () => {
    fs.writeFileSync(notePath(root), 'no frontmatter\n');
    expect(loadNote(notePath(root))).toMatchObject({ ok: false, failure: 'malformed' });
    expect(() => readStageSnapshot(root, task)).toThrow(expect.objectContaining({ code: 'ERR_CORRUPT', exitCode: 2 }) as Error);
  });
});

describe('one containment helper', () => {
  it('core/paths refuses a path through a link that leads out, with the code the MCP tools report', () => {
    fs.symlinkSync(outside, path.join(root, 'escape'));
    expect(() => containedPath(root, 'escape/x')).toThrow(expect.objectContaining({ code: 'ERR_CONTAINMENT' }) as Error);
  });

  it('isStrictlyInside: below the parent only; a name starting with ".." is below it', () => {
    expect(isStrictlyInside('/r/..notes', '/r')).toBe(true);
    expect(isStrictlyInside('/r/a/..b', '/r')).toBe(true);
    expect(isStrictlyInside('/r', '/r')).toBe(false);
    expect(isStrictlyInside('/', '/r')).toBe(false);
    expect(isStrictlyInside('/r2', '/r')).toBe(false);
    expect(isStrictlyInside('/other/x', '/r')).toBe(false);
  });
});
