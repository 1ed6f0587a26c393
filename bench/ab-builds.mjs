#!/usr/bin/env node
// A/B of builds: the uncapped engine (bench/peers/cairn-scan.mjs) of two or more dist/ copies on
// the inventory bench's tree, interleaved in rotating order, in the cases of bench/inventory.mjs
// where the memos act: (a) warm, nothing changed; (b) warm, 1 % of files rewritten before each
// round (restored and settled, untimed, after it). Every build must produce the same digest in
// every round; the table gives medians and each build's difference from the first.
//
//   node bench/ab-builds.mjs [--quick] [--runs N] name=path/to/dist name=path/to/dist ...
//
// A variant is a build of the tree with one feature turned off (e.g. memo patches, the output
// stamp): build it, copy dist/ aside, and hand both copies to this script.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ensureTree } from './gen-tree.mjs';
import { BENCH_DIR, WORK_DIR, ensureDir, fmtMs, interleave, log, parseBenchArgs, prng, stats, timeSpawn } from './lib.mjs';

const { quick, runs, argv } = parseBenchArgs();
const builds = argv.filter((a) => a.includes('=')).map((a) => {
  const [name, dist] = a.split('=');
  return { name, dist: resolve(dist) };
});
if (builds.length < 2) throw new Error('usage: node bench/ab-builds.mjs [--runs N] name=dist name=dist ...');

const { root } = ensureTree({ quick });
execFileSync('git', ['checkout', '-q', '--', '.'], { cwd: root });
const scratch = ensureDir(join(WORK_DIR, 'ab-builds'));
const scanScript = join(BENCH_DIR, 'peers', 'cairn-scan.mjs');
for (const b of builds) {
  b.cache = join(scratch, `cache-${b.name}`);
  b.out = join(scratch, `${b.name}.json`);
  rmSync(b.cache, { recursive: true, force: true });
  rmSync(b.out, { force: true });
}
const digests = new Map();
const runBuild = (b, label) => {
  const t = timeSpawn(process.execPath, [scanScript, root, b.out, '--cache-dir', b.cache], { cwd: scratch, env: { ...process.env, CAIRN_BENCH_DIST: b.dist } });
  const digest = JSON.parse(readFileSync(b.out, 'utf8')).snapshotDigest;
  if (!digests.has(label)) digests.set(label, digest);
  else if (digests.get(label) !== digest) throw new Error(`${b.name} made another digest in ${label}: builds disagree`);
  return t;
};

const editable = execFileSync('git', ['ls-files', '-s', '-z'], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 28 })
  .split('\0')
  .filter((l) => l.startsWith('100644') || l.startsWith('100755'))
  .map((l) => l.slice(l.indexOf('\t') + 1))
  .filter((p) => !p.startsWith('assets/blobs/'));
const onePercent = Math.round(editable.length / 100);

// Three untimed runs each: a cache, then memos, then an output compared (and stamped).
for (let i = 0; i < 3; i++) for (const b of builds) runBuild(b, 'prime');
const a = await interleave(builds.map((b) => ({ name: b.name, run: () => runBuild(b, 'a') })), { runs });

let round = 0;
const originals = new Map();
const editRound = (r) => {
  round = r;
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
const restoreRound = (r) => {
  for (const [p, buf] of originals) writeFileSync(join(root, p), buf);
  originals.clear();
  for (const b of builds) runBuild(b, `settle ${r}`);
};
const bRes = await interleave(builds.map((b) => ({ name: b.name, run: () => runBuild(b, `b ${round}`) })), { runs, beforeRound: editRound, afterRound: restoreRound });

const rows = [];
for (const [label, res] of [['(a) warm, nothing changed', a], [`(b) warm, 1 % (${onePercent} files) rewritten`, bRes]]) {
  const base = stats(res.samples.get(builds[0].name)).median;
  for (const b of builds) {
    const s = stats(res.samples.get(b.name));
    const cpu = stats(res.cpu.get(b.name)).median;
    rows.push(`| ${label} | ${b.name} | ${fmtMs(s.median)} (p95 ${fmtMs(s.p95)}) | ${fmtMs(cpu)} | ${b === builds[0] ? '—' : `${s.median - base >= 0 ? '+' : '−'}${fmtMs(Math.abs(s.median - base))} (${((s.median / base - 1) * 100).toFixed(1)} %)`} |`);
  }
}
const table = [`A/B of builds, ${runs} interleaved rounds, every build the same digest in every round`, '', '| case | build | wall median | CPU median | vs ' + builds[0].name + ' |', '|---|---|---|---|---|', ...rows].join('\n');
log(`tree ${root.replace(BENCH_DIR, 'bench')}`);
process.stdout.write(`${table}\n`);
