import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isIgnored, parseGitignore, type GitignoreFile } from '../../src/inventory/rules/gitignore.js';

/**
 * One rule kind per case: the .gitignore files (by directory) and, for each path, whether git
 * ignores it. The expectations are checked twice: against our matcher, and against real git
 * (`git check-ignore`), so a wrong expectation cannot hide a wrong matcher.
 * Paths ending in `/` are directories. No path here sits inside an ignored directory.
 */
interface RuleCase {
  name: string;
  gitignores: Record<string, string>;
  ignored: string[];
  kept: string[];
}

const CASES: RuleCase[] = [
  {
    name: 'blank lines and # comments are not rules; \\# matches a leading #',
    gitignores: { '': '\n# hash.txt\n\n\\#escaped.txt\n   \n' },
    ignored: ['#escaped.txt'],
    kept: ['# hash.txt', 'hash.txt', '\\#escaped.txt', 'escaped.txt'],
  },
  {
    name: 'trailing spaces are stripped unless escaped with a backslash; tabs are kept',
    gitignores: { '': 'plain.txt   \nkeep-one\\ \nkeep-one-more\\  \ntabbed\t\n' },
    ignored: ['plain.txt', 'keep-one ', 'keep-one-more ', 'tabbed\t'],
    kept: ['plain.txt ', 'keep-one', 'keep-one-more  ', 'tabbed'],
  },
  {
    name: 'CRLF line ends and a byte-order mark do not become part of a pattern',
    gitignores: { '': '\ufeffbom.txt\r\ncrlf.txt\r\nlast.txt' },
    ignored: ['bom.txt', 'crlf.txt', 'last.txt'],
    kept: ['\ufeffbom.txt', 'last.txt\r'.slice(0, -1) + '_'],
  },
  {
    name: '! negates: the last matching rule wins, and \\! matches a literal !',
    gitignores: { '': '*.log\n!keep.log\n\\!bang.txt\n!late.tmp\n*.tmp\n' },
    ignored: ['a.log', 'deep/b.log', '!bang.txt', 'late.tmp', 'x.tmp'],
    kept: ['keep.log', 'deep/keep.log', 'bang.txt'],
  },
  {
    name: 'literal and wildcard lines interleave: the last matching line wins, whatever its kind',
    gitignores: { '': '*.log\n!a.log\na.*\n!b.log\nc.txt\n!c.*\nd/e.txt\n!d/*.txt\n' },
    ignored: ['a.log', 'z.log', 'a.txt'],
    kept: ['b.log', 'c.txt', 'd/e.txt', 'd/f.txt'],
  },
  {
    name: 'a trailing / matches directories only, at any depth',
    gitignores: { '': 'build/\nnode_modules/\nout/\n' },
    ignored: ['build/', 'node_modules/', 'pkg/node_modules/', 'a/b/c/node_modules/', 'src/build/'],
    kept: ['out', 'lib/build', 'lib/node_modules', 'pkg/out'],
  },
  {
    name: 'a leading / anchors to the .gitignore directory',
    gitignores: { '': '/root-only.txt\n/dir/\n' },
    ignored: ['root-only.txt', 'dir/'],
    kept: ['sub/root-only.txt', 'sub/dir/', 'sub/x/dir'],
  },
  {
    name: 'a / in the middle anchors too; a name without / matches at any depth',
    gitignores: { '': 'docs/draft.md\nanywhere.txt\n' },
    ignored: ['docs/draft.md', 'anywhere.txt', 'a/anywhere.txt', 'a/b/anywhere.txt'],
    kept: ['x/docs/draft.md', 'docs/final.md'],
  },
  {
    name: 'patterns of a nested .gitignore are relative to its own directory',
    gitignores: { sub: '/local.txt\nnested/file.txt\nname.txt\n' },
    ignored: ['sub/local.txt', 'sub/nested/file.txt', 'sub/name.txt', 'sub/deep/name.txt'],
    kept: ['local.txt', 'sub/deep/local.txt', 'nested/file.txt', 'name.txt', 'sub/x/nested/file.txt'],
  },
  {
    name: 'a deeper .gitignore overrides a shallower one, both ways',
    gitignores: { '': '*.log\nsecret.txt\n', sub: '!*.log\n', 'sub/deeper': '*.log\n!secret.txt\n' },
    ignored: ['a.log', 'other/a.log', 'sub/deeper/a.log', 'secret.txt', 'sub/secret.txt'],
    kept: ['sub/a.log', 'sub/x/a.log', 'sub/deeper/secret.txt'],
  },
  {
    name: '**/ leading matches at any depth, including the top',
    gitignores: { '': '**/foo\n**/bar/baz\n' },
    ignored: ['foo', 'a/foo', 'a/b/foo', 'bar/baz', 'x/bar/baz'],
    kept: ['foofoo', 'a/xfoo', 'bar/x/baz'],
  },
  {
    name: 'a trailing /** matches everything inside but not the directory itself',
    gitignores: { '': 'abc/**\n' },
    ignored: ['abc/x', 'abc/d/'],
    kept: ['abc/', 'x/abc/y'],
  },
  {
    name: '/**/ in the middle matches zero or more directories',
    gitignores: { '': 'a/**/b\n' },
    ignored: ['a/b', 'a/x/b', 'a/x/y/b'],
    kept: ['ab', 'a/xb', 'x/a/b'],
  },
  {
    name: 'other ** are a plain *, except right after the literal prefix (git quirk)',
    gitignores: { '': 'x/a**b\nstar**\n*z**/f\nlit**/g\nzz/ab**\n' },
    ignored: ['x/ab', 'x/aqqb', 'starry', 'q/starry', 'yz/f', 'z/f', 'litq/g', 'lit/g', 'litg', 'litq/r/g', 'zz/abc/d'],
    kept: ['x/aq/b', 'y/z/f', 'z/g'],
  },
  {
    name: '* and ? do not cross /',
    gitignores: { '': '*.txt\nd/*.md\n?.c\n' },
    ignored: ['a.txt', 'deep/a.txt', 'd/a.md', 'a.c', 'x/b.c'],
    kept: ['d/e/a.md', 'ab.c', '.c'],
  },
  {
    name: '? matches one byte, as git does, so a two-byte character needs ??',
    gitignores: { '': '?.one\n??.two\n' },
    ignored: ['a.one', 'é.two', 'ab.two'],
    kept: ['é.one', 'a.two'],
  },
  {
    name: 'bracket classes: ranges, negation with ! and ^, ] first, escapes, a literal -',
    gitignores: { '': 'r[a-c].x\nn[!a].x\nc[^a].x\nb[]].x\nnb[!]].x\nd[a-].x\ne[\\]q].x\nf[x-z-].x\n' },
    ignored: ['rb.x', 'nb.x', 'cb.x', 'b].x', 'nbq.x', 'd-.x', 'da.x', 'e].x', 'eq.x', 'fy.x', 'f-.x'],
    kept: ['rd.x', 'na.x', 'ca.x', 'bq.x', 'nb].x', 'db.x', 'e\\.x', 'fw.x'],
  },
  {
    name: 'POSIX classes in brackets; an unknown class or an unterminated [ matches nothing',
    gitignores: { '': 'a[[:digit:]].x\nb[[:alpha:][:digit:]].x\nc[[:upper:]].x\nd[[:nope:]].x\ne[ab\nf[[:alpha].x\n' },
    ignored: ['a1.x', 'bz.x', 'b7.x', 'cQ.x', 'f[.x', 'f:.x', 'fh.x'],
    kept: ['aa.x', 'b_.x', 'cq.x', 'da.x', 'd[[:nope:]].x', 'ea', 'e[ab', 'fz.x'],
  },
  {
    name: 'matching is case-sensitive',
    gitignores: { '': '*.LOG\nReadme\n' },
    ignored: ['a.LOG', 'Readme'],
    kept: ['a.log', 'README', 'readme'],
  },
  {
    name: 'backslash escapes any character; a trailing lone backslash matches nothing',
    gitignores: { '': 'star\\*.txt\nq\\?.txt\nlone\\\n' },
    ignored: ['star*.txt', 'q?.txt'],
    kept: ['starx.txt', 'qx.txt', 'lone', 'lone\\'],
  },
  {
    name: 'star-heavy patterns match as git does',
    gitignores: { '': '*a*a*a*a*a*a*b\n**/x*y*z*/**/q\nd/**/*e*e*e*\n**/k*k*\n' },
    ignored: ['aaaaaab', 'xaxaxaxaxaxab', 'sub/aaaaaaab', 'x1y2z3/q', 'w/xyz/k/q', 'd/e/eee', 'd/f/g/e1e2e3', 'kk', 'z/kak'],
    // Kept short: git 2.39's own wildmatch backtracks exponentially here (see the long-name test below).
    kept: ['a'.repeat(16), `${'a'.repeat(12)}c`, 'aaaaab', 'xyz/r', 'xy/q', 'd/ee', 'd/f/ee', 'bkk', 'z/bkk/'],
  },
  {
    name: 'non-ASCII names and names with spaces match literally',
    gitignores: { '': 'café/\nmy file.txt\n日本*.md\n' },
    ignored: ['café/', 'x/café/', 'my file.txt', '日本語.md'],
    kept: ['cafe/', 'my  file.txt', '日.md'],
  },
];

function isDirPath(p: string): boolean {
  return p.endsWith('/');
}

function bare(p: string): string {
  return isDirPath(p) ? p.slice(0, -1) : p;
}

function parentsOf(p: string): string[] {
  const parts = bare(p).split('/');
  const out = [''];
  for (let i = 1; i < parts.length; i++) out.push(parts.slice(0, i).join('/'));
  return out;
}

function stackFor(files: Map<string, GitignoreFile>, p: string): GitignoreFile[] {
  return parentsOf(p).flatMap((dir) => {
    const file = files.get(dir);
    return file ? [file] : [];
  });
}

function parsedCase(c: RuleCase): Map<string, GitignoreFile> {
  return new Map(Object.entries(c.gitignores).map(([dir, text]) => [dir, parseGitignore(text, dir)]));
}

describe('gitignore rule kinds (our matcher)', () => {
  for (const c of CASES) {
    it(c.name, () => {
      const files = parsedCase(c);
      const verdict = (p: string) => isIgnored(stackFor(files, p), bare(p), isDirPath(p));
      expect(c.ignored.filter((p) => !verdict(p))).toEqual([]);
      expect(c.kept.filter((p) => verdict(p))).toEqual([]);
    });
  }
});

describe('gitignore rule kinds (confirmed by real git check-ignore)', () => {
  let tmp: string;
  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-gitignore-'));
  });
  afterAll(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  for (const [index, c] of CASES.entries()) {
    it(c.name, () => {
      const repo = path.join(tmp, String(index));
      fs.mkdirSync(repo);
      git(repo, ['init', '-q']);
      for (const [dir, text] of Object.entries(c.gitignores)) {
        fs.mkdirSync(path.join(repo, dir), { recursive: true });
        fs.writeFileSync(path.join(repo, dir, '.gitignore'), text);
      }
      const all = [...c.ignored, ...c.kept];
      for (const p of all) {
        const abs = path.join(repo, bare(p));
        fs.mkdirSync(isDirPath(p) ? abs : path.dirname(abs), { recursive: true });
        if (!isDirPath(p)) fs.writeFileSync(abs, '');
      }
      const out = git(repo, ['check-ignore', '--no-index', '-z', '--stdin'], all.map(bare).join('\0') + '\0');
      const gitIgnored = new Set(out.split('\0').filter((s) => s !== ''));
      expect(all.filter((p) => gitIgnored.has(bare(p))).sort()).toEqual([...c.ignored].sort());
    });
  }
});

describe('GitignoreFile.match', () => {
  it('returns the verdict of the last matching rule of the file, or undefined', () => {
    const file = parseGitignore('*.log\n!keep.log\n', '');
    expect(file.match('a.log', false)).toBe('ignore');
    expect(file.match('keep.log', false)).toBe('include');
    expect(file.match('a.txt', false)).toBeUndefined();
  });

  it('has no verdict for paths outside its own directory, nor for the directory itself', () => {
    const file = parseGitignore('*\n', 'sub/dir');
    expect(file.base).toBe('sub/dir');
    expect(file.match('sub/dir/x', false)).toBe('ignore');
    expect(file.match('sub/dir', true)).toBeUndefined();
    expect(file.match('sub/dirx/y', false)).toBeUndefined();
    expect(file.match('other/x', false)).toBeUndefined();
  });

  it('directory-only rules never give a verdict for files (or symlinks to directories)', () => {
    const file = parseGitignore('out/\n!out/\n', '');
    expect(file.match('out', true)).toBe('include');
    expect(file.match('out', false)).toBeUndefined();
  });

  it('a long generated file of literal lines keeps git semantics: last line wins, dir-only respected', () => {
    const lines: string[] = [];
    for (let i = 0; i < 5000; i++) lines.push(i % 2 === 0 ? `/gen/file${i}.js` : `cache${i}/`);
    lines.push('!/gen/file10.js', '*.js', '!gen/file20.js');
    const file = parseGitignore(lines.join('\n'), '');
    expect(file.match('gen/file20.js', false)).toBe('include');
    expect(file.match('gen/file10.js', false)).toBe('ignore');
    expect(file.match('gen/file4998.js', false)).toBe('ignore');
    expect(file.match('x/cache4999', true)).toBe('ignore');
    expect(file.match('x/cache4999', false)).toBeUndefined();
    expect(file.match('gen/file4999.ts', false)).toBeUndefined();
  });

  it('an empty file, or one with only comments, matches nothing', () => {
    expect(parseGitignore('', '').match('a', false)).toBeUndefined();
    expect(parseGitignore('# only\n\n!\n', '').match('a', true)).toBeUndefined();
  });
});

describe('pathological patterns', () => {
  it('star-heavy patterns against long names are decided without exponential backtracking', () => {
    // A backtracking RegExp (and git 2.39's wildmatch) needs minutes for this; an automaton does not.
    const file = parseGitignore('*a*a*a*a*a*a*a*a*b\n**/x*x*x*x*x*x*/q\n', '');
    const longName = 'a'.repeat(250);
    expect(file.match(longName, false)).toBeUndefined();
    expect(file.match(`${longName}b`, false)).toBe('ignore');
    expect(file.match(`${'x'.repeat(200)}/q`, false)).toBe('ignore');
    expect(file.match(`${'x'.repeat(200)}/r`, false)).toBeUndefined();
  });
});

describe('isIgnored', () => {
  it('consults the deepest file first and stops at the first verdict', () => {
    const root = parseGitignore('*.log\n', '');
    const sub = parseGitignore('!*.log\n', 'sub');
    expect(isIgnored([root, sub], 'sub/a.log', false)).toBe(false);
    expect(isIgnored([root, sub], 'a.log', false)).toBe(true);
    expect(isIgnored([root], 'sub/a.log', false)).toBe(true);
  });

  it('falls back to a shallower file when the deeper one has no verdict', () => {
    const root = parseGitignore('node_modules/\n', '');
    const pkg = parseGitignore('dist/\n', 'packages/a');
    expect(isIgnored([root, pkg], 'packages/a/node_modules', true)).toBe(true);
    expect(isIgnored([root, pkg], 'packages/a/dist', true)).toBe(true);
    expect(isIgnored([root, pkg], 'packages/a/src', true)).toBe(false);
  });

  it('an empty stack ignores nothing', () => {
    expect(isIgnored([], 'anything', false)).toBe(false);
  });
});

function git(cwd: string, args: string[], input?: string): string {
  const r = spawnSync('git', ['-c', 'core.excludesFile=/dev/null', '-c', 'core.ignorecase=false', ...args], {
    cwd,
    encoding: 'utf8',
    input,
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', LC_ALL: 'C' },
  });
  // check-ignore exits 1 when nothing is ignored: that is an answer, not an error.
  if (r.error || (r.status !== 0 && r.status !== 1)) throw new Error(`git ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}
