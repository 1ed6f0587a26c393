#!/usr/bin/env node
// Runs every benchmark in turn (each in its own process, each bounded in time) and collects
// their tables into bench/.work/results/ALL.md.
//
//   npm run bench                      # full sizes, ~10 minutes
//   node bench/run-all.mjs --quick     # small sizes, ~1–2 minutes
//   node bench/run-all.mjs --only inventory,store
//   node bench/run-all.mjs --no-servers   # as root, store.mjs otherwise starts RGW + PostgreSQL
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR, REPO_DIR, RESULTS_DIR, ensureDir, log, machineMarkdown, requireBuilt } from './lib.mjs';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const onlyAt = argv.indexOf('--only');
const only = onlyAt >= 0 ? argv[onlyAt + 1].split(',') : null;
requireBuilt();

// Budgets keep the whole run near ten minutes even if one part misbehaves.
const benches = [
  { name: 'inventory', budgetS: quick ? 120 : 330 },
  { name: 'store', budgetS: quick ? 120 : 180, extra: process.getuid?.() === 0 && !argv.includes('--no-servers') ? ['--with-servers'] : [] },
  { name: 'session', budgetS: quick ? 90 : 150 },
  { name: 'stage', budgetS: quick ? 60 : 120 },
  { name: 'rewind', budgetS: quick ? 120 : 300 },
].filter((b) => !only || only.includes(b.name));

ensureDir(RESULTS_DIR);
const parts = [`# cairn benchmarks${quick ? ' (--quick)' : ''}\n\n${machineMarkdown()}`];
let failed = 0;
for (const b of benches) {
  log(`── ${b.name} (budget ${b.budgetS} s)`);
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [join(BENCH_DIR, `${b.name}.mjs`), ...(quick ? ['--quick'] : []), ...(b.extra ?? [])], {
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: b.budgetS * 1000,
    killSignal: 'SIGKILL',
  });
  const took = ((Date.now() - t0) / 1000).toFixed(0);
  // A bench killed at its budget cannot clean up: stop the store bench's servers here (both
  // scripts are safe to run when nothing is running).
  if (b.name === 'store' && b.extra?.length) {
    spawnSync('bash', [join(REPO_DIR, 'scripts', 'servers', 'ceph-down.sh'), '/tmp/cairn-bench-ceph'], { stdio: 'ignore', timeout: 60_000 });
    spawnSync('bash', [join(REPO_DIR, 'scripts', 'servers', 'pg-down.sh'), '/tmp/cairn-bench-pg'], { stdio: 'ignore', timeout: 60_000 });
  }
  const file = join(RESULTS_DIR, `${b.name}.md`);
  const fresh = existsSync(file) && statSync(file).mtimeMs >= t0;
  if (r.status !== 0) {
    failed++;
    const why = r.signal ? `stopped at its ${b.budgetS} s budget` : `exited ${r.status}`;
    log(`${b.name}: ${why}`);
    // Benches save what they have after each section: keep the finished tables, say what is missing.
    parts.push(fresh ? `${readFileSync(file, 'utf8')}\n**Partial: the bench ${why} after ${took} s; the tables above are the sections it finished.**\n` : `## ${b.name}\n\nnot measured: the bench ${why} after ${took} s.\n`);
  } else if (fresh) {
    parts.push(readFileSync(file, 'utf8'));
    log(`${b.name}: done in ${took} s`);
  }
}
writeFileSync(join(RESULTS_DIR, 'ALL.md'), parts.join('\n'));
log(`tables collected in ${join(RESULTS_DIR, 'ALL.md')}`);
process.exitCode = failed ? 1 : 0;
