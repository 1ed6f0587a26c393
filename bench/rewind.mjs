#!/usr/bin/env node
// Issue 17 figures: content capture and restore on the generated 50,000-file git repository.
//  (1) `session pre` clean and with 1 % of files dirty, content capture on vs off (today's pre);
//  (2) `.cairn/content` after 10 iterations that each rewrite 1 % of files, vs the gzip size of
//      the bytes those iterations changed;
//  (3) `cairn session restore` of an iteration that rewrote 1 % of files vs `git checkout -- .`
//      of the same change, on 50k and 5k files (the same change, 10x the untouched files; since
//      session 22 restore also takes a stat-cached inventory of the live tree, O(tree) stats).
//
//   node bench/rewind.mjs [--quick] [--runs N]
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ensureTree } from './gen-tree.mjs';
import { BENCH_DIR, CLI, DIST_INDEX, WORK_DIR, ensureDir, fmtMs, log, machineMarkdown, parseBenchArgs, ratioTable, requireBuilt, saveResult, table, timeSpawn } from './lib.mjs';

const { quick, runs } = parseBenchArgs(process.argv.slice(2), { runs: 5 });
requireBuilt();
const peer = join(BENCH_DIR, 'peers', 'rewind-pre.mjs');

function prepare(files) {
  const { root } = ensureTree({ files });
  const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 28 });
  git('checkout', '-q', '--', '.');
  git('clean', '-q', '-fd', '--', 'src');
  rmSync(join(root, '.cairn'), { recursive: true, force: true });
  const exclude = join(root, '.git', 'info', 'exclude');
  if (!readFileSync(exclude, 'utf8').includes('.cairn/')) writeFileSync(exclude, readFileSync(exclude, 'utf8') + '\n.cairn/\n');
  const tracked = git('ls-files', '-s', '-z').split('\0').filter((l) => l.startsWith('100644')).map((l) => l.slice(l.indexOf('\t') + 1))
    .filter((p) => !p.startsWith('assets/'))
    .filter((p) => statSync(join(root, p)).size < 1 << 20);
  return { root, git, tracked };
}

/** The k-th 1 % slice of the tracked files (disjoint slices for k = 0, 1, …). */
const slice = (tracked, k, n) => Array.from({ length: n }, (_, i) => tracked[((k * n + i) * 7919) % tracked.length]);
function rewrite(root, paths, tag) {
  let bytes = [];
  for (const p of paths) {
    const abs = join(root, p);
    const before = readFileSync(abs);
    const after = Buffer.concat([Buffer.from(`// ${tag}\n`), before.subarray(0, Math.floor(before.length * 0.9)), Buffer.from(`\n// edited ${tag} ${p}\n`)]);
    writeFileSync(abs, after);
    bytes.push(after);
  }
  return bytes;
}
const du = (dir) => Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0]);
const duDisk = (dir) => Number(execFileSync('du', ['-sk', dir], { encoding: 'utf8' }).split('\t')[0]) * 1024;

const big = prepare(quick ? 5_000 : 50_000);
const onePercent = Math.round(big.tracked.length / 100);
const scratch = ensureDir(join(WORK_DIR, 'rewind-iterations'));
let seq = 0;
const iterDir = () => join(scratch, String(++seq));
const preRun = (mode) => timeSpawn(process.execPath, [peer, DIST_INDEX, big.root, iterDir(), mode], { cwd: big.root });

// (1) pre, clean and 1 % dirty, on vs off, interleaved.
const clean = { on: [], off: [] }, cleanCpu = { on: [], off: [] };
const dirty = { on: [], off: [] }, dirtyCpu = { on: [], off: [] };
for (let r = -1; r < runs; r++) {
  for (const mode of r % 2 ? ['on', 'off'] : ['off', 'on']) {
    const t = preRun(mode);
    if (r >= 0) { clean[mode].push(t.ms); cleanCpu[mode].push(t.cpuMs); }
  }
  for (const mode of r % 2 ? ['off', 'on'] : ['on', 'off']) {
    rewrite(big.root, slice(big.tracked, r + 2, onePercent), `dirty ${r} ${mode}`); // new bytes: nothing deduplicates
    const t = preRun(mode);
    if (r >= 0) { dirty[mode].push(t.ms); dirtyCpu[mode].push(t.cpuMs); }
    big.git('checkout', '-q', '--', '.');
  }
  log(`pre round ${r}`);
}
rmSync(join(big.root, '.cairn'), { recursive: true, force: true });
rmSync(scratch, { recursive: true, force: true });
ensureDir(scratch);

// (2) size after 10 iterations of 1 % rewrites, each a different 1 %.
const cli = (root, args, okCodes) => timeSpawn(process.execPath, [CLI, ...args, '--root', root], { cwd: root, okCodes });
let changedNew = [];
let changedOld = [];
for (let k = 0; k < 10; k++) {
  cli(big.root, ['session', 'pre']);
  const paths = slice(big.tracked, 20 + k, onePercent);
  changedOld.push(...paths.map((p) => readFileSync(join(big.root, p))));
  changedNew.push(...rewrite(big.root, paths, `iteration ${k}`));
  cli(big.root, ['session', 'post', '--no-store']);
}
const gzNew = gzipSync(Buffer.concat(changedNew)).length;
const gzBoth = gzipSync(Buffer.concat([...changedOld, ...changedNew])).length;
const packs = join(big.root, '.cairn', 'content');
const contentBytes = du(packs);
const contentDisk = duDisk(packs);
log(`content after 10 iterations: ${contentBytes} B (disk ${contentDisk}); gzip of new bytes ${gzNew}, of old+new ${gzBoth}`);
big.git('checkout', '-q', '--', '.');
rmSync(join(big.root, '.cairn'), { recursive: true, force: true });

// (3) restore vs git checkout of the same 1 % change, on 50k and 5k files.
function restoreRounds(t, label) {
  const restore = [], restoreCpu = [], checkout = [], checkoutCpu = [];
  const n = Math.round(onePercent); // the same number of changed files on both trees
  for (let r = -1; r < runs; r++) {
    const paths = slice(t.tracked, 40 + r, Math.min(n, t.tracked.length));
    cli(t.root, ['session', 'pre']);
    const edited = rewrite(t.root, paths, `restore ${r}`);
    cli(t.root, ['session', 'post', '--no-store']);
    const a = cli(t.root, ['session', 'restore']);
    // The same change again (same bytes), undone by git.
    for (let i = 0; i < paths.length; i++) writeFileSync(join(t.root, paths[i]), edited[i]);
    const b = timeSpawn('git', ['checkout', '--', '.'], { cwd: t.root });
    if (r >= 0) { restore.push(a.ms); restoreCpu.push(a.cpuMs); checkout.push(b.ms); checkoutCpu.push(b.cpuMs); }
  }
  log(`restore rounds on ${label} done`);
  return { restore, restoreCpu, checkout, checkoutCpu };
}
const r50 = restoreRounds(big, `${big.tracked.length} files`);
rmSync(join(big.root, '.cairn'), { recursive: true, force: true });
const small = prepare(5_000);
const r5 = restoreRounds(small, `${small.tracked.length} files`);
rmSync(join(small.root, '.cairn'), { recursive: true, force: true });

const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
let out = `## Rewind: content capture and restore (issue 17)\n\n${machineMarkdown()}\nRepository: generated, ${big.tracked.length} tracked text files used for edits (of ~50k). "1 %" = ${onePercent} files, each rewritten (a header line, 90 % of the old bytes, a trailer line). Content capture off = today's \`session pre\` (the same library call with \`content: false\`), in identical fresh processes.\n\n`;
out += ratioTable('session pre, clean tree', [
  { name: 'pre, content off (today)', samples: clean.off, cpu: cleanCpu.off },
  { name: 'pre, content on', samples: clean.on, cpu: cleanCpu.on, target: 1.1, note: 'copies nothing: git holds every clean file' },
], 'pre, content off (today)');
out += ratioTable('session pre, 1 % of files dirty (new bytes every round)', [
  { name: 'pre, content off (today)', samples: dirty.off, cpu: dirtyCpu.off },
  { name: 'pre, content on', samples: dirty.on, cpu: dirtyCpu.on, target: 1.3, note: `copies the ${onePercent} dirty files into one pack` },
], 'pre, content off (today)');
out += table('.cairn/content after 10 iterations, each rewriting a different 1 %', ['what', 'bytes', 'ratio to gzip of the new bytes', 'target'], [
  ['gzip -6 of the bytes the iterations wrote (new versions, concatenated)', String(gzNew), '1.00×', ''],
  ['gzip -6 of old + new versions of those files', String(gzBoth), `${(gzBoth / gzNew).toFixed(2)}×`, ''],
  ['.cairn/content, apparent size (packs: old and new versions, brotli 5)', String(contentBytes), `**${(contentBytes / gzNew).toFixed(2)}×**`, `≤ 2× ${contentBytes / gzNew <= 2 ? '✔' : '✘'}`],
  ['.cairn/content, on disk (du -k)', String(contentDisk), `${(contentDisk / gzNew).toFixed(2)}×`, ''],
]);
out += ratioTable(`restore of a 1 % change (${onePercent} files), ${big.tracked.length}-file tree`, [
  { name: 'git checkout -- .', samples: r50.checkout, cpu: r50.checkoutCpu },
  { name: 'cairn session restore', samples: r50.restore, cpu: r50.restoreCpu, target: 2 },
], 'git checkout -- .');
out += ratioTable(`restore of the same number of files, ${small.tracked.length}-file tree (O(changed))`, [
  { name: 'git checkout -- .', samples: r5.checkout, cpu: r5.checkoutCpu },
  { name: 'cairn session restore', samples: r5.restore, cpu: r5.restoreCpu },
], 'git checkout -- .');
out += `O(changed): cairn restore of ${onePercent} files took ${fmtMs(med(r5.restore))} on the small tree and ${fmtMs(med(r50.restore))} on the ${(big.tracked.length / small.tracked.length).toFixed(0)}× larger one (ratio ${(med(r50.restore) / med(r5.restore)).toFixed(2)}); \`git checkout -- .\` ${fmtMs(med(r5.checkout))} → ${fmtMs(med(r50.checkout))} (${(med(r50.checkout) / med(r5.checkout)).toFixed(2)}).\n`;
saveResult('rewind', out);
