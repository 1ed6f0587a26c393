import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isValidRelPath, MAX_REL_PATH_LENGTH, relPathProblem } from '../../src/inventory/rules/relpath.js';

describe('valid RelPaths', () => {
  it.each([
    'a',
    'src/a.ts',
    '.gitignore',
    '.git',
    '.hidden/.x',
    'a b/c d.txt',
    'a..b',
    '...a',
    'café/naïve.md',
    '日本語/ファイル',
    '😀/x',
    'CONSOLE',
    'COM0',
    'COM10',
    'LPT',
    'xCON',
    'a.CON',
    'con_x',
    'a-b_c+d=e,f;g@h#i$j%k&l(m)n[o]p{q}r~s`t!u\'v',
    'c1\u0085control', // C1 controls are not in the seed's rule
  ])('%j is valid', (p) => {
    expect(relPathProblem(p)).toBeNull();
    expect(isValidRelPath(p)).toBe(true);
  });

  it('accepts a path of exactly 1024 characters and rejects 1025', () => {
    const exact = `${'a'.repeat(500)}/${'b'.repeat(MAX_REL_PATH_LENGTH - 501)}`;
    expect(exact).toHaveLength(1024);
    expect(isValidRelPath(exact)).toBe(true);
    expect(relPathProblem(`${exact}c`)).toBe('too long');
    expect(MAX_REL_PATH_LENGTH).toBe(1024);
  });
});

describe('invalid RelPaths, each with its reason', () => {
  it.each([
    ['', 'empty path'],
    ['/etc/passwd', 'absolute path'],
    ['\\server\\share', 'absolute path'],
    ['C:/Windows', 'absolute path'],
    ['c:relative', 'absolute path'],
    ['cafe\u0301', 'not NFC'],
    ['dir/e\u0301t\u00e9', 'not NFC'],
    ['a\u0000b', 'control character'],
    ['a\nb', 'control character'],
    ['tab\there', 'control character'],
    ['a\u001fb', 'control character'],
    ['del\u007f', 'control character'],
    ['a<b', 'contains "<"'],
    ['a>b', 'contains ">"'],
    ['ab:c', 'contains ":"'],
    ['dir/a:b', 'contains ":"'],
    ['a"b', 'contains """'],
    ['a|b', 'contains "|"'],
    ['a?b', 'contains "?"'],
    ['a*b', 'contains "*"'],
    ['a\\b', 'contains "\\"'],
    ['a//b', 'empty segment'],
    ['a/', 'empty segment'],
    ['./a', '"." or ".." segment'],
    ['a/./b', '"." or ".." segment'],
    ['..', '"." or ".." segment'],
    ['a/../b', '"." or ".." segment'],
    ['a ', 'segment ends with a space'],
    ['dir /a', 'segment ends with a space'],
    ['a.', 'segment ends with "."'],
    ['dir./a', 'segment ends with "."'],
    ['CON', 'reserved Windows name "CON"'],
    ['con', 'reserved Windows name "CON"'],
    ['Con.txt', 'reserved Windows name "CON"'],
    ['nul.tar.gz', 'reserved Windows name "NUL"'],
    ['src/aux/x', 'reserved Windows name "AUX"'],
    ['prn.md', 'reserved Windows name "PRN"'],
    ['COM1', 'reserved Windows name "COM1"'],
    ['com9.log', 'reserved Windows name "COM9"'],
    ['LPT1', 'reserved Windows name "LPT1"'],
    ['lpt9.x', 'reserved Windows name "LPT9"'],
    ['\ud800x', 'lone surrogate'],
  ])('%j: %s', (p, reason) => {
    expect(relPathProblem(p)).toBe(reason);
    expect(isValidRelPath(p)).toBe(false);
  });
});

// Segments that are always valid: no forbidden characters, no trailing dot or space, not reserved.
const safeSegment = fc
  .stringMatching(/^[A-Za-z0-9_\-éß日][A-Za-z0-9_.\- éß日]{0,12}[A-Za-z0-9_\-éß日]$|^[A-Za-z0-9_\-éß日]$/)
  .filter((s) => !/^(CON|PRN|AUX|NUL|COM[1-9]|LPT[1-9])(\..*)?$/i.test(s));
const safePath = fc.array(safeSegment, { minLength: 1, maxLength: 6 }).map((s) => s.join('/'));

// A small alphabet full of traps, so random strings hit every rule often.
const trapString = fc
  .array(fc.constantFrom('a', 'b', 'C', 'O', 'N', 'n', 'u', 'l', '1', '.', '/', ' ', '\\', ':', '*', '?', '"', '<', '|', 'é', 'e', '\u0301', '\u0000', '\u007f', '\n', '😀', '\ud800'), { maxLength: 14 })
  .map((chars) => chars.join(''));

describe('RelPath properties', () => {
  it('paths made of safe segments are valid', () => {
    fc.assert(fc.property(safePath, (p) => isValidRelPath(p)));
  });

  it('every valid path is NFC, relative, portable and made of proper segments', () => {
    fc.assert(
      fc.property(trapString, (p) => {
        if (!isValidRelPath(p)) {
          expect(relPathProblem(p)).toEqual(expect.any(String));
          return;
        }
        expect(p.normalize('NFC')).toBe(p);
        expect(p.length).toBeGreaterThan(0);
        expect(p.length).toBeLessThanOrEqual(MAX_REL_PATH_LENGTH);
        // eslint-disable-next-line no-control-regex
        expect(p).not.toMatch(/[<>:"|?*\\\u0000-\u001f\u007f]/);
        for (const segment of p.split('/')) {
          expect(['', '.', '..']).not.toContain(segment);
          expect(segment).not.toMatch(/[. ]$/);
          expect(segment).not.toMatch(/^(CON|PRN|AUX|NUL|COM[1-9]|LPT[1-9])(\..*)?$/i);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('breaking any one rule in a valid path makes it invalid', () => {
    const breakers: Array<(p: string) => string> = [
      (p) => `/${p}`,
      (p) => `${p}/`,
      (p) => `${p}//x`,
      (p) => `${p}/..`,
      (p) => `./${p}`,
      (p) => `${p} `,
      (p) => `${p}.`,
      (p) => `${p}/Nul.txt`,
      (p) => `${p}:x`,
      (p) => `${p}\u0001`,
      (p) => `${p}/e\u0301`,
      (p) => `${p}/${'x'.repeat(MAX_REL_PATH_LENGTH)}`,
    ];
    fc.assert(
      fc.property(safePath, fc.constantFrom(...breakers), (p, breakRule) => {
        expect(isValidRelPath(breakRule(p))).toBe(false);
      }),
    );
  });

  it('the NFD spelling of a valid path with accents is rejected', () => {
    fc.assert(
      fc.property(safePath, (p) => {
        const nfd = p.normalize('NFD');
        if (nfd !== p) expect(relPathProblem(nfd)).toBe('not NFC');
      }),
    );
  });
});
