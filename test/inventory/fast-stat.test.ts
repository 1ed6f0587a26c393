// The stat-cache check's lstat and the hash path's fstat: Node's fs binding when it answers like lstatSync, else lstatSync;
// either way the same six numbers, and "changed" (false) for any path that leads nowhere.
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { makeFstatInto, makeLstatInto } from '../../src/inventory/fast-stat.js';
import { cleanupTempDirs, tempDir, writeTree } from './helpers.js';

afterAll(cleanupTempDirs);

function expected(p: string): number[] | false {
  const st = fs.lstatSync(p, { throwIfNoEntry: false });
  return st === undefined ? false : [st.size, st.mtimeMs, st.ctimeMs, st.ino, st.dev, st.mode];
}

function got(lstatInto: ReturnType<typeof makeLstatInto>, p: string): number[] | false {
  const out = new Float64Array(6);
  return lstatInto(p, out) ? [...out] : false;
}

describe('makeLstatInto', () => {
  const root = tempDir();
  writeTree(root, { 'f.txt': 'hello', 'dir/inner': 'x' });
  fs.symlinkSync('f.txt', path.join(root, 'link'));
  fs.symlinkSync('nowhere', path.join(root, 'dangling'));
  fs.chmodSync(path.join(root, 'f.txt'), 0o755);
  const variants = [
    ['the fast variant', makeLstatInto(fs, root)],
    ['the lstatSync variant', makeLstatInto(fs, root, false)],
  ] as const;

  it('uses the fs binding on this Node (the warm check depends on it for speed)', () => {
    expect(variants[0][1].name).toBe('viaBinding');
    expect(variants[1][1].name).toBe('viaStats');
  });

  for (const [name, lstatInto] of variants) {
    it(`${name}: size, mtimeMs, ctimeMs, ino, dev, mode equal lstatSync's for files, directories and links (not followed)`, () => {
      for (const rel of ['f.txt', 'dir', 'dir/inner', 'link', 'dangling', '.']) {
        const p = path.join(root, rel);
        expect(got(lstatInto, p)).toEqual(expected(p));
      }
    });

    it(`${name}: a path that leads nowhere (missing, under a file, empty) is false, never an exception`, () => {
      for (const p of [path.join(root, 'missing'), path.join(root, 'f.txt', 'under-a-file'), path.join(root, 'dangling', 'x'), '']) {
        expect(got(lstatInto, p)).toBe(false);
      }
    });

    it(`${name}: equals lstatSync on files with arbitrary times (ns precision) and sizes`, () => {
      const f = path.join(root, 'timed');
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 4_000_000_000 }), fc.integer({ min: 0, max: 999_999_999 }), fc.nat({ max: 3000 }), (sec, nsec, size) => {
          fs.writeFileSync(f, Buffer.alloc(size));
          // utimes takes seconds as a double: sub-µs digits are as exact as the platform keeps them.
          fs.utimesSync(f, sec, sec + nsec / 1e9);
          expect(got(lstatInto, f)).toEqual(expected(f));
        }),
        { numRuns: 60 },
      );
    });
  }
});

describe('makeFstatInto', () => {
  const root = tempDir();
  writeTree(root, { 'f.txt': 'hello', 'dir/inner': 'x' });
  const variants = [
    ['the fast variant', makeFstatInto(fs, root)],
    ['the fstatSync variant', makeFstatInto(fs, root, false)],
  ] as const;

  it('uses the fs binding on this Node', () => {
    expect(variants[0][1].name).toBe('viaBinding');
    expect(variants[1][1].name).toBe('viaStats');
  });

  for (const [name, fstatInto] of variants) {
    it(`${name}: the six fields equal fstatSync's, for a file and a directory, and a closed descriptor throws EBADF`, () => {
      for (const rel of ['f.txt', 'dir']) {
        const fd = fs.openSync(path.join(root, rel), 'r');
        try {
          const out = new Float64Array(6);
          fstatInto(fd, out);
          const st = fs.fstatSync(fd);
          expect([...out]).toEqual([st.size, st.mtimeMs, st.ctimeMs, st.ino, st.dev, st.mode]);
        } finally {
          fs.closeSync(fd);
        }
      }
      const fd = fs.openSync(path.join(root, 'f.txt'), 'r');
      fs.closeSync(fd);
      expect(() => fstatInto(fd, new Float64Array(6))).toThrow(expect.objectContaining({ code: 'EBADF' }));
    });
  }
});
