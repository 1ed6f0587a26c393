import { isAscii } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitNulUtf8 } from '../../src/inventory/io/nul-strings.js';

const decodeWhole = (raw: Buffer): string[] => raw.toString('utf8').split('\0');

describe('splitNulUtf8 (a cache path table)', () => {
  it('gives exactly what decoding the whole table as UTF-8 gives, for any strings without NUL', () => {
    const piece = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), fc.constantFrom('über', 'ファイル/naïve', 'a\u0301', '😀/x', '\uD800'));
    fc.assert(
      fc.property(fc.array(piece.map((s) => s.replaceAll('\0', '')), { maxLength: 40 }), (strings) => {
        const raw = Buffer.from(strings.join('\0'), 'utf8');
        expect(splitNulUtf8(raw, isAscii)).toEqual(decodeWhole(raw));
      }),
      { numRuns: 500 },
    );
  });

  it('decodes the few accented strings among ASCII ones right, each on its own, wherever they stand', () => {
    const strings = ['src/a.ts', 'données/b.txt', 'src/c.ts', 'ファイル', ''];
    const got = splitNulUtf8(Buffer.from(strings.join('\0'), 'utf8'), isAscii);
    expect(got).toEqual(strings);
  });

  it('reads an empty table as one empty string, as split does', () => {
    expect(splitNulUtf8(Buffer.alloc(0), isAscii)).toEqual(['']);
  });
});
