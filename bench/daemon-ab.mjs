#!/usr/bin/env node
// A/B of builds through `cairn daemon`: the matrix's daemon turns (1 % of the tracked files
// appended, `session pre`; `post` and `pre` with nothing changed; another 1 %, `post`; the round's
// work committed) for two or more copies of dist/, each on a copy of the same generated tree (a
// daemon watches its own root), rounds interleaved in rotating order so a busy spell hits every
// build alike. `git status` is timed on each copy in the same loop; the table gives medians, the
// ratio to git, and each build's difference from the first.
//
//   node bench/daemon-ab.mjs [--files N] [--runs N] [--node PATH] name=path/to/dist name=path/to/dist ...
import { cpSync, existsSync, rmSync, appendFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { ensureTree } from './gen-tree.mjs';
import { WORK_DIR, ensureDir, fmtMs, log, stats, table, timeSpawn } from './lib.mjs';

const argv = process.argv.slice(2);
const opt = (name, dflt) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : dflt);
const files = Number(opt('--files', 50_000));
const runs = Number(opt('--runs', 8));
const node = opt('--node', process.execPath);
const builds = argv.filter((a) => a.includes('=') && !a.startsWith('--')).map((a) => {
  const [name, dist] = a.split('=');
  return { name, cli: join(resolve(dist), 'bin', 'cairn.js') };
});
if (builds.length < 2 || builds.some((b) => !existsSync(b.cli))) throw new Error('usage: node bench/daemon-ab.mjs [--files N] [--runs N] [--node PATH] name=dist name=dist ... (each dist built, with bin/cairn.js)');

const { root: source } = ensureTree({ files });
rmSync(join(WORK_DIR, 'daemon-ab'), { recursive: true, force: true }); // an aborted run's iterations would collide (its daemons end with their trees)
const scratch = ensureDir(join(WORK_DIR, 'daemon-ab'));
const git = (cwd, ...args) => execFileSync('git', args, { cwd, encoding: 'utf8', maxBuffer: 1 << 28 });
const commit = (cwd, m) => git(cwd, '-c', 'user.name=cairn-bench', '-c', 'user.email=bench@cairn.invalid', 'commit', '-q', '-a', '--no-verify', '-m', m);
for (const b of builds) {
  b.root = join(scratch, `tree-${b.name}`);
  rmSync(b.root, { recursive: true, force: true });
  cpSync(source, b.root, { recursive: true, verbatimSymlinks: true });
  appendFileSync(join(b.root, '.git', 'info', 'exclude'), '\n.cairn/\n');
  rmSync(join(b.root, '.cairn'), { recursive: true, force: true });
  b.env = { ...process.env, XDG_CACHE_HOME: ensureDir(join(scratch, `cache-${b.name}`)) };
  b.tracked = git(b.root, 'ls-files', '-s', '-z').split('\0').filter((l) => l.startsWith('100644')).map((l) => l.slice(l.indexOf('\t') + 1)).filter((p) => !p.startsWith('assets/'));
  b.edits = 0;
  b.samples = new Map();
  execFileSync(node, [b.cli, 'daemon', 'start', '--root', b.root], { cwd: b.root, env: b.env });
}
const onePercent = (b) => {
  const n = Math.max(1, Math.round(b.tracked.length / 100));
  for (let k = 0; k < n; k++) appendFileSync(join(b.root, b.tracked[(b.edits * 7919 + k * 104729) % b.tracked.length]), `// edit ${b.edits}.${k}\n`);
  b.edits++;
};
log(`daemon A/B on ${files} files: ${builds.map((b) => b.name).join(', ')}; ${runs} rounds (+1 settling), ${node}`);
try {
  for (let round = -1; round < runs; round++) {
    const order = builds.map((_, i) => i);
    for (let r = 0; r < ((round + 1) % builds.length); r++) order.push(order.shift());
    for (const i of order) {
      const b = builds[i];
      const time = (key, cmd, args) => {
        const t = timeSpawn(cmd, args, { cwd: b.root, env: b.env });
        if (round < 0) return;
        if (!b.samples.has(key)) b.samples.set(key, []);
        b.samples.get(key).push(t.ms);
      };
      const iter = (tag) => join(scratch, `iter-${b.name}-${round}-${tag}`);
      time('git status', 'git', ['status', '--porcelain']);
      onePercent(b);
      time('pre, 1 %', node, [b.cli, 'session', 'pre', '--root', b.root, '--iteration-dir', iter('a')]);
      time('post, unchanged', node, [b.cli, 'session', 'post', '--root', b.root, '--iteration-dir', iter('a'), '--json']);
      time('pre, unchanged', node, [b.cli, 'session', 'pre', '--root', b.root, '--iteration-dir', iter('b')]);
      onePercent(b);
      time('post, 1 %', node, [b.cli, 'session', 'post', '--root', b.root, '--iteration-dir', iter('b'), '--json']);
      commit(b.root, `ab round ${round}`);
    }
  }
} finally {
  for (const b of builds) {
    try {
      b.status = JSON.parse(execFileSync(node, [b.cli, 'daemon', 'status', '--root', b.root, '--json'], { cwd: b.root, env: b.env, encoding: 'utf8' }));
      execFileSync(node, [b.cli, 'daemon', 'stop', '--root', b.root], { cwd: b.root, env: b.env });
    } catch {
      // (a daemon that is gone already)
    }
  }
}
const med = (b, key) => stats(b.samples.get(key)).median;
const rows = [];
for (const key of ['git status', 'pre, 1 %', 'post, 1 %', 'pre, unchanged', 'post, unchanged']) {
  rows.push([key, ...builds.map((b) => `${fmtMs(med(b, key))}${key === 'git status' ? '' : ` (${(med(b, key) / med(b, 'git status')).toFixed(2)}×)`}`), ...builds.slice(1).map((b) => `${med(b, key) - med(builds[0], key) >= 0 ? '+' : '−'}${fmtMs(Math.abs(med(b, key) - med(builds[0], key)))}`)]);
}
console.log(table(`daemon A/B, ${files} files, ${runs} rounds, ${execFileSync(node, ['-p', 'process.version'], { encoding: 'utf8' }).trim()}`, ['turn', ...builds.map((b) => b.name), ...builds.slice(1).map((b) => `${b.name} − ${builds[0].name}`)], rows));
for (const b of builds) console.log(`${b.name}: daemon served ${b.status?.served}, declined ${b.status?.declined}, git ${JSON.stringify(b.status?.git ?? null)}`);
for (const b of builds) rmSync(b.root, { recursive: true, force: true });
