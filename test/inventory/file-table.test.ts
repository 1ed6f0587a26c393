// FileTable.rowsOf answers as the full path index does, whether or not that index was built.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FileTable } from '../../src/inventory/cache/stat-cache.js';

const ROW = new Float64Array(6);

function tableOf(paths: readonly string[]): FileTable {
  const t = new FileTable(4);
  for (const p of paths) t.set(p, ROW, 0, null, 0);
  return t;
}

describe('FileTable.rowsOf', () => {
  it('finds the row of every wanted path present and leaves the others out, with or without the index built', () => {
    const pathArb = fc.stringMatching(/^[a-c/é]{1,6}$/);
    fc.assert(
      fc.property(fc.uniqueArray(pathArb, { maxLength: 40 }), fc.array(pathArb, { maxLength: 12 }), (paths, wanted) => {
        const expected = new Map<string, number>();
        for (const w of wanted) {
          const i = paths.indexOf(w);
          if (i >= 0) expected.set(w, i);
        }
        const cold = tableOf(paths);
        expect(cold.rowsOf(wanted)).toEqual(expected);
        const warm = tableOf(paths);
        void warm.index; // built: rowsOf then answers from it
        expect(warm.rowsOf(wanted)).toEqual(expected);
      }),
    );
  });

  it('sees rows appended after the index was built and none from rows dropped since', () => {
    const t = tableOf(['a', 'b/c', 'd']);
    void t.index;
    t.appendUnread('e');
    t.keepRows((i) => t.paths[i] !== 'b/c');
    expect(t.rowsOf(['a', 'b/c', 'e', 'zz'])).toEqual(new Map([['a', 0], ['e', 2]]));
  });
});
