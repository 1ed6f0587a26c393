#!/usr/bin/env node
// Issue 18 figures: `cairn session diff --stat` / `--patch` on an iteration that changed 1 % of
// a generated git repository, against `git diff --stat` / `git diff` of the same change, in one
// interleaved run; and `session report --html` against `--patch`.
//
// It also opens that HTML page in headless Chromium (Debian's, through playwright-core, network
// off) and reports the load event's time (navigation start → loadEventEnd), in the same rounds.
//
//   node bench/review.mjs [--quick] [--runs N]
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureTree } from './gen-tree.mjs';
import { CLI, WORK_DIR, ensureDir, fmtMs, interleave, log, ratioTable, requireBuilt, saveResult, stats, timeSpawn } from './lib.mjs';

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

// The page's load event in Chromium: a fresh offline context per load, so nothing is cached.
const CHROMIUM = process.env.CAIRN_CHROMIUM ?? '/usr/bin/chromium';
let browser = null;
if (existsSync(CHROMIUM)) {
  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
} else log(`${CHROMIUM} not found: the load-event time is not measured (set CAIRN_CHROMIUM)`);
async function loadEventMs() {
  const context = await browser.newContext({ offline: true, viewport: { width: 1280, height: 900 } });
  try {
    const page = await context.newPage();
    await page.goto(pathToFileURL(html).href, { waitUntil: 'load' });
    const ms = await page.evaluate(() => {
      const [nav] = performance.getEntriesByType('navigation');
      return nav.loadEventEnd - nav.startTime;
    });
    return { ms };
  } finally {
    await context.close();
  }
}

// `session diff` answers from the review `session post` kept (review.json); with it moved
// aside, the same output is computed from the inventories and the content store.
const reviewJson = join(root, '.cairn', 'iterations', readdirSync(join(root, '.cairn', 'iterations')).sort().at(-1), 'review.json');
function recomputed(flag) {
  renameSync(reviewJson, `${reviewJson}.aside`);
  try {
    return cli('session', 'diff', flag);
  } finally {
    renameSync(`${reviewJson}.aside`, reviewJson);
  }
}

const loads = [];
const { samples, cpu } = await interleave(
  [
    { name: 'git diff --stat', run: () => timeSpawn('git', ['diff', '--stat'], { cwd: root }) },
    { name: 'cairn session diff --stat', run: () => cli('session', 'diff', '--stat') },
    { name: 'cairn session diff --stat (recomputed)', run: () => recomputed('--stat') },
    { name: 'git diff', run: () => timeSpawn('git', ['diff'], { cwd: root }) },
    { name: 'cairn session diff --patch', run: () => cli('session', 'diff', '--patch') },
    { name: 'cairn session diff --patch (recomputed)', run: () => recomputed('--patch') },
    { name: 'cairn session report --html', run: () => cli('session', 'report', '--html', html) },
    { name: 'Chromium load event of the page', skip: browser === null, run: () => loadEventMs() },
  ],
  { runs, afterRound: () => loads.push(loadavg()[0]) },
);
await browser?.close();
const row = (name, extra = {}) => ({ name, samples: samples.get(name), cpu: cpu.get(name), ...extra });
const load = loads.length === 0 ? NaN : loads.reduce((a, b) => a + b, 0) / loads.length;
const pageLoad = samples.get('Chromium load event of the page');
const htmlBytes = existsSync(html) ? readFileSync(html).length : 0;
const md = [
  `## Review (issue 18): ${changed.length} changed files of a ${meta.params.trackedFiles}-file repository`,
  '',
  `Load average (1 min) over the rounds: ${load.toFixed(1)} on ${cpus().length} cores.`,
  '',
  ratioTable('stat', [row('cairn session diff --stat', { target: 1.5 }), row('cairn session diff --stat (recomputed)'), row('git diff --stat')], 'git diff --stat'),
  ratioTable('patch', [row('cairn session diff --patch', { target: 1.5 }), row('cairn session diff --patch (recomputed)'), row('git diff'), row('cairn session report --html')], 'git diff'),
  ratioTable('HTML report: written vs --patch', [row('cairn session report --html', { target: 1.5 }), row('cairn session diff --patch')], 'cairn session diff --patch'),
  pageLoad?.length
    ? `### HTML report in Chromium\n\nLoad event (navigation start → loadEventEnd, fresh offline context each time) of the ${(htmlBytes / 1024).toFixed(0)} KiB page: median ${fmtMs(stats(pageLoad).median)}, slowest ${fmtMs(stats(pageLoad).max)} over ${pageLoad.length} loads (target < 1 s ${stats(pageLoad).median < 1000 ? '✔' : '✘'}).\n`
    : '### HTML report in Chromium\n\nnot measured (no Chromium)\n',
].join('\n');
saveResult('review', md);
console.log(md);
// leave the tree as it was
git('checkout', '-q', '--', '.');
