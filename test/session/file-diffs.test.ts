/**
 * calculateFileDiffs cuts every modified file's patch out of ONE `git diff` over the range; each
 * piece must be byte-identical to what a `git diff` of that file alone gives (the per-file call).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_DIFF_CHARS, calculateFileDiffs, runGit } from '../../src/session/capture/git.js';
import { commitAll, git, write, trackedDirs } from './helpers.js';

const { repo, dir: tempDir } = trackedDirs();

/** The per-file call calculateFileDiffs made for every modified file before it used one run. */
function perFileDiff(root: string, from: string, to: string, file: string): string | null {
  return runGit(root, ['diff', '--relative', '--no-color', '--no-ext-diff', '--no-textconv', from, to, '--', file]);
}

const HOSTILE = ['with space.txt', "single'quote.txt", 'double"quote.txt', 'back\\slash.txt', 'new\nline.txt', 'tab\there.txt', 'ünïcödé-日本.txt', '-leading-dash.txt', '*star?.txt', 'diff --git a b.txt'];

/** Runs `fn` with GIT_TRACE writing to a file; returns how many `git diff` processes ran. */
function countGitDiffs(fn: () => void): number {
  const trace = path.join(tempDir('cairn-trace-'), 'trace.log');
  const previous = process.env.GIT_TRACE;
  process.env.GIT_TRACE = trace;
  try {
    fn();
  } finally {
    if (previous === undefined) delete process.env.GIT_TRACE;
    else process.env.GIT_TRACE = previous;
  }
  const log = fs.existsSync(trace) ? fs.readFileSync(trace, 'utf8') : '';
  return log.split('\n').filter((line) => line.includes('trace: built-in: git diff ')).length;
}

/** A per-file diff as calculateFileDiffs keeps it: whole up to MAX_DIFF_CHARS, else cut with a note. */
function cappedLike(full: string): string {
  return full.length <= MAX_DIFF_CHARS ? full : `${full.slice(0, MAX_DIFF_CHARS)}\n[cairn: diff truncated, ${full.length} characters in full; run git diff for the rest]\n`;
}

describe('calculateFileDiffs over many modified files', () => {
  it.skipIf(process.platform === 'win32')('gives each file exactly its own per-file git diff, from two git processes', () => {
    const root = repo();
    const names: string[] = [];
    for (let i = 0; i < 40; i++) names.push(`src/file-${String(i).padStart(2, '0')}.ts`);
    names.push(...HOSTILE.map((name) => `hostile/${name}`));
    for (const name of names) write(root, name, `line one of ${name}\nline two\nline three\n`);
    write(root, 'bin/blob.bin', Buffer.from([0, 1, 2, 3, 255, 0, 7]));
    write(root, 'mode/run.sh', '#!/bin/sh\necho hi\n');
    write(root, 'empty/was-empty.txt', '');
    write(root, 'empty/becomes-empty.txt', 'something\n');
    write(root, 'type/file-then-link.txt', 'plain\n');
    write(root, 'gone/deleted.txt', 'bye\n');
    write(root, 'moved/old-name.txt', 'moving content that is long enough to be a rename\n'.repeat(5));
    write(root, 'no-eol.txt', 'no newline at the end');
    write(root, 'big.txt', 'a\n'.repeat(200_000));
    commitAll(root, 'before');
    const from = git(root, 'rev-parse', 'HEAD').trim();

    for (const name of names) write(root, name, `line one of ${name}\nline 2 changed\nline three\nadded\n`);
    write(root, 'bin/blob.bin', Buffer.from([0, 1, 2, 3, 254, 0, 7, 9]));
    fs.chmodSync(path.join(root, 'mode/run.sh'), 0o755);
    write(root, 'empty/was-empty.txt', 'now has content\n');
    write(root, 'empty/becomes-empty.txt', '');
    fs.rmSync(path.join(root, 'type/file-then-link.txt'));
    fs.symlinkSync('../no-eol.txt', path.join(root, 'type/file-then-link.txt'));
    fs.rmSync(path.join(root, 'gone/deleted.txt'));
    fs.renameSync(path.join(root, 'moved/old-name.txt'), path.join(root, 'moved/new-name.txt'));
    write(root, 'added/new.txt', 'new\n');
    write(root, 'no-eol.txt', 'still no newline at the end');
    write(root, 'big.txt', 'b\n'.repeat(200_000));
    commitAll(root, 'after');
    const to = git(root, 'rev-parse', 'HEAD').trim();

    let diffs: ReturnType<typeof calculateFileDiffs> = [];
    const diffProcesses = countGitDiffs(() => {
      diffs = calculateFileDiffs(root, from, to);
    });
    // One --name-status and one patch run, whatever the number of files.
    expect(diffProcesses).toBe(2);

    const modified = diffs.filter((d) => d.status === 'modified');
    expect(modified.map((d) => d.path).sort()).toEqual(
      [...names, 'bin/blob.bin', 'mode/run.sh', 'empty/was-empty.txt', 'empty/becomes-empty.txt', 'type/file-then-link.txt', 'no-eol.txt', 'big.txt'].sort(),
    );
    expect(diffs).toContainEqual({ path: 'gone/deleted.txt', status: 'deleted' });
    expect(diffs).toContainEqual({ path: 'moved/old-name.txt', status: 'deleted' });
    expect(diffs).toContainEqual({ path: 'moved/new-name.txt', status: 'added' });
    expect(diffs).toContainEqual({ path: 'added/new.txt', status: 'added' });

    for (const entry of modified) {
      const full = perFileDiff(root, from, to, entry.path);
      expect(full, entry.path).not.toBeNull();
      expect(entry.diff, entry.path).toBe(cappedLike(full!));
    }
    expect(modified.find((d) => d.path === 'big.txt')?.diff).toContain('[cairn: diff truncated');
    expect(modified.find((d) => d.path === 'type/file-then-link.txt')?.diff).toMatch(/deleted file mode[\s\S]*new file mode 120000/);
    expect(modified.find((d) => d.path === 'bin/blob.bin')?.diff).toContain('Binary files');
    expect(modified.find((d) => d.path === 'mode/run.sh')?.diff).toContain('new mode 100755');
  });

  it('gives the same per-file diffs from a subdirectory projectRoot (paths relative to it)', () => {
    const root = repo();
    for (let i = 0; i < 12; i++) write(root, `pkg/f${i}.txt`, `v1 ${i}\n`);
    write(root, 'outside.txt', 'v1\n');
    commitAll(root, 'before');
    const from = git(root, 'rev-parse', 'HEAD').trim();
    for (let i = 0; i < 12; i++) write(root, `pkg/f${i}.txt`, `v2 ${i}\n`);
    write(root, 'outside.txt', 'v2\n');
    commitAll(root, 'after');
    const to = git(root, 'rev-parse', 'HEAD').trim();
    const sub = path.join(root, 'pkg');
    const diffs = calculateFileDiffs(sub, from, to);
    expect(diffs.map((d) => d.path)).toEqual(Array.from({ length: 12 }, (_, i) => `f${i}.txt`).sort());
    for (const entry of diffs) {
      expect(entry.status).toBe('modified');
      expect(entry.diff, entry.path).toBe(perFileDiff(sub, from, to, entry.path));
      expect(entry.diff).toContain(`+v2 ${/^f(\d+)\.txt$/.exec(entry.path)![1]!}`);
    }
  });
});
