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

/** An index of `names` at stage 0, each with the blob of its text in `texts` (the empty one when absent), written by git. */
function setIndexWith(root: string, names: readonly string[], texts: ReadonlyMap<string, string>, stages: ReadonlyMap<string, number[]> = new Map()): void {
  fs.rmSync(path.join(root, '.git', 'index'), { force: true });
  const blobOf = (n: string): string => execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: root, input: texts.get(n) ?? '', encoding: 'utf8', env: TEST_GIT_ENV }).trim();
  const lines = names.flatMap((n) => (stages.get(n) ?? [0]).map((s) => `100644 ${blobOf(n)} ${s}\t${n}\0`));
  execFileSync('git', ['update-index', '-z', '--index-info'], { cwd: root, input: lines.join(''), env: TEST_GIT_ENV });
}

/** The names git lists as assume-unchanged (`ls-files -v`: a lowercase tag) in the index file `file`. */
function assumedIn(root: string, file: string): string[] {
  const out = execFileSync('git', ['ls-files', '-v', '-z'], { cwd: root, encoding: 'utf8', env: { ...TEST_GIT_ENV, GIT_INDEX_FILE: file }, maxBuffer: 1 << 26 });
  return [...new Set(out.split('\0').filter((l) => l !== '' && l[0] !== l[0]!.toUpperCase()).map((l) => l.slice(2)))];
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

  it('marks as assume-valid exactly the entries the held index had byte for byte, none at or below a path to look at again, and git reads the copy', () => {
    const root = repo();
    const gitDir = path.join(root, '.git');
    const copyFile = path.join(root, 'copy-index');
    let marks = 0;
    fc.assert(
      fc.property(
        fc.array(NAME, { minLength: 1, maxLength: 25 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        fc.array(fc.nat(), { maxLength: 2 }),
        fc.array(NAME, { maxLength: 3 }),
        (raw, changedAt, recheckAt, conflictAt, extra) => {
          const names = consistent(raw);
          fc.pre(names.length > 0); // (names that are each other's directories leave none, and no index file)
          const pick = (at: readonly number[]): string[] => at.map((k) => names[k % names.length]!);
          const conflicted = new Map(pick(conflictAt).map((n) => [n, [1, 2]]));
          setIndexWith(root, names, new Map(), conflicted);
          const held = IndexNames.current(gitDir, null)!;
          // Some entries get another blob; the index is a new file either way.
          const changed = new Set(pick(changedAt));
          setIndexWith(root, names, new Map([...changed].map((n) => [n, `changed ${n}\n`])), conflicted);
          const now = IndexNames.current(gitDir, held)!;
          expect(now).not.toBe(held);
          // Paths to look at again: some names, a directory above one, names not in the index.
          const recheck = [...pick(recheckAt), ...pick(recheckAt).filter((n) => n.includes('/')).map((n) => n.slice(0, n.lastIndexOf('/'))), ...extra];
          const under = (n: string): boolean => recheck.some((r) => n === r || n.startsWith(`${r}/`));
          const copy = now.assumeValidCopy(held, recheck)!;
          const want = names.filter((n) => !changed.has(n) && !conflicted.has(n) && !under(n));
          expect(copy.marked).toBe(want.length);
          fs.writeFileSync(copyFile, copy.bytes);
          expect(assumedIn(root, copyFile).sort()).toEqual(want.sort());
          expect(copy.bytes.subarray(copy.bytes.length - 20).every((b) => b === 0)).toBe(true);
          // The same file as the held one: nothing differs, so only the paths to look at again stay unmarked.
          const same = now.assumeValidCopy(now, recheck)!;
          expect(same.marked).toBe(names.filter((n) => !conflicted.has(n) && !under(n)).length);
          marks += copy.marked;
        },
      ),
      { numRuns: 40 },
    );
    expect(marks).toBeGreaterThan(0);
  });

  it('marks nothing already assume-unchanged, intent-to-add or a gitlink, and no index under the file system monitor', () => {
    const root = repo();
    const gitDir = path.join(root, '.git');
    setIndex(root, ['a.txt', 'b.txt', 'c.txt']);
    git(root, 'update-index', '--assume-unchanged', 'b.txt');
    fs.writeFileSync(path.join(root, 'new.txt'), 'n\n');
    git(root, 'add', '-N', 'new.txt');
    const blob = git(root, 'hash-object', '-w', '--stdin').trim();
    execFileSync('git', ['update-index', '--add', '--cacheinfo', `160000,${blob},sub`], { cwd: root, env: TEST_GIT_ENV });
    const names = IndexNames.current(gitDir, null)!;
    const copy = names.assumeValidCopy(names, [])!;
    expect(copy.marked).toBe(2); // a.txt and c.txt; b.txt keeps the mark it had
    const file = path.join(root, 'copy-index');
    fs.writeFileSync(file, copy.bytes);
    expect(assumedIn(root, file).sort()).toEqual(['a.txt', 'b.txt', 'c.txt']);
    // A monitor hook that says everything may have changed: git still writes its extension.
    const hook = path.join(root, 'monitor.sh');
    fs.writeFileSync(hook, '#!/bin/sh\nprintf "token\\0/\\0"\n', { mode: 0o755 });
    git(root, 'config', 'core.fsmonitor', hook);
    git(root, 'update-index', '--fsmonitor');
    const raw = fs.readFileSync(path.join(gitDir, 'index'));
    expect(raw.includes(Buffer.from('FSMN'))).toBe(true);
    const monitored = IndexNames.current(gitDir, null)!;
    expect(monitored.size).toBe(5);
    expect(monitored.assumeValidCopy(monitored, [])).toBeNull();
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
