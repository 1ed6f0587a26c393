// Shared benchmark harness: interleaved timing, median/p95, ratio tables, machine facts.
// Benchmarks are scripts, never tests: they print numbers, they assert nothing about time.
import { spawnSync, execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, writeFileSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, release } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
export const REPO_DIR = resolve(BENCH_DIR, '..');
export const WORK_DIR = join(BENCH_DIR, '.work');
export const RESULTS_DIR = join(WORK_DIR, 'results');
// CAIRN_BENCH_CLI lets the harness itself be checked against a stand-in CLI.

/**
 * Other engineers rebuild dist/ while benches run; a half-written dist once produced nonsense.
 * So each run (run-all and its children share one) uses a frozen copy of dist/, taken at start.
 */
function frozenDist() {
  if (process.env.CAIRN_BENCH_DIST) return process.env.CAIRN_BENCH_DIST;
  const src = join(REPO_DIR, 'dist');
  if (!existsSync(join(src, 'bin', 'cairn.js'))) return src;
  const root = join(WORK_DIR, 'frozen');
  rmSync(root, { recursive: true, force: true });
  const dest = join(root, String(process.pid));
  cpSync(src, join(dest, 'dist'), { recursive: true });
  copyFileSync(join(REPO_DIR, 'package.json'), join(dest, 'package.json'));
  process.env.CAIRN_BENCH_DIST = join(dest, 'dist');
  return process.env.CAIRN_BENCH_DIST;
}
export const DIST_DIR = frozenDist();
// CAIRN_BENCH_CLI lets the harness itself be checked against a stand-in CLI.
export const CLI = process.env.CAIRN_BENCH_CLI ?? join(DIST_DIR, 'bin', 'cairn.js');
export const DIST_INDEX = join(DIST_DIR, 'index.js');

/** `--quick` (small sizes), `--runs N` (samples per command). */
export function parseBenchArgs(argv = process.argv.slice(2), defaults = {}) {
  const quick = argv.includes('--quick');
  const runsAt = argv.indexOf('--runs');
  const runs = runsAt >= 0 ? Number(argv[runsAt + 1]) : quick ? (defaults.quickRuns ?? 3) : (defaults.runs ?? 5);
  return { quick, runs, argv };
}

export function ensureDir(dir) {
  mkdirSync(dir, { recursive: true });
  return dir;
}

export function log(...parts) {
  // Diagnostics to stderr so stdout stays the tables.
  process.stderr.write(`[bench] ${parts.join(' ')}\n`);
}

const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;

/**
 * Runs a program once without a shell. Returns wall milliseconds and, through GNU time, the CPU
 * milliseconds (user + sys, the program and the children it waited for): on a machine shared
 * with other work, CPU time is the steadier figure. Throws on a failing exit unless `okCodes`.
 */
export function timeSpawn(cmd, args, { cwd, env, okCodes = [0], input } = {}) {
  const [file, argv] = GNU_TIME ? [GNU_TIME, ['-f', '@@T %U %S', cmd, ...args]] : [cmd, args];
  const start = process.hrtime.bigint();
  const r = spawnSync(file, argv, {
    cwd,
    env: env ? { ...process.env, ...env } : process.env,
    input,
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    maxBuffer: 1 << 30,
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.error) throw r.error;
  let stderr = String(r.stderr);
  let cpuMs;
  const m = /@@T ([\d.]+) ([\d.]+)\s*$/.exec(stderr);
  if (m) {
    cpuMs = (Number(m[1]) + Number(m[2])) * 1000;
    stderr = stderr.slice(0, m.index);
  }
  if (!okCodes.includes(r.status)) {
    throw new Error(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}: ${stderr.slice(0, 2000)}`);
  }
  return { ms, cpuMs, stdout: r.stdout, stderr, status: r.status };
}

/** A shell pipeline (for anchors like `git ls-files -z | xargs -0 -P2 sha256sum`). */
export function timeShell(script, opts = {}) {
  return timeSpawn('bash', ['-c', script], opts);
}

/** Peak RSS in MB of one run of a program, from GNU time's %M (kilobytes). */
export function peakRssMb(cmd, args, { cwd, env } = {}) {
  if (!existsSync('/usr/bin/time')) return null;
  const r = spawnSync('/usr/bin/time', ['-f', '@@RSS %M', cmd, ...args], {
    cwd,
    env: env ? { ...process.env, ...env } : process.env,
    stdio: ['ignore', 'ignore', 'pipe'],
    maxBuffer: 1 << 28,
  });
  const m = /@@RSS (\d+)/.exec(String(r.stderr));
  return m ? Number(m[1]) / 1024 : null;
}

/**
 * Interleaves cases: round r runs every case once, in an order rotated by r, so drift in
 * this noisy VM hits every case alike. Each case: { name, run(): number|Promise<number> (ms),
 * before?(): void|Promise<void> (untimed, runs before each timed run), skip?: boolean }.
 * `afterRound(r)` runs untimed after every round.
 */
export async function interleave(cases, { runs = 5, warmup = 1, afterRound, beforeRound } = {}) {
  const live = cases.filter((c) => !c.skip);
  const samples = new Map(live.map((c) => [c.name, []]));
  const cpu = new Map(live.map((c) => [c.name, []]));
  const errors = new Map();
  for (let r = -warmup; r < runs; r++) {
    if (beforeRound) await beforeRound(r);
    const shift = ((r % live.length) + live.length) % live.length;
    const order = [...live.slice(shift), ...live.slice(0, shift)];
    for (const c of order) {
      if (errors.has(c.name)) continue;
      try {
        if (c.before) await c.before(r);
        const res = await c.run(r);
        if (r >= 0) {
          samples.get(c.name).push(typeof res === 'number' ? res : res.ms);
          if (typeof res === 'object' && res.cpuMs !== undefined) cpu.get(c.name).push(res.cpuMs);
        }
      } catch (err) {
        errors.set(c.name, err instanceof Error ? err.message : String(err));
        log(`case "${c.name}" failed: ${errors.get(c.name).split('\n')[0]}`);
      }
    }
    if (afterRound) await afterRound(r);
  }
  return { samples, cpu, errors };
}

export function quantile(sorted, q) {
  if (sorted.length === 0) return NaN;
  // Nearest-rank: with 5–7 samples p95 is simply the slowest run, which is what we want to see.
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[idx];
}

export function stats(values) {
  const s = [...values].sort((a, b) => a - b);
  const n = s.length;
  const median = n === 0 ? NaN : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  return { n, median, p95: quantile(s, 0.95), min: s[0] ?? NaN, max: s[n - 1] ?? NaN };
}

export function fmtMs(ms) {
  if (!Number.isFinite(ms)) return '–';
  if (ms < 0) return `−${fmtMs(-ms)}`;
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 10) return `${ms.toFixed(0)} ms`;
  if (ms >= 1) return `${ms.toFixed(1)} ms`;
  return `${(ms * 1000).toFixed(0)} µs`;
}

export function fmtRatio(x) {
  return Number.isFinite(x) ? `${x.toFixed(2)}×` : '–';
}

/**
 * Markdown table of median/p95 per row, with the ratio of each row's median to the named
 * anchor row's median measured in the same run. Rows: { name, samples?: number[], note?, target? }.
 */
export function ratioTable(title, rows, anchor) {
  const anchorRow = rows.find((r) => r.name === anchor);
  const med = (xs) => (xs?.length ? stats(xs).median : NaN);
  const anchorMed = med(anchorRow?.samples);
  const anchorCpu = med(anchorRow?.cpu);
  const withCpu = rows.some((r) => r.cpu?.length);
  const lines = [
    `### ${title}`,
    '',
    `| command | median | p95 | runs | ratio to \`${anchor}\` | target |${withCpu ? ' CPU (user+sys) median | CPU ratio |' : ''} note |`,
    `|---|---|---|---|---|---|${withCpu ? '---|---|' : ''}---|`,
  ];
  for (const r of rows) {
    const st = r.samples?.length ? stats(r.samples) : null;
    const ratio = st ? st.median / anchorMed : NaN;
    const verdict = r.target && Number.isFinite(ratio) ? (ratio <= r.target ? ' ✔' : ' ✘') : '';
    const cpuMed = med(r.cpu);
    const cpuCols = withCpu ? ` ${fmtMs(cpuMed)} | ${r.name === anchor ? '1.00×' : fmtRatio(cpuMed / anchorCpu)} |` : '';
    lines.push(
      `| ${r.name} | ${st ? fmtMs(st.median) : 'not measured'} | ${st ? fmtMs(st.p95) : '–'} | ${st?.n ?? 0} | ${
        r.name === anchor ? '1.00× (anchor)' : fmtRatio(ratio)
      } | ${r.target ? `≤ ${r.target}×${verdict}` : ''} |${cpuCols} ${r.note ?? ''} |`,
    );
  }
  return lines.join('\n') + '\n\n';
}

/** Generic markdown table from a header and rows of cells. */
export function table(title, header, rows) {
  const out = [`### ${title}`, '', `| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
  for (const row of rows) out.push(`| ${row.join(' | ')} |`);
  return out.join('\n') + '\n\n';
}

export function machineInfo() {
  const sh = (c) => {
    try {
      return execFileSync('bash', ['-c', c], { encoding: 'utf8' }).trim();
    } catch {
      return 'unknown';
    }
  };
  return {
    date: new Date().toISOString(),
    nproc: sh('nproc'),
    cpu: cpus()[0]?.model ?? 'unknown',
    shaNi: sh("grep -m1 -o -w sha_ni /proc/cpuinfo || echo no"),
    kernel: release(),
    node: process.version,
    git: sh('git --version'),
    mem: sh("free -g | awk '/Mem:/{print $2\" GiB\"}'"),
    load: loadavg().map((x) => x.toFixed(1)).join(' '),
    commit: sh(`git -C ${REPO_DIR} rev-parse --short HEAD`),
  };
}

export function machineMarkdown(info = machineInfo()) {
  return `Machine: ${info.nproc} vCPU (${info.cpu}, SHA-NI ${info.shaNi === 'sha_ni' ? 'yes' : 'no'}), ${info.mem} RAM, kernel ${info.kernel}, Node ${info.node}, ${info.git}; cairn at commit ${info.commit} (dist built from the working tree); measured ${info.date}; load average at start ${info.load} (other work on the machine inflates absolute times; ratios within one run are the figures to read).\n`;
}

/** Saves a bench's markdown so run-all (and RESULTS.md) can collect it. */
export function saveResult(name, markdown, { print = true } = {}) {
  ensureDir(RESULTS_DIR);
  writeFileSync(join(RESULTS_DIR, `${name}.md`), markdown);
  if (print) process.stdout.write(markdown + '\n');
}

export function requireBuilt() {
  if (!existsSync(CLI) || !existsSync(DIST_INDEX)) {
    throw new Error(`the package is not built (${CLI} missing): run \`npm run build\` first`);
  }
}

/** The CLI's help text for a subcommand, or '' if the command does not exist yet. */
export function cliHelp(args) {
  const r = spawnSync(process.execPath, [CLI, ...args, '--help'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout : '';
}

/** True when `cairn <args…>` is a registered command (the part has landed). */
export function cliHas(args, mustMention) {
  const help = cliHelp(args);
  if (!help) return false;
  return mustMention ? help.includes(mustMention) : true;
}

/** Small deterministic PRNG (sfc32) so generated trees are the same on every machine. */
export function prng(seed) {
  let a = 0x9e3779b9 ^ seed,
    b = 0x243f6a88 ^ (seed * 31),
    c = 0xb7e15162 ^ (seed * 7),
    d = 1;
  const next = () => {
    a |= 0; b |= 0; c |= 0; d |= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 16; i++) next();
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (arr) => arr[Math.floor(next() * arr.length)],
    normal: () => {
      // Box–Muller; enough for size distributions.
      const u = Math.max(next(), 1e-12);
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
    },
  };
}

export function readJsonIfExists(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}
