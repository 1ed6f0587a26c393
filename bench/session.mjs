#!/usr/bin/env node
// Issue 5 figures: `cairn session pre` and `cairn session post` on a generated 50,000-file git
// repository with a few changes made between them, interleaved with `git status --porcelain` and
// with upstream AIWG's approach (bench/peers/upstream-session.mjs) in the same run.
//
//   node bench/session.mjs [--quick] [--runs N]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureTree } from './gen-tree.mjs';
import {
  BENCH_DIR, CLI, WORK_DIR, cliHelp, ensureDir, fmtMs, log, machineMarkdown, parseBenchArgs,
  peakRssMb, ratioTable, requireBuilt, saveResult, table, timeSpawn,
} from './lib.mjs';

const { quick, runs } = parseBenchArgs();
requireBuilt();
if (!cliHelp(['session', 'pre']) || !cliHelp(['session', 'post'])) {
  saveResult('session', '## Iteration snapshots (issue 5)\n\nnot measured yet: `cairn session pre|post` is not in the built CLI.\n');
  process.exit(0);
}

const { root, meta } = ensureTree({ files: quick ? 5_000 : 50_000 });
const scratch = ensureDir(join(WORK_DIR, `session-${meta.params.trackedFiles}`));
const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 28 });
// A run killed mid-round leaves its edits behind: restore tracked files, drop the new ones.
git('checkout', '-q', '--', '.');
for (const f of readdirSync(join(root, 'src'))) if (f.startsWith('agent-new-')) rmSync(join(root, 'src', f), { force: true });

// A state dir like an agent's (.aiwg), committed once, so both approaches have one to hash.
if (!existsSync(join(root, '.aiwg'))) {
  for (const d of ['requirements', 'architecture', 'ralph', 'testing', 'working']) mkdirSync(join(root, '.aiwg', d), { recursive: true });
  for (let i = 0; i < 40; i++) writeFileSync(join(root, '.aiwg', ['requirements', 'architecture', 'working', 'testing'][i % 4], `note-${i}.md`), `# note ${i}\n${'detail '.repeat(50 + i)}\n`);
  writeFileSync(join(root, '.aiwg', 'ralph', 'current-loop.json'), JSON.stringify({ currentPhase: 'construction', iteration: 3 }));
  git('add', '.aiwg');
  git('-c', 'user.name=cairn-bench', '-c', 'user.email=bench@cairn.invalid', 'commit', '-q', '-m', 'agent state dir');
}
// cairn keeps its cache and iteration records under .cairn/; keep it out of `git status`.
const exclude = join(root, '.git', 'info', 'exclude');
if (!readFileSync(exclude, 'utf8').includes('.cairn/')) writeFileSync(exclude, readFileSync(exclude, 'utf8') + '\n.cairn/\n');

const tracked = git('ls-files', '-s', '-z').split('\0')
  .filter((l) => l.startsWith('100644'))
  .map((l) => l.slice(l.indexOf('\t') + 1))
  .filter((p) => !p.startsWith('assets/') && !p.startsWith('.aiwg/'));
const pick = (r, k) => tracked[(((r + 2) * 7919 + k * 104729) % tracked.length + tracked.length) % tracked.length];

// "A few changed files" per round: 3 edits, 2 new untracked files, 1 deletion; undone after.
let undo = [];
function agentEdits(r) {
  undo = [];
  for (let k = 0; k < 3; k++) {
    const p = join(root, pick(r, k));
    const before = readFileSync(p);
    undo.push(() => writeFileSync(p, before));
    writeFileSync(p, Buffer.concat([before, Buffer.from(`// agent edit ${r}.${k}\n`)]));
  }
  for (let k = 0; k < 2; k++) {
    const p = join(root, 'src', `agent-new-${r}-${k}.ts`);
    writeFileSync(p, `export const made = ${r};\n`);
    undo.push(() => rmSync(p, { force: true }));
  }
  const del = join(root, pick(r, 9));
  const kept = readFileSync(del);
  unlinkSync(del);
  undo.push(() => writeFileSync(del, kept));
}
const undoEdits = () => {
  for (const f of undo.reverse()) f();
  undo = [];
};

const iterDir = (r, who) => join(scratch, `${who}-${r < 0 ? `w${-r}` : r}`);
const node = (args) => timeSpawn(process.execPath, args, { cwd: root });
const cairnPre = (r) => [CLI, 'session', 'pre', '--root', root, '--iteration-dir', iterDir(r, 'cairn')];
const cairnPost = (r) => [CLI, 'session', 'post', '--root', root, '--iteration-dir', iterDir(r, 'cairn'), '--json'];
const upstream = join(BENCH_DIR, 'peers', 'upstream-session.mjs');

// First pre on this tree with no cache at all (the one-time cost), once.
rmSync(join(root, '.cairn'), { recursive: true, force: true });
rmSync(scratch, { recursive: true, force: true });
ensureDir(scratch);
const firstPre = node(cairnPre(-9)).ms;
log(`first session pre (no cache): ${fmtMs(firstPre)}`);

// Each round: pre (both approaches, and the git status anchor), the agent's edits, post
// (both, and the anchor again), then the edits are undone. Pre and post of one approach are
// ordered by nature; the approaches are interleaved within the round.
const preS = { cairn: [], upstream: [], git: [] };
const postS = { cairn: [], upstream: [], git: [] };
const preCpu = { cairn: [], upstream: [], git: [] };
const postCpu = { cairn: [], upstream: [], git: [] };
let found = null;
for (let r = -1; r < runs; r++) {
  const order = r % 2 ? ['cairn', 'upstream', 'git'] : ['git', 'upstream', 'cairn'];
  const timePhase = (phase, sink, cpuSink) => {
    for (const who of order) {
      const t = who === 'git' ? timeSpawn('git', ['status', '--porcelain'], { cwd: root })
        : who === 'cairn' ? node(phase === 'pre' ? cairnPre(r) : cairnPost(r))
          : node([upstream, phase, root, iterDir(r, 'upstream')]);
      if (r >= 0) {
        sink[who].push(t.ms);
        if (t.cpuMs !== undefined) cpuSink[who].push(t.cpuMs);
      }
    }
  };
  timePhase('pre', preS, preCpu);
  agentEdits(r);
  timePhase('post', postS, postCpu);
  if (found === null) {
    try {
      const d = JSON.parse(readFileSync(join(iterDir(r, 'cairn'), 'post-snapshot.json'), 'utf8'));
      found = d;
    } catch { /* reported below */ }
  }
  undoEdits();
}

// Did cairn see the uncommitted edits (the point of paying for an inventory)?
let seen;
try {
  const out = timeSpawn(process.execPath, [CLI, 'session', 'report', iterDir(runs - 1, 'cairn'), '--json'], { cwd: root, okCodes: [0, 1, 2] });
  const diff = JSON.parse(String(out.stdout));
  const d = diff.diff ?? diff;
  seen = `last round: ${d.filesAdded?.length ?? '?'} added, ${d.filesModified?.length ?? '?'} modified, ${d.filesDeleted?.length ?? '?'} deleted (made: 2 / 3 / 1)`;
} catch {
  seen = found ? 'post-snapshot written' : 'could not read the report';
}

const rssPost = peakRssMb(process.execPath, cairnPre(999), { cwd: root });
let out = `## Iteration snapshots (issue 5)\n\n${machineMarkdown()}\nRepository: generated, ${git('ls-files').split('\n').length - 1} tracked files (${(meta.bytes / 1e6).toFixed(0)} MB) + a 41-file \`.aiwg\` state dir. Between pre and post each round: 3 files edited, 2 untracked files created, 1 file deleted (undone after the round). "upstream approach" = \`bench/peers/upstream-session.mjs\`, AIWG's capture re-implemented from its description (five \`git\` calls through a shell + sha256 of the state dir; post adds diff/log/test search), run as one Node process like cairn.\n\n`;
out += ratioTable('session pre', [
  { name: 'cairn session pre', samples: preS.cairn, cpu: preCpu.cairn, note: 'whole-tree inventory (stat cache warm) + git + key files + state dir' },
  { name: 'upstream approach pre', samples: preS.upstream, cpu: preCpu.upstream, note: 'no inventory: does not see uncommitted edits in its diff' },
  { name: 'git status --porcelain', samples: preS.git, cpu: preCpu.git },
], 'git status --porcelain');
out += ratioTable('session post (a few files changed)', [
  { name: 'cairn session post', samples: postS.cairn, cpu: postCpu.cairn, note: `includes saving the record to the file store; ${seen}` },
  { name: 'upstream approach post', samples: postS.upstream, cpu: postCpu.upstream },
  { name: 'git status --porcelain', samples: postS.git, cpu: postCpu.git },
], 'git status --porcelain');
out += table('one-offs', ['what', 'value'], [
  ['first `cairn session pre` on the tree, no cache yet', fmtMs(firstPre)],
  ['cairn session pre, peak RSS', rssPost ? `${rssPost.toFixed(0)} MB` : '–'],
]);
saveResult('session', out);
