/**
 * What the MCP tools say about a finished iteration — after `cairn_session_post` and when
 * `cairn_store_show` reads a record back — as a bounded summary instead of the whole record: the
 * counts (files, lines, commits, tests), one page of the changed files (the same list, in the same
 * order, as `cairn_session_diff`, so its nextCursor continues there), short lists of commits and
 * failing tests, and only the COUNTS of the git status lists (a record holds the untracked list
 * of pre and of post; on a big tree each is megabytes). Any list of the record can be paged on
 * its own with `cairn_store_show`'s `list`.
 */
import type { IterationReview, ReviewFile } from '../review/index.js';
import type { PostSnapshot, PreSnapshot, SnapshotDiff } from '../session/types.js';
import { clip, pageOf, shortList, type Page } from './paging.js';

export interface IterationParts {
  iterationDir: string;
  pre: PreSnapshot;
  post: PostSnapshot;
  diff: SnapshotDiff;
  /** The review kept at post (files with counts, summary); absent for records made before reviews were kept. */
  review?: Pick<IterationReview, 'files' | 'notCaptured' | 'summary'> | null;
}

export type ListName = 'changed' | 'untracked' | 'staged' | 'unstaged' | 'artifacts';

export type ChangedFile = ReviewFile | { path: string; status: 'added' | 'modified' | 'deleted' };

/** The changed files: the review's (status, counts, renames), else the snapshot diff's path lists in path order. */
export function changedFiles(parts: IterationParts): ChangedFile[] {
  if (parts.review !== undefined && parts.review !== null && Array.isArray(parts.review.files)) return parts.review.files;
  const d = parts.diff;
  const rows: ChangedFile[] = [
    ...d.filesAdded.map((p) => ({ path: p, status: 'added' as const })),
    ...d.filesModified.map((p) => ({ path: p, status: 'modified' as const })),
    ...d.filesDeleted.map((p) => ({ path: p, status: 'deleted' as const })),
  ];
  return rows.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** One of the record's lists, by name (git lists of the given side). */
export function recordList(parts: IterationParts, list: ListName, side: 'pre' | 'post'): unknown[] {
  const git = side === 'pre' ? parts.pre.git : parts.post.git;
  switch (list) {
    case 'changed':
      return changedFiles(parts);
    case 'untracked':
      return git.untracked ?? [];
    case 'staged':
      return git.staged ?? [];
    case 'unstaged':
      return git.unstaged ?? [];
    case 'artifacts':
      return [
        ...parts.diff.aiwgArtifactsCreated.map((p) => ({ path: p, status: 'created' })),
        ...parts.diff.aiwgArtifactsUpdated.map((p) => ({ path: p, status: 'updated' })),
        ...(parts.diff.aiwgArtifactsDeleted ?? []).map((p) => ({ path: p, status: 'deleted' })),
      ];
  }
}

interface FailedTest {
  name: string;
  file?: string;
  message?: string;
}

function failedTests(summary: unknown): FailedTest[] {
  const failures = (summary as { failures?: unknown } | null | undefined)?.failures;
  if (!Array.isArray(failures)) return [];
  return failures
    .filter((f): f is FailedTest => typeof f === 'object' && f !== null && typeof (f as FailedTest).name === 'string')
    .map((f) => ({ name: clip(f.name, 200), ...(f.file === undefined ? {} : { file: clip(f.file, 200) }), ...(f.message === undefined ? {} : { message: clip(f.message.split('\n')[0] ?? '', 300) }) }));
}

const count = (list: readonly unknown[] | undefined): number => list?.length ?? 0;

/**
 * The bounded view of an iteration: summary counts, one page of `list` (default the changed
 * files), short lists of commits and failing tests, and counts of every other list.
 */
export function iterationView(parts: IterationParts, page: { list?: ListName; side?: 'pre' | 'post'; limit: number; cursor?: string | undefined }): Record<string, unknown> {
  const { pre, post, diff } = parts;
  const files = changedFiles(parts);
  const list = page.list ?? 'changed';
  const side = page.side ?? 'post';
  const paged: Page<unknown> = pageOf(recordList(parts, list, side), page.cursor, page.limit);
  const summary = parts.review?.summary;
  const tests = diff.testSummary ?? null;
  const iteration = parts.iterationDir.split(/[\\/]/).at(-1) ?? parts.iterationDir;
  return {
    iterationDir: parts.iterationDir,
    iteration,
    summary: {
      duration: diff.duration,
      durationMs: diff.durationMs,
      branch: pre.git.branch === post.git.branch ? post.git.branch : `${pre.git.branch} → ${post.git.branch}`,
      head: { pre: pre.git.commit, post: post.git.commit },
      filesSource: diff.filesSource,
      filesChanged: files.length,
      added: diff.filesAdded.length,
      modified: diff.filesModified.length,
      deleted: diff.filesDeleted.length,
      ...(summary === undefined || summary === null ? {} : { additions: summary.additions, deletions: summary.deletions }),
      commits: diff.commitCount,
      tests: tests === null ? null : { type: tests.type, passed: tests.passed ?? null, failed: tests.failed ?? null, skipped: tests.skipped ?? null, total: tests.total ?? null },
    },
    page: { list, ...(list === 'changed' || list === 'artifacts' ? {} : { side }), ...paged },
    ...(list === 'changed' && paged.nextCursor !== null ? { morePages: `cairn_session_diff with iteration ${JSON.stringify(parts.iterationDir)} and this nextCursor continues the list (with per-file counts and patches), or cairn_store_show with list "changed"` } : {}),
    commits: shortList(diff.commits.map((c) => clip(c, 200))),
    failedTests: shortList(failedTests(tests)),
    notCaptured: shortList(parts.review?.notCaptured ?? []),
    keyFilesChanged: shortList(diff.keyFilesChanged),
    counts: {
      untracked: { pre: count(pre.git.untracked), post: count(post.git.untracked) },
      staged: { pre: count(pre.git.staged), post: count(post.git.staged) },
      unstaged: { pre: count(pre.git.unstaged), post: count(post.git.unstaged) },
      artifacts: { created: diff.aiwgArtifactsCreated.length, updated: diff.aiwgArtifactsUpdated.length, deleted: count(diff.aiwgArtifactsDeleted) },
    },
  };
}
