/**
 * Restore in trees agents write: hostile names round-trip; a symlink planted in the tree or in
 * `.cairn/` never makes restore write or delete outside the root.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { restoreIteration, undoLastRestore } from '../../src/rewind/index.js';
import { commitAll, trackedDirs, useTempCacheHome, write } from '../session/helpers.js';
import { post, pre, shapeOf } from './helpers.js';

useTempCacheHome();
const { repo, dir: tempDir } = trackedDirs();

/** Every entry below `dir`, with content, so "nothing outside changed" is one comparison. */
function listing(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (abs: string, rel: string): void => {
    for (const e of fs.readdirSync(abs, { withFileTypes: true })) {
      const r = `${rel}/${e.name}`;
      const p = path.join(abs, e.name);
      if (e.isDirectory()) walk(p, r);
      else out[r] = e.isSymbolicLink() ? `link:${fs.readlinkSync(p)}` : fs.readFileSync(p).toString('base64');
    }
  };
  walk(dir, '');
  return out;
}

describe('hostile names', () => {
  it.each([
    ['a git repository', true],
    ['a plain directory', false],
  ])('newlines, leading dashes, quotes, spaces and very long paths round-trip in %s', async (_label, inGit) => {
    const root = inGit ? repo() : tempDir();
    const long = `${'deep-directory-name-'.repeat(5)}/`.repeat(12);
    const names = ['line\nbreak.txt', '-rf', '--force', 'quote"s and spaces.txt', 'tab\there', `${long}file.txt`, 'ünï/çødé.txt'];
    for (const n of names) write(root, n, `original ${n}\n`);
    if (inGit) commitAll(root, 'init');
    const dir = pre(root);
    const before = shapeOf(root);
    for (const n of names) write(root, n, `agent rewrote ${n}\n`);
    write(root, '-new\nfile', 'agent made\n');
    fs.rmSync(path.join(root, names[0] as string));
    post(root, dir);
    const after = shapeOf(root);
    const r = await restoreIteration({ root });
    expect(r.conflicts).toEqual([]);
    expect(r.notRestorable).toEqual([]);
    expect(shapeOf(root)).toEqual(before);
    await undoLastRestore({ root });
    expect(shapeOf(root)).toEqual(after);
  });

  it('non-UTF-8 names: what the inventory cannot name is reported, never deleted', async () => {
    const root = tempDir();
    write(root, 'a.txt', 'a\n');
    const dir = pre(root);
    const bad = Buffer.concat([Buffer.from(root + '/'), Buffer.from([0x66, 0xff, 0xfe, 0x2e, 0x74])]);
    try {
      fs.writeFileSync(bad, 'latin-1 name\n');
    } catch {
      return; // the file system refuses such names: nothing to prove here
    }
    write(root, 'a.txt', 'b\n');
    post(root, dir);
    await restoreIteration({ root });
    expect(fs.readFileSync(bad, 'utf8')).toBe('latin-1 name\n');
    expect(fs.readFileSync(path.join(root, 'a.txt'), 'utf8')).toBe('a\n');
  });
});

describe('planted symlinks', () => {
  it('a directory of the tree replaced by a link to outside: no write or delete lands outside', async () => {
    const root = tempDir();
    const outside = tempDir('cairn-outside-');
    write(outside, 'victim.txt', 'must survive\n');
    write(outside, 'src/app.ts', 'outside copy\n');
    write(root, 'src/app.ts', 'v1\n');
    write(root, 'src/keep.ts', 'keep\n');
    const dir = pre(root);
    write(root, 'src/app.ts', 'v2\n');
    write(root, 'src/new.ts', 'new\n');
    post(root, dir);
    const outsideBefore = listing(outside);
    // The directory the restore must write into becomes a link to the outside directory.
    fs.renameSync(path.join(root, 'src'), path.join(root, 'src-moved'));
    fs.symlinkSync(outside, path.join(root, 'src'));
    const r = await restoreIteration({ root });
    expect(r.conflicts.length).toBeGreaterThan(0);
    expect(listing(outside)).toEqual(outsideBefore);
    // Even forced, a path behind the link stays a conflict: nothing is written through it.
    const forced = await restoreIteration({ root, force: true });
    expect(forced.conflicts.map((c) => c.path)).toEqual(expect.arrayContaining(['src/app.ts', 'src/new.ts']));
    expect(listing(outside)).toEqual(outsideBefore);
  });

  it('a file replaced by a link to an outside file: the link is replaced, the outside file untouched', async () => {
    const root = tempDir();
    const outside = tempDir('cairn-outside-');
    write(outside, 'target.txt', 'outside\n');
    write(root, 'a.txt', 'v1\n');
    const dir = pre(root);
    write(root, 'a.txt', 'v2\n');
    post(root, dir);
    fs.rmSync(path.join(root, 'a.txt'));
    fs.symlinkSync(path.join(outside, 'target.txt'), path.join(root, 'a.txt'));
    const refused = await restoreIteration({ root });
    expect(refused.conflicts.map((c) => c.path)).toEqual(['a.txt']);
    await restoreIteration({ root, force: true });
    expect(fs.lstatSync(path.join(root, 'a.txt')).isSymbolicLink()).toBe(false);
    expect(fs.readFileSync(path.join(root, 'a.txt'), 'utf8')).toBe('v1\n');
    expect(fs.readFileSync(path.join(outside, 'target.txt'), 'utf8')).toBe('outside\n');
    await undoLastRestore({ root });
    expect(fs.readlinkSync(path.join(root, 'a.txt'))).toBe(path.join(outside, 'target.txt'));
  });

  it('.cairn/restores planted as a link to outside: restore refuses and writes nothing there', async () => {
    const root = tempDir();
    const outside = tempDir('cairn-outside-');
    write(root, 'a.txt', 'v1\n');
    const dir = pre(root);
    write(root, 'a.txt', 'v2\n');
    post(root, dir);
    fs.rmSync(path.join(root, '.cairn', 'restores'), { recursive: true, force: true });
    fs.symlinkSync(outside, path.join(root, '.cairn', 'restores'));
    await expect(restoreIteration({ root })).rejects.toMatchObject({ code: 'ERR_CONTAINMENT' });
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(fs.readFileSync(path.join(root, 'a.txt'), 'utf8')).toBe('v2\n');
  });

  it('.cairn/content planted as a link: restore refuses before changing anything', async () => {
    const root = tempDir();
    const outside = tempDir('cairn-outside-');
    write(root, 'a.txt', 'v1\n');
    const dir = pre(root);
    write(root, 'a.txt', 'v2\n');
    post(root, dir);
    fs.cpSync(path.join(root, '.cairn', 'content'), outside, { recursive: true });
    fs.rmSync(path.join(root, '.cairn', 'content'), { recursive: true });
    fs.symlinkSync(outside, path.join(root, '.cairn', 'content'));
    const before = listing(outside);
    await expect(restoreIteration({ root })).rejects.toMatchObject({ code: 'ERR_CONTAINMENT' });
    expect(listing(outside)).toEqual(before);
    expect(fs.readFileSync(path.join(root, 'a.txt'), 'utf8')).toBe('v2\n');
  });
});
