// Correctness bar of spec/inventory.md decision 1: on any tree without tracked-but-ignored files,
// the inventoried paths equal `git ls-files -co --exclude-per-directory=.gitignore`.
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { scanTreeSync } from '../../src/inventory/index.js';
import { REPO_ROOT } from '../support/cli.js';
import { cleanupTempDirs, git, gitListedPaths, sortUtf8, tempDir, writeTree } from './helpers.js';

afterAll(cleanupTempDirs);

function ourPaths(root: string): string[] {
  return scanTreeSync(root, { cache: false, withContentDigest: false }).files.map((f) => f.path);
}

function gitPaths(root: string): string[] {
  if (!fs.existsSync(path.join(root, '.git'))) git(root, 'init', '-q');
  return sortUtf8(gitListedPaths(root));
}

describe('git parity', () => {
  it('matches git on a hand-made tree full of ignore-rule traps', () => {
    const root = tempDir();
    writeTree(root, {
      '.gitignore': ['*.log', '!keep.log', 'build/', '/only-root', '**/tmp', 'docs/*.md', '!docs/README.md', '\\#hash', '\\!bang', 'node_modules/', 'a/**/z', '*.[oa]', 'spaced\\ ', '# comment', ''].join('\n'),
      'x.log': '', 'keep.log': '', 'sub/x.log': '', 'sub/keep.log': '',
      'build/out.js': '', 'sub/build/out.js': '', 'build.txt': '',
      'only-root': '', 'sub/only-root': '',
      'tmp/x': '', 'deep/er/tmp/y': '',
      'docs/a.md': '', 'docs/README.md': '', 'docs/deeper/b.md': '',
      '#hash': '', '!bang': '', 'spaced ': '',
      'node_modules/m.js': '', 'pkg/node_modules/n.js': '',
      'a/z': '', 'a/b/c/z': '', 'a/zz': '',
      'lib.o': '', 'lib.a': '', 'lib.c': '',
      'pkg/.gitignore': '!*.log\n/local\nnested/\n',
      'pkg/y.log': '', 'pkg/local': '', 'pkg/sub/local': '', 'pkg/nested/q': '', 'pkg/nested': null,
      'neg/.gitignore': '*\n!*.keep\n!*/\n', 'neg/a.keep': '', 'neg/a.drop': '', 'neg/d/b.keep': '', 'neg/d/b.drop': '',
      'logs/.gitignore': '!important.log\n', 'logs/important.log': '', 'logs/other.log': '',
    });
    // `spaced ` fails the RelPath rules: cairn reports it as skipped; git lists it.
    expect(ourPaths(root)).toEqual(gitPaths(root).filter((p) => p !== 'spaced '));
  });

  const segment = fc.constantFrom('a', 'b', 'build', 'tmp', 'docs', 'x.log', 'keep.log', 'README.md', 'n.md', 'node_modules', 'sub', 'z', 'A', 'é');
  const pattern = fc.constantFrom('*.log', '!keep.log', 'build/', '/a', 'a/', '**/tmp', 'docs/*.md', '!docs/README.md', 'node_modules', '!node_modules/', 'sub/**', '!sub/b', 'z', '*', '!*/', '!*.md', 'b/**/z', '/sub/a', '[ab]', 'A');
  const tree = fc.record({
    files: fc.uniqueArray(fc.array(segment, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 25, selector: (p) => p.join('/') }),
    ignores: fc.array(fc.tuple(fc.array(segment, { maxLength: 2 }), fc.array(pattern, { minLength: 1, maxLength: 5 })), { maxLength: 4 }),
  });

  it('matches git on random trees with random nested .gitignore files', () => {
    fc.assert(
      fc.property(tree, ({ files, ignores }) => {
        const root = tempDir('cairn-parity-');
        try {
          const made = new Set<string>();
          for (const segs of files) {
            const rel = segs.join('/');
            // A path cannot be both a file and a directory: skip prefixes of existing ones.
            if ([...made].some((m) => m.startsWith(`${rel}/`) || rel.startsWith(`${m}/`))) continue;
            made.add(rel);
            writeTree(root, { [rel]: rel });
          }
          for (const [dirSegs, pats] of ignores) {
            const dir = path.join(root, ...dirSegs);
            try {
              fs.mkdirSync(dir, { recursive: true });
              fs.writeFileSync(path.join(dir, '.gitignore'), `${pats.join('\n')}\n`);
            } catch {
              // a file already sits where this directory would go
            }
          }
          expect(ourPaths(root)).toEqual(gitPaths(root));
        } finally {
          fs.rmSync(root, { recursive: true, force: true });
        }
      }),
      { numRuns: 40 },
    );
  });

  it('matches git on this repository (read-only)', () => {
    // Other engineers edit this tree concurrently: retry a few times for a quiet moment.
    let last: { ours: string[]; theirs: string[] } | undefined;
    for (let attempt = 0; attempt < 5; attempt++) {
      const trackedIgnored = new Set(git(REPO_ROOT, '-c', 'core.excludesFile=/dev/null', 'ls-files', '-z', '-ci', '--exclude-per-directory=.gitignore').split('\0').filter(Boolean));
      const theirs = sortUtf8(gitListedPaths(REPO_ROOT).filter((p) => !trackedIgnored.has(p) && !p.endsWith('/') && fs.existsSync(path.join(REPO_ROOT, p))));
      const ours = ourPaths(REPO_ROOT);
      if (JSON.stringify(ours) === JSON.stringify(theirs)) return;
      last = { ours, theirs };
    }
    expect(last!.ours).toEqual(last!.theirs);
  });
});
