/**
 * The hunks of the patch are jsdiff's on the two whole texts, with git's section lines, for any
 * two texts: lineHunks cuts the lines they share at their start (above the context) before it
 * asks jsdiff, and finds section lines by offsets, and neither may change a byte of the patch.
 */
import { structuredPatch } from 'diff';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lineHunks, type Hunk } from '../../src/review/index.js';

/** lineHunks as it was written first: jsdiff on the whole texts, sections from a split of the old text. */
function wholeTextHunks(oldText: string, newText: string, maxEditLength = 20000): { hunks: Hunk[]; additions: number; deletions: number } {
  const patch = structuredPatch('a', 'b', oldText, newText, undefined, undefined, { context: 3, maxEditLength });
  if (patch === undefined) return lineHunks(oldText, newText, maxEditLength); // over the budget: one replace hunk either way
  const hunks: Hunk[] = patch.hunks.map((h) => ({ oldStart: h.oldStart, oldLines: h.oldLines, newStart: h.newStart, newLines: h.newLines, lines: h.lines }));
  const lines = oldText.split('\n');
  for (const h of oldText === '' ? [] : hunks) {
    for (let i = h.oldStart - 2; i >= 0; i--) {
      const line = lines[i] as string;
      if (!/^[A-Za-z_$]/.test(line)) continue;
      const section = Buffer.from(line, 'utf8').subarray(0, 80).toString('utf8').replace(/\uFFFD$/, '').replace(/\s+$/, '');
      if (section !== '') h.section = section;
      break;
    }
  }
  let additions = 0;
  let deletions = 0;
  for (const h of hunks) for (const l of h.lines) if (l.startsWith('+')) additions++; else if (l.startsWith('-')) deletions++;
  return { hunks, additions, deletions };
}

const line = fc.constantFrom('a', 'b', 'c', 'x = 1;', '', '}', 'a\r', '  b', 'function f() {', 'ünï', '$x', '_y');
const lines = fc.array(line, { maxLength: 30 });
const text = (ls: string[], endsWithNewline: boolean): string => (ls.length === 0 ? '' : ls.join('\n') + (endsWithNewline ? '\n' : ''));
/** Two texts that share a head of any length (most agent edits leave a file's top alone). */
const pair = fc.tuple(lines, lines, lines, fc.boolean(), fc.boolean()).map(([head, a, b, endA, endB]) => [text([...head, ...a], endA), text([...head, ...b], endB)] as const);

describe('patch hunks', () => {
  it("equal jsdiff's on the whole texts, sections included, for any two texts sharing a head (property)", () => {
    fc.assert(
      fc.property(pair, ([a, b]) => {
        expect(lineHunks(a, b)).toEqual(wholeTextHunks(a, b));
      }),
      { numRuns: 3000 },
    );
  });

  it("equal jsdiff's within a small edit budget too, or are both the one replace hunk (property)", () => {
    fc.assert(
      fc.property(pair, fc.integer({ min: 1, max: 6 }), ([a, b], budget) => {
        expect(lineHunks(a, b, budget)).toEqual(wholeTextHunks(a, b, budget));
      }),
      { numRuns: 1000 },
    );
  });

  it('number the lines of a change below a long unchanged top as in the whole file, with its section', () => {
    const top = Array.from({ length: 400 }, (_, i) => (i % 50 === 0 ? `function f${i}() {\n` : `  line ${i};\n`)).join('');
    const { hunks } = lineHunks(`${top}end\n`, `${top}END\nmore\n`);
    expect(hunks).toEqual([{ oldStart: 398, oldLines: 4, newStart: 398, newLines: 5, section: 'function f350() {', lines: ['   line 397;', '   line 398;', '   line 399;', '-end', '+END', '+more'] }]);
    expect(lineHunks(`${top}end\n`, `${top}END\nmore\n`)).toEqual(wholeTextHunks(`${top}end\n`, `${top}END\nmore\n`));
  });
});
