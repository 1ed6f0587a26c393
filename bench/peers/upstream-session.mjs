#!/usr/bin/env node
// Upstream AIWG SnapshotManager's approach, re-implemented from its description (upstream-notes
// § 1), as one process per capture, so it compares with `cairn session pre|post` whole-process:
//   pre:  five `git` calls through execSync (a shell each): rev-parse --abbrev-ref HEAD,
//         rev-parse HEAD, diff --cached --name-only, diff --name-only,
//         ls-files --others --exclude-standard; sha256 of each key file; a recursive walk of the
//         state dir hashing every regular file; pre-snapshot.json written with writeFileSync.
//   post: the same git/state capture, plus `git diff --name-status pre..post` (and a
//         `git diff` per modified path), `git log pre..HEAD`, a search for test results,
//         and post-snapshot.json.
//   node bench/peers/upstream-session.mjs pre|post <root> <iterationDir>
import { execSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const [mode, root, iterationDir] = process.argv.slice(2);
const KEY_FILES = ['package.json', 'package-lock.json', 'CLAUDE.md', 'CHANGELOG.md', '.gitignore', 'tsconfig.json'];

const sh = (cmd) => {
  try {
    return execSync(cmd, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 28 }).trim();
  } catch {
    return null;
  }
};
const lines = (s) => (s ? s.split('\n').filter(Boolean) : []);

function gitStatus() {
  const branch = sh('git rev-parse --abbrev-ref HEAD');
  const commit = sh('git rev-parse HEAD');
  if (branch === null || commit === null) return { branch: 'unknown', commit: 'unknown', staged: [], unstaged: [], untracked: [] };
  return {
    branch,
    commit,
    staged: lines(sh('git diff --cached --name-only')),
    unstaged: lines(sh('git diff --name-only')),
    untracked: lines(sh('git ls-files --others --exclude-standard')),
  };
}

function fileSnapshot(abs) {
  const st = statSync(abs);
  return { path: relative(root, abs), hash: createHash('sha256').update(readFileSync(abs)).digest('hex'), size: st.size, mtime: st.mtime.toISOString() };
}

function stateDir() {
  const dir = join(root, '.aiwg');
  const files = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const abs = join(d, e.name);
      if (e.isDirectory()) walk(abs);
      else if (e.isFile()) files.push(fileSnapshot(abs));
    }
  };
  if (existsSync(dir)) walk(dir);
  let ralphState;
  try {
    ralphState = JSON.parse(readFileSync(join(dir, 'ralph', 'current-loop.json'), 'utf8'));
  } catch {
    ralphState = null;
  }
  return { files, ralphState };
}

mkdirSync(iterationDir, { recursive: true });
if (mode === 'pre') {
  const snap = {
    timestamp: new Date().toISOString(),
    git: gitStatus(),
    keyFiles: KEY_FILES.filter((f) => existsSync(join(root, f))).map((f) => fileSnapshot(join(root, f))),
    aiwg: stateDir(),
  };
  writeFileSync(join(iterationDir, 'pre-snapshot.json'), JSON.stringify(snap, null, 2));
} else {
  const pre = JSON.parse(readFileSync(join(iterationDir, 'pre-snapshot.json'), 'utf8'));
  const git = gitStatus();
  const fileDiffs = [];
  if (pre.git.commit !== 'unknown' && git.commit !== 'unknown') {
    for (const l of lines(sh(`git diff --name-status ${pre.git.commit}..${git.commit}`))) {
      const [st, p] = l.split('\t');
      const status = st === 'A' ? 'added' : st === 'D' ? 'deleted' : 'modified';
      fileDiffs.push(status === 'modified' ? { path: p, status, diff: sh(`git diff ${pre.git.commit}..${git.commit} -- "${p}"`) } : { path: p, status });
    }
  }
  const commits = pre.git.commit === 'unknown' ? [] : lines(sh(`git log ${pre.git.commit}..HEAD --pretty=format:"%H %s"`));
  let tests = { found: false };
  for (const f of ['test-results.json', '.aiwg/testing/test-results.md', 'coverage/coverage-summary.json']) {
    if (existsSync(join(root, f))) {
      tests = { found: true, file: join(root, f) };
      break;
    }
  }
  const post = { timestamp: new Date().toISOString(), git, fileDiffs, commits, aiwg: stateDir(), tests };
  writeFileSync(join(iterationDir, 'post-snapshot.json'), JSON.stringify(post, null, 2));
}
