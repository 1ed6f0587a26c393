/** The human report of one iteration, as `cairn session post` and `cairn session report` print it. */
import * as path from 'node:path';
import type { PostSnapshot, PreSnapshot, SnapshotDiff } from './types.js';

const LIST_LIMIT = 20;

function shortSha(commit: string): string {
  return /^[0-9a-f]{40,64}$/.test(commit) ? commit.slice(0, 12) : commit;
}

/** Paths in a report are printed with JSON escapes when they hold control characters (a newline must not forge a line). */
function showPath(p: string): string {
  // eslint-disable-next-line no-control-regex
  return /[\u0000-\u001f\u007f]/.test(p) ? JSON.stringify(p) : p;
}

function section(lines: string[], title: string, items: readonly string[]): void {
  lines.push(`${title} (${items.length})`);
  const indent = `${/^ */.exec(title)?.[0] ?? ''}  `;
  for (const item of items.slice(0, LIST_LIMIT)) lines.push(`${indent}${item}`);
  if (items.length > LIST_LIMIT) lines.push(`${indent}… and ${items.length - LIST_LIMIT} more (use --json for all)`);
}

function describeTests(diff: SnapshotDiff, post: PostSnapshot, cwd: string | undefined): string {
  if (!diff.hasTests) return 'no test results found';
  const summary: Record<string, unknown> = diff.testSummary ?? {};
  const counts = ['passed', 'failed', 'skipped', 'total']
    .filter((k) => typeof summary[k] === 'number')
    .map((k) => `${String(summary[k])} ${k}`);
  const file = post.tests.file;
  const where = file ? ` in ${showPath(cwd !== undefined ? relativeIfInside(cwd, file) : file)}` : '';
  if (counts.length > 0) return `${counts.join(', ')}${where}`;
  if (typeof summary.snippet === 'string') return `"${summary.snippet}"${where}`;
  return `found${where}`;
}

function relativeIfInside(cwd: string, file: string): string {
  const rel = path.relative(cwd, file);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file;
}

/** `cwd`, when given, shortens the test-results path to one relative to it. */
export function renderIterationReport(input: { iterationDir?: string; cwd?: string; pre: PreSnapshot; post: PostSnapshot; diff: SnapshotDiff }): string {
  const { pre, post, diff } = input;
  const lines: string[] = [];
  lines.push(`Iteration${input.iterationDir ? ` ${showPath(input.iterationDir)}` : ''}`);
  lines.push(`  duration: ${diff.duration}  (${pre.timestamp} → ${post.timestamp})`);
  lines.push(`  branch:   ${pre.git.branch === post.git.branch ? post.git.branch : `${pre.git.branch} → ${post.git.branch}`}`);
  lines.push(`  HEAD:     ${shortSha(pre.git.commit)} → ${shortSha(post.git.commit)}`);
  if (post.inventory) {
    lines.push(`  tree:     ${post.inventory.files} files, ${post.inventory.bytes} bytes${post.inventory.skipped ? `, ${post.inventory.skipped} skipped` : ''}`);
  }
  const source = diff.filesSource === 'working-tree' ? 'working tree, committed or not' : 'from commits only';
  lines.push('');
  lines.push(`Files (${source})`);
  section(lines, '  added', diff.filesAdded.map(showPath));
  section(lines, '  modified', diff.filesModified.map(showPath));
  section(lines, '  deleted', diff.filesDeleted.map(showPath));
  if (diff.keyFilesChanged.length > 0) section(lines, '  key files changed', diff.keyFilesChanged.map((k) => `${k.status}: ${showPath(k.path)}`));
  lines.push('');
  section(lines, 'Commits', diff.commits.map((c) => showPath(c.replace(/^([0-9a-f]{12})[0-9a-f]+ /, '$1 '))));
  lines.push('');
  lines.push(`State dir ${post.stateDir ?? pre.stateDir ?? '.aiwg'}`);
  section(lines, '  created', diff.aiwgArtifactsCreated.map(showPath));
  section(lines, '  updated', diff.aiwgArtifactsUpdated.map(showPath));
  section(lines, '  deleted', diff.aiwgArtifactsDeleted.map(showPath));
  lines.push('');
  lines.push(`Tests: ${describeTests(diff, post, input.cwd)}`);
  return `${lines.join('\n')}\n`;
}
