/** The human report of one iteration, as `cairn session post` and `cairn session report` print it. */
import * as path from 'node:path';
import type { PostSnapshot, PreSnapshot, SnapshotDiff } from '../types.js';

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

/** A changed file as the report shows it: git's status letter, the path (old → new for a rename), +/− lines. */
export interface ReportFile {
  path: string;
  status: 'added' | 'modified' | 'deleted' | 'renamed' | 'typechange';
  oldPath?: string;
  additions: number;
  deletions: number;
  binary: boolean;
  /** Similarity of a rename, percent. */
  score?: number;
}

/** A failing test as the parsers give it: its name, and where the runner said, its file and message. */
export interface FailedTest {
  name: string;
  file?: string;
  message?: string;
}

const LETTERS = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R', typechange: 'T' } as const;
const FAILED_LIMIT = 20;

function fileLines(files: readonly ReportFile[], notCaptured: ReadonlySet<string>): string[] {
  const rows = files.map((f) => {
    const letter = f.status === 'renamed' && f.score !== undefined ? `R${String(f.score).padStart(3, '0')}` : LETTERS[f.status];
    const name = f.oldPath !== undefined ? `${showPath(f.oldPath)} → ${showPath(f.path)}` : showPath(f.path);
    const counts = notCaptured.has(f.path) ? '(content not captured)' : f.binary ? 'binary' : [f.additions > 0 || f.deletions === 0 ? `+${f.additions}` : '', f.deletions > 0 ? `-${f.deletions}` : ''].filter(Boolean).join(' ');
    return [letter, name, counts] as const;
  });
  const letterWidth = Math.max(...rows.map((r) => r[0].length));
  const nameWidth = Math.min(60, Math.max(...rows.map((r) => r[1].length)));
  const lines = rows.slice(0, LIST_LIMIT * 5).map(([l, n, c]) => `  ${l.padEnd(letterWidth)}  ${n.padEnd(nameWidth)}  ${c}`.trimEnd());
  if (rows.length > LIST_LIMIT * 5) lines.push(`  … and ${rows.length - LIST_LIMIT * 5} more (use \`cairn session diff --name-status\` for all)`);
  return lines;
}

function failedTests(summary: unknown): FailedTest[] {
  const failures = (summary as { failures?: unknown } | null | undefined)?.failures;
  if (!Array.isArray(failures)) return [];
  return failures.filter((f): f is FailedTest => typeof f === 'object' && f !== null && typeof (f as FailedTest).name === 'string');
}

/** What the iteration's record could not keep: content over the cap or unreadable, and paths the inventory skipped. */
function notCapturedLines(pre: PreSnapshot, post: PostSnapshot): string[] {
  const out: string[] = [];
  const add = (side: string, list: ReadonlyArray<{ path: string; reason: string }> | undefined): void => {
    for (const n of list ?? []) out.push(`${showPath(n.path)} (${side}): ${showPath(n.reason)}`);
  };
  add('pre', pre.content?.notRestorable);
  add('pre', post.content?.preNotRestorable);
  add('post', post.content?.notRestorable);
  for (const s of post.inventory?.skippedPaths ?? []) out.push(`${showPath(s.path)}: not inventoried (${showPath(s.reason)})`);
  return [...new Set(out)];
}

/**
 * The report of one iteration. With `files` (the per-file changes of the review), each changed
 * path gets its status letter and +/− line counts; without, the snapshot's path lists are shown.
 * Sections with nothing in them are left out. `cwd`, when given, shortens the test-results path.
 */
export function renderIterationReport(input: {
  iterationDir?: string;
  cwd?: string;
  pre: PreSnapshot;
  post: PostSnapshot;
  diff: SnapshotDiff;
  files?: readonly ReportFile[];
  notCaptured?: readonly string[];
  /** The restore that put the project back to this iteration (null: never restored; absent: not known, line left out). */
  restored?: { to: 'pre' | 'post'; restore: string; at: string } | null;
}): string {
  const { pre, post, diff } = input;
  const lines: string[] = [];
  lines.push(`Iteration${input.iterationDir ? ` ${showPath(input.iterationDir)}` : ''}`);
  lines.push(`  duration: ${diff.duration}  (${pre.timestamp} → ${post.timestamp})`);
  lines.push(`  branch:   ${pre.git.branch === post.git.branch ? post.git.branch : `${pre.git.branch} → ${post.git.branch}`}`);
  lines.push(`  HEAD:     ${shortSha(pre.git.commit)} → ${shortSha(post.git.commit)}`);
  if (input.restored !== undefined) {
    const r = input.restored;
    lines.push(`  restored: ${r === null ? 'no' : `to ${r.to} at ${r.at} (restore ${r.restore}; \`cairn session restore --undo\` reverts the latest restore)`}`);
  }
  if (post.inventory) {
    lines.push(`  tree:     ${post.inventory.files} files, ${post.inventory.bytes} bytes${post.inventory.skipped ? `, ${post.inventory.skipped} skipped` : ''}`);
  }
  const source = diff.filesSource === 'working-tree' ? 'working tree, committed or not' : 'from commits only';
  lines.push('');
  if (input.files !== undefined) {
    if (input.files.length === 0) lines.push(`Files: none changed (${source})`);
    else {
      const plus = input.files.reduce((n, f) => n + f.additions, 0);
      const minus = input.files.reduce((n, f) => n + f.deletions, 0);
      lines.push(`Files changed (${source}): ${input.files.length}, +${plus} -${minus}`);
      lines.push(...fileLines(input.files, new Set(input.notCaptured ?? [])));
    }
  } else if (diff.filesAdded.length + diff.filesModified.length + diff.filesDeleted.length === 0) {
    lines.push(`Files: none changed (${source})`);
  } else {
    lines.push(`Files (${source})`);
    const listed: ReportFile[] = [
      ...diff.filesAdded.map((p) => ({ path: p, status: 'added' as const })),
      ...diff.filesModified.map((p) => ({ path: p, status: 'modified' as const })),
      ...diff.filesDeleted.map((p) => ({ path: p, status: 'deleted' as const })),
    ].map((f) => ({ ...f, additions: 0, deletions: 0, binary: false }));
    for (const f of listed.slice(0, LIST_LIMIT * 5)) lines.push(`  ${LETTERS[f.status]}  ${showPath(f.path)}`);
    if (listed.length > LIST_LIMIT * 5) lines.push(`  … and ${listed.length - LIST_LIMIT * 5} more (use --json for all)`);
  }
  if (diff.keyFilesChanged.length > 0) section(lines, '  key files changed', diff.keyFilesChanged.map((k) => `${k.status}: ${showPath(k.path)}`));
  if (diff.commits.length > 0) {
    lines.push('');
    section(lines, 'Commits', diff.commits.map((c) => showPath(c.replace(/^([0-9a-f]{12})[0-9a-f]+ /, '$1 '))));
  }
  const artifacts = diff.aiwgArtifactsCreated.length + diff.aiwgArtifactsUpdated.length + diff.aiwgArtifactsDeleted.length;
  if (artifacts > 0) {
    lines.push('');
    lines.push(`State dir ${post.stateDir ?? pre.stateDir ?? '.aiwg'}`);
    if (diff.aiwgArtifactsCreated.length > 0) section(lines, '  created', diff.aiwgArtifactsCreated.map(showPath));
    if (diff.aiwgArtifactsUpdated.length > 0) section(lines, '  updated', diff.aiwgArtifactsUpdated.map(showPath));
    if (diff.aiwgArtifactsDeleted.length > 0) section(lines, '  deleted', diff.aiwgArtifactsDeleted.map(showPath));
  }
  const missing = notCapturedLines(pre, post);
  if (missing.length > 0) {
    lines.push('');
    section(lines, 'Not captured', missing);
  }
  if (diff.hasTests) {
    lines.push('');
    lines.push(`Tests: ${describeTests(diff, post, input.cwd)}`);
    const failed = failedTests(diff.testSummary);
    for (const f of failed.slice(0, FAILED_LIMIT)) {
      const where = f.file !== undefined ? ` (${showPath(f.file)})` : '';
      const why = f.message !== undefined ? `: ${showPath(f.message.split('\n')[0] ?? '')}` : '';
      lines.push(`  ✗ ${showPath(f.name)}${where}${why}`);
    }
    if (failed.length > FAILED_LIMIT) lines.push(`  … and ${failed.length - FAILED_LIMIT} more failed`);
  }
  return `${lines.join('\n')}\n`;
}
