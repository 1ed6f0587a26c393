#!/usr/bin/env node
// The README's first command (`npm ci && npm run build && npm run demo`): cairn's main job, end
// to end, on the embedded default (the local file store; no servers).
//
// In a throwaway git repository it takes the pre-snapshot of an iteration, plays an agent
// (an edit by a tool, a file made by a shell command, a commit, a test run whose log is found),
// takes the post-snapshot, prints the report, and lists the record saved in the snapshot store.
// Exits non-zero if any step fails or the report misses what the "agent" did.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(repoRoot, 'dist', 'bin', 'cairn.js');
if (!existsSync(cli)) {
  process.stderr.write('demo: dist/bin/cairn.js is missing; run `npm run build` first\n');
  process.exit(1);
}

const work = mkdtempSync(join(tmpdir(), 'cairn-demo-'));
const project = join(work, 'project');
// The stat cache of the repo-snapshot engine goes with the demo, not into ~/.cache.
const env = { ...process.env, XDG_CACHE_HOME: join(work, 'cache'), NO_COLOR: '1' };
const keep = process.env.CAIRN_DEMO_KEEP === '1';

function heading(text) {
  process.stdout.write(`\n\x1b[1m== ${text}\x1b[0m\n`.replace(/\x1b\[[0-9;]*m/g, process.stdout.isTTY ? '$&' : ''));
}

function show(cmd, args) {
  const quote = (a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`);
  process.stdout.write(`$ ${[cmd, ...args.map(quote)].join(' ')}\n`);
}

/** Runs a program (never through a shell unless the step is about a shell); fails the demo on a non-zero exit. */
function run(cmd, args, { quiet = false, capture = false } = {}) {
  if (!quiet) show(cmd === process.execPath ? 'node' : cmd, args);
  const r = spawnSync(cmd, args, { cwd: project, env, encoding: 'utf8', stdio: capture ? ['ignore', 'pipe', 'pipe'] : ['ignore', 'inherit', 'inherit'] });
  if (r.error) throw r.error;
  if (r.status !== 0) {
    if (capture) process.stderr.write(`${r.stdout ?? ''}${r.stderr ?? ''}`);
    throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status}`);
  }
  return r.stdout ?? '';
}

function cairn(args, options) {
  show('cairn', args);
  return run(process.execPath, [cli, ...args], { ...options, quiet: true });
}

function git(...args) {
  return run('git', args, { quiet: true, capture: true });
}

function file(rel, content) {
  mkdirSync(dirname(join(project, rel)), { recursive: true });
  writeFileSync(join(project, rel), content);
}

function check(condition, what) {
  if (!condition) throw new Error(`the report does not show ${what}`);
  process.stdout.write(`  ok: ${what}\n`);
}

try {
  heading('A throwaway project with one commit');
  mkdirSync(project);
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'Demo Agent');
  git('config', 'user.email', 'agent@example.invalid');
  git('config', 'commit.gpgsign', 'false');
  file('package.json', `${JSON.stringify({ name: 'demo-project', version: '1.0.0', type: 'module' }, null, 2)}\n`);
  file('src/math.js', 'export const add = (a, b) => a + b;\n');
  file('test/add.test.js', "import test from 'node:test';\nimport assert from 'node:assert/strict';\nimport { add } from '../src/math.js';\n\ntest('add', () => assert.equal(add(2, 3), 5));\n");
  file('.gitignore', 'node_modules/\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'Initial project');
  process.stdout.write(`project: ${project}\n`);

  heading('Before the agent works: cairn session pre');
  cairn(['session', 'pre']);

  heading('The agent works');
  process.stdout.write('- a tool edits src/math.js (not committed)\n');
  file('src/math.js', 'export const add = (a, b) => a + b;\nexport const multiply = (a, b) => a * b;\n');
  process.stdout.write('- a shell command writes NOTES.md (untracked)\n');
  run('sh', ['-c', 'echo "# Notes from the agent" > NOTES.md']);
  process.stdout.write('- the agent commits a new test\n');
  file('test/multiply.test.js', "import test from 'node:test';\nimport assert from 'node:assert/strict';\nimport { multiply } from '../src/math.js';\n\ntest('multiply', () => assert.equal(multiply(4, 5), 20));\n");
  git('add', 'test/multiply.test.js');
  show('git', ['add', 'test/multiply.test.js']);
  show('git', ['commit', '-m', 'Add a test for multiply']);
  git('commit', '-q', '-m', 'Add a test for multiply');
  process.stdout.write('- the agent runs the tests; the log goes where iteration logs go\n');
  const testRun = spawnSync(process.execPath, ['--test', '--test-reporter=spec', 'test/'], { cwd: project, env, encoding: 'utf8' });
  show('node', ['--test', '--test-reporter=spec', 'test/']);
  process.stdout.write('  (output saved to .aiwg/ralph-external/outputs/iteration-001.log)\n');
  file('.aiwg/ralph-external/outputs/iteration-001.log', `${testRun.stdout}${testRun.stderr}`);
  if (testRun.status !== 0) throw new Error(`the demo's own tests failed:\n${testRun.stdout}${testRun.stderr}`);

  heading('After the agent: cairn session post (the report)');
  cairn(['session', 'post']);

  heading('The record in the snapshot store (embedded default: .cairn/store)');
  cairn(['store', 'list', '--session', 'default']);

  heading('Checking the report');
  const diff = JSON.parse(run(process.execPath, [cli, 'session', 'report', '--json'], { quiet: true, capture: true }));
  check(diff.filesModified.includes('src/math.js'), 'the uncommitted tool edit (src/math.js modified)');
  check(diff.filesAdded.includes('NOTES.md'), 'the untracked file made by the shell (NOTES.md added)');
  check(diff.filesAdded.includes('test/multiply.test.js'), 'the committed file (test/multiply.test.js added)');
  check(diff.commitCount === 1 && diff.commits[0].endsWith('Add a test for multiply'), 'the commit');
  check(diff.hasTests && diff.testSummary?.passed === 2, 'the test run (2 passed)');
  const latest = join(project, '.cairn', 'store', 'default', 'scopes', 'agent', 'iterations', 'snapshots', 'snapshot_latest.json');
  check(JSON.parse(readFileSync(latest, 'utf8')).data.diff.filesAdded.includes('NOTES.md'), 'the record saved in the store');

  heading('Review: how the iteration changed the project');
  cairn(['session', 'diff', '--stat']);
  const page = join(work, 'report.html');
  cairn(['session', 'report', '--html', page]);
  check(readFileSync(page, 'utf8').includes('src/math.js'), 'the HTML report (one self-contained page)');

  heading('Rewind: put the working tree back as it was before the agent');
  cairn(['session', 'restore', '--dry-run']);
  cairn(['session', 'restore']);
  check(!existsSync(join(project, 'NOTES.md')), 'restore removed the file the shell made');
  check(readFileSync(join(project, 'src/math.js'), 'utf8') === 'export const add = (a, b) => a + b;\n', 'restore put src/math.js back');
  check(git('rev-parse', 'HEAD').trim() !== '' && git('log', '--format=%s', '-1').trim() === 'Add a test for multiply', 'restore left the commit in place');
  cairn(['session', 'restore', '--undo']);
  check(existsSync(join(project, 'NOTES.md')), '--undo brought the agent\'s work back');

  process.stdout.write('\nDemo complete: cairn saw the committed, the uncommitted and the shell-made work and the tests, showed the change, and put it back.\n');
} catch (e) {
  process.stderr.write(`\ndemo failed: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
} finally {
  if (keep) process.stdout.write(`(kept ${work})\n`);
  else rmSync(work, { recursive: true, force: true });
}
