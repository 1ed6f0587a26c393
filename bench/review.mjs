#!/usr/bin/env node
// Issue 18 figures: `cairn session diff --stat` / `--patch` on an iteration that changed 1 % of
// a generated git repository, against `git diff --stat` / `git diff` of the same change, in one
// interleaved run; and `session report --html` against `--patch`.
//
//   node bench/review.mjs [--quick] [--runs N]
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureTree } from './gen-tree.mjs';
import { CLI, WORK_DIR, ensureDir, interleave, log, ratioTable, requireBuilt, saveResult, timeSpawn } from './lib.mjs';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const runs = Number(args[args.indexOf('--runs') + 1]) || 5;
requireBuilt();
const { root, meta } = ensureTree({ files: quick ? 5_000 : 50_000 });
const git = (...a) => execFileSync('git', a, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 28 });
git('checkout', '-q', '--', '.');
const exclude = join(root, '.git', 'info', 'exclude');
if (!readFileSync(exclude, 'utf8').includes('.cairn/')) writeFileSync(exclude, `${readFileSync(exclude, 'utf8')}\n.cairn/\n`);
const tracked = git('ls-files', '-z').split('\0').filter((p) => p !== '' && !p.startsWith('assets/'));
const changed = tracked.filter((_, i) => i % 100 === 0);
const env = { XDG_CACHE_HOME: ensureDir(join(WORK_DIR, 'review-cache')) };
const cli = (...a) => timeSpawn(process.execPath, [CLI, ...a], { cwd: root, env });
cli('session', 'pre');
for (const p of changed) writeFileSync(join(root, p), `${readFileSync(join(root, p), 'utf8')}// agent edit\n`);
cli('session', 'post', '--no-store');
const html = join(WORK_DIR, 'review.html');
log(`${changed.length} of ${tracked.length} files changed (${meta.params.trackedFiles} tracked)`);
const { samples } = await interleave(
  [
    { name: 'git diff --stat', run: () => timeSpawn('git', ['diff', '--stat'], { cwd: root }) },
    { name: 'cairn session diff --stat', run: () => cli('session', 'diff', '--stat') },
    { name: 'git diff', run: () => timeSpawn('git', ['diff'], { cwd: root }) },
    { name: 'cairn session diff --patch', run: () => cli('session', 'diff', '--patch') },
    { name: 'cairn session report --html', run: () => cli('session', 'report', '--html', html) },
  ],
  { runs },
);
const md = [
  `## Review (issue 18): ${changed.length} changed files of a ${meta.params.trackedFiles}-file repository`,
  '',
  ratioTable('stat', [{ name: 'cairn session diff --stat', samples: samples.get('cairn session diff --stat'), target: 1.5 }, { name: 'git diff --stat', samples: samples.get('git diff --stat') }], 'git diff --stat'),
  ratioTable('patch', [
    { name: 'cairn session diff --patch', samples: samples.get('cairn session diff --patch'), target: 1.5 },
    { name: 'git diff', samples: samples.get('git diff') },
    { name: 'cairn session report --html', samples: samples.get('cairn session report --html') },
  ], 'git diff'),
].join('\n');
saveResult('review', md);
console.log(md);
// leave the tree as it was
git('checkout', '-q', '--', '.');
