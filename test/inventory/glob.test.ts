import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CairnError } from '../../src/core/errors.js';
import { compileDirectoryExcludes, compileGlob, compileGlobs, validateGlob } from '../../src/inventory/rules/glob.js';

function matches(pattern: string, paths: string[]): string[] {
  const m = compileGlob(pattern);
  return paths.filter((p) => m(p));
}

const SEED_TREE = ['.gitignore', 'README.md', 'src/a.ts', 'src/deep/b.ts', 'src/z.log', 'docs/guide.md', 'vendor/x.js', 'vendor/a/b/c.js', 'vendorx/y.js'];

describe("the seed's glob examples", () => {
  it('src/** keeps everything below src, not src itself', () => {
    expect(matches('src/**', SEED_TREE)).toEqual(['src/a.ts', 'src/deep/b.ts', 'src/z.log']);
    expect(compileGlob('src/**')('src')).toBe(false);
  });

  it('*.md matches root-level files only', () => {
    expect(matches('*.md', SEED_TREE)).toEqual(['README.md']);
  });

  it('src/deep/** and *.md together exclude what the upstream test expects', () => {
    const excluded = compileGlobs(['src/deep/**', '*.md'])!;
    expect(SEED_TREE.filter((p) => !excluded(p))).toEqual(['.gitignore', 'src/a.ts', 'src/z.log', 'docs/guide.md', 'vendor/x.js', 'vendor/a/b/c.js', 'vendorx/y.js']);
  });

  it('vendor/** covers the whole vendor tree and nothing beside it', () => {
    expect(matches('vendor/**', SEED_TREE)).toEqual(['vendor/x.js', 'vendor/a/b/c.js']);
  });

  it('apps/web/** scopes a monorepo snapshot', () => {
    expect(matches('apps/web/**', ['apps/web/a.ts', 'apps/web/src/b.ts', 'apps/api/c.ts', 'apps/website/d.ts'])).toEqual(['apps/web/a.ts', 'apps/web/src/b.ts']);
  });
});

describe('glob syntax', () => {
  it('**/ matches zero or more leading directories', () => {
    expect(matches('**/x.ts', ['x.ts', 'a/x.ts', 'a/b/x.ts', 'ax.ts', 'a/bx.ts'])).toEqual(['x.ts', 'a/x.ts', 'a/b/x.ts']);
    expect(matches('a/**/b', ['a/b', 'a/x/b', 'a/x/y/b', 'ab', 'a/xb'])).toEqual(['a/b', 'a/x/b', 'a/x/y/b']);
  });

  it('** not followed by / crosses segments', () => {
    expect(matches('a**z', ['az', 'a/z', 'a/b/c/z', 'za'])).toEqual(['az', 'a/z', 'a/b/c/z']);
  });

  it('* stays within one segment, ? is one character other than /', () => {
    expect(matches('src/*.ts', ['src/a.ts', 'src/.ts', 'src/d/a.ts', 'a.ts'])).toEqual(['src/a.ts', 'src/.ts']);
    expect(matches('?.md', ['a.md', 'ab.md', '/.md', 'é.md'])).toEqual(['a.md', 'é.md']);
  });

  it('everything else is literal: [ ] { } ( ) + . ^ $ | \\ and no negation', () => {
    const literal = ['[ab].txt', '{a,b}.txt', '(x)+.txt', 'a^b$c', 'a|b', '!neg', 'dot.txt', 'a\\b'];
    for (const p of literal) expect(matches(p, [p, 'a.txt', 'b.txt', 'x.txt', 'dotxtxt', 'neg'])).toEqual([p]);
    expect(compileGlob('dot.txt')('dotxtxt')).toBe(false);
  });

  it('globs are anchored at both ends and case-sensitive', () => {
    expect(matches('src', ['src', 'src/a', 'xsrc', 'SRC'])).toEqual(['src']);
    expect(matches('*.MD', ['README.md', 'README.MD'])).toEqual(['README.MD']);
  });

  it('compileGlobs is null for an empty list and matches any of several globs', () => {
    expect(compileGlobs([])).toBeNull();
    const m = compileGlobs(['*.md', 'src/**'])!;
    expect(SEED_TREE.filter(m)).toEqual(['README.md', 'src/a.ts', 'src/deep/b.ts', 'src/z.log']);
  });
});

// Random globs from the language's building blocks, and random paths from the same letters.
const globPart = fc.constantFrom('a', 'b', '.', '/', '*', '**', '**/', '?', '[', ']', '(', '|', '+', '$');
const globArb = fc.array(globPart, { minLength: 1, maxLength: 8 }).map((p) => p.join(''));
const pathArb = fc.array(fc.constantFrom('a', 'b', '.', '/', '[', ']', '(', '|', '+', '$', '*', '?'), { minLength: 1, maxLength: 10 }).map((p) => p.join(''));

describe('glob properties', () => {
  it('compileGlobs(list) matches exactly when some compileGlob(item) matches', () => {
    fc.assert(
      fc.property(fc.array(globArb, { minLength: 1, maxLength: 4 }), pathArb, (globs, p) => {
        expect(compileGlobs(globs)!(p)).toBe(globs.some((g) => compileGlob(g)(p)));
      }),
      { numRuns: 2000 },
    );
  });

  it('a glob without wildcards matches exactly itself', () => {
    fc.assert(
      fc.property(pathArb.filter((p) => !p.includes('*') && !p.includes('?')), pathArb, (literal, other) => {
        expect(compileGlob(literal)(literal)).toBe(true);
        expect(compileGlob(literal)(other)).toBe(other === literal);
      }),
    );
  });

  it('* and ? never match across a /', () => {
    fc.assert(
      fc.property(fc.constantFrom('*', '?', 'a*', '*b', '?b'), pathArb, (g, p) => {
        if (compileGlob(g)(p)) expect(p).not.toContain('/');
      }),
    );
  });
});

describe('compileDirectoryExcludes', () => {
  it('prunes a directory named by a P/** glob and one matched by a glob itself', () => {
    const prune = compileDirectoryExcludes(['vendor/**', 'build', '**/node_modules/**'])!;
    expect(prune('vendor')).toBe(true);
    expect(prune('build')).toBe(true);
    expect(prune('a/b/node_modules')).toBe(true);
    expect(prune('node_modules')).toBe(true);
    expect(prune('vendorx')).toBe(false);
    expect(prune('src')).toBe(false);
    expect(compileDirectoryExcludes([])).toBeNull();
  });

  it('does not prune for globs that only match some files below (vendor/* keeps vendor/a/b)', () => {
    const prune = compileDirectoryExcludes(['vendor/*', 'src/**/*.ts'])!;
    expect(prune('vendor')).toBe(false);
    expect(prune('src')).toBe(false);
  });

  it('pruning by a P/** glob never drops a path the glob would keep', () => {
    fc.assert(
      fc.property(globArb, pathArb, pathArb, (prefix, dir, below) => {
        const globs = [`${prefix}/**`];
        if (compileDirectoryExcludes(globs)!(dir)) expect(compileGlobs(globs)!(`${dir}/${below}`)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('validateGlob', () => {
  it.each(['src/**', '*.md', '**/*.ts', 'vendor/**', 'a?c', 'src/', '**', '*', 'apps/web/**'])('%j is accepted', (g) => {
    expect(() => validateGlob(g)).not.toThrow();
  });

  it.each(['../**', '/etc/*', '..', 'a/../b', '', '/', 'C:/x', 'a\\b', 'a<b', 'CON/**', 'src//x', './src', 'a /b'])(
    '%j is rejected with ERR_CONTAINMENT and the glob in details',
    (g) => {
      let thrown: unknown;
      try {
        validateGlob(g);
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(CairnError);
      const err = thrown as CairnError;
      expect(err.code).toBe('ERR_CONTAINMENT');
      expect(err.details?.glob).toBe(g);
      expect(err.exitCode).toBe(2);
      expect(err.message).toContain(JSON.stringify(g));
    },
  );

  it('a glob that starts at / or climbs with .. is always rejected', () => {
    const escaping = fc.tuple(globArb, fc.constantFrom((g: string) => `/${g}`, (g: string) => `../${g}`, (g: string) => `${g}/../x`, (g: string) => `a/../${g}`));
    fc.assert(
      fc.property(escaping, ([g, escape]) => {
        expect(() => validateGlob(escape(g))).toThrow(expect.objectContaining({ code: 'ERR_CONTAINMENT' }));
      }),
      { numRuns: 1000 },
    );
  });
});
