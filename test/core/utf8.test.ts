import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareUtf8, hasLoneSurrogate } from '../../src/core/utf8.js';

const sign = (n: number) => (n < 0 ? -1 : n > 0 ? 1 : 0);
const byBytes = (a: string, b: string) => sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));

// Characters where UTF-16 order and code-point order disagree live at the top of the BMP
// (U+E000..U+FFFF) and in the astral planes (surrogate pairs); mix them with ASCII and Latin.
const trickyChar = fc.oneof(
  fc.constantFrom('a', 'B', '-', '.', '/', '~', 'é', 'ÿ', '\u0000', '\u007f', '\u0080', '\u07ff', '\u0800', '\ud7ff', '\ue000', '\uf8ff', '\ufb33', '\ufeff', '\ufffd', '\uffff', '😀', '\u{10000}', '\u{1f600}', '\u{10ffff}'),
  fc.integer({ min: 0xe000, max: 0xffff }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0x10000, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
);
const trickyString = fc.array(trickyChar, { maxLength: 8 }).map((chars) => chars.join(''));

describe('compareUtf8', () => {
  it('orders exactly as Buffer.compare orders the UTF-8 encodings', () => {
    fc.assert(
      fc.property(trickyString, trickyString, (a, b) => {
        expect(sign(compareUtf8(a, b))).toBe(byBytes(a, b));
      }),
      { numRuns: 5000 },
    );
  });

  it('orders strings that share a long prefix as Buffer.compare does', () => {
    fc.assert(
      fc.property(trickyString, trickyString, trickyString, (prefix, a, b) => {
        expect(sign(compareUtf8(prefix + a, prefix + b))).toBe(byBytes(prefix + a, prefix + b));
      }),
      { numRuns: 2000 },
    );
  });

  it('is antisymmetric and zero only for equal strings', () => {
    fc.assert(
      fc.property(trickyString, trickyString, (a, b) => {
        expect(sign(compareUtf8(a, b)) + sign(compareUtf8(b, a))).toBe(0);
        expect(compareUtf8(a, b) === 0).toBe(a === b);
      }),
    );
  });

  it('sorts an array the way a byte-wise sort does', () => {
    fc.assert(
      fc.property(fc.array(trickyString, { maxLength: 30 }), (list) => {
        expect([...list].sort(compareUtf8)).toEqual([...list].sort((a, b) => byBytes(a, b)));
      }),
    );
  });

  it('differs from JS < where UTF-16 order is wrong: an astral character sorts after U+FFFD', () => {
    expect('😀' < '\ufffd').toBe(true); // UTF-16 code units: D83D < FFFD
    expect(compareUtf8('😀', '\ufffd')).toBeGreaterThan(0); // code points: 1F600 > FFFD
    expect(compareUtf8('a/\ue000', 'a/\u{10000}')).toBeLessThan(0);
  });

  it('sorts the path traps the inventory meets: a-b, a.b, a/b, upper case first', () => {
    expect(['a/b', 'a.b', 'Z', 'a-b', 'é', 'a', 'B'].sort(compareUtf8)).toEqual(['B', 'Z', 'a', 'a-b', 'a.b', 'a/b', 'é']);
  });
});

describe('hasLoneSurrogate', () => {
  it.each([
    ['\ud800', true],
    ['\udc00', true],
    ['a\ud83d', true],
    ['\ude00\ud83d', true],
    ['😀', false],
    ['plain', false],
    ['', false],
  ])('%j -> %s', (s, expected) => {
    expect(hasLoneSurrogate(s)).toBe(expected);
  });

  it('is true exactly when the string does not survive a UTF-8 round trip', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', '\ud83d', '\ude00', '😀', '\ufffd') }), (s) => {
        expect(hasLoneSurrogate(s)).toBe(Buffer.from(s, 'utf8').toString('utf8') !== s);
      }),
    );
  });
});
