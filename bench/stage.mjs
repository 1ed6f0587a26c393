#!/usr/bin/env node
// Issue 6 figures: one `cairn stage write` (whole process), and 8 concurrent writers on one task,
// side by side with upstream Datarim's approach (bench/peers/upstream-stage-writer.sh: mkdir lock
// polled once a second) in the same run.
//
//   node bench/stage.mjs [--quick] [--runs N]
import { spawn } from 'node:child_process';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  BENCH_DIR, CLI, WORK_DIR, cliHelp, ensureDir, fmtMs, interleave, machineMarkdown, parseBenchArgs,
  ratioTable, requireBuilt, saveResult, stats, table, timeSpawn,
} from './lib.mjs';

const { quick, runs } = parseBenchArgs(process.argv.slice(2), { runs: 7 });
requireBuilt();
if (!cliHelp(['stage', 'write'])) {
  saveResult('stage', '## Stage notes (issue 6)\n\nnot measured yet: `cairn stage write` is not in the built CLI.\n');
  process.exit(0);
}

const scratch = join(WORK_DIR, 'stage');
rmSync(scratch, { recursive: true, force: true });
const root = ensureDir(join(scratch, 'root'));
const bodyFile = join(scratch, 'body.md');
// A typical note: a few KB of markdown summary.
writeFileSync(bodyFile, `## Done\n\n${'- step finished, tests green, next: review the diff\n'.repeat(40)}`);
const upstreamWriter = join(BENCH_DIR, 'peers', 'upstream-stage-writer.sh');
const TASK = 'BENCH-0001';

const cairnArgs = (task) => [
  CLI, 'stage', 'write', '--root', root, '--task', task, '--stage', 'do', '--command', '/dr-do',
  '--captured-by', 'agent', '--recommended-next', '/dr-qa', '--body-file', bodyFile,
];
const upstreamArgs = (task) => [upstreamWriter, root, task, bodyFile];

// ---------- one writer, uncontended ----------
const single = await interleave(
  [
    { name: 'cairn stage write', run: () => timeSpawn(process.execPath, cairnArgs(TASK)) },
    { name: 'upstream approach (bash)', run: () => timeSpawn('bash', upstreamArgs(TASK)) },
    { name: 'node -e 0 (startup floor)', run: () => timeSpawn(process.execPath, ['-e', '0']) },
  ],
  { runs: Math.max(runs, 7) },
);

// ---------- 8 concurrent writers on one task ----------
function concurrent(cmd, argsFor, n) {
  return new Promise((resolveAll) => {
    const t0 = process.hrtime.bigint();
    let left = n;
    const codes = [];
    for (let i = 0; i < n; i++) {
      const child = spawn(cmd, argsFor(i), { stdio: ['ignore', 'ignore', 'pipe'] });
      child.stderr.resume();
      child.on('close', (code) => {
        codes.push(code);
        if (--left === 0) resolveAll({ ms: Number(process.hrtime.bigint() - t0) / 1e6, codes });
      });
    }
  });
}
const N = 8;
const failures = { cairn: 0, upstream: 0 };
const conc = await interleave(
  [
    {
      name: `cairn stage write ×${N}`,
      run: async () => {
        const r = await concurrent(process.execPath, () => cairnArgs(TASK), N);
        failures.cairn += r.codes.filter((c) => c !== 0).length;
        return r.ms;
      },
    },
    {
      name: `upstream approach ×${N}`,
      run: async () => {
        const r = await concurrent('bash', () => upstreamArgs(TASK), N);
        failures.upstream += r.codes.filter((c) => c !== 0).length;
        return r.ms;
      },
    },
    // What 8 writers cost with no lock contention at all (different tasks): the floor.
    { name: `cairn stage write ×${N}, 8 different tasks`, run: async () => (await concurrent(process.execPath, (i) => cairnArgs(`BENCH-000${i + 2}`), N)).ms },
  ],
  { runs: quick ? 2 : Math.min(runs, 5) },
);
const leftovers = readdirSync(join(root, 'datarim', 'snapshots')).filter((n) => n.startsWith('.lock') || n.includes('.tmp'));

let out = `## Stage notes (issue 6)\n\n${machineMarkdown()}\nBody: ${Buffer.byteLength(`## Done\n\n${'- step finished, tests green, next: review the diff\n'.repeat(40)}`)} B of markdown. "upstream approach" = \`bench/peers/upstream-stage-writer.sh\`, Datarim's writer re-implemented from its description (mkdir lock, \`sleep 1\` between attempts, printf frontmatter, fsync, mv). Whole processes, interleaved.\n\n`;
out += ratioTable('one writer (whole process, no contention)', [
  { name: 'cairn stage write', samples: single.samples.get('cairn stage write'), cpu: single.cpu.get('cairn stage write') },
  { name: 'upstream approach (bash)', samples: single.samples.get('upstream approach (bash)'), cpu: single.cpu.get('upstream approach (bash)') },
  { name: 'node -e 0 (startup floor)', samples: single.samples.get('node -e 0 (startup floor)'), cpu: single.cpu.get('node -e 0 (startup floor)'), note: 'Node start alone' },
], 'upstream approach (bash)');
out += ratioTable(`${N} concurrent writers on one task (time until the last exits)`, [
  { name: `cairn stage write ×${N}`, samples: conc.samples.get(`cairn stage write ×${N}`), cpu: conc.cpu.get(`cairn stage write ×${N}`), note: `${failures.cairn} non-zero exits` },
  { name: `upstream approach ×${N}`, samples: conc.samples.get(`upstream approach ×${N}`), cpu: conc.cpu.get(`upstream approach ×${N}`), note: `${failures.upstream} non-zero exits; 1 s polling` },
  { name: `cairn stage write ×${N}, 8 different tasks`, samples: conc.samples.get(`cairn stage write ×${N}, 8 different tasks`), cpu: conc.cpu.get(`cairn stage write ×${N}, 8 different tasks`), note: 'no contention: the floor for 8 processes on 2 cores' },
], `upstream approach ×${N}`);
const c8 = stats(conc.samples.get(`cairn stage write ×${N}`) ?? []).median;
const free8 = stats(conc.samples.get(`cairn stage write ×${N}, 8 different tasks`) ?? []).median;
out += table('contention cost', ['what', 'value'], [
  ['cairn: 8 writers on one task minus 8 writers on 8 tasks', fmtMs(c8 - free8)],
  ['lock dirs or temp files left behind', String(leftovers.length)],
]);
saveResult('stage', out);
rmSync(scratch, { recursive: true, force: true });
