/**
 * The review of one iteration, computed once at `session post` and kept: beside the iteration
 * (`review.json`, so `session list` needs no diff) and in the store record (so a reviewer
 * reading S3 or PostgreSQL on another machine sees the same report). It holds the summary line
 * of `session list`, the per-file status and +/− counts, and the patch up to a bound (cut, and
 * marked so, when over).
 */
import * as path from 'node:path';
import { parseJsonBounded } from '../core/bounded-json.js';
import { ContainedDir, readFileWithin, rootedAt } from '../core/contained-dir.js';
import { decodeUtf8Strict } from '../core/utf8.js';
import { CairnError } from '../core/errors.js';
import { durationBetween } from '../session/duration.js';
import type { FileChange, GitMode, Hunk } from './diff.js';
import { renderPatch } from './git-format.js';
import type { PostSnapshot, PreSnapshot, SnapshotDiff } from '../session/types.js';
import { iterationFileChanges, iterationLabel, loadIteration, type LoadedIteration } from './iteration.js';

export const REVIEW_FILE = 'review.json';
export const REVIEW_KIND = 'cairn.review/v1';
/** Most patch characters kept with a review (the full patch is always one `session diff` away). */
export const REVIEW_PATCH_MAX = 256 * 1024;

export interface TestCounts {
  passed: number;
  failed: number;
  skipped: number;
}

/** One line of `session list` (its `--json` keys are the spec's). */
export interface IterationSummary {
  iteration: string;
  startedAt: string;
  durationMs: number;
  filesChanged: number;
  additions: number;
  deletions: number;
  commits: number;
  tests?: TestCounts;
}

/** A file of `session diff --json` (the spec's keys). */
export interface ReviewFile {
  path: string;
  status: FileChange['status'];
  oldPath?: string;
  additions: number;
  deletions: number;
  binary: boolean;
  /** Similarity percentage of a rename (100: identical content), as git's `R<score>`. */
  score?: number;
  /** Binary files: the sizes of the two sides (for `--stat`'s `Bin 4 -> 5 bytes`); not part of `--json`. */
  oldSize?: number;
  newSize?: number;
}

export interface IterationReview {
  kind: typeof REVIEW_KIND;
  summary: IterationSummary;
  files: ReviewFile[];
  /** Paths whose bytes were not captured (counts unknown). */
  notCaptured: string[];
  patch: { text: string; cut: boolean; chars: number };
}

/** A file of `session diff --json` (the spec's keys, and `score` for renames). */
export function reviewFile(c: FileChange): ReviewFile {
  const out: ReviewFile = { path: c.path, status: c.status, additions: c.additions, deletions: c.deletions, binary: c.binary };
  if (c.oldPath !== undefined) out.oldPath = c.oldPath;
  if (c.score !== undefined) out.score = c.score;
  return out;
}

/** A file as the review keeps it: `reviewFile`, and a binary file's sizes. */
function keptFile(c: FileChange): ReviewFile {
  const out = reviewFile(c);
  if (c.binary) {
    if (c.oldSize !== undefined) out.oldSize = c.oldSize;
    if (c.newSize !== undefined) out.newSize = c.newSize;
  }
  return out;
}

/**
 * The changes of a finished iteration as its saved review has them (status, counts, renames,
 * binary sizes; no hunks): what `--stat`, `--name-status` and `--json` print, without reading
 * inventories or content again. Null when there is no saved review of this iteration, or it
 * cannot answer alone (a file whose content was not captured, a binary file without sizes).
 */
export function savedFileChanges(it: LoadedIteration, options: { hunks?: boolean; within?: string } = {}): FileChange[] | null {
  const review = readSavedReview(it.dir, options.within);
  if (review === null || review.summary.iteration !== it.iteration || review.notCaptured.length > 0) return null;
  if (options.hunks === true && review.patch.cut) return null;
  const out: FileChange[] = [];
  for (const f of review.files) {
    if (f.binary && f.oldSize === undefined && f.newSize === undefined) return null;
    const c: FileChange = { path: f.path, status: f.status, additions: f.additions, deletions: f.deletions, binary: f.binary };
    for (const [k, v] of [['oldPath', f.oldPath], ['score', f.score], ['oldSize', f.oldSize], ['newSize', f.newSize]] as const) if (v !== undefined) Object.assign(c, { [k]: v });
    out.push(c);
  }
  return options.hunks === true && !attachHunks(out, review.patch.text) ? null : out;
}

const HUNK_HEAD = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(?: (.*))?$/;
const MODE_LINE = /^(old mode|new mode|new file mode|deleted file mode|index [0-9a-f]+\.\.[0-9a-f]+) (\d{6})$/;

/**
 * Gives each file the hunks and modes of its block in `patch` — the patch `renderPatch` wrote
 * from these same files, in their order: one `diff --git` block a file, two for a type change.
 * False when the text does not have that shape (then the caller computes the diff instead).
 */
function attachHunks(files: FileChange[], patch: string): boolean {
  const lines = patch.split('\n');
  if (lines.at(-1) === '') lines.pop();
  let i = 0;
  const block = (): { hunks: Hunk[]; modes: Map<string, GitMode> } | null => {
    if (!(lines[i] ?? '').startsWith('diff --git ')) return null;
    i++;
    const modes = new Map<string, GitMode>();
    const hunks: Hunk[] = [];
    while (i < lines.length && !(lines[i] as string).startsWith('diff --git ')) {
      const line = lines[i] as string;
      const mode = MODE_LINE.exec(line);
      if (mode !== null) modes.set((mode[1] as string).startsWith('index') ? 'index' : (mode[1] as string), mode[2] as GitMode);
      const head = HUNK_HEAD.exec(line);
      i++;
      if (head === null) continue;
      const h: Hunk = { oldStart: Number(head[1]), oldLines: head[2] === undefined ? 1 : Number(head[2]), newStart: Number(head[3]), newLines: head[4] === undefined ? 1 : Number(head[4]), lines: [] };
      // git writes an empty side's start as one less (`-0,0`); the FileChange keeps jsdiff's
      if (h.oldLines === 0) h.oldStart++;
      if (h.newLines === 0) h.newStart++;
      if (head[5] !== undefined) h.section = head[5];
      let oldLeft = h.oldLines;
      let newLeft = h.newLines;
      while (i < lines.length && (oldLeft > 0 || newLeft > 0 || (lines[i] as string).startsWith('\\'))) {
        const body = lines[i] as string;
        const c = body[0];
        if (c === ' ') {
          oldLeft--;
          newLeft--;
        } else if (c === '-') oldLeft--;
        else if (c === '+') newLeft--;
        else if (c !== '\\') return null;
        h.lines.push(body);
        i++;
      }
      hunks.push(h);
    }
    return { hunks, modes };
  };
  for (const f of files) {
    const first = block();
    if (first === null) return false;
    if (f.status === 'typechange') {
      const second = block();
      if (second === null) return false;
      f.oldMode = first.modes.get('deleted file mode');
      f.newMode = second.modes.get('new file mode');
      const gone = first.hunks[0] ?? { oldStart: 1, oldLines: 0, newStart: 1, newLines: 0, lines: [] };
      const made = second.hunks[0] ?? { oldStart: 1, oldLines: 0, newStart: 1, newLines: 0, lines: [] };
      if (!f.binary) f.hunks = [gone, made];
      continue;
    }
    const oldMode = first.modes.get('old mode') ?? first.modes.get('deleted file mode') ?? first.modes.get('index');
    const newMode = first.modes.get('new mode') ?? first.modes.get('new file mode') ?? first.modes.get('index');
    if (oldMode !== undefined) f.oldMode = oldMode;
    if (newMode !== undefined) f.newMode = newMode;
    if (!f.binary && first.hunks.length > 0) f.hunks = first.hunks;
  }
  return i === lines.length;
}

/** The whole patch of a finished iteration as its saved review keeps it; null when absent or cut. */
export function savedPatch(it: LoadedIteration, within?: string): string | null {
  const review = readSavedReview(it.dir, within);
  if (review === null || review.summary.iteration !== it.iteration || review.notCaptured.length > 0 || review.patch.cut) return null;
  return review.patch.text;
}

export function testCounts(summary: unknown): TestCounts | undefined {
  if (typeof summary !== 'object' || summary === null) return undefined;
  const s = summary as Record<string, unknown>;
  const n = (v: unknown): number => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : 0);
  if (typeof s.passed !== 'number' && typeof s.failed !== 'number') return undefined;
  return { passed: n(s.passed), failed: n(s.failed), skipped: n(s.skipped) };
}

/** The summary of an iteration from its per-file changes (or, with none, from the snapshot lists). */
export function summarise(it: LoadedIteration, files: readonly ReviewFile[] | null): IterationSummary {
  const post = it.post;
  const out: IterationSummary = {
    iteration: it.iteration,
    startedAt: it.pre.timestamp,
    durationMs: post === null ? 0 : durationBetween(it.pre.timestamp, post.timestamp),
    filesChanged: files !== null ? files.length : it.diff === null ? 0 : it.diff.filesAdded.length + it.diff.filesModified.length + it.diff.filesDeleted.length,
    additions: 0,
    deletions: 0,
    commits: post?.commits.length ?? 0,
  };
  for (const f of files ?? []) {
    out.additions += f.additions;
    out.deletions += f.deletions;
  }
  const tests = testCounts(post?.tests?.summary);
  if (tests !== undefined) out.tests = tests;
  return out;
}

/** Cuts `text` at a line end at most `max` characters in, with git-ignorable marker lines. */
export function boundPatch(text: string, max = REVIEW_PATCH_MAX): { text: string; cut: boolean; chars: number } {
  if (text.length <= max) return { text, cut: false, chars: text.length };
  const end = text.lastIndexOf('\n', max);
  return { text: text.slice(0, end < 0 ? 0 : end + 1), cut: true, chars: text.length };
}

/** Diffs a finished iteration and builds its review. */
export function buildReview(root: string, it: LoadedIteration, changes?: readonly FileChange[]): IterationReview {
  const list = changes ?? iterationFileChanges(root, it);
  const files = list.map(keptFile);
  return {
    kind: REVIEW_KIND,
    summary: summarise(it, files),
    files,
    notCaptured: list.filter((c) => c.notCaptured !== undefined).map((c) => c.path),
    patch: boundPatch(renderPatch(list).text),
  };
}

/**
 * Writes `review.json` beside the snapshots (atomic: temp + rename in the held directory; a
 * cache that `session list` reads). The iteration directory is opened from `within` (the project
 * root) with no link followed, so a directory swapped for a link cannot redirect the write.
 */
export function saveReview(dir: string, review: IterationReview, within: string): void {
  const { root, parts } = rootedAt(dir, within);
  const held = ContainedDir.require(root, parts);
  try {
    held.writeFile(REVIEW_FILE, `${JSON.stringify(review)}\n`);
  } finally {
    held.close();
  }
}

/** The saved review of an iteration, or null when absent or not one. */
export function readSavedReview(dir: string, within?: string): IterationReview | null {
  try {
    // No link at the name (a planted review.json link is not this iteration's), bounded, strict UTF-8.
    const file = path.join(dir, REVIEW_FILE);
    const bytes = readFileWithin(file, within, { maxBytes: 64 * 1024 * 1024 });
    if (bytes === null) return null;
    const value = parseJsonBounded(decodeUtf8Strict(bytes, file), { file, what: 'review' }) as IterationReview | null;
    return value !== null && value.kind === REVIEW_KIND && Array.isArray(value.files) ? value : null;
  } catch {
    return null;
  }
}

/**
 * What every `post` (CLI, hook, MCP) does once the post-snapshot is written: diffs the iteration
 * and keeps its review beside it. Null when it cannot be diffed (captured without inventories).
 * `held`: the records the caller has just written and read (the post as its capture returned
 * it), so they are not read back; the bytes that capture stored then come from it too.
 */
export function reviewFinishedIteration(root: string, dir: string, held?: { pre: PreSnapshot; post: PostSnapshot; diff: SnapshotDiff }): IterationReview | null {
  try {
    const it: LoadedIteration = held === undefined ? loadIteration(root, dir) : { iteration: iterationLabel(dir), dir, pre: held.pre, post: held.post, diff: held.diff };
    const review = buildReview(root, it);
    saveReview(dir, review, root);
    return review;
  } catch (e) {
    if (e instanceof CairnError && e.code === 'ERR_NO_INVENTORY') return null;
    throw e;
  }
}
