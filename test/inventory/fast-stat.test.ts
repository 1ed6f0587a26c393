// The hot loops' lstat and fstat: Node's fs binding when it answers like the public API, else the
// public API; either way the same six numbers, and "changed" (false) for any path that leads nowhere.
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { makeFastStat, type FastStat } from '../../src/inventory/io/fast-stat.js';
import { cleanupTempDirs, tempDir, writeTree } from './helpers.js';

afterAll(cleanupTempDirs);

const row = (st: fs.Stats): number[] => [st.size, st.mtimeMs, st.ctimeMs, st.ino, st.dev, st.mode];

function expectedLstat(p: string): number[] | false {
  const st = fs.lstatSync(p, { throwIfNoEntry: false });
  return st === undefined ? false : row(st);
}

function gotLstat(s: FastStat, p: string): number[] | false {
  const out = new Float64Array(6);
  return s.lstat(p, out) ? [...out] : false;
}

describe('makeFastStat', () => {
  const root = tempDir();
  writeTree(root, { 'f.txt': 'hello', 'dir/inner': 'x' });
  fs.symlinkSync('f.txt', path.join(root, 'link'));
  fs.symlinkSync('nowhere', path.join(root, 'dangling'));
  fs.chmodSync(path.join(root, 'f.txt'), 0o755);
  const variants = [makeFastStat(fs, root), makeFastStat(fs, root, false)];

  it('uses the fs binding on this Node (the warm check depends on it for speed), the public API when told not to', () => {
    expect(variants.map((v) => v.via)).toEqual(['binding', 'stats']);
  });

  for (const s of variants) {
    describe(`via ${s.via}`, () => {
      it('lstat: size, mtimeMs, ctimeMs, ino, dev, mode equal lstatSync for files, directories and links (not followed)', () => {
        for (const rel of ['f.txt', 'dir', 'dir/inner', 'link', 'dangling', '.']) {
          const p = path.join(root, rel);
          expect(gotLstat(s, p)).toEqual(expectedLstat(p));
        }
      });

      it('lstat: a path that leads nowhere (missing, under a file, empty) is false, never an exception', () => {
        for (const p of [path.join(root, 'missing'), path.join(root, 'f.txt', 'under-a-file'), path.join(root, 'dangling', 'x'), '']) {
          expect(gotLstat(s, p)).toBe(false);
        }
      });

      it('lstat: equals lstatSync on files with arbitrary times (ns precision) and sizes', () => {
        const f = path.join(root, `timed-${s.via}`);
        fc.assert(
          fc.property(fc.integer({ min: 0, max: 4_000_000_000 }), fc.integer({ min: 0, max: 999_999_999 }), fc.nat({ max: 3000 }), (sec, nsec, size) => {
            fs.writeFileSync(f, Buffer.alloc(size));
            // utimes takes seconds as a double: sub-µs digits are as exact as the platform keeps them.
            fs.utimesSync(f, sec, sec + nsec / 1e9);
            expect(gotLstat(s, f)).toEqual(expectedLstat(f));
          }),
          { numRuns: 60 },
        );
      });

      it('fstat: the six fields equal fstatSync for a file and a directory; a closed descriptor throws EBADF', () => {
        for (const rel of ['f.txt', 'dir']) {
          const fd = fs.openSync(path.join(root, rel), 'r');
          try {
            const out = new Float64Array(6);
            s.fstat(fd, out);
            expect([...out]).toEqual(row(fs.fstatSync(fd)));
          } finally {
            fs.closeSync(fd);
          }
        }
        const fd = fs.openSync(path.join(root, 'f.txt'), 'r');
        fs.closeSync(fd);
        expect(() => s.fstat(fd, new Float64Array(6))).toThrow(expect.objectContaining({ code: 'EBADF' }));
      });
    });
  }
});
