// The gaps listed after the upstream suite (upstream-notes § 4), and the defects cairn fixes.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diffSnapshots, snapshotRoot, snapshotRootDetailed, scanTreeSync, type RepoSnapshotOptions, type ScanTuning } from '../../src/inventory/index.js';
import { mkfifo } from '../support/mkfifo.js';
import { cleanupTempDirs, tempDir, writeTree } from './helpers.js';

afterAll(cleanupTempDirs);

const paths = async (root: string, o: RepoSnapshotOptions = {}) => (await snapshotRoot(root, { cache: false, ...o })).body.files.map((f) => f.path);

describe('git ignore rules at every level', () => {
  it('reads nested .gitignore files, with negation and anchoring relative to their own directory', async () => {
    const root = tempDir();
    writeTree(root, {
      '.gitignore': '*.tmp\n',
      'a.tmp': '',
      'pkg/.gitignore': '/build\n!keep.tmp\n',
      'pkg/keep.tmp': '',
      'pkg/other.tmp': '',
      'pkg/build/out.js': '',
      'pkg/sub/build/out.js': '',
    });
    expect(await paths(root)).toEqual(['.gitignore', 'pkg/.gitignore', 'pkg/keep.tmp', 'pkg/sub/build/out.js']);
  });

  it('ignores node_modules/ at any depth (upstream anchored it at the root)', async () => {
    const root = tempDir();
    writeTree(root, { '.gitignore': 'node_modules/\n', 'node_modules/a.js': '', 'pkg/node_modules/b.js': '', 'pkg/index.js': '' });
    expect(await paths(root)).toEqual(['.gitignore', 'pkg/index.js']);
  });

  it('applies a directory-only pattern to directories only (upstream also dropped files)', async () => {
    const root = tempDir();
    writeTree(root, { '.gitignore': 'cache/\n', cache: 'a file named cache', 'sub/cache/x': '' });
    expect(await paths(root)).toEqual(['.gitignore', 'cache']);
  });

  it('cannot re-include a file inside an ignored directory', async () => {
    const root = tempDir();
    writeTree(root, { '.gitignore': 'logs/\n!logs/keep.log\n', 'logs/keep.log': '', 'logs/other.log': '' });
    expect(await paths(root)).toEqual(['.gitignore']);
  });

  it('does not read .gitignore files above the root', async () => {
    const outer = tempDir();
    writeTree(outer, { '.gitignore': '*.txt\n', 'inner/a.txt': 'a' });
    expect(await paths(path.join(outer, 'inner'))).toEqual(['a.txt']);
  });
});

describe('always-skipped directories and the .git file', () => {
  it('skips .git/ and .cairn/ at any depth but inventories a FILE named .git', async () => {
    const root = tempDir();
    writeTree(root, { '.git/HEAD': 'x', 'sub/.git/HEAD': 'x', 'sub/.cairn/store/x': 'x', 'sub/file': 'x', 'mod/.git': 'gitdir: ../.git/modules/mod\n' });
    expect(await paths(root)).toEqual(['mod/.git', 'sub/file']);
  });

  it("skips the seed tool's .axiom/ at any depth, as the seed's snapshot does, even with respectGitignore false", async () => {
    const root = tempDir();
    writeTree(root, { '.axiom/lock': 'x', 'sub/.axiom/state.json': '{}', 'sub/file': 'x', 'axiom/kept': 'x' });
    expect(await paths(root)).toEqual(['axiom/kept', 'sub/file']);
    const all = await snapshotRoot(root, { cache: false, respectGitignore: false });
    expect(all.body.files.map((f) => f.path)).toEqual(['axiom/kept', 'sub/file']);
  });

  it('prunes an excluded directory (never opened): an unreadable excluded dir causes no skip', async () => {
    const root = tempDir();
    writeTree(root, { 'vendor/lib/a.js': '', 'src/a.js': '' });
    const r = await snapshotRootDetailed(root, { cache: false, exclude: ['vendor'] });
    expect(r.snapshot.body.files.map((f) => f.path)).toEqual(['src/a.js']);
    expect(r.skipped).toEqual([]);
  });
});

describe('what counts as skipped', () => {
  it('prunes a directory excluded by "X/**" and reports nothing from inside it', async () => {
    const root = tempDir();
    writeTree(root, { 'vendor/ok.js': '', 'vendor/bad ': '', 'src/a.js': '' });
    const pruned = await snapshotRootDetailed(root, { cache: false, exclude: ['vendor/**'] });
    expect(pruned.snapshot.body.files.map((f) => f.path)).toEqual(['src/a.js']);
    expect(pruned.skipped).toEqual([]);
    // Same inventory as excluding file by file (the seed's glob semantics).
    const byFile = await snapshotRootDetailed(root, { cache: false, exclude: ['vendor/*'] });
    expect(byFile.snapshot).toEqual(pruned.snapshot);
  });

  it('does not report an ignored path with an invalid name: it would not be recorded anyway', async () => {
    const root = tempDir();
    writeTree(root, { '.gitignore': 'junk*\nbuild/\n', 'x.tmp ': '', 'junk.tmp ': '', 'build/bad ': '', 'keep ': '' });
    const r = await snapshotRootDetailed(root, { cache: false });
    expect(r.snapshot.body.files.map((f) => f.path)).toEqual(['.gitignore']);
    expect(r.skipped.map((s) => s.path)).toEqual(['keep ', 'x.tmp ']);
  });
});

describe('limits', () => {
  it('maxBytes: 0 keeps only the leading zero-byte entries', async () => {
    const root = tempDir();
    writeTree(root, { a: '', b: '', c: 'x', d: '' });
    const s = await snapshotRoot(root, { cache: false, maxBytes: 0 });
    expect(s.body.files.map((f) => f.path)).toEqual(['a', 'b']);
    expect(s.body.truncated).toBe(true);
  });

  it('truncated is false when the budget is exactly used up by the last entry', async () => {
    const root = tempDir();
    writeTree(root, { a: 'x', b: 'y' });
    const s = await snapshotRoot(root, { cache: false, maxFiles: 2, maxBytes: 2 });
    expect(s.body).toMatchObject({ truncated: false, counts: { files: 2, bytes: 2 } });
  });

  it('clamps maxFiles above the 50 000 cap silently and rejects invalid limits with ERR_INVALID_OPTION', async () => {
    const root = tempDir();
    writeTree(root, { a: 'x' });
    expect((await snapshotRoot(root, { cache: false, maxFiles: 1_000_000 })).body.counts.files).toBe(1);
    for (const bad of [{ maxFiles: 0 }, { maxFiles: -1 }, { maxFiles: 1.5 }, { maxBytes: -1 }, { maxBytes: 0.5 }, { maxFiles: Number.NaN }]) {
      await expect(snapshotRoot(root, { cache: false, ...bad })).rejects.toMatchObject({ code: 'ERR_INVALID_OPTION' });
    }
  });

  it('takes tuning thresholds within their ranges, and rejects any other value or an unknown knob with ERR_INVALID_OPTION', () => {
    const root = tempDir();
    writeTree(root, { a: 'x', 'd/b': 'y' });
    const plain = scanTreeSync(root, { cache: false });
    const lowest = { parallelVerifyMin: 1, earlyVerifierCacheBytes: 0, verifyChunkRows: 1, fastPathChangeMin: 0, fastPathNewFilesMax: 0, prereadWorkerBytes: 0, pieceEntries: 1 };
    expect(scanTreeSync(root, { cache: false, tuning: lowest }).files).toEqual(plain.files);
    const bad: unknown[] = [{ parallelVerifyMin: 0 }, { verifyChunkRows: 0 }, { verifyChunkRows: 1.5 }, { earlyVerifierCacheBytes: -1 }, { fastPathChangeMin: Number.NaN }, { fastPathNewFilesMax: -1 }, { pieceEntries: 0 }, { prereadWorkerBytes: '1' }, { parallelVerifyMin: 2 ** 60 }, { chunk: 4 }, null, 7];
    for (const tuning of bad) {
      expect(() => scanTreeSync(root, { cache: false, tuning: tuning as ScanTuning }), JSON.stringify(tuning)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_OPTION' }));
    }
  });
});

describe('unreadable directories and odd files', () => {
  it('reports FIFOs and sockets as skipped, never hangs on them', async () => {
    const root = tempDir();
    writeTree(root, { a: 'x' });
    mkfifo(path.join(root, 'pipe'));
    const r = await snapshotRootDetailed(root, { cache: false });
    expect(r.snapshot.body.files.map((f) => f.path)).toEqual(['a']);
    expect(r.skipped).toEqual([{ path: 'pipe', reason: 'not-regular-file', detail: 'FIFO, socket or device' }]);
  });
});

describe('diff across digest and no-digest snapshots (upstream defect)', () => {
  it('compares sizes when only one side has digests, so unchanged files are not reported', async () => {
    const root = tempDir();
    writeTree(root, { a: 'aaa', b: 'bbb', c: 'ccc' });
    const withDigest = await snapshotRoot(root, { cache: false });
    fs.writeFileSync(path.join(root, 'b'), 'bbbb');
    const sizesOnly = await snapshotRoot(root, { cache: false, withContentDigest: false });
    const d = diffSnapshots(withDigest, sizesOnly);
    expect(d).toEqual({ added: [], removed: [], changed: [{ path: 'b', from: withDigest.body.files[1]!.sha256, to: null }] });
  });
});

describe('hashing', () => {
  it('hashes files of every size right, around the 1 MiB one-shot/streamed boundary', async () => {
    const root = tempDir();
    const MiB = 1024 * 1024;
    const sizes = [0, 1, MiB - 1, MiB, MiB + 1, 3 * MiB + 5];
    const contents = sizes.map((n, i) => Buffer.alloc(n, i + 1).map((b, j) => (b + j * 7) % 256));
    contents.forEach((c, i) => fs.writeFileSync(path.join(root, `f${i}`), c));
    const { createHash } = await import('node:crypto');
    for (const jobs of [0, 2]) {
      const s = await snapshotRoot(root, { cache: false, jobs });
      expect(s.body.files.map((f) => [f.bytes, f.sha256])).toEqual(contents.map((c) => [c.length, createHash('sha256').update(c).digest('hex')]));
    }
  });
});

describe('scanTreeSync, the uncapped engine', () => {
  it('has no file cap and honours extra always-skipped names', () => {
    const root = tempDir();
    const files: Record<string, string> = { '.aiwg/state.json': '{}' };
    for (let i = 0; i < 60; i++) files[`f${String(i).padStart(3, '0')}`] = String(i);
    writeTree(root, files);
    const r = scanTreeSync(root, { cache: false, alwaysSkip: ['.aiwg'] });
    expect(r.counts.files).toBe(60);
    expect(r.truncated).toBe(false);
    expect(r.files.some((f) => f.path.startsWith('.aiwg'))).toBe(false);
  });
});
