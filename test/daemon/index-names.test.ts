/**
 * Issue 21: a resident process reads git's index itself to keep the untracked list between
 * captures (src/daemon/index-names.ts). Every answer is checked against git's own listing of the
 * same index, built by git from random names (non-ASCII, deep, long, conflicted, intent-to-add),
 * and every index it cannot read exactly (version 4, split) must be refused, not misread.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IndexNames } from '../../src/daemon/index-names.js';
import { TEST_GIT_ENV } from '../support/git.js';
import { git, trackedDirs } from '../session/helpers.js';

const { repo } = trackedDirs();

/** An index holding exactly `names` (stage 0, the empty blob), written by git itself. */
function setIndex(root: string, names: readonly string[], stages: ReadonlyMap<string, number[]> = new Map()): void {
  fs.rmSync(path.join(root, '.git', 'index'), { force: true });
  const blob = git(root, 'hash-object', '-w', '--stdin').trim();
  const lines = names.flatMap((n) => (stages.get(n) ?? [0]).map((s) => `100644 ${blob} ${s}\t${n}\0`));
  execFileSync('git', ['update-index', '-z', '--index-info'], { cwd: root, input: lines.join(''), env: TEST_GIT_ENV });
}

/** git's own list of the index's names (each once). */
function gitNames(root: string): string[] {
  const out = execFileSync('git', ['ls-files', '-z', '--stage'], { cwd: root, encoding: 'utf8', env: TEST_GIT_ENV, maxBuffer: 1 << 26 });
  return [...new Set(out.split('\0').filter((l) => l !== '').map((l) => l.slice(l.indexOf('\t') + 1)))];
}

const SEGMENT = fc.oneof(
  fc.constantFrom('a', 'b', 'src', 'z', 'Z', 'é', 'ファイル', 'a b', 'a.b', 'a-b', 'a_b', '0', '~x', '[x]', '*'),
  fc.string({ minLength: 1, maxLength: 6 }).filter((s) => !s.includes('/') && !s.includes('\0') && s !== '.' && s !== '..' && s !== '.git' && !/^\s|\s$/.test(s) && !s.includes('\n')),
);
const NAME = fc.array(SEGMENT, { minLength: 1, maxLength: 4 }).map((s) => s.join('/'));

/** Names git accepts together: none is a directory of another. */
function consistent(names: readonly string[]): string[] {
  const sorted = [...new Set(names)].sort();
  const set = new Set(sorted);
  return sorted.filter((n) => !n.split('/').some((_s, i, parts) => i > 0 && set.has(parts.slice(0, i).join('/'))) && !sorted.some((m) => m.startsWith(`${n}/`)));
}

describe('IndexNames: the names of a git index, read without git', () => {
  it('holds exactly the names git lists, for random names; says which left between two indexes', () => {
    const root = repo();
    const gitDir = path.join(root, '.git');
    fc.assert(
      fc.property(fc.array(NAME, { maxLength: 25 }), fc.array(NAME, { maxLength: 25 }), fc.array(NAME, { maxLength: 5 }), (a, b, probes) => {
        const first = consistent(a);
        const second = consistent([...b, ...first.filter((_n, i) => i % 2 === 0)]).filter((n) => !first.some((m) => m.startsWith(`${n}/`) || n.startsWith(`${m}/`)) || first.includes(n));
        setIndex(root, first);
        const older = IndexNames.current(gitDir, null)!;
        const listed = gitNames(root);
        expect(older.size).toBe(listed.length);
        for (const n of [...listed, ...probes, ...listed.map((n) => `${n}x`), ...listed.map((n) => n.slice(0, -1))]) expect(older.has(n), n).toBe(listed.includes(n));
        for (const n of [...listed, ...probes]) {
          const dir = n.includes('/') ? n.slice(0, n.lastIndexOf('/')) : n;
          expect(older.hasUnder(dir), dir).toBe(listed.some((m) => m.startsWith(`${dir}/`)));
        }
        setIndex(root, second);
        const newer = IndexNames.current(gitDir, older)!;
        const now = gitNames(root);
        expect(newer.removedSince(older).sort()).toEqual(listed.filter((n) => !now.includes(n)).sort());
        expect(older.removedSince(newer).sort()).toEqual(now.filter((n) => !listed.includes(n)).sort());
      }),
      { numRuns: 60 },
    );
  });

  it('counts a conflicted path once, reads long names and intent-to-add entries (version 3), and reuses what it read while the file is the same', () => {
    const root = repo();
    const gitDir = path.join(root, '.git');
    const long = `${'d'.repeat(200)}/${'e'.repeat(200)}/`.repeat(12) + 'f.txt'; // over 4095 bytes: the flags cannot hold its length
    setIndex(root, ['a.txt', 'b.txt', long, 'c.txt'], new Map([['b.txt', [1, 2, 3]]]));
    fs.writeFileSync(path.join(root, 'new.txt'), 'n\n');
    git(root, 'add', '-N', 'new.txt');
    expect(fs.readFileSync(path.join(gitDir, 'index')).readUInt32BE(4)).toBe(3);
    const names = IndexNames.current(gitDir, null)!;
    expect(names.size).toBe(5);
    for (const n of ['a.txt', 'b.txt', long, 'c.txt', 'new.txt']) expect(names.has(n), n.slice(0, 20)).toBe(true);
    expect(names.hasUnder('d'.repeat(200))).toBe(true);
    expect(names.gitlinks).toBe(false);
    expect(IndexNames.current(gitDir, names)).toBe(names);
    git(root, 'rm', '-q', '--cached', 'a.txt');
    const after = IndexNames.current(gitDir, names)!;
    expect(after).not.toBe(names);
    expect(after.removedSince(names)).toEqual(['a.txt']);
  });

  it('says whether a gitlink is in the index', () => {
    const root = repo();
    const blob = git(root, 'hash-object', '-w', '--stdin').trim();
    execFileSync('git', ['update-index', '--add', '--cacheinfo', `160000,${blob},sub`], { cwd: root, env: TEST_GIT_ENV });
    expect(IndexNames.current(path.join(root, '.git'), null)!.gitlinks).toBe(true);
  });

  it('reads no names and refuses nothing when there is no index yet, and refuses a version 4, a split and a damaged index', () => {
    const root = repo();
    const gitDir = path.join(root, '.git');
    const none = IndexNames.current(gitDir, null)!;
    expect([none.size, none.has('a')]).toEqual([0, false]);
    setIndex(root, ['a', 'b/c']);
    expect(IndexNames.current(gitDir, null)?.size).toBe(2);
    git(root, 'update-index', '--index-version', '4');
    expect(IndexNames.current(gitDir, null)).toBeNull();
    git(root, 'update-index', '--index-version', '2');
    git(root, 'update-index', '--split-index');
    expect(fs.readdirSync(gitDir).some((n) => n.startsWith('sharedindex.'))).toBe(true);
    expect(IndexNames.current(gitDir, null)).toBeNull();
    git(root, 'update-index', '--no-split-index');
    const good = fs.readFileSync(path.join(gitDir, 'index'));
    expect(IndexNames.current(gitDir, null)?.size).toBe(2);
    fs.writeFileSync(path.join(gitDir, 'index'), good.subarray(0, good.length - 30));
    expect(IndexNames.current(gitDir, null)).toBeNull();
  });

  it('reads a sha256 repository\'s index (32-byte ids)', () => {
    const root = repo();
    fs.rmSync(path.join(root, '.git'), { recursive: true });
    git(root, 'init', '-q', '--object-format=sha256');
    setIndex(root, ['x/y', 'z']);
    const names = IndexNames.current(path.join(root, '.git'), null)!;
    expect([names.size, names.has('x/y'), names.has('z'), names.has('x')]).toEqual([2, true, true, false]);
  });
});
