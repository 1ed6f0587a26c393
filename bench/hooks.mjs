#!/usr/bin/env node
// The per-turn hook path (issue 19): `cairn hook claude-code` for UserPromptSubmit (session pre)
// and Stop (session post, saved to the store) on a generated git repository, each round with
// 1 % of the files edited between them, interleaved with `git status --porcelain` in the same run.
//
//   node bench/hooks.mjs [--quick] [--runs N]      (--quick: 5,000 files; default 50,000)
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureTree } from './gen-tree.mjs';
import { CLI, log, parseBenchArgs, requireBuilt } from './lib.mjs';

const { quick, runs } = parseBenchArgs(process.argv.slice(2), { runs: 7 });
requireBuilt();
const { root, meta } = ensureTree({ files: quick ? 5_000 : 50_000 });
const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 28 });
git('checkout', '-q', '--', '.');
rmSync(join(root, '.cairn'), { recursive: true, force: true });
const exclude = join(root, '.git', 'info', 'exclude');
if (!readFileSync(exclude, 'utf8').includes('.cairn/')) writeFileSync(exclude, `${readFileSync(exclude, 'utf8')}\n.cairn/\n`);
const tracked = git('ls-files', '-z').split('\0').filter((f) => f.endsWith('.ts') || f.endsWith('.js'));

const time = (fn) => {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
};
const hook = (event, session) => {
  const input = JSON.stringify({ session_id: session, transcript_path: '/tmp/t.jsonl', cwd: root, hook_event_name: event, ...(event === 'Stop' ? { stop_hook_active: false } : { prompt: 'go' }) });
  const r = spawnSync(process.execPath, [CLI, 'hook', 'claude-code'], { cwd: root, input, encoding: 'utf8', env: { ...process.env, CAIRN_STORE: '' } });
  if (r.status !== 0) throw new Error(`hook ${event} exited ${r.status}: ${r.stderr}`);
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// Warm the stat cache and the page cache once.
hook('UserPromptSubmit', 'warm');
hook('Stop', 'warm');
const rows = { status: [], pre: [], post: [] };
for (let i = 0; i < runs; i++) {
  rows.status.push(time(() => git('status', '--porcelain')));
  rows.pre.push(time(() => hook('UserPromptSubmit', `bench-${i}`)));
  const edits = tracked.filter((_, j) => (j + i) % 100 === 0);
  for (const f of edits) writeFileSync(join(root, f), `${readFileSync(join(root, f), 'utf8')}// edit ${i}\n`);
  rows.post.push(time(() => hook('Stop', `bench-${i}`)));
  git('checkout', '-q', '--', '.');
}
const s = median(rows.status);
log(`hook path on ${meta.params.trackedFiles} tracked files, ${runs} rounds, 1 % edited per turn (medians):`);
log(`  git status --porcelain  ${s.toFixed(0)} ms`);
log(`  UserPromptSubmit (pre)  ${median(rows.pre).toFixed(0)} ms  ${(median(rows.pre) / s).toFixed(2)}x git status`);
log(`  Stop (post + store)     ${median(rows.post).toFixed(0)} ms  ${(median(rows.post) / s).toFixed(2)}x git status`);
log(`  worst pre / post        ${Math.max(...rows.pre).toFixed(0)} / ${Math.max(...rows.post).toFixed(0)} ms`);
