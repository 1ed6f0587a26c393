#!/usr/bin/env node
// Issue 3 figures: `cairn snapshot` on a generated ~76k-file tree, interleaved with the tools a
// user would otherwise run, medians of ≥5 runs, ratios against anchors measured in the same run.
//
//   node bench/inventory.mjs [--quick] [--runs N] [--skip-folder-hash]
//
// (a) warm, nothing changed: cairn with a primed cache vs `git status --porcelain`
// (b) warm, 1 % of files rewritten before every round: cairn vs `git status --porcelain`
// (c) full hash, no cache: cairn --no-cache vs `git ls-files -z | xargs -0 -P2 sha256sum|openssl`
// (d) context: `git add -A && git write-tree` into a fresh index, glob-hasher, folder-hash (once, capped)
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureTree } from './gen-tree.mjs';
import {
  BENCH_DIR, CLI, WORK_DIR, cliHelp, ensureDir, fmtMs, interleave, log, machineMarkdown, parseBenchArgs,
  peakRssMb, prng, ratioTable, requireBuilt, saveResult, table, timeShell, timeSpawn,
} from './lib.mjs';

const { quick, runs, argv } = parseBenchArgs();
requireBuilt();
const help = cliHelp(['snapshot']);
if (!help) {
  saveResult('inventory', '## Repo snapshots (issue 3)\n\nnot measured yet: `cairn snapshot` is not in the built CLI.\n');
  process.exit(0);
}

const { root, meta } = ensureTree({ quick });
const scratch = ensureDir(join(WORK_DIR, `inventory-${meta.params.trackedFiles}`));
const cacheDir = join(scratch, 'cache');
const outFile = join(scratch, 'snapshot.json');

// The seed's CLI caps files (20k default, 50k hard) and bytes (64 MiB); the whole tree needs the
// engine's uncapped mode, whatever name the CLI gives it.
const capArgs = [];
if (/--no-limit\b/.test(help)) capArgs.push('--no-limit');
else if (/--unlimited\b/.test(help)) capArgs.push('--unlimited');
else if (/--all\b/.test(help)) capArgs.push('--all');
else {
  if (/--max-files\b/.test(help)) capArgs.push('--max-files', '1000000');
  if (/--max-bytes\b/.test(help)) capArgs.push('--max-bytes', String(2 ** 50));
}
const cacheArgs = /--cache-dir\b/.test(help) ? ['--cache-dir', cacheDir] : [];
const noCacheArgs = /--no-cache\b/.test(help) ? ['--no-cache'] : null;
const cairnArgs = ['snapshot', '--root', root, '-o', outFile, ...capArgs];
const cairnWarm = [CLI, ...cairnArgs, ...cacheArgs];
const cairnCold = noCacheArgs ? [CLI, ...cairnArgs, ...noCacheArgs] : null;
log(`cairn args: ${cairnArgs.concat(cacheArgs).join(' ')}`);

const git = (args) => timeSpawn('git', args, { cwd: root }).ms;
const node = (args) => timeSpawn(process.execPath, args, { cwd: scratch }).ms;

// What the snapshot actually covered, so a capped or truncated run is never passed off as whole.
function lastSnapshotNote() {
  try {
    const doc = JSON.parse(readFileSync(outFile, 'utf8'));
    const c = doc.body?.counts ?? {};
    return `${c.files} files, ${(c.bytes / 1e6).toFixed(0)} MB${doc.body?.truncated ? ', **truncated**' : ''}`;
  } catch {
    return 'output unreadable';
  }
}
const trackedCount = Number(execFileSync('bash', ['-c', 'git ls-files | wc -l'], { cwd: root, encoding: 'utf8' }));

// Regular source files we may rewrite in (b): tracked, not symlinks, not the big blobs.
const editable = execFileSync('git', ['ls-files', '-s', '-z'], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 28 })
  .split('\0')
  .filter((l) => l.startsWith('100644') || l.startsWith('100755'))
  .map((l) => l.slice(l.indexOf('\t') + 1))
  .filter((p) => !p.startsWith('assets/blobs/'));
const onePercent = Math.round(trackedCount / 100);

let out = `## Repo snapshots (issue 3)\n\n${machineMarkdown()}\nTree: \`${root.replace(BENCH_DIR, 'bench')}\` — ${trackedCount} tracked entries (${meta.regularFiles} regular files, ${meta.symlinks} symlinks), ${meta.dirs} dirs, ${(meta.bytes / 1e6).toFixed(0)} MB, plus ${meta.ignoredFiles} git-ignored files (node_modules, nested .gitignore). Warm page cache. cairn = \`node dist/cli/main.js ${cairnArgs.slice(0, 1).join(' ')} --root T -o F${capArgs.length ? ' ' + capArgs.join(' ') : ''}\`.\n\n`;

// ---------- (a) warm, nothing changed ----------
rmSync(cacheDir, { recursive: true, force: true });
node(cairnWarm.slice()); // prime the cache (untimed)
git(['status', '--porcelain']);
const a = await interleave(
  [
    { name: 'cairn snapshot (warm cache)', run: () => node(cairnWarm) },
    { name: 'git status --porcelain', run: () => git(['status', '--porcelain']) },
    { name: 'git status --porcelain -uno', run: () => git(['status', '--porcelain', '-uno']) },
  ],
  { runs },
);
const aNote = lastSnapshotNote();
out += ratioTable('(a) warm, nothing changed', [
  { name: 'cairn snapshot (warm cache)', samples: a.samples.get('cairn snapshot (warm cache)'), target: 1.0, note: aNote },
  { name: 'git status --porcelain', samples: a.samples.get('git status --porcelain') },
  { name: 'git status --porcelain -uno', samples: a.samples.get('git status --porcelain -uno'), note: 'context: skips the untracked scan' },
], 'git status --porcelain');

// ---------- (b) warm, 1 % of files rewritten before each round ----------
const originals = new Map();
const editRound = (r) => {
  const rnd = prng(1000 + r + 17);
  originals.clear();
  while (originals.size < onePercent) {
    const p = editable[Math.floor(rnd.next() * editable.length)];
    if (originals.has(p)) continue;
    const abs = join(root, p);
    const before = readFileSync(abs);
    originals.set(p, before);
    writeFileSync(abs, Buffer.concat([before, Buffer.from(`// edited in round ${r}\n`)]));
  }
};
const restoreRound = () => {
  for (const [p, buf] of originals) writeFileSync(join(root, p), buf);
  originals.clear();
  // Settle both tools on the restored tree, untimed, so each round starts from the same state.
  node(cairnWarm);
  git(['status', '--porcelain']);
};
const b = await interleave(
  [
    { name: 'cairn snapshot (1 % changed)', run: () => node(cairnWarm) },
    { name: 'git status --porcelain', run: () => git(['status', '--porcelain']) },
  ],
  { runs, beforeRound: editRound, afterRound: restoreRound },
);
out += ratioTable(`(b) warm, 1 % of files (${onePercent}) rewritten before each round`, [
  { name: 'cairn snapshot (1 % changed)', samples: b.samples.get('cairn snapshot (1 % changed)'), target: 1.3 },
  { name: 'git status --porcelain', samples: b.samples.get('git status --porcelain') },
], 'git status --porcelain');

// ---------- (c) full hash, no cache; (d) context peers ----------
const peersDir = join(WORK_DIR, 'peers');
const haveGlobHasher = existsSync(join(peersDir, 'node_modules', 'glob-hasher'));
if (!haveGlobHasher) log('glob-hasher not installed: `npm install --prefix bench/.work/peers glob-hasher folder-hash` (outside the repo tree) to include it');
const freshIndex = join(scratch, 'fresh-index');
const shaPipe = 'git ls-files -z | xargs -0 -P2 sha256sum > /dev/null 2>&1';
const sslPipe = 'git ls-files -z | xargs -0 -P2 openssl dgst -sha256 > /dev/null 2>&1';
// Dangling / directory symlinks make both pipelines exit 123; their hashing still ran.
const pipe = (s) => timeShell(s, { cwd: root, okCodes: [0, 123] }).ms;
const c = await interleave(
  [
    { name: 'cairn snapshot --no-cache', skip: !cairnCold, run: () => node(cairnCold) },
    { name: 'xargs -P2 sha256sum', run: () => pipe(shaPipe) },
    { name: 'xargs -P2 openssl dgst -sha256', run: () => pipe(sslPipe) },
    {
      name: 'git add -A && git write-tree (fresh index)',
      before: () => rmSync(freshIndex, { force: true }),
      run: () => timeShell('git add -A && git write-tree > /dev/null', { cwd: root, env: { GIT_INDEX_FILE: freshIndex } }).ms,
    },
    { name: 'glob-hasher (hashGlobGit, CLI)', skip: !haveGlobHasher, run: () => node([join(BENCH_DIR, 'peers', 'glob-hasher.mjs'), root]) },
  ],
  { runs },
);
const cNote = cairnCold ? lastSnapshotNote() : 'no --no-cache flag in the CLI';
const cRows = [
  { name: 'cairn snapshot --no-cache', samples: c.samples.get('cairn snapshot --no-cache'), note: cNote },
  { name: 'xargs -P2 sha256sum', samples: c.samples.get('xargs -P2 sha256sum'), note: '`git ls-files -z \\| xargs -0 -P2 sha256sum`' },
  { name: 'xargs -P2 openssl dgst -sha256', samples: c.samples.get('xargs -P2 openssl dgst -sha256'), note: '`git ls-files -z \\| xargs -0 -P2 openssl dgst -sha256`' },
  { name: 'git add -A && git write-tree (fresh index)', samples: c.samples.get('git add -A && git write-tree (fresh index)'), note: 'GIT_INDEX_FILE in a temp path; objects already present' },
  { name: 'glob-hasher (hashGlobGit, CLI)', samples: c.samples.get('glob-hasher (hashGlobGit, CLI)'), note: haveGlobHasher ? 'git SHA-1, Rust napi; node_modules excluded by glob (its gitignore option did not)' : 'not installed' },
];
out += ratioTable('(c) full hash, empty cache — against sha256sum', cRows.map((r) => (r.name === 'cairn snapshot --no-cache' ? { ...r, target: 0.8 } : r)), 'xargs -P2 sha256sum');
out += ratioTable('(c) full hash, empty cache — against openssl', cRows.map((r) => (r.name === 'cairn snapshot --no-cache' ? { ...r, target: 1.3 } : r)), 'xargs -P2 openssl dgst -sha256');

// folder-hash: once, capped (it took 33 s on the reference corpus).
if (!argv.includes('--skip-folder-hash') && existsSync(join(peersDir, 'node_modules', 'folder-hash'))) {
  const cap = quick ? 30_000 : 60_000;
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [join(BENCH_DIR, 'peers', 'folder-hash.mjs'), root], { timeout: cap, stdio: 'ignore' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const sslMed = c.samples.get('xargs -P2 openssl dgst -sha256');
  const sorted = [...(sslMed ?? [])].sort((x, y) => x - y);
  const anchor = sorted[Math.floor(sorted.length / 2)];
  out += table('(d) folder-hash 4.1.4, one run, capped', ['command', 'time', 'ratio to openssl pipeline', 'note'], [[
    'folder-hash (sha256, CLI)',
    r.signal ? `> ${fmtMs(cap)} (killed at the cap)` : fmtMs(ms),
    r.signal ? `> ${(cap / anchor).toFixed(1)}×` : `${(ms / anchor).toFixed(1)}×`,
    'async per file; .git and node_modules excluded',
  ]]);
}

// Peak RSS of cairn, one extra untimed run each.
const rssWarm = peakRssMb(process.execPath, cairnWarm, { cwd: scratch });
const rssCold = cairnCold ? peakRssMb(process.execPath, cairnCold, { cwd: scratch }) : null;
out += table('cairn peak RSS (GNU time %M)', ['mode', 'peak RSS'], [
  ['warm cache', rssWarm ? `${rssWarm.toFixed(0)} MB` : '–'],
  ['--no-cache (full hash)', rssCold ? `${rssCold.toFixed(0)} MB` : '–'],
]);
const errs = [a, b, c].flatMap((x) => [...x.errors]);
if (errs.length) out += `\nFailed cases: ${errs.map(([k, v]) => `${k}: ${v.split('\n')[0]}`).join('; ')}\n`;
saveResult('inventory', out);
