// A process keeps the stat cache rows it saved (or loaded and left as they were) and starts its
// next scan of the root from them, while the file on disk is still the one they went with
// (src/inventory/cache/resident.ts). Whatever the edits and whoever else writes the cache, every
// scan gives what an uncached scan gives, and the rows are reused only while the file is theirs.
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { scanTree, scanTreeSync, type ScanResult } from '../../src/inventory/index.js';
import { residentCounts } from '../../src/inventory/cache/resident.js';
import { cleanupTempDirs, MARGIN, strip, tempDir, writeTree } from './helpers.js';

afterAll(cleanupTempDirs);

type Op =
  | { kind: 'write'; dir: number; name: number; text: string }
  | { kind: 'remove'; dir: number; name: number }
  | { kind: 'removeDir'; dir: number }
  | { kind: 'ignore'; dir: number; rule: number }
  | { kind: 'foreignSave' }
  | { kind: 'rewriteInPlace' };

const DIRS = ['', 'a', 'a/b', 'c', 'c/d/e'];
const RULES = ['', 'f1\n', '*.log\n', 'b/\n', '!f2\nf*\n'];

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('write' as const), dir: fc.nat(DIRS.length - 1), name: fc.nat(4), text: fc.string({ maxLength: 12 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), dir: fc.nat(DIRS.length - 1), name: fc.nat(4) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('removeDir' as const), dir: fc.integer({ min: 1, max: DIRS.length - 1 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('ignore' as const), dir: fc.nat(DIRS.length - 1), rule: fc.nat(RULES.length - 1) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'foreignSave' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'rewriteInPlace' as const }) },
);

function fileName(name: number): string {
  return name === 4 ? 'x.log' : `f${name}`;
}

/** The one cache file a scan left in `cacheDir` (its memos aside). */
function cacheFileIn(cacheDir: string): string {
  const names = fs.readdirSync(cacheDir).filter((n) => n.endsWith('.cache'));
  expect(names.length).toBe(1);
  return path.join(cacheDir, names[0]!);
}

describe('a process starts its next scan from the stat cache rows it kept', () => {
  it('gives what an uncached scan gives on random edit sequences, reusing its rows only while the file is the one they went with', async () => {
    const start = residentCounts.reused;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(opArb, fc.boolean()), { minLength: 4, maxLength: 24 }), async (steps) => {
        const root = tempDir();
        const mine = tempDir('cairn-cache-');
        const other = tempDir('cairn-cache-');
        writeTree(root, { 'a/f0': 'zero', 'a/b/f1': 'one', 'c/d/e/f2': 'two', f3: 'three' });
        const options = { cacheDir: mine, racyMarginMs: MARGIN };
        scanTreeSync(root, options);
        // The rows this process kept stand for the file it saved until something replaces it.
        let ours = true;
        for (const [op, async] of steps) {
          const dir = path.join(root, DIRS[op.kind === 'foreignSave' || op.kind === 'rewriteInPlace' ? 0 : op.dir]!);
          if (op.kind === 'write') {
            fs.mkdirSync(dir, { recursive: true });
            fs.writeFileSync(path.join(dir, fileName(op.name)), op.text);
          } else if (op.kind === 'remove') fs.rmSync(path.join(dir, fileName(op.name)), { force: true });
          else if (op.kind === 'removeDir') fs.rmSync(dir, { recursive: true, force: true });
          else if (op.kind === 'ignore') {
            fs.mkdirSync(dir, { recursive: true });
            fs.writeFileSync(path.join(dir, '.gitignore'), RULES[op.rule]!);
          } else if (op.kind === 'foreignSave') {
            // Another process scans and saves: its file is renamed over ours (a new inode).
            scanTreeSync(root, { cacheDir: other, racyMarginMs: MARGIN });
            const target = cacheFileIn(mine);
            fs.copyFileSync(cacheFileIn(other), `${target}.incoming`);
            fs.renameSync(`${target}.incoming`, target);
            ours = false;
          } else {
            // The same bytes written into the very file: its times move, so it is read again.
            const target = cacheFileIn(mine);
            fs.writeFileSync(target, fs.readFileSync(target));
            ours = false;
          }
          const before = { ...residentCounts };
          const r: ScanResult = async ? await scanTree(root, options) : scanTreeSync(root, options);
          const truth = scanTreeSync(root, { cache: false });
          expect(strip(r)).toEqual(strip(truth));
          if (!ours) expect(residentCounts.reused).toBe(before.reused);
          ours = true;
        }
      }),
      { numRuns: 25 },
    );
    expect(residentCounts.reused).toBeGreaterThan(start);
  });

  it('reuses the rows it saved: the next scan decodes nothing', () => {
    const root = tempDir();
    const cacheDir = tempDir('cairn-cache-');
    writeTree(root, { 'a/f0': 'zero', f1: 'one' });
    const options = { cacheDir, racyMarginMs: MARGIN };
    scanTreeSync(root, options);
    fs.writeFileSync(path.join(root, 'a/f0'), 'changed');
    const before = residentCounts.reused;
    scanTreeSync(root, options);
    scanTreeSync(root, options);
    expect(residentCounts.reused).toBe(before + 2);
    expect(strip(scanTreeSync(root, options))).toEqual(strip(scanTreeSync(root, { cache: false })));
  });
});
