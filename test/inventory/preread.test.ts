// What a thread of the stat-cache check reads again: changed regular files, within its budgets;
// directories and .gitignore files (read later with their text) are left alone.
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fileReader, processFile, STATUS } from '../../src/inventory/io/read-file.js';
import { NOT_READ, prereadArea, prereadRows, ROW_DIR } from '../../src/inventory/io/verifier.js';
import { cleanupTempDirs, tempDir, writeTree } from './helpers.js';

afterAll(cleanupTempDirs);

function setup() {
  const root = tempDir();
  writeTree(root, { 'a.txt': 'alpha', 'big.bin': Buffer.alloc(5000, 1), 'sub/.gitignore': '*.log\n', 'sub/c.txt': 'gamma' });
  // The verify table's rows: files, then directories (ROW_DIR).
  const paths = ['a.txt', 'big.bin', 'gone.txt', 'sub/.gitignore', 'sub/c.txt', 'sub'];
  const flags = new Uint8Array([2, 2, 2, 2, 2, ROW_DIR]);
  const read = (rows: number[], budgetBytes: number, budgetMs: number) => {
    const area = prereadArea(rows.length);
    prereadRows({ reader: fileReader(true), prefix: `${root}/`, paths, flags, area, budgetBytes, budgetMs }, rows);
    return area;
  };
  return { root, paths, read };
}

describe('prereadRows', () => {
  it('reads each changed regular file into its slot: the same stat and digest a read after the pass gives', () => {
    const { root, paths, read } = setup();
    const area = read([0, 4, 1], Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY);
    [0, 4, 1].forEach((row, k) => {
      const direct = processFile(fileReader(true, Buffer.alloc(1 << 16)), path.join(root, paths[row]!));
      expect(area.status[k]).toBe(STATUS.OK_HASHED);
      expect(Array.from(area.stats.subarray(k * 6, k * 6 + 6))).toEqual(direct.stat);
      expect(Buffer.from(area.shas.subarray(k * 32, k * 32 + 32))).toEqual(direct.sha);
    });
  });

  it('leaves directories, .gitignore files, vanished files and files past the byte budget unread', () => {
    const { read } = setup();
    const area = read([5, 3, 2, 1, 0], 4999, Number.POSITIVE_INFINITY);
    expect(Array.from(area.status)).toEqual([NOT_READ, NOT_READ, NOT_READ, NOT_READ, STATUS.OK_HASHED]);
  });

  it('reads nothing once its time budget is spent', () => {
    const { read } = setup();
    expect(Array.from(read([0, 4], Number.POSITIVE_INFINITY, -1).status)).toEqual([NOT_READ, NOT_READ]);
  });
});
