/**
 * One line-diff engine: the counts `--stat`, `--json` and `restore --dry-run` show without
 * building hunks are exactly the counts of the hunks `--patch` prints, for any pair of texts —
 * trailing newline or not, CRLF, repeated lines — and binary content has none.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lineCounts, lineCountsOfTexts, lineHunks } from '../../src/review/index.js';

const line = fc.constantFrom('a', 'b', 'c', 'x = 1;', '', '}', 'a\r', '  b');
const text = fc.tuple(fc.array(line, { maxLength: 40 }), fc.boolean()).map(([lines, endsWithNewline]) => (lines.length === 0 ? '' : lines.join('\n') + (endsWithNewline ? '\n' : '')));

describe('line counts without hunks', () => {
  it('equal the counts of the hunks for any two texts', () => {
    fc.assert(
      fc.property(text, text, (a, b) => {
        const { additions, deletions } = lineHunks(a, b);
        expect(lineCountsOfTexts(a, b)).toEqual({ additions, deletions });
      }),
      { numRuns: 2000 },
    );
  });

  it('count a last line that gains or loses its newline as changed, as git does', () => {
    expect(lineCountsOfTexts('a\nb', 'a\nb\n')).toEqual({ additions: 1, deletions: 1 });
    expect(lineCountsOfTexts('a\nb\n', 'a\nb\nc')).toEqual({ additions: 1, deletions: 0 });
    expect(lineCountsOfTexts('', 'a\nb\n')).toEqual({ additions: 2, deletions: 0 });
  });

  it('over the edit budget, count the whole file as one replace, as the patch shows it', () => {
    fc.assert(
      fc.property(text, text, fc.integer({ min: 1, max: 6 }), (a, b, budget) => {
        const { additions, deletions } = lineHunks(a, b, budget);
        expect(lineCountsOfTexts(a, b, budget)).toEqual({ additions, deletions });
      }),
      { numRuns: 1000 },
    );
    const a = Array.from({ length: 300 }, (_, i) => `a${i}\n`).join('');
    const b = Array.from({ length: 300 }, (_, i) => `b${i}\n`).join('');
    expect(lineCountsOfTexts(`keep\n${a}`, `keep\n${b}`, 100)).toEqual({ additions: 301, deletions: 301 });
  });

  it('give null for bytes git calls binary (a NUL) and for text that is not UTF-8', () => {
    expect(lineCounts(Buffer.from('a\n'), Buffer.from([0x61, 0, 0x62]))).toBeNull();
    expect(lineCounts(Buffer.from([0xff, 0xfe, 0x0a]), Buffer.from('a\n'))).toBeNull();
    expect(lineCounts(null, Buffer.from('a\nb\n'))).toEqual({ additions: 2, deletions: 0 });
    expect(lineCounts(Buffer.from('a\nb\n'), null)).toEqual({ additions: 0, deletions: 2 });
  });
});
