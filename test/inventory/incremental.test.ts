// The stored result brought up to date without a walk (fastpath/incremental.ts), and why it
// leaves the decision to the walk when it cannot: each case runs the fast path in-process on a
// real tree and asserts the outcome it hands on, its reason, and what the lstat pass confirmed.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scanTreeSync } from '../../src/inventory/index.js';
import { tryStoredResult, type FastPathOutcome } from '../../src/inventory/fastpath/stored-result.js';
import { prepare } from '../../src/inventory/walk/prepare.js';
import type { ScanOptions, ScanTuning } from '../../src/inventory/types.js';
import { cleanupTempDirs, MARGIN, sleep, tempDir, writeTree } from './helpers.js';

afterAll(cleanupTempDirs);

/** A tree whose whole result is stored, nothing racy left; `fastPath()` runs the stored-result check once. */
async function stored(files: Record<string, string>, tuning?: ScanTuning) {
  const root = tempDir();
  const opts: ScanOptions = { cacheDir: tempDir('cairn-cache-'), racyMarginMs: MARGIN, jobs: 0, ...(tuning !== undefined ? { tuning } : {}) };
  writeTree(root, files);
  await sleep(3 * MARGIN);
  scanTreeSync(root, opts);
  const fastPath = async (): Promise<FastPathOutcome> => {
    await sleep(3 * MARGIN); // what changed is older than the margin
    const outcome = tryStoredResult(prepare(root, opts), opts);
    scanTreeSync(root, opts); // as a scan would: the walk stores the result again
    return outcome;
  };
  return { root, opts, fastPath };
}

const reasonOf = (o: FastPathOutcome): string => (o.kind === 'walk' ? o.reason : `(${o.kind})`);

describe('the incremental update', () => {
  it('places new files, removed files and a new directory without a walk', async () => {
    const t = await stored({ 'src/a.ts': 'a', 'src/b.ts': 'b', 'docs/x.md': 'x' });
    fs.writeFileSync(path.join(t.root, 'src', 'c.ts'), 'c');
    fs.rmSync(path.join(t.root, 'src', 'b.ts'));
    writeTree(t.root, { 'lib/deep/d.ts': 'd' });
    const o = await t.fastPath();
    expect(reasonOf(o)).toBe('(updated)');
    if (o.kind === 'walk') return;
    expect(o.result.files.map((f) => f.path)).toEqual(['docs/x.md', 'lib/deep/d.ts', 'src/a.ts', 'src/c.ts']);
    expect(o.result.files).toEqual(scanTreeSync(t.root, { cache: false }).files);
  });

  it('leaves a new symlink to the walk, naming it', async () => {
    const t = await stored({ 'src/a.ts': 'a' });
    fs.symlinkSync('a.ts', path.join(t.root, 'src', 'link.ts'));
    const o = await t.fastPath();
    expect(reasonOf(o)).toBe('1 directory moved beyond what the update places: src/link.ts is a new symlink or a name to report as skipped');
  });

  it('leaves a type change to the walk', async () => {
    const t = await stored({ 'src/a.ts': 'a', 'src/b': 'a file first' });
    fs.rmSync(path.join(t.root, 'src', 'b'));
    writeTree(t.root, { 'src/b/inner.ts': 'now a directory' });
    const o = await t.fastPath();
    expect(reasonOf(o)).toMatch(/beyond what the update places: src\/b changed type$/);
  });

  // The limit is a tuning knob (2000 by default, see walk/tuning.ts), so a few files cross it here.
  it('adds as many new files as tuning.fastPathNewFilesMax, in a new directory or an old one, without a walk', async () => {
    const t = await stored({ 'src/a.ts': 'a' }, { fastPathNewFilesMax: 3 });
    writeTree(t.root, { 'gen/f0.txt': '0', 'gen/f1.txt': '1', 'gen/sub/f2.txt': '2' });
    expect(reasonOf(await t.fastPath())).toBe('(updated)');
    writeTree(t.root, { 'src/b.ts': 'b', 'src/c.ts': 'c', 'src/d.ts': 'd' });
    const o = await t.fastPath();
    expect(reasonOf(o)).toBe('(updated)');
    if (o.kind === 'walk') return;
    expect(o.result.files).toEqual(scanTreeSync(t.root, { cache: false }).files);
  });

  for (const [where, files] of [
    ['a new directory', { 'gen/f0.txt': '0', 'gen/f1.txt': '1', 'gen/sub/f2.txt': '2', 'gen/sub/f3.txt': '3' }],
    ['an old directory', { 'src/b.ts': 'b', 'src/c.ts': 'c', 'src/d.ts': 'd', 'src/e.ts': 'e' }],
  ] as const) {
    it(`leaves more new files than tuning.fastPathNewFilesMax in ${where} to the walk, which hashes them on every core`, async () => {
      const t = await stored({ 'src/a.ts': 'a' }, { fastPathNewFilesMax: 3 });
      writeTree(t.root, files);
      const o = await t.fastPath();
      expect(reasonOf(o)).toMatch(/beyond what the update places: more than 3 new files: the walk hashes them on every core$/);
      expect(scanTreeSync(t.root, t.opts).files).toEqual(scanTreeSync(t.root, { cache: false }).files);
    });
  }

  it('leaves a directory a rule no longer ignores, never listed, to the walk', async () => {
    const t = await stored({ '.gitignore': 'build/\n', 'src/a.ts': 'a', 'build/out.js': 'o' });
    fs.writeFileSync(path.join(t.root, '.gitignore'), '*.log\n');
    const o = await t.fastPath();
    expect(reasonOf(o)).toMatch(/ignore file\(s\) changed beyond what the update places: build is newly in under the new rules and was never listed$/);
    expect(scanTreeSync(t.root, t.opts).files.map((f) => f.path)).toEqual(['.gitignore', 'build/out.js', 'src/a.ts']);
  });

  it('hands the walk what the lstat pass confirmed: every file row but the changed, the directories that moved', async () => {
    const t = await stored({ 'src/a.ts': 'a', 'src/b.ts': 'b', 'docs/x.md': 'x' });
    const rows = prepare(t.root, t.opts).previous.files.paths; // the rows the pass will check
    fs.writeFileSync(path.join(t.root, 'src', 'b.ts'), 'edited');
    fs.symlinkSync('x.md', path.join(t.root, 'docs', 'link.md'));
    const o = await t.fastPath();
    expect(o.kind).toBe('walk');
    if (o.kind !== 'walk') return;
    expect(o.confirmed).toBeDefined();
    expect([...o.confirmed!.changedDirs]).toEqual(['docs']);
    expect(rows.length).toBe(3);
    expect(Array.from(o.confirmed!.verified)).toEqual(rows.map((r) => (r === 'src/b.ts' ? 0 : 1)));
    expect(o.confirmed!.preread.size).toBe(0); // on one thread, changed files are read after the pass
  });

  it('hands the walk nothing confirmed when the pass could not check every row', async () => {
    const t = await stored({ 'src/a.ts': 'a' });
    const o = tryStoredResult(prepare(t.root, { ...t.opts, cache: false }), t.opts);
    expect(o).toEqual({ kind: 'walk', reason: 'no cache (--no-cache, or no cache directory)', confirmed: undefined });
  });
});
