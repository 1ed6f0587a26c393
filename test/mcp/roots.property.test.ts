/**
 * Properties of the root allowlist over generated paths: whatever a client names, a path the
 * allowlist accepts is inside the root both lexically and after resolving every link on it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCairnError } from '../../src/core/errors.js';
import { containedPath, isSameOrInside } from '../../src/core/paths.js';
import { RootAllowlist } from '../../src/mcp/roots.js';
import { makeTempDir, removeDir, write } from './support.js';

let tmp: string;
let base: string;
let outside: string;

/** Segments that exercise `.`/`..`, names starting with dots, and each kind of planted link. */
const SEGMENTS = ['a', 'b', '.', '..', '..a', '...', 'file.txt', 'in-link', 'out-link', 'dangling', 'loop', 'missing', 'x y', ''] as const;

beforeAll(() => {
  tmp = makeTempDir();
  base = path.join(tmp, 'root');
  outside = path.join(tmp, 'outside');
  fs.mkdirSync(path.join(base, 'a', 'b'), { recursive: true });
  fs.mkdirSync(path.join(base, '..a'));
  fs.mkdirSync(outside);
  write(base, 'file.txt', 'x');
  write(outside, 'file.txt', 'outside');
  fs.symlinkSync(path.join(base, 'a'), path.join(base, 'in-link'));
  fs.symlinkSync(outside, path.join(base, 'out-link'));
  fs.symlinkSync(outside, path.join(base, 'a', 'out-link'));
  fs.symlinkSync(path.join(outside, 'nowhere'), path.join(base, 'dangling'));
  fs.symlinkSync(path.join(base, 'loop'), path.join(base, 'loop'));
});

afterAll(() => {
  removeDir(tmp);
});

/** The real location of `p`: realpath of its deepest existing ancestor plus the rest (null if a link on it does not resolve). */
function physical(p: string): string | null {
  let existing = p;
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(fs.realpathSync(existing), ...rest);
    } catch {
      try {
        fs.lstatSync(existing);
        return null;
      } catch {
        // not there: look at the parent
      }
      rest.unshift(path.basename(existing));
      existing = path.dirname(existing);
    }
  }
}

const relPath = fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 6 }).map((segs) => segs.join('/'));
const anyPath = fc.oneof(
  relPath,
  relPath.map((r) => `${base}/${r}`),
  relPath.map((r) => `${outside}/${r}`),
  relPath.map((r) => `/${r}`),
);

describe('containedPath (the MCP tools resolve every path with it)', () => {
  it('returns only paths inside the root, lexically and physically, and refuses with ERR_CONTAINMENT otherwise', () => {
    fc.assert(
      fc.property(anyPath, (p) => {
        let result: string;
        try {
          result = containedPath(base, p);
        } catch (e) {
          expect(isCairnError(e) && e.code === 'ERR_CONTAINMENT', String(e)).toBe(true);
          return;
        }
        expect(isSameOrInside(result, base)).toBe(true);
        const real = physical(result);
        expect(real).not.toBeNull();
        expect(isSameOrInside(real ?? '', base), `${p} → ${result} → ${real}`).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('accepts every path that stays inside the root without passing a link', () => {
    const plain = fc.array(fc.constantFrom('a', 'b', 'c', '..a', 'new', 'file.txt'), { minLength: 1, maxLength: 5 }).map((segs) => segs.join('/'));
    fc.assert(
      fc.property(plain, (p) => {
        expect(containedPath(base, p)).toBe(path.join(base, p));
      }),
    );
  });

  it('refuses every path that goes through the outward link', () => {
    fc.assert(
      fc.property(relPath, (r) => {
        const p = `out-link/${r}`;
        // Lexically `out-link/..` stays in the root; anything that keeps the link in the path must be refused.
        fc.pre(path.resolve(base, p).startsWith(path.join(base, 'out-link')));
        expect(() => containedPath(base, p)).toThrow(/outside|does not resolve/);
      }),
    );
  });
});

describe('isSameOrInside', () => {
  it('is true exactly for the parent itself and paths below it', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', '..', '.', '..a', 'b..', 'root2'), { maxLength: 5 }), (segs) => {
        const child = path.resolve(base, ...segs);
        const expected = child === base || child.startsWith(`${base}${path.sep}`);
        expect(isSameOrInside(child, base)).toBe(expected);
      }),
    );
  });
});

describe('RootAllowlist.resolveRoot', () => {
  it('never resolves a relative root, and resolves an absolute one only to a directory inside an allowed root', () => {
    const allow = RootAllowlist.fromPaths([base], tmp);
    fc.assert(
      fc.property(anyPath, (p) => {
        let result: string;
        try {
          result = allow.resolveRoot(p);
        } catch (e) {
          expect(isCairnError(e) && e.code === 'ERR_ROOT_NOT_ALLOWED', String(e)).toBe(true);
          return;
        }
        // An empty root means "not given": the single allowed root (the tool schemas refuse "" anyway).
        expect(path.isAbsolute(p) || (p === '' && result === base)).toBe(true);
        expect(result).toBe(fs.realpathSync(result));
        expect(fs.statSync(result).isDirectory()).toBe(true);
        expect(isSameOrInside(result, base)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});
