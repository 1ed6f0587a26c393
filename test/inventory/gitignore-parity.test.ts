import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isIgnored, parseGitignore, type GitignoreFile } from '../../src/inventory/rules/gitignore.js';

/**
 * Git parity: on real git repositories, the files a walker keeps with our matcher equal
 * `git ls-files -co --exclude-per-directory=.gitignore` (machine-local sources switched off).
 */

const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', LC_ALL: 'C' };

function git(cwd: string, args: string[]): string {
  const r = spawnSync('git', ['-c', 'core.excludesFile=', '-c', 'core.ignorecase=false', ...args], {
    cwd,
    encoding: 'utf8',
    env: GIT_ENV,
    maxBuffer: 512 * 1024 * 1024,
  });
  if (r.error || r.status !== 0) throw new Error(`git ${args.join(' ')} failed in ${cwd}: ${r.stderr}`);
  return r.stdout;
}

function nulList(out: string): string[] {
  return out.split('\0').filter((s) => s !== '');
}

/** What git lists: tracked and untracked files that its .gitignore rules do not exclude. */
function gitListing(repo: string): string[] {
  return nulList(git(repo, ['ls-files', '-co', '--exclude-per-directory=.gitignore', '-z'])).sort();
}

/**
 * The scanner's walk, reduced to ignore handling: read each directory's .gitignore (a regular
 * file only), prune ignored directories, never enter `.git`, treat symlinks as non-directories.
 */
function referenceWalk(root: string): string[] {
  const kept: string[] = [];
  const visit = (dirRel: string, parentStack: readonly GitignoreFile[]): void => {
    const abs = dirRel === '' ? root : path.join(root, dirRel);
    let stack = parentStack;
    const gitignorePath = path.join(abs, '.gitignore');
    if (fs.lstatSync(gitignorePath, { throwIfNoEntry: false })?.isFile()) {
      stack = [...parentStack, parseGitignore(fs.readFileSync(gitignorePath, 'utf8'), dirRel)];
    }
    for (const entry of fs.readdirSync(abs, { withFileTypes: true })) {
      const rel = dirRel === '' ? entry.name : `${dirRel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name === '.git') continue;
        if (!isIgnored(stack, rel, true)) visit(rel, stack);
      } else if (!isIgnored(stack, rel, false)) {
        kept.push(rel);
      }
    }
  };
  visit('', []);
  return kept.sort();
}

let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-gitignore-parity-'));
});
afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

let repoCounter = 0;
/** A fresh `git init` repo with these files (path → content); nothing is committed. */
function makeRepo(files: Record<string, string>, symlinks: Record<string, string> = {}): string {
  const repo = path.join(tmp, `repo-${repoCounter++}`);
  fs.mkdirSync(repo);
  git(repo, ['init', '-q']);
  for (const [rel, content] of Object.entries(files)) {
    const abs = path.join(repo, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, content);
  }
  for (const [rel, target] of Object.entries(symlinks)) fs.symlinkSync(target, path.join(repo, rel));
  return repo;
}

const TRAP_TREE: Record<string, string> = {
  '.gitignore': [
    '# comments and blank lines are not rules',
    '',
    '*.log',
    '!keep.log',
    'build/',
    '/root-only.txt',
    'docs/**/*.tmp',
    'node_modules/',
    'trailing.txt   ',
    'esc\\ aped\\ ',
    '\\#hash',
    '\\!bang',
    'logs/**',
    '!logs/important/',
    'vendor/',
    '!vendor/keep.txt',
    'ignored-dir/',
    'a/**/z',
    '[Bb]in-*.o',
    'file[0-9].dat',
    'name[!a].x',
    'q[]]x',
    'q[[:digit:]]y',
    'cache**/x',
    'dironly/',
    'linkdir/',
    'café/',
    '?.one',
    '*.swp',
    '',
  ].join('\n'),
  'keep.log': '',
  'a.log': '',
  'src/a.log': '',
  'src/keep.log': '',
  'src/main.ts': '',
  'build/out.js': '',
  'src/build/x.js': '',
  'lib/build': 'a file named like a dir-only rule',
  'root-only.txt': '',
  'src/root-only.txt': '',
  'docs/x.tmp': '',
  'docs/a/b/y.tmp': '',
  'docs/keep.md': '',
  'other/docs/x.tmp': '',
  'node_modules/dep/index.js': '',
  'pkg/node_modules/dep/index.js': '',
  'deep/er/node_modules/x.js': '',
  'trailing.txt': '',
  'trailing.txt ': '',
  'esc aped ': '',
  'esc aped': '',
  '#hash': '',
  '!bang': '',
  'bang': '',
  'logs/a.txt': '',
  'logs/important/b.txt': '',
  'vendor/keep.txt': 'cannot be re-included: its directory is ignored',
  'ignored-dir/.gitignore': '!*\n',
  'ignored-dir/kept-by-nothing.txt': '',
  'a/z': '',
  'a/b/z': '',
  'a/b/c/z': '',
  'a/zz': '',
  'Bin-1.o': '',
  'bin-2.o': '',
  'cin-3.o': '',
  'file1.dat': '',
  'filex.dat': '',
  'nameb.x': '',
  'namea.x': '',
  'q]x': '',
  'q1y': '',
  'qay': '',
  'cache/x': '',
  'cachex': '',
  'cache-dir/y': '',
  '.x.swp': '',
  'dironly': 'a file: dir-only rules do not match it',
  'sub/dironly/f': '',
  'my dir/é file.txt': '',
  'résumé.log': '',
  'café/x': '',
  'cafe\u0301/x': 'NFD spelling: different bytes, not ignored',
  'a.one': '',
  'é.one': 'two bytes: ? does not match',
  'sub/.gitignore': '!*.log\n/local-only\n*.tmp\n!important.tmp\ngenerated/\n',
  'sub/debug.log': '',
  'sub/deeper/more.log': '',
  'sub/local-only': '',
  'sub/x/local-only': '',
  'sub/a.tmp': '',
  'sub/important.tmp': '',
  'sub/generated/g.js': '',
  'sub/deep/.gitignore': '*\n!*/\n!*.keep\n',
  'sub/deep/a.txt': '',
  'sub/deep/b.keep': '',
  'sub/deep/inner/c.keep': '',
  'sub/deep/inner/d.txt': '',
  'sub/deep/inner/e.txt': '',
  // Ignored itself by the parent's `*`, yet git still reads it.
  'sub/deep/inner/.gitignore': '!d.txt\n',
};

describe('git parity on a tree full of ignore-rule traps', () => {
  it('keeps exactly the files git ls-files keeps', () => {
    const repo = makeRepo(TRAP_TREE, { 'linkdir': 'src', 'link-to-build': 'build' });
    const expected = gitListing(repo);
    // The fixture must exercise both sides of the traps, or parity would prove little.
    expect(expected).toEqual(expect.arrayContaining(['keep.log', 'lib/build', 'dironly', 'linkdir', 'sub/debug.log', 'sub/deep/inner/d.txt', 'trailing.txt ', 'esc aped', 'cafe\u0301/x', 'é.one']));
    for (const gone of ['a.log', 'vendor/keep.txt', 'logs/important/b.txt', 'pkg/node_modules/dep/index.js', 'sub/deep/inner/e.txt', 'sub/deep/inner/.gitignore', 'esc aped ', 'cache/x', 'cachex', 'a.one']) {
      expect(expected).not.toContain(gone);
    }
    expect(referenceWalk(repo)).toEqual(expected);
  });

  it('agrees with git on a repository that has no .gitignore at all', () => {
    const repo = makeRepo({ 'a.txt': '', 'b/c.log': '', 'node_modules/x.js': '' });
    expect(referenceWalk(repo)).toEqual(gitListing(repo));
    expect(referenceWalk(repo)).toEqual(['a.txt', 'b/c.log', 'node_modules/x.js']);
  });
});

// ---- property: random trees and random rules from a grammar of traps ----

const NAMES = ['a', 'b', 'ab', 'a.log', 'b.txt', 'x y', 'é', 'e\u0301', 'ÿ.log', '[x]', '#h', '!b', 'c ', 'node_modules', 'build', '.hidden', 'A', 'deep', 'f1.dat', 'q]', 'a\\b', 'keep.log', 'z'];
const PATTERN_SEGMENTS = [
  ...NAMES,
  '*',
  '?',
  '**',
  '***',
  '*.log',
  'a*',
  '*b',
  '[a-c]',
  '[!a]*',
  '[^ab]',
  '[]x]*',
  '[[:alpha:]]*',
  '[[:space:]]*',
  'b?',
  '??',
  '\\#h',
  '\\!b',
  'c\\ ',
  '*[xy]*',
  'a\\*',
  'deep**',
  '**b',
];

const treeArb = fc.array(fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 30 });

// A third of the rule segments are names from the tree at hand, so that rules actually hit something.
function ruleArb(treeNames: readonly string[]): fc.Arbitrary<string> {
  const segment = fc.oneof({ arbitrary: fc.constantFrom(...treeNames), weight: 1 }, { arbitrary: fc.constantFrom(...PATTERN_SEGMENTS), weight: 2 });
  return fc
    .record({
      negated: fc.boolean(),
      anchored: fc.boolean(),
      segments: fc.array(segment, { minLength: 1, maxLength: 3 }),
      dirOnly: fc.boolean(),
      trailing: fc.constantFrom('', '', ' ', '  ', '\r'),
    })
    .map((r) => `${r.negated ? '!' : ''}${r.anchored ? '/' : ''}${r.segments.join('/')}${r.dirOnly ? '/' : ''}${r.trailing}`);
}

const scenarioArb = treeArb.chain((paths) =>
  fc.tuple(
    fc.constant(paths),
    fc.array(fc.record({ dirPick: fc.nat(), rules: fc.array(ruleArb([...new Set(paths.flat())]), { minLength: 1, maxLength: 8 }) }), { minLength: 1, maxLength: 4 }),
  ),
);

/** Files for a random tree: a path is dropped when one of its prefixes is already a file, or vice versa. */
function treeFiles(paths: string[][]): { files: Record<string, string>; dirs: string[] } {
  const fileSet = new Set<string>();
  const dirSet = new Set<string>(['']);
  for (const parts of paths) {
    const prefixes = parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('/'));
    const full = parts.join('/');
    if (prefixes.some((p) => fileSet.has(p)) || dirSet.has(full)) continue;
    prefixes.forEach((p) => dirSet.add(p));
    fileSet.add(full);
  }
  return { files: Object.fromEntries([...fileSet].map((f) => [f, ''])), dirs: [...dirSet].sort() };
}

// CAIRN_PARITY_RUNS=2000 explores much further (minutes); the default keeps the suite quick.
const PARITY_RUNS = Number(process.env.CAIRN_PARITY_RUNS ?? 50);

describe('git parity, property-based', () => {
  it('random trees with random trap rules at random depths: same files as git', { timeout: Math.max(60_000, PARITY_RUNS * 1_000) }, () => {
    fc.assert(
      fc.property(scenarioArb, ([paths, gitignores]) => {
        const { files, dirs } = treeFiles(paths);
        for (const { dirPick, rules } of gitignores) {
          const dir = dirs[dirPick % dirs.length]!;
          const key = dir === '' ? '.gitignore' : `${dir}/.gitignore`;
          files[key] = `${files[key] ?? ''}${rules.join('\n')}\n`;
        }
        // Symlinks to directories are files to git: dir-only rules must not match them.
        const symlinks: Record<string, string> = {};
        for (const name of ['build', 'x y']) {
          if (!(name in files) && !dirs.includes(name) && dirs.length > 1) symlinks[name] = dirs[1]!;
        }
        const repo = makeRepo(files, symlinks);
        try {
          expect(referenceWalk(repo)).toEqual(gitListing(repo));
        } finally {
          fs.rmSync(repo, { recursive: true, force: true });
        }
      }),
      { numRuns: PARITY_RUNS },
    );
  });
});

// ---- path-level parity with git check-ignore on star-heavy patterns ----

describe('git check-ignore parity, property-based', () => {
  it('patterns dense in *, **, ? and classes decide every path as git does', { timeout: Math.max(60_000, PARITY_RUNS * 2_000) }, () => {
    const repo = makeRepo({});
    // Segments dense in wildcards, so that many patterns take the automaton path (3+ stars).
    const token = fc.constantFrom('a', 'b', '*', '*', '**', '?', '[ab]', '[!a]', '\\*');
    const patternSegment = fc.array(token, { minLength: 1, maxLength: 4 }).map((t) => t.join(''));
    const patternArb = fc
      .tuple(fc.boolean(), fc.array(patternSegment, { minLength: 1, maxLength: 3 }))
      .map(([anchored, segments]) => `${anchored ? '/' : ''}${segments.join('/')}`);
    const pathSegment = fc.array(fc.constantFrom('a', 'b', '*'), { minLength: 1, maxLength: 5 }).map((c) => c.join(''));
    const pathArb = fc.array(pathSegment, { minLength: 1, maxLength: 4 }).map((segments) => segments.join('/'));
    fc.assert(
      fc.property(fc.array(patternArb, { minLength: 1, maxLength: 4 }), fc.uniqueArray(pathArb, { minLength: 1, maxLength: 40 }), (patterns, paths) => {
        const text = `${patterns.join('\n')}\n`;
        fs.writeFileSync(path.join(repo, '.gitignore'), text);
        const r = spawnSync('git', ['-c', 'core.excludesFile=', 'check-ignore', '--no-index', '-z', '--stdin'], { cwd: repo, encoding: 'utf8', env: GIT_ENV, input: `${paths.join('\0')}\0` });
        if (r.status !== 0 && r.status !== 1) throw new Error(r.stderr);
        const gitIgnored = new Set(nulList(r.stdout));
        const file = parseGitignore(text, '');
        // check-ignore, like a walk, treats everything below an ignored directory as ignored.
        const ignoredWithParents = (p: string): boolean => {
          const parts = p.split('/');
          for (let i = 1; i < parts.length; i++) if (isIgnored([file], parts.slice(0, i).join('/'), true)) return true;
          return isIgnored([file], p, false);
        };
        for (const p of paths) expect([p, ignoredWithParents(p)]).toEqual([p, gitIgnored.has(p)]);
      }),
      { numRuns: PARITY_RUNS * 2 },
    );
  });
});

// ---- this repository itself (read-only) ----

describe('git parity on this repository', () => {
  const repoRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
  const isGitRepo = fs.existsSync(path.join(repoRoot, '.git'));

  it.runIf(isGitRepo)('keeps exactly the files git keeps (tracked-but-ignored files aside)', () => {
    // Other work may change the tree while we look, so take git's view before and after the walk
    // and retry until both agree; only a stable snapshot is a fair comparison.
    for (let attempt = 0; attempt < 5; attempt++) {
      const before = repoListing(repoRoot);
      const walked = referenceWalk(repoRoot);
      const after = repoListing(repoRoot);
      if (JSON.stringify(before) !== JSON.stringify(after)) continue;
      expect(walked.length).toBeGreaterThan(10);
      expect(walked).toEqual(before);
      return;
    }
    throw new Error('the repository kept changing during five attempts; rerun when it is quiet');
  });
});

/**
 * git's listing of this repository as an inventory would see it: tracked files that still exist
 * and are not ignored (a tracked file that a rule ignores is outside the parity contract),
 * plus untracked files that no .gitignore excludes.
 */
function repoListing(repo: string): string[] {
  const trackedIgnored = new Set(nulList(git(repo, ['ls-files', '-ci', '--exclude-per-directory=.gitignore', '-z'])));
  const listed = new Set(gitListing(repo));
  return [...listed].filter((p) => !trackedIgnored.has(p) && fs.lstatSync(path.join(repo, p), { throwIfNoEntry: false }) !== undefined).sort();
}
